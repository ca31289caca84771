#!/usr/bin/env bash
# Regenerate the promptfoo fixtures of tests/unit/test_import_promptfoo.py with the real tool.
#
# Run by hand (never by CI), from anywhere: bash tests/data/external/promptfoo/make_fixtures.sh
# Needs node 20.20+ and npm; the only network use is `npm install` from the npm registry.
#
# What it does:
#   1. installs promptfoo 0.121.20 (the newest release that still runs on node 20) into the
#      throwaway prefix /tmp/fx-promptfoo, with telemetry, update checks, sharing and remote
#      generation disabled and its database/config kept under /tmp/fx-promptfoo/home;
#   2. writes a small fake NASDAQ benchmark (1 prompt, 4 tests, 2 providers: the built-in `echo`
#      provider labelled "finbot-echo" and a local JS provider "finbot-rag" that answers from a
#      table, reports token usage and cost, and fails on one question) and runs
#      `promptfoo eval -o eval_v3.json` -> results version 3 (results.results[] + prompts);
#   3. adds a human rating the way the web UI does: starts `promptfoo view` on localhost,
#      POSTs to /api/eval/<evalId>/results/<resultId>/rating the gradingResult the UI's
#      rating code builds (a componentResults entry with assertion.type "human", reason
#      "Manual result (overrides all other grading results)" and the comment), then
#      `promptfoo export eval <evalId> -o eval_v3_rated.json` -> the tool's own export;
#   4. installs promptfoo 0.91.3, a release whose evaluator still returns results version 2
#      with results.table {head, body} (0.70.1 and older pull `rouge` from a GitHub tarball and
#      do not install from the registry alone; PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD stops its
#      optional chromium download), into /tmp/fx-promptfoo-v2 and runs the same benchmark ->
#      eval_v2.json.
#
# Not deterministic: evalId, result ids, timestamps, latencyMs and durations change every run
# (promptfoo has no seed for them); the tests read expectations from the files themselves.
# The "nasty" files (nasty_*.json) are hand-written and NOT touched by this script;
# nasty_truncated.json is the first 9335 bytes of an earlier eval_v3.json (cut inside result 1)
# and nasty_non_utf8.json has a stray 0xff and a Latin-1 0xe9 written into an answer.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
V3=0.121.20
V2=0.91.3
PREFIX=/tmp/fx-promptfoo
PREFIX_V2=/tmp/fx-promptfoo-v2
WORK=/tmp/fx-promptfoo/work
PORT=15577

export PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 PROMPTFOO_DISABLE_SHARING=1
export PROMPTFOO_DISABLE_REMOTE_GENERATION=1 PROMPTFOO_DISABLE_REDTEAM_REMOTE_GENERATION=1
export PROMPTFOO_CACHE_ENABLED=false NO_COLOR=1 BROWSER=none PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
export PROMPTFOO_CONFIG_DIR="$PREFIX/home"   # keep the sqlite db out of ~/.promptfoo

install() { # prefix version
  if [ "$(node -p "require('$1/node_modules/promptfoo/package.json').version" 2>/dev/null)" != "$2" ]; then
    mkdir -p "$1"
    npm install --prefix "$1" --no-audit --no-fund "promptfoo@$2"
  fi
}
install "$PREFIX" "$V3"
install "$PREFIX_V2" "$V2"

rm -rf "$WORK" "$PROMPTFOO_CONFIG_DIR"
mkdir -p "$WORK" "$PROMPTFOO_CONFIG_DIR"
cd "$WORK"

# A provider that answers from a table: gives the eval token usage, cost and one error.
cat > finbot_rag.js <<'JS'
const ANSWERS = {
  'aapl-ni-q4-2024': { text: 'AAPL reported net income of $14.7 billion in fiscal Q4 2024.', p: 41, c: 14 },
  'msft-rev-q2-2024': { text: 'MSFT revenue was $62.0 billion in fiscal Q2 2024.', p: 43, c: 12 },
  'nvda-dc-q3-2025': { text: 'About 30 billion dollars.', p: 47, c: 6 },
};
class FinbotRag {
  constructor(options) { this.providerId = options.id || 'finbot-rag'; this.label = options.label; }
  id() { return this.providerId; }
  async callApi(prompt, context) {
    const a = ANSWERS[context.vars.question_id];
    if (!a) return { error: 'upstream 503: retrieval index unavailable' };
    return { output: a.text, tokenUsage: { prompt: a.p, completion: a.c, total: a.p + a.c },
             cost: (a.p * 3 + a.c * 15) / 1e6 };
  }
}
module.exports = FinbotRag;
JS

cat > promptfooconfig.yaml <<'YAML'
description: fintrade-mini NASDAQ facts
prompts:
  - id: analyst
    label: analyst-brief
    raw: "You are a financial analyst. Answer in one sentence.\nQuestion about {{ticker}} (as of {{as_of}}): {{question}}"
