"""fintrade-tui: a terminal explorer for financial-reasoning benchmarks."""

import os

# litellm fetches its model cost map from the web at import unless told not to (and prints
# warnings while it retries); whichever module imports it first, it must see this
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
