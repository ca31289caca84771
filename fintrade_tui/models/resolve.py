"""Model resolution room: a registry name turned, once per call site, into a `Model` — the entry,
whether it is local or hosted, its deployment pool, what its provider can do (native tools,
a JSON schema reply, token logprobs) and the call arguments litellm is sent. Everything else
asks the `Model`; nothing outside this room looks at the `local/` prefix.

`resolve` is the only place a name is looked up in the registry; `RESOLUTIONS` counts how
often per name, so a test can hold a command to one resolution per model.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from fintrade_tui import redact
from fintrade_tui.config import Config, ModelConfig
from fintrade_tui.errors import UserError
from fintrade_tui.models.llm import Call, litellm

if TYPE_CHECKING:
    from fintrade_tui.models.deployments import Pool
LOCAL = "local/"  # the litellm provider prefix of the offline llama.cpp models
RESOLUTIONS: Counter[str] = Counter()
# entry keys about money, not the model: left out of a run's params (and so of its batch key)
NOT_PARAMS = ("input_cost_per_token", "output_cost_per_token", "max_cost")


@dataclass(eq=False)
class Model:
    """A registry entry resolved: ask it, never the model string, what kind of model it is."""

    name: str
    spec: ModelConfig
    model_dir: Path | None = None  # where packaged local weights are assembled

    @property
    def string(self) -> str:
        """The litellm model string ("openai/gpt-4o-mini", "local/smollm2")."""
        return self.spec.model

    @property
    def local(self) -> bool:
        return local_string(self.spec.model)

    @property
    def kind(self) -> Literal["local", "hosted"]:
        return "local" if self.local else "hosted"

    @property
    def evidence_tokens(self) -> int | None:
        return self.spec.evidence_tokens

    @cached_property
    def pool(self) -> Pool | None:
        """The one deployment pool of this entry in this process (None: one endpoint)."""
        if not self.spec.deployments:
            return None
        from fintrade_tui.models import deployments

        return deployments.pool(self.name, self.spec)

    def call(self) -> Call:
        """litellm keyword arguments (the key read from its environment variable now); a
        local model's weights are registered (and verified) first."""
        from fintrade_tui.models.keys import env_key

        s = self.spec
        kw: dict[str, Any] = {
            "model": s.model,
            "temperature": s.temperature,
            "max_tokens": s.max_tokens,
            "timeout": s.timeout,
        }
        if s.api_base:
            kw["api_base"] = s.api_base
        if s.api_key_env:
            kw["api_key"] = env_key(f"model {self.name!r}", s.api_key_env)
        if self.local:
            from fintrade_tui.models import local

            local.register(self.local_name, s.gguf, s.context_tokens, self.model_dir)
        from fintrade_tui.models.pricing import custom_price

        return Call(kw | s.extra, self.pool, self.local, custom_price(s))

    @property
    def local_name(self) -> str:
        """`smollm2` of `local/smollm2` (empty for a hosted model)."""
        return self.spec.model.split("/", 1)[1] if self.local else ""

    @cached_property
    def params(self) -> dict[str, Any]:
        """What a run record keeps of its model parameters: everything but secrets."""
        # endpoints and their limits are not model settings: adding a deployment keeps batch keys;
        # nor is the JSON shape a judge's reply is held to (answers never use it)
        # nor are prices and budgets (a price change must not redo a batch's runs)
        skip = {"api_key_env", "deployments", "cooldown", "structured", *NOT_PARAMS}
        d = self.spec.model_dump(mode="json", exclude=skip)
        d["extra"] = {k: v for k, v in d["extra"].items() if "key" not in k.lower()}
        if self.local:
            from fintrade_tui.models.weights import CATALOGUE

            # packaged weights are verified against this hash before they are loaded
            w = None if self.spec.gguf else CATALOGUE.get(self.local_name)
            d["gguf_sha256"] = w.sha256 if w else None
        return d

    @cached_property
    def tools(self) -> bool:
        """Native tool calls (else Tool-Use routes them itself)."""
        if self.spec.tools != "auto":
            return self.spec.tools == "native"
        return not self.local and self._provider_says("supports_function_calling")

    @cached_property
    def structured(self) -> str:
        """How a reply is held to a JSON schema: "json_schema" (OpenAI's response_format; a
        local model's grammar), "json_object" (llama-cpp-python's server) or "" (the prompt
        asks for JSON)."""
        mode = self.spec.structured
        if mode == "auto":
            known = self.local or self._provider_says("supports_response_schema")
            mode = "json_schema" if known else "prompt"
        return "" if mode == "prompt" else mode

    @cached_property
    def logprobs(self) -> bool:
        """Token probabilities come back (expected judge scores)."""
        if self.local:
            return True
        try:
            return "logprobs" in (litellm().get_supported_openai_params(model=self.string) or [])
        except Exception:  # a provider litellm cannot describe: ask for nothing extra
            return False

    def _provider_says(self, check: str) -> bool:
        try:
            return bool(getattr(litellm(), check)(model=self.string))
        except Exception:  # unknown to litellm's model map
            return False

    def warm(self) -> None:
        """Start loading a local model's weights now, in the background (the Arena calls it as a
        run starts, so the load overlaps RAG's indexing); hosted models need nothing."""
        if self.local:
            from fintrade_tui.models import local

            self.call()  # registers the GGUF (verified before loading)
            local.shared_engine(self.spec.model)

    def prefill(self, messages: list[dict[str, str]]) -> int:
        """Have a local model read `messages` now (blocking until read), so a prompt that
        starts with them later reads only the rest; returns the tokens read. Hosted: 0."""
        if not self.local:
            return 0
        from fintrade_tui.models import local
        from fintrade_tui.models.llama_sampling import Sampling

        self.call()
        engine = local.shared_engine(self.spec.model)
        for _ in engine.stream(messages, Sampling(max_tokens=1, temperature=0.0)):
            pass
        return len(engine.prompt_tokens(messages))


def local_string(model: str) -> bool:
    """A recorded litellm model string (a score's `judge_model`) names a local model."""
    return model.startswith(LOCAL)


def resolve(cfg: Config, name: str) -> Model:
    """The registry entry `name` as a `Model`; one line naming the registry when unknown."""
    RESOLUTIONS[name] += 1
    # every key variable of the registry in use is blanked wherever its value shows up
    redact.watch_config(cfg.models)
    if name not in cfg.models:
        known = ", ".join(sorted(cfg.models)) or "none"
        raise UserError(
            f"model {name!r}", f"is not in the registry ({known})", "add it under models:"
        )
    return Model(name, cfg.models[name], cfg.model_dir)


def resolve_all(cfg: Config, names: list[str]) -> dict[str, Model]:
    """Each distinct name resolved once, in order: a command's models, checked before any work."""
    return {n: resolve(cfg, n) for n in dict.fromkeys(names)}