providers:
  - id: echo
    label: finbot-echo
  - id: file://finbot_rag.js
    label: finbot-rag
defaultTest:
  assert:
    - type: contains
      value: "{{ticker}}"
tests:
  - description: AAPL net income
    vars:
      question_id: aapl-ni-q4-2024
      question: What was AAPL's net income in fiscal Q4 2024?
      condition: closed_book
      ticker: AAPL
      as_of: "2024-11-01"
      category: income_statement
      expected: $14.7 billion
    assert:
      - type: icontains
        value: net income
      - type: contains
        value: "{{expected}}"
  - description: MSFT revenue
    vars:
      question_id: msft-rev-q2-2024
      question: What was MSFT's total revenue in fiscal Q2 2024?
      condition: with_filing
      ticker: MSFT
      as_of: "2024-02-01"
      category: income_statement
      expected: $62.0 billion
    assert:
      - type: contains
        value: "{{expected}}"
  - description: NVDA data center revenue
    vars:
      question_id: nvda-dc-q3-2025
      question: What was NVDA's data center revenue in fiscal Q3 2025?
      condition: with_filing
      ticker: NVDA
      as_of: "2024-12-01"
      category: segments
      expected: $30.8 billion
    assert:
      - type: icontains
        value: data center
  - description: TSLA deliveries
    vars:
      question_id: tsla-deliv-q3-2024
      question: How many vehicles did TSLA deliver in Q3 2024?
      condition: closed_book
      ticker: TSLA
      as_of: "2024-10-15"
      category: operations
      expected: "462,890"
    assert:
      - type: contains
        value: "{{expected}}"
YAML

pf() { "$PREFIX/node_modules/.bin/promptfoo" "$@"; }
# exit code 100 = "some tests failed", which this benchmark does on purpose
pf eval -c promptfooconfig.yaml -j 1 --no-cache --no-table --no-progress-bar \
  -o "$HERE/eval_v3.json" || [ $? -eq 100 ]

# --- human rating through the web UI's own endpoint ------------------------------------------
EVAL_ID="$(node -p "require('$HERE/eval_v3.json').evalId")"
if curl -fs "http://127.0.0.1:$PORT/health" >/dev/null; then
  echo "port $PORT is taken (an earlier promptfoo view?): stop it first" >&2; exit 1
fi
# the binary itself (not the pf function) so that $! is the server's own pid
"$PREFIX/node_modules/.bin/promptfoo" view --port "$PORT" -n >view.log 2>&1 &
VIEW_PID=$!
trap 'kill "$VIEW_PID" 2>/dev/null || true' EXIT
for _ in $(seq 60); do curl -fs "http://127.0.0.1:$PORT/health" >/dev/null && break; sleep 1; done
# rate the echo provider's NVDA answer (test 2, prompt 0: the assertion passed) as wrong,
# building the body exactly as the UI's rating code does (IQ/LQ in dist/src/app/assets/index-*.js)
BODY="$(node -e '
const out = require(process.argv[1]);
const r = out.results.results.find(x => x.testIdx === 2 && x.promptIdx === 0);
const comment = "Echoes the question; no figure given.";
const human = { pass: false, score: 0, reason: "Manual result (overrides all other grading results)",
                comment, assertion: { type: "human" } };
const g = r.gradingResult;
const body = { ...g, pass: false, score: 0, comment,
               reason: "Manual result (overrides all other grading results)",
               componentResults: [...(g.componentResults || []), human] };
console.log(JSON.stringify({ id: r.id, body }));
' "$HERE/eval_v3.json")"
RESULT_ID="$(node -p "JSON.parse(process.argv[1]).id" "$BODY")"
curl -fsS -X POST -H 'Content-Type: application/json' \
  --data "$(node -p "JSON.stringify(JSON.parse(process.argv[1]).body)" "$BODY")" \
  "http://127.0.0.1:$PORT/api/eval/$EVAL_ID/results/$RESULT_ID/rating" >/dev/null
kill "$VIEW_PID"
wait "$VIEW_PID" 2>/dev/null || true
pf export eval "$EVAL_ID" -o "$HERE/eval_v3_rated.json"

# --- the older v2 layout ----------------------------------------------------------------------
export PROMPTFOO_CONFIG_DIR="$PREFIX_V2/home"
rm -rf "$PROMPTFOO_CONFIG_DIR"
mkdir -p "$PROMPTFOO_CONFIG_DIR"
"$PREFIX_V2/node_modules/.bin/promptfoo" eval -c promptfooconfig.yaml -j 1 --no-cache \
  --no-table --no-progress-bar -o "$HERE/eval_v2.json" || [ $? -eq 100 ]

ls -l "$HERE"/eval_v*.json
