"""Results screen (a package, one room a module): the accuracy matrix (model × condition × the
question set's categories, Δ vs No-RAG with significance marks, from the LLM judge's scores, the
people's, or their labels), the human–judge agreement table and a failure-case browser with
filter toggles. `l` swaps the matrix for the lane tables (Δ vs No-RAG per comparison and lane,
with a forest plot; `p` cycles the judging protocols), `a` the agreement for inter-annotator
agreement (κ, α), `D` opens the annotators' disagreements for adjudication. Enter replays a
case in the Arena (read-only, beside the question's other answers); `x` writes its case study
as HTML (with the explorer's own screenshots) and Markdown; `w` writes the filtered view as an
HTML report (matrix, cases, their answers) and its runs and matrix as JSONL and CSV. `$` swaps
the matrix for what the runs cost per model × condition and per right answer; `m` re-scores
the view with the answer matcher.

Every query runs in a worker thread on a workspace cursor; the bootstrap behind the accuracy
table runs there too (with fewer resamples than the CLI), behind a loading state.

Rooms: state.py (the one `ResultsState` the screen creates and hands on), screen.py (layout,
keys, workers), matrix.py (matrix, lanes, agreement), failures.py (the case browser), cost.py
(`$`), rescore.py (`m`), reads.py (the worker threads' reads and exports); the text they show
is built in fintrade_tui/ui/results_text.py."""

from .failures import KEYS
from .reads import RESAMPLES
from .screen import ResultsScreen
from .state import ResultsState

__all__ = ["KEYS", "RESAMPLES", "ResultsScreen", "ResultsState"]
