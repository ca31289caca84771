"""Runs room: model registry, the offline local provider, evidence conditions, TELeR prompts,
the streaming core, run records and batch runs. Heavy libraries (litellm, llama.cpp) load lazily."""
