"""Ray engine room: `run --engine ray` — the batch planned in DuckDB on the driver, the pending
specs written as Parquet shards, run by a pool of Ray actors (each reads a spec shard, streams
its runs through the same `Runner` as the local engine and writes the finished runs as one
Parquet shard into the batch folder), then the shards loaded into the workspace in one
transaction keyed by run key.

One writer: only the driver opens the workspace. A worker opens the store read-only per run
(Runner.prepare), reads the retrieval index without building it, and records its runs in a
private in-memory DuckDB whose rows it returns — the very rows `RunStore` writes locally.
"""

from __future__ import annotations

import asyncio
import math
import os
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from fintrade_tui.config import Config
from fintrade_tui.kill_points import stop_at
from fintrade_tui.runs import batch_shards as shards_io
from fintrade_tui.runs.batch import BatchSummary, plan_keyed
from fintrade_tui.runs.runner import Runner, RunSpec
from fintrade_tui.workspace.run_records import ERROR

if TYPE_CHECKING:
    from ray.actor import ActorHandle

SHARD_RUNS = 8  # runs per spec shard by default: a kill loses at most the shards in flight
Progress = Callable[[dict[str, int]], None]


class RunWorker:
    """One Ray actor: a Runner over an in-memory run table; each call takes a spec shard, runs
    its specs concurrently (runs.concurrency at once, runs.per_model per model) and writes
    their finished rows as one Parquet shard."""

    def __init__(self, cfg: Config, workers: int, setup: Callable[[], None] | None = None) -> None:
        import duckdb

        from fintrade_tui.models import deployments, llm
        from fintrade_tui.workspace.run_records import RunStore

        if setup is not None:  # tests and benchmarks register their scripted providers
            setup()
        llm.litellm()
        deployments.set_share(workers)  # this worker's part of every rpm / tpm limit
        self.cfg = cfg
        self.memory = duckdb.connect(":memory:")  # its own: rows leave as an Arrow table
        self.runs = RunStore(self.memory)
        self.runner = Runner(cfg, self.runs, build_index=False)
        self._sems: dict[str, asyncio.Semaphore] = {}

    def _sem(self, name: str, n: int) -> asyncio.Semaphore:
        if name not in self._sems:
            self._sems[name] = asyncio.Semaphore(n)
        return self._sems[name]

    async def run_shard(self, spec_file: str, out: str) -> int:
        """Run the specs of `spec_file` and write their rows to `out` whole (written aside,
        then renamed: a kill leaves no half shard); returns the number of rows."""
        import pyarrow.parquet as pq

        rows = pq.read_table(spec_file).to_pylist()
        ids = await asyncio.gather(*(self._one(r) for r in rows))
        with self.runs.lock:  # the Runner's threads write through this lock too
            cur = self.memory.cursor()
            try:
                table = cur.execute(
                    "SELECT * FROM runs WHERE list_contains(?, id) ORDER BY id", [ids]
                ).to_arrow_table()
                if table is None:  # a SELECT always has a result (duckdb's stub allows None)
                    raise RuntimeError("the shard's runs query gave no result")
                cur.execute("DELETE FROM runs WHERE list_contains(?, id)", [ids])
            finally:
                cur.close()
        target = Path(out)
        aside = target.with_name(f".{target.name}.tmp")
        pq.write_table(table, aside)
        aside.rename(target)
        return table.num_rows

    async def _one(self, row: dict[str, Any]) -> str:
        from fintrade_tui.runs.runner import drain

        spec = shards_io.spec_from_row(row)
        run_id: str | None = None

        def seen(ev: Any) -> None:
            nonlocal run_id
            run_id = ev.run_id

        everyone = self._sem("", self.cfg.runs.concurrency)
        try:
            async with everyone, self._sem(spec.model, self.cfg.runs.per_model):
                await drain(self.runner.stream(spec), seen)
        except Exception as exc:  # failed before it was recorded: a missing key, say
            run_id = await asyncio.to_thread(self._error_row, row["key"], spec, exc, run_id)
        return run_id or ""

    def _error_row(self, key: str, spec: RunSpec, exc: Exception, run_id: str | None) -> str:
        from fintrade_tui.models import llm

        if run_id is None:
            run_id = self.runs.start(
                {
                    "batch": spec.batch,
                    "batch_key": key,
                    "question_id": spec.question.id,
                    "condition": spec.condition,
                    "model": spec.model,
                    "level": spec.level,
                    "best_of": spec.best_of,
                    "as_of": spec.question.as_of,
                }
            )
        self.runs.finish(run_id, status=ERROR, error=llm.error_text(exc))
        return run_id


