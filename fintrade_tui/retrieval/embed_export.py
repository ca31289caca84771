"""Embedder exports: ONNX / OpenVINO copies of a local sentence-transformers model, made here.

Everything is derived from the local weights (the packaged MiniLM by default); nothing comes
from a model hub. Kinds:

- ``onnx``: the transformer exported with ``torch.onnx.export`` (fp32, last hidden state out;
  pooling and normalisation are done by the caller);
- ``onnx-int8``: that graph with ONNX Runtime's dynamic int8 quantization (per-channel int8
  weights, activations quantized per batch at run time: no calibration data);
- ``openvino-int8``: NNCF's static int8 quantization (transformer preset) of the ONNX graph,
  saved as OpenVINO IR, calibrated on fixed texts (`CALIBRATION`) so an export is reproducible.

optimum-onnx / optimum-intel (what sentence-transformers' own ``backend="onnx"|"openvino"``
needs) pin transformers < 4.58 / < 5.6, so they cannot be installed beside transformers 5.x;
this module does the same steps with onnxruntime, openvino and nncf directly.

An export lives in ``<exports>/<model>-<source hash>/<kind>/`` with an ``export.json``; the
hash covers every file of the source folder, so new weights (a new package version) export
anew. It is written to a ``.tmp-*`` folder beside it and renamed into place, so two processes
exporting at once or a kill mid-export never leave a half-written model where a loader looks.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import shutil
import time
import uuid
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any


def no_vendor_telemetry() -> None:
    """Keep OpenVINO's and NNCF's usage analytics off before either is imported: both fall
    back to a stub when `openvino_telemetry` cannot be imported. Left on, OpenVINO forks a
    process to post to Google Analytics (no network here: it waits out a timeout) from a
    thread, after LanceDB has started its own (LanceDB then warns that the fork may deadlock),
    and writes files under ~/intel."""
    import sys

    sys.modules.setdefault("openvino_telemetry", None)  # type: ignore[arg-type]


KINDS = ("onnx", "onnx-int8", "openvino-int8")
FILES = {"onnx": "model.onnx", "onnx-int8": "model.onnx", "openvino-int8": "model.xml"}
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
MAX_TOKENS = 384
STALE_TMP_S = 6 * 3600  # a temp folder this old is a killed export's leftover

# calibration for the static int8 export: filing-like passages of the lengths indexed
# (a metadata line, then prose or a table), and short questions like the ones searched
_PASSAGES = [
    "Net sales increased during the year, driven by higher sales of services and wearables. "
    "Gross margin as a percentage of net sales rose because of a favourable mix, partly offset "
    "by foreign currency headwinds and higher component costs.",
    "We are exposed to market risk from changes in interest rates and foreign exchange rates. "
    "Our investment portfolio holds fixed-income securities whose fair value falls when rates "
    "rise; a 100 basis point increase would lower its value by about $1.2 billion.",
    "Competition in our markets is intense. Competitors may introduce products at lower prices, "
    "bundle them with other offerings, or respond faster to new technologies, which could "
    "reduce our market share, revenue and operating margin.",
    "| Fiscal year | Revenue | Operating income | Net income |\n| 2024 | 96,773 | 7,076 | "
    "7,091 |\n| 2023 | 81,462 | 8,891 | 14,974 |\n| 2022 | 53,823 | 13,656 | 12,583 |",
    "Cash provided by operating activities was $28.1 billion, reflecting net income adjusted "
    "for depreciation, stock-based compensation and changes in working capital. We returned "
    "cash to shareholders through share repurchases and dividends.",
    "Data center revenue grew as cloud providers and enterprises deployed accelerated computing "
    "platforms for training and inference of large language models; supply constraints eased "
    "in the second half of the fiscal year.",
    "Legal proceedings: we are subject to claims and lawsuits in the ordinary course of "
    "business, including antitrust, privacy and intellectual property matters, whose outcome "
    "is uncertain and could have a material adverse effect on our results.",
    "Advertising revenue depends on the number of ad impressions and the average price per ad. "
    "Changes to mobile operating systems that limit tracking have reduced our ability to target "
    "and measure ads, which may lower prices advertisers pay.",
]
_QUESTIONS = [
    "What drove the change in gross margin?",
    "How did revenue from services grow year over year?",
    "Which risk factors concern supply chain concentration?",
    "What was the operating cash flow and how was it used?",
]


def _calibration() -> list[str]:
    texts = []
    for i in range(len(_PASSAGES)):
        head = f"Company (TICK) 10-K FY{2020 + i}, filed 2024-0{1 + i}-15 — Item 7\n"
        body = " ".join(_PASSAGES[(i + j) % len(_PASSAGES)] for j in range(1 + i % 4))
        texts.append(head + body)
    return texts + _QUESTIONS


@lru_cache(maxsize=8)
def source_hash(model_dir: str) -> str:
    """SHA-256 over every file of the model folder (relative path and bytes), 16 hex digits."""
    root = Path(model_dir)
    h = hashlib.sha256()
    for p in sorted(x for x in root.rglob("*") if x.is_file() and "__pycache__" not in x.parts):
        h.update(str(p.relative_to(root)).encode() + b"\0")
        with p.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()[:16]


def export_dir(model_dir: Path, kind: str, exports: Path) -> Path:
    name = model_dir.name if model_dir.name != "model" else model_dir.parent.name
    return exports / f"{name}-{source_hash(str(model_dir))}" / kind


def is_complete(folder: Path, kind: str) -> bool:
    return (folder / "export.json").is_file() and (folder / FILES[kind]).is_file()


def ensure(model_dir: Path, kind: str, exports: Path) -> Path:
    """The export folder of `kind`, made first (atomically) when it is not there yet."""
    if kind not in KINDS:
        raise ValueError(f"unknown export kind {kind!r}")
    final = export_dir(model_dir, kind, exports)
    if is_complete(final, kind):
        return final
    onnx = ensure(model_dir, "onnx", exports) / FILES["onnx"] if kind != "onnx" else None
    final.parent.mkdir(parents=True, exist_ok=True)
    _sweep(final.parent)
    tmp = final.parent / f".tmp-{kind}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        t0 = time.perf_counter()
        with _quiet():
            _EXPORTERS[kind](model_dir, onnx, tmp)
        meta: dict[str, Any] = {
            "kind": kind,
            "source": str(model_dir),
            "source_hash": source_hash(str(model_dir)),
        }
        meta |= {"seconds": round(time.perf_counter() - t0, 1), "versions": _versions()}
        (tmp / "export.json").write_text(json.dumps(meta, indent=1))
        try:
            os.rename(tmp, final)  # atomic; fails when another process got there first
        except OSError:
            if not is_complete(final, kind):
                shutil.rmtree(final, ignore_errors=True)  # not ours to keep: half a model
                os.rename(tmp, final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def _sweep(folder: Path) -> None:
    """Remove temp folders of exports that were killed (their process is gone, or old)."""
    for p in folder.glob(".tmp-*"):
        try:
            pid = int(p.name.split("-")[-2])
            os.kill(pid, 0)
            alive = True
        except (ValueError, IndexError, ProcessLookupError):
            alive = False
        except PermissionError:
            alive = True
        with contextlib.suppress(OSError):
            if not alive or time.time() - p.stat().st_mtime > STALE_TMP_S:
                shutil.rmtree(p, ignore_errors=True)


@contextlib.contextmanager
def _quiet():
    """Exporters warn and log at length; none of it is for the user of a TUI."""
    loggers = [logging.getLogger(n) for n in ("nncf", "root", "onnxruntime", "torch.onnx")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    sink = io.StringIO()  # NNCF draws rich progress bars on stdout
    try:
        with (
            warnings.catch_warnings(),
            contextlib.redirect_stdout(sink),
            contextlib.redirect_stderr(sink),
        ):
            warnings.simplefilter("ignore")
            yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for pkg in ("torch", "transformers", "onnx", "onnxruntime", "openvino", "nncf"):
        with contextlib.suppress(PackageNotFoundError):
            out[pkg] = version(pkg)
    return out


def _export_onnx(model_dir: Path, _onnx: Path | None, out: Path) -> None:
    import torch
    from transformers import AutoModel

    base = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager").eval()

    class Hidden(torch.nn.Module):
        def __init__(self, m: torch.nn.Module) -> None:
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.m(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    ids = torch.ones(2, 16, dtype=torch.long)
    axes = {n: {0: "batch", 1: "seq"} for n in (*INPUTS, "last_hidden_state")}
    with torch.no_grad():
        torch.onnx.export(
            Hidden(base),
            (ids, torch.ones_like(ids), torch.zeros_like(ids)),
            str(out / FILES["onnx"]),
            input_names=list(INPUTS),
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )


def _onnx_source(onnx: Path | None) -> Path:
    """The fp32 ONNX export a quantized export starts from (`ensure` makes it first)."""
    if onnx is None:
        raise ValueError("a quantized export needs the fp32 ONNX export first")
    return onnx


def _export_onnx_int8(_model_dir: Path, onnx: Path | None, out: Path) -> None:
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        str(_onnx_source(onnx)),
        str(out / FILES["onnx-int8"]),
        weight_type=QuantType.QInt8,
        per_channel=True,
        extra_options={"DefaultTensorType": TensorProto.FLOAT},
    )


def _export_openvino_int8(model_dir: Path, onnx: Path | None, out: Path) -> None:
    no_vendor_telemetry()
    import nncf
    import numpy as np
    import openvino as ov

    tok = tokenizer(model_dir)
    items = []
    for text in _calibration():
        enc = tok.encode(text)
        ids = np.array([enc.ids], dtype=np.int64)
        items.append(dict(zip(INPUTS, (ids, np.ones_like(ids), np.zeros_like(ids)), strict=True)))
    model = ov.Core().read_model(str(_onnx_source(onnx)))
    q = nncf.quantize(
        model,
        nncf.Dataset(items),
        model_type=nncf.ModelType.TRANSFORMER,
        subset_size=len(items),
    )
    ov.save_model(q, str(out / FILES["openvino-int8"]))


_EXPORTERS = {
    "onnx": _export_onnx,
    "onnx-int8": _export_onnx_int8,
    "openvino-int8": _export_openvino_int8,
}


def tokenizer(model_dir: Path, max_tokens: int = MAX_TOKENS):
    """The model's fast tokenizer: truncation at `max_tokens`, padding to the batch's longest."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.enable_truncation(max_tokens)
    pad_id = tok.token_to_id("[PAD]")
    tok.enable_padding(pad_id=pad_id if pad_id is not None else 0)
    return tok
