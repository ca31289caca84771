"""Application room: start-up orchestration beside the CLI and the UI — making the store, the
questions and the indexes ready before a command or the explorer needs them."""