WORKER_NICENESS = "RAY_worker_niceness"  # Ray's own spelling of the setting


def _connect(address: str | None, num_cpus: int | None) -> bool:
    """Join the cluster at `address` ("auto": the one `ray start` left), or start a local
    one; True when this call started it (and so stops it)."""
    import ray

    if ray.is_initialized():
        return False
    if address:
        ray.init(address=address, log_to_driver=False, configure_logging=False)
    else:
        # Ray lowers its workers' priority by 15 below the driver's; here the workers do the
        # batch and the driver only waits, so on a busy machine they crawled (~10x slower)
        os.environ.setdefault(WORKER_NICENESS, "0")
        ray.init(
            num_cpus=num_cpus,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
        )
    return True


def _stats(files: list[Path]) -> dict[str, Any]:
    import duckdb

    con = duckdb.connect(":memory:")
    try:
        rows = con.execute(
            "SELECT status, count(*), coalesce(sum(tokens_out), 0)"
            " FROM read_parquet(?, union_by_name = true) GROUP BY status",
            [[str(f) for f in files]],
        ).fetchall()
    finally:
        con.close()
    return {"status": Counter({s: n for s, n, _ in rows}), "tokens": sum(t for *_, t in rows)}


class _Watch(threading.Thread):
    """Counts finished runs from the shards as they land in the batch folder (progress)."""

    def __init__(self, folder: Path, skip: set[Path], report: Progress | None) -> None:
        super().__init__(daemon=True)
        self.folder, self.seen, self.report = folder, set(skip), report
        self.status: Counter = Counter()
        self.tokens = 0
        self.stop = threading.Event()

    def poll(self) -> None:
        new = [f for f in shards_io.pending_shards(self.folder) if f not in self.seen]
        good, _ = shards_io.readable(new)
        if good:
            s = _stats(good)
            self.seen.update(good)
            self.status.update(s["status"])
            self.tokens += s["tokens"]
        if self.report:
            done = sum(self.status.values())
            errors = done - self.status.get("completed", 0)
            self.report({"done": done, "errors": errors, "tokens": self.tokens})

    def run(self) -> None:
        while not self.stop.wait(0.5):
            self.poll()


def load_folder(runner: Runner, folder: Path) -> tuple[int, int, int]:
    """Land the readable shards of `folder` (one transaction) and move them aside; returns
    (shards, rows inserted, rows skipped as already landed)."""
    good, _ = shards_io.readable(shards_io.pending_shards(folder))
    inserted, skipped = runner.runs.load_shards([str(f) for f in good])
    shards_io.archive(folder, good)
    return len(good), inserted, skipped


