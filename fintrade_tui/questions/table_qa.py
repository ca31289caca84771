"""Table-QA importer room: FinQA, ConvFinQA and TAT-QA files read exactly as published.

finqa -- FinQA dataset/*.json: a list of {pre_text, post_text, filename, table_ori, table,
    qa: {question, program, gold_inds, exe_ans, answer, ...}, id}; one question per item, id
    "FINQA-<id>". private_test.json (question only) imports without references.
convfinqa -- ConvFinQA train/dev/test.json (FinQA's fields, qa or qa_0/qa_1, and
    annotation: {dialogue_break, turn_program, exe_ans_list, qa_split, ...}): one question per
    turn, id "CONVFINQA-<id>-t<turn>" (turn from 0, as the turn files' turn_ind); the turn files
    (*_turn.json: annotation.cur_dial, cur_program, exe_ans, turn_ind, gold_ind) give the same
    ids. A turn's text is the conversation so far, its own question last.
tatqa -- TAT-QA tatqa_dataset_*.json: a list of {table: {uid, table}, paragraphs: [{uid, order,
    text}], questions: [{uid, order, question, answer, derivation, answer_type, answer_from,
    rel_paragraphs, scale, ...}]}; one question per question, id "TATQA-<question uid>".

Every question keeps in `extra`: table_rows (the table as published: FinQA's table_ori, TAT-QA's
table), table_norm (FinQA's normalised table, which its programs read; TAT-QA: the same rows),
passages (FinQA's text_N order, pre_text then post_text; TAT-QA's paragraphs by order),
gold_inds ({"table_3": ..., "text_1": ...} as FinQA publishes it; for TAT-QA built from
rel_paragraphs and answer_from), program (FinQA's, or the turn's), exe_ans, answer_text (FinQA's
qa.answer), published_id; TAT-QA also answer (as published), derivation, scale, answer_type,
answer_from. FinQA's filename "ADI/2009/page_49.pdf" gives ticker, fiscal_year and page.

category: where the gold facts are: "table", "text" or "table+text" (TAT-QA's answer_from,
"table-text" written "table+text"), else "unknown"; answer type and scale stay in extra.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

from fintrade_tui.errors import UserError
from fintrade_tui.workspace.questions import Question

TABLE_QA_FORMATS = ("finqa", "convfinqa", "tatqa")
KIND = "document_qa"  # kind.py step 0: the question is about the document it comes with
_FILENAME = re.compile(r"^([A-Za-z.\-]+)/((?:19|20)\d\d)/page_(\d+)\.pdf$")
_FIX = {
    "finqa": "a FinQA file is a JSON list of {pre_text, post_text, table, qa: {question}, id}",
    "convfinqa": "a ConvFinQA file is a JSON list of {table, annotation: {dialogue_break}, id}",
    "tatqa": "a TAT-QA file is a JSON list of {table: {table}, paragraphs, questions}",
}


def _items(path: Path, text: str, fmt: str) -> list[Any]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"{path} line {exc.lineno}"
        raise UserError(where, f"is not valid JSON ({exc.msg})", "fix the syntax there") from None
    except RecursionError:
        raise UserError(str(path), "nested deeper than JSON allows", _FIX[fmt]) from None
    if not isinstance(doc, list):
        raise UserError(str(path), "is not a JSON list", _FIX[fmt])
    return doc


def _where(path: Path, n: int, item: Any) -> str:
    ident = item.get("id") if isinstance(item, dict) else None
    return f"{path} item {n}" + (f" ({ident})" if isinstance(ident, str) else "")


def _need(ok: bool, where: str, problem: str, fmt: str) -> None:
    if not ok:
        _refuse(where, problem, fmt)


def _refuse(where: str, problem: str, fmt: str) -> NoReturn:
    raise UserError(where, problem, _FIX[fmt])


def _rows(table: Any) -> list[list[str]] | None:
    if not isinstance(table, list) or not all(isinstance(r, list) for r in table):
        return None
    return [["" if c is None else str(c) for c in row] for row in table]


def _strings(v: Any) -> list[str]:
    return [str(s) for s in v] if isinstance(v, list) else []


def category_of(gold_inds: dict[str, Any]) -> str:
    """Where the gold facts are: table, text, table+text, or unknown."""
    kinds = {k.split("_")[0] for k in gold_inds}
    return "+".join(k for k in ("table", "text") if k in kinds) or "unknown"


def _number(v: Any) -> float | int | None:
    return v if isinstance(v, int | float) and not isinstance(v, bool) else None


def _document(item: dict[str, Any], where: str, fmt: str) -> dict[str, Any]:
    """What a FinQA-style item shares with all its questions: table, passages, filing."""
    table_norm = _rows(item.get("table"))
    _need(table_norm is not None, where, '"table" must be a list of rows', fmt)
    assert table_norm is not None
    ori = item.get("table_ori")
    rows = _rows(ori) if ori is not None else table_norm
    _need(rows is not None, where, '"table_ori" must be a list of rows', fmt)
    for key in ("pre_text", "post_text"):
        v = item.get(key, [])
        _need(isinstance(v, list), where, f'"{key}" must be a list of sentences', fmt)
    extra: dict[str, Any] = {
        "table_rows": rows,
        "table_norm": table_norm,
        "passages": _strings(item.get("pre_text")) + _strings(item.get("post_text")),
        "question_kind": KIND,
    }
    filename = str(item.get("filename") or "")
    if m := _FILENAME.match(filename):  # "ADI/2009/page_49.pdf": the filer's fiscal 2009 report
        extra |= {"filename": filename, "ticker": m[1].upper(), "fiscal_year": int(m[2])}
        extra["page"] = int(m[3])
    elif filename:
        extra["filename"] = filename
    return extra


def _claim(seen: set[str], qid: str, where: str) -> None:
    if qid in seen:
        raise UserError(where, f"duplicate question id {qid}", "keep each item once")
    seen.add(qid)


def _item_id(item: dict[str, Any], where: str, fmt: str) -> str:
    ident = item.get("id")
    _need(isinstance(ident, str) and bool(ident.strip()), where, 'missing "id"', fmt)
    return str(ident).strip()


def _entries(path: Path, text: str, fmt: str) -> Iterator[tuple[str, dict[str, Any], str]]:
    """(where, item, id) of every item of a FinQA-shaped file, each an object with an id."""
    for n, item in enumerate(_items(path, text, fmt), start=1):
        where = _where(path, n, item)
        _need(isinstance(item, dict), where, "is not an object", fmt)
        yield where, item, _item_id(item, where, fmt)


def read_finqa(path: Path, text: str) -> list[Question]:
    """FinQA's train/dev/test/private_test.json, one question per item."""
    out: list[Question] = []
    seen: set[str] = set()
    for where, item, ident in _entries(path, text, "finqa"):
        qa = item.get("qa")
        if not isinstance(qa, dict):
            _refuse(where, 'needs a "qa" object', "finqa")
        question = qa.get("question")
        if not (isinstance(question, str) and question.strip()):
            _refuse(where, "no qa.question", "finqa")
        extra = _document(item, where, "finqa")
        gold_inds = qa.get("gold_inds")
        gold: dict[str, Any] = gold_inds if isinstance(gold_inds, dict) else {}
        exe_ans, answer = qa.get("exe_ans"), qa.get("answer")
        extra |= {"published_id": ident, "gold_inds": gold, "program": qa.get("program")}
        if "program_re" in qa:
            extra["program_re"] = qa["program_re"]
        if exe_ans is not None:
            extra["exe_ans"] = exe_ans
        if answer is not None:
            extra["answer_text"] = answer
        reference = str(exe_ans) if _number(exe_ans) is not None else answer
        if reference is None and exe_ans is not None:  # FinQA's yes/no: exe_ans "yes"
            reference = str(exe_ans)
        qid = f"FINQA-{ident}"
        _claim(seen, qid, where)
        out.append(
            Question(
                id=qid,
                source="finqa",
                category=category_of(gold),
                text=question.strip(),
                reference_answer=None if reference is None else str(reference),
                extra=extra,
            )
        )
    return out


