"""Model gateway room: what a model's tokens cost and how many tokens a prompt holds, both read
from litellm (its offline price map and its token counter; models/llm.py imports it) — or, for
a self-served or unlisted model, from the registry entry's own `input_cost_per_token` and
`output_cost_per_token`.

`custom_price` is what a `Call` carries for `llm.call_cost`, which prices each call's reported
usage (a run record's `cost`: the provider's token counts, never an estimate); `unit_price`,
`tokenizer` and `count_prompt` serve the plan a batch shows before it runs (runs/plan.py),
which sends nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fintrade_tui.config import ModelConfig
from fintrade_tui.models.llm import call_cost, litellm

# the HuggingFace tokenizers litellm ships in its wheel; the others (llama, cohere) it would
# download, so a plan (offline, and meant to be quick) counts those with the estimate instead
_BUNDLED = ("anthropic", "deepseek")
ESTIMATE = "cl100k_base"  # litellm's default encoding, the count used without a tokenizer


@dataclass(frozen=True)
class Price:
    """USD per token, and where the figures come from: `config` (the registry entry's own
    `input_cost_per_token` / `output_cost_per_token`) or `litellm` (its price map)."""

    input: float
    output: float
    source: str

    def of(self, tokens_in: float, tokens_out: float) -> float:
        return self.input * tokens_in + self.output * tokens_out


def custom_price(spec: ModelConfig) -> dict[str, float] | None:
    """litellm's `custom_cost_per_token` of an entry that sets its own prices (either one set
    is enough: the other counts 0), else None."""
    if spec.input_cost_per_token is None and spec.output_cost_per_token is None:
        return None
    return {
        "input_cost_per_token": spec.input_cost_per_token or 0.0,
        "output_cost_per_token": spec.output_cost_per_token or 0.0,
    }


def unit_price(spec: ModelConfig, local: bool = False) -> Price | None:
    """The price per prompt and per completion token a plan multiplies: the entry's own, else
    litellm's (read from a million tokens of each, so a per-million price keeps its digits);
    None for a local model or one without a price anywhere."""
    custom = custom_price(spec)
    if custom is not None:
        return Price(custom["input_cost_per_token"], custom["output_cost_per_token"], "config")
    if local:
        return None
    per_in = call_cost(spec.model, 1_000_000, 0)
    per_out = call_cost(spec.model, 0, 1_000_000)
    if per_in is None or per_out is None:
        return None
    return Price(per_in / 1e6, per_out / 1e6, "litellm")


def tokenizer(model: str) -> tuple[str, bool]:
    """(what counts this model's prompt tokens, whether it is the model's own tokenizer):
    tiktoken's encoding for an OpenAI model, litellm's bundled tokenizer for Anthropic and
    DeepSeek models, else the `ESTIMATE` encoding."""
    lm = litellm()
    try:  # litellm's own choice of tokenizer (loaded with it: models/llm.py stays its importer)
        tc = lm.litellm_core_utils.token_counter
        if tc.is_openai_model(model):
            return tc.openai_tokenizer_encoding_name(model), True
        kind = lm.utils.huggingface_tokenizer_kind(model)
        if kind in _BUNDLED:
            return f"{kind} tokenizer", True
    except Exception:  # a litellm without these helpers: the estimate, said as such
        pass
    return ESTIMATE, False


def count_prompt(
    model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
) -> int:
    """Prompt tokens of one chat request as litellm counts them (message overhead included),
    with the model's tokenizer where `tokenizer` finds one, else the estimate encoding."""
    _, own = tokenizer(model)
    return int(litellm().token_counter(model=model if own else "", messages=messages, tools=tools))