def run_ray(
    runner: Runner,
    specs: list[RunSpec],
    address: str | None = None,
    shards: int | None = None,
    num_cpus: int | None = None,
    on_progress: Progress | None = None,
    on_plan: Callable[[int], None] | None = None,
    setup: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Run what is left of `specs` on Ray; the summary has the local engine's fields and
    the engine's own (workers, shards, rows loaded, duplicates skipped)."""
    t0 = time.monotonic()
    cfg = runner.cfg
    summary = BatchSummary(batch=(specs[0].batch or "") if specs else "", planned=len(specs))
    if specs and not specs[0].batch:
        from fintrade_tui.errors import UserError

        raise UserError("--engine ray", "needs a batch label", "pass --batch NAME")
    summary.interrupted = runner.runs.mark_interrupted()
    folder = shards_io.batch_dir(cfg.workspace, summary.batch)
    # a killed earlier driver's finished shards land before planning: they are not redone
    earlier = load_folder(runner, folder) if folder.exists() else (0, 0, 0)
    todo, summary.skipped = plan_keyed(runner, specs)
    if on_plan:
        on_plan(len(todo))
    extra: dict[str, Any] = {"engine": "ray", "ray_address": address or "local", "workers": 0}
    extra |= {"pending": len(todo), "earlier_shards_loaded": earlier[0]}
    loaded = (0, 0, 0)
    watch = None
    if todo:
        import ray

        started = _connect(address, num_cpus)
        try:
            workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
            n_shards = shards or max(workers, math.ceil(len(todo) / SHARD_RUNS))
            n_shards = min(n_shards, len(todo))
            workers = min(workers, n_shards)
            extra |= {"workers": workers, "shards": n_shards}
            spec_dir = shards_io.write_specs(folder, todo, n_shards)
            watch = _Watch(folder, set(shards_io.pending_shards(folder)), on_progress)
            watch.start()
            try:
                _execute(spec_dir, folder, cfg, workers, setup)
            finally:
                watch.stop.set()
                watch.join()
                watch.poll()
                # whatever finished lands, even when the dataset failed part-way
                loaded = load_folder(runner, folder)
            shards_io.clear_specs(folder, spec_dir)
        finally:
            if started:
                ray.shutdown()
    summary.status = watch.status if watch else Counter()
    summary.tokens_out = watch.tokens if watch else 0
    summary.seconds = time.monotonic() - t0
    extra |= {"shards_loaded": loaded[0], "rows_loaded": loaded[1]}
    extra["duplicates_skipped"] = loaded[2] + earlier[2]
    # the workers' tokens in and cost are not gathered here: no figure rather than a 0
    counted = {k: v for k, v in summary.to_dict().items() if k not in ("tokens_in", "cost")}
    return counted | extra


def _execute(
    spec_dir: Path,
    folder: Path,
    cfg: Config,
    workers: int,
    setup: Callable | None,
) -> None:
    """Hand the spec shards to `workers` actors, at most two in flight per actor (the next
    shard waits at the actor while one runs), until every shard is written."""
    import ray

    # no CPU reserved: a model call waits on the network, so the actors share the nodes' CPUs
    # with whatever else runs there; spread over the nodes
    actor = ray.remote(num_cpus=0, scheduling_strategy="SPREAD")(RunWorker)
    # ray types an actor's creation as ActorProxy (handle or class, for editors' completion):
    # at run time it is the handle
    pool = [
        cast("ActorHandle[RunWorker]", actor.remote(cfg, workers, setup)) for _ in range(workers)
    ]
    out = folder / "runs"
    out.mkdir(parents=True, exist_ok=True)
    todo = sorted(spec_dir.glob("part-*.parquet"))
    in_flight: dict[Any, Any] = {}

    def hand(worker: Any) -> None:
        if todo:
            spec = todo.pop(0)
            shard = out / f"{spec_dir.name}-{spec.stem}.parquet"
            in_flight[worker.run_shard.remote(str(spec), str(shard))] = worker

    try:
        for _ in range(2):  # each actor its first shard before any gets a second
            for worker in pool:
                hand(worker)
        while in_flight:
            done, _ = ray.wait(list(in_flight), num_returns=1)
            worker = in_flight.pop(done[0])
            ray.get(done[0])  # a failed actor fails the batch; what finished still lands
            stop_at("ray.shard-written")
            hand(worker)
    finally:
        for worker in pool:
            ray.kill(worker)
