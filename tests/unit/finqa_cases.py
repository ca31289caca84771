"""What the FinQA program tests share (tests/unit/test_finqa_program_*.py): a FinQA-normalised
TABLE and its PASSAGES, the paths of the repository and of FinQA's own evaluation scripts
(vendored verbatim, tests/data/external/finqa_eval/), `load_module` to import a script by path,
and the fixtures `finqa_eval` and `finqa_equal` (imported as `finqa_eval_module` and
`finqa_equal_module`): FinQA's eval_program and equal_program, the independent expectation."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
FINQA_EVAL = ROOT / "tests" / "data" / "external" / "finqa_eval"

# A FinQA-normalised table (lower-case labels, "$ " apart, as FinQA's `table` field) and passages
TABLE = [
    ["", "2016", "2015", "2014"],
    ["net revenue", "$ 5829", "$ 5735", "$ 5,600"],
    ["operating margin", "12.5%", "10%", "8%"],
    ["net income ( loss )", "$ 310 ( 2 )", "( 45 )", "12"],
    ["shares", "100", "200", "300"],
    ["shares", "1", "2", "3"],  # a second row of the same name: FinQA's dict keeps the last
]
PASSAGES = [
    "entergy 's net revenue is discussed below .",
    "the increase was offset by a decrease of $ 32 million in volume .",
    "capital spending rose 3.5 % to 1,250 million in 2016 .",
]


def load_module(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module", name="finqa_eval")
def finqa_eval_module() -> ModuleType:
    return load_module("finqa_evaluate", FINQA_EVAL / "finqa_evaluate.py")


@pytest.fixture(scope="module", name="finqa_equal")
def finqa_equal_module() -> ModuleType:
    return load_module("finqa_equal_program", FINQA_EVAL / "finqa_equal_program.py")
