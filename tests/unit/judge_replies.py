"""What the LLM-judge tests share (tests/unit/test_judging.py, tests/unit/test_import_generic.py):
`valid_reply`, a judge reply that passes validation, as the JSON text a mocked judge model
returns, with the accuracy score and the metrics it lists as asked."""

from __future__ import annotations

import json


def valid_reply(acc: int = 4, metrics: list[str] | None = None) -> str:
    dim = lambda s: {"score": s, "justification": "because"}  # noqa: E731
    return json.dumps(
        {
            "accuracy": dim(acc),
            "completeness": dim(3),
            "relevance": dim(4),
            "clarity": dim(5),
            "metrics_used": metrics if metrics is not None else ["ROE", "Return on Assets", "EPS"],
            "fundamental_integration": 4,
            "trading_signal_integration": 1,
            "reasoning_depth": 3,
        }
    )
