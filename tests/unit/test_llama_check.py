"""The build check the Makefile runs after building llama.cpp: the library in this venv
generates tokens with SmolLM2 in a child process (it failed with SIGSEGV when the native build
used AMX on a VM that faults on it), and a child that crashes is reported, not raised."""

from __future__ import annotations

import pytest

from fintrade_tui.models import llama_check


def test_the_built_library_generates_tokens_on_this_cpu() -> None:
    assert llama_check.works() == (True, "")


def test_a_crashing_child_is_a_failure_with_its_exit_code(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llama_check, "_GENERATE", "import os, signal; os.kill(os.getpid(), 11)")
    assert llama_check.works() == (False, "exit code -11")
    monkeypatch.setattr(llama_check, "_GENERATE", "raise SystemExit('no tokens generated')")
    assert llama_check.works() == (False, "exit code 1: no tokens generated")
