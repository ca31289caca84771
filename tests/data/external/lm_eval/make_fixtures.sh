#!/usr/bin/env bash
# Regenerate the lm-evaluation-harness fixtures in this folder. Run by hand, never by CI.
#
# What it does:
#  1. creates a throwaway venv /tmp/fx-lmeval with lm-eval pinned to $LM_EVAL_VERSION (no torch:
#     the dummy model needs none);
#  2. writes two local custom tasks (an --include_path folder) over one local JSONL of five
#     financial questions (dataset_path: json + data_files, so nothing comes from a hub):
#       fintrade_fin_gen  generate_until, exact_match + a second filter ("first-number")
#       fintrade_fin_mc   multiple_choice, acc + acc_norm
#  3. runs `lm_eval --model dummy --log_samples --output_path ...` offline. The dummy model
#     answers every generation with "lol" and scores loglikelihoods with random.random(); the
#     harness seeds python's random with 0 by default, so the multiple-choice picks are
#     the same on every run. The results_<date>.json / samples_<task>_<date>.jsonl names and
#     the timing fields inside them carry the run's clock and cannot be made deterministic;
#  4. copies the produced files here unchanged (names kept), replacing older generated ones.
# The hand-written nasty_* files in this folder are not touched. They are, by hand:
#   nasty_number_answer      a number as the response; true / 0.5 / 0.73 metric values
#   nasty_non_utf8           a latin-1 byte inside the response
#   nasty_unknown_condition  doc.condition "moon_phase_rag"
#   nasty_duplicate          doc 0 / filter none twice (lines 1 and 3)
#   nasty_missing_doc        line 2 without "doc";  nasty_missing_resps: without any resps
#   nasty_truncated          cut inside line 3
#   nasty_old_format         pre-0.4.3 line: arguments [[ctx, kwargs]], no metrics/filter keys
#   nasty_not_lm_eval.jsonl  / .json: valid JSON of other shapes
set -euo pipefail

LM_EVAL_VERSION=0.4.13
VENV=/tmp/fx-lmeval
WORK=/tmp/fx-lmeval-run
HERE="$(cd "$(dirname "$0")" && pwd)"

if [ ! -x "$VENV/bin/lm_eval" ] || ! "$VENV/bin/pip" show lm-eval 2>/dev/null \
    | grep -qx "Version: $LM_EVAL_VERSION"; then
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "lm-eval==$LM_EVAL_VERSION"
fi

rm -rf "$WORK"
mkdir -p "$WORK/tasks" "$WORK/out"
cd "$WORK"   # data_files below is relative to here, so no /tmp path leaks into the config

cat > fin_questions.jsonl <<'JSONL'
{"question_id": "fin-aapl-q4-2024-ni", "question": "What was AAPL's net income in fiscal Q4 2024?", "answer": "$14.74 billion", "choices": ["$14.74 billion", "$22.96 billion", "$19.88 billion", "$11.52 billion"], "gold": 0, "condition": "no_rag", "ticker": "AAPL", "as_of": "2024-11-01", "category": "income_statement"}
{"question_id": "fin-msft-q1-2025-rev", "question": "What was MSFT's revenue in fiscal Q1 2025?", "answer": "$65.6 billion", "choices": ["$56.5 billion", "$65.6 billion", "$61.9 billion", "$69.6 billion"], "gold": 1, "condition": "rag", "ticker": "MSFT", "as_of": "2024-10-31", "category": "income_statement"}
{"question_id": "fin-nvda-q3-2025-dc", "question": "What was NVDA's data center revenue in fiscal Q3 2025?", "answer": "$30.8 billion", "choices": ["$14.5 billion", "$26.3 billion", "$30.8 billion", "$35.1 billion"], "gold": 2, "condition": "oracle", "ticker": "NVDA", "as_of": "2024-11-20", "category": "segments"}
{"question_id": "fin-amzn-q3-2024-aws", "question": "What was AMZN's AWS operating income in Q3 2024?", "answer": "$10.4 billion", "choices": ["$6.98 billion", "$9.3 billion", "$27.5 billion", "$10.4 billion"], "gold": 3, "condition": "no_rag", "ticker": "AMZN", "as_of": "2024-10-31", "category": "segments"}
{"question_id": "fin-googl-q3-2024-rev", "question": "What was GOOGL's total revenue in Q3 2024?", "answer": "$88.3 billion", "choices": ["$88.3 billion", "$76.7 billion", "$84.7 billion", "$96.5 billion"], "gold": 0, "condition": "tool_use", "ticker": "GOOGL", "as_of": "2024-10-29", "category": "income_statement"}
JSONL

cat > tasks/fintrade_fin_gen.yaml <<'YAML'
task: fintrade_fin_gen
dataset_path: json
dataset_kwargs:
  data_files:
    test: fin_questions.jsonl
test_split: test
output_type: generate_until
doc_to_text: question
doc_to_target: answer
generation_kwargs:
  until: ["\n"]
  do_sample: false
filter_list:
  - name: "none"
    filter:
      - function: "take_first"
  - name: "first-number"
    filter:
      - function: "regex"
        regex_pattern: "(\\$?[0-9][0-9.,]*)"
      - function: "take_first"
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
    ignore_case: true
    ignore_punctuation: true
metadata:
  version: 1.0
YAML

cat > tasks/fintrade_fin_mc.yaml <<'YAML'
task: fintrade_fin_mc
dataset_path: json
dataset_kwargs:
  data_files:
    test: fin_questions.jsonl
test_split: test
output_type: multiple_choice
doc_to_text: "Question: {{question}}\nAnswer:"
doc_to_choice: choices
doc_to_target: gold
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
  - metric: acc_norm
    aggregation: mean
    higher_is_better: true
metadata:
  version: 1.0
YAML

HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 HF_HOME="$WORK/hf" \
  "$VENV/bin/lm_eval" --model dummy \
  --tasks fintrade_fin_gen,fintrade_fin_mc \
  --include_path "$WORK/tasks" \
  --log_samples --output_path "$WORK/out" 2>&1 | tee "$WORK/lm_eval.log"

# the harness writes into out/<sanitized model name>/; keep the produced files, names unchanged
rm -f "$HERE"/results_*.json "$HERE"/samples_fintrade_*.jsonl
find "$WORK/out" -type f \( -name 'results_*.json' -o -name 'samples_*.jsonl' \) \
  -exec cp {} "$HERE"/ \;
ls -l "$HERE"
