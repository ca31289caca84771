"""Models room: the model gateway. A registry name is resolved once into a `Model`
(models/resolve.py: local or hosted, its deployment pool, its capabilities); litellm, the offline
local engine (llama.cpp) and packaged weights live here and load lazily. It imports neither runs
nor judging."""