_TURN_ID = re.compile(r"^(.*)_(\d+)$")


def _turns(item: dict[str, Any], ann: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """(turn, dialogue so far, program, exe_ans, gold_inds) of a conversation or turn entry."""
    if "turn_ind" in ann and "cur_dial" in ann:  # a turn file's entry: one turn
        turn = int(ann["turn_ind"])
        gold = ann.get("gold_ind") if isinstance(ann.get("gold_ind"), dict) else None
        yield {
            "turn": turn,
            "dialogue": _strings(ann["cur_dial"]),
            "program": ann.get("cur_program"),
            "exe_ans": ann.get("exe_ans"),
            "gold": gold if gold is not None else _gold(item, ann, turn),
        }
        return
    dialogue = _strings(ann.get("dialogue_break"))
    programs, answers = ann.get("turn_program") or [], ann.get("exe_ans_list") or []
    for turn in range(len(dialogue)):
        yield {
            "turn": turn,
            "dialogue": dialogue[: turn + 1],
            "program": programs[turn] if turn < len(programs) else None,
            "exe_ans": answers[turn] if turn < len(answers) else None,
            "gold": _gold(item, ann, turn),
        }


def _gold(item: dict[str, Any], ann: dict[str, Any], turn: int) -> dict[str, Any]:
    """The gold facts of the FinQA question a turn was decomposed from (qa, or qa_0/qa_1)."""
    split = ann.get("qa_split") or []
    qa = item.get("qa") or item.get(f"qa_{split[turn] if turn < len(split) else 0}") or {}
    gold = qa.get("gold_inds") if isinstance(qa, dict) else None
    return gold if isinstance(gold, dict) else {}


def _turn_text(dialogue: list[str]) -> str:
    if len(dialogue) == 1:
        return dialogue[0].strip()
    lines = [f"Q{i}: {q.strip()}" for i, q in enumerate(dialogue[:-1], start=1)]
    return "\n".join([*lines, f"Q{len(dialogue)} (answer this one): {dialogue[-1].strip()}"])


def read_convfinqa(path: Path, text: str) -> list[Question]:
    """ConvFinQA's conversation or turn files, one question per turn."""
    out: list[Question] = []
    seen: set[str] = set()
    for where, item, ident in _entries(path, text, "convfinqa"):
        ann = item.get("annotation")
        if not (
            isinstance(ann, dict)
            and isinstance(ann.get("dialogue_break", ann.get("cur_dial")), list)
        ):
            _refuse(where, 'needs "annotation" with a "dialogue_break" list', "convfinqa")
        document = _document(item, where, "convfinqa")
        turn_file = "turn_ind" in ann and "cur_dial" in ann
        conversation = ident
        if turn_file and (m := _TURN_ID.match(ident)) and int(m[2]) == int(ann["turn_ind"]):
            conversation = m[1]  # "Single_MRO/2007/page_134.pdf-1_0": turn 0 of ..._134.pdf-1
        for t in _turns(item, ann):
            if not t["dialogue"]:
                continue
            exe_ans, gold = t["exe_ans"], t["gold"]
            extra = document | {
                "published_id": ident,
                "conversation_id": conversation,
                "turn": t["turn"],
                "dialogue": t["dialogue"],
                "turn_question": t["dialogue"][-1],
                "gold_inds": gold,
                "program": t["program"],
            }
            if exe_ans is not None:
                extra["exe_ans"] = exe_ans
            qid = f"CONVFINQA-{conversation}-t{t['turn']}"
            _claim(seen, qid, where)
            out.append(
                Question(
                    id=qid,
                    source="convfinqa",
                    category=category_of(gold),
                    text=_turn_text(t["dialogue"]),
                    reference_answer=None if exe_ans is None else str(exe_ans),
                    extra=extra,
                )
            )
    return out


def _tatqa_answer(answer: Any) -> str | None:
    if answer is None or answer == "":
        return None
    if isinstance(answer, list):  # spans: "a, b"
        return ", ".join(str(a) for a in answer)
    return str(answer)


def tatqa_gold(question: dict[str, Any], passages: list[str], orders: list[int]) -> dict[str, str]:
    """FinQA's gold_inds shape from TAT-QA's rel_paragraphs (text_N, N the 0-based passage)
    and answer_from (table, table-text: the table is marked as "table")."""
    gold: dict[str, str] = {}
    if str(question.get("answer_from") or "").startswith("table"):
        gold["table"] = "the table"
    for rel in question.get("rel_paragraphs") or []:
        try:
            i = orders.index(int(rel))
        except ValueError:
            continue
        gold[f"text_{i}"] = passages[i]
    return gold


def read_tatqa(path: Path, text: str) -> list[Question]:
    """TAT-QA's tatqa_dataset_{train,dev,test,test_gold}.json, one question per question."""
    out: list[Question] = []
    seen: set[str] = set()
    for n, block in enumerate(_items(path, text, "tatqa"), start=1):
        where = f"{path} item {n}"
        ok = isinstance(block, dict) and isinstance(block.get("table"), dict)
        _need(ok, where, 'needs a "table" object {uid, table}', "tatqa")
        rows = _rows(block["table"].get("table"))
        _need(rows is not None, where, '"table.table" must be a list of rows', "tatqa")
        paragraphs = block.get("paragraphs", [])
        ok = isinstance(paragraphs, list) and all(isinstance(p, dict) for p in paragraphs)
        _need(ok, where, '"paragraphs" must be a list of {uid, order, text}', "tatqa")
        _need(isinstance(block.get("questions"), list), where, 'needs a "questions" list', "tatqa")
        paragraphs = sorted(paragraphs, key=lambda p: int(p.get("order") or 0))
        passages = [str(p.get("text") or "") for p in paragraphs]
        orders = [int(p.get("order") or 0) for p in paragraphs]
        for k, q in enumerate(block["questions"], start=1):
            at = f"{where} question {k}"
            ok = isinstance(q, dict) and isinstance(q.get("question"), str) and bool(q.get("uid"))
            _need(ok, at, "needs a uid and a question", "tatqa")
            source = str(q.get("answer_from") or "")
            extra: dict[str, Any] = {
                "table_rows": rows,
                "table_norm": rows,
                "table_uid": block["table"].get("uid"),
                "passages": passages,
                "paragraph_uids": [p.get("uid") for p in paragraphs],
                "gold_inds": tatqa_gold(q, passages, orders),
                "program": None,
                "question_kind": KIND,
                "published_id": q["uid"],
            }
            for key in ("derivation", "scale", "answer_type", "answer_from", "rel_paragraphs"):
                if key in q:
                    extra[key] = q[key]
            if "answer" in q:
                extra["answer"] = q["answer"]  # exactly as published: list, str or number
            if "req_comparison" in q:
                extra["req_comparison"] = q["req_comparison"]
            qid = f"TATQA-{q['uid']}"
            _claim(seen, qid, at)
            out.append(
                Question(
                    id=qid,
                    source="tatqa",
                    category=source.replace("-", "+") if source else "unknown",
                    text=q["question"].strip(),
                    reference_answer=_tatqa_answer(q.get("answer")),
                    extra=extra,
                )
            )
    return out


TABLE_QA_READERS: dict[str, Callable[[Path, str], list[Question]]] = {
    "finqa": read_finqa,
    "convfinqa": read_convfinqa,
    "tatqa": read_tatqa,
}


def detect_table_qa(blocks: list[Any]) -> str | None:
    """The table-QA format of a parsed JSON list, from its first entry, or None."""
    first = blocks[0] if blocks else None
    if not isinstance(first, dict):
        return None
    if isinstance(first.get("table"), dict) and "questions" in first:
        return "tatqa"
    if isinstance(first.get("annotation"), dict) and "table" in first:
        return "convfinqa"
    if isinstance(first.get("qa"), dict) and "table" in first:
        return "finqa"
    return None
