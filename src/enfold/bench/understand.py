"""How well the write path reads text it was not tuned on: people, time expressions and
changes of mind, each scored against hand-written expectations (issue 19).

The bundled sets come in two parts written for this purpose by authors who did not see the
code: ``*-tune.jsonl`` (personal life, chat register) is the part rules and thresholds may be
fitted on; ``*-measure.jsonl`` (work, formal and narrative registers) is only measured.

* **people** — each sentence's expected people (named, or a kinship/role term used as a
  person: "Mum", "the landlord", "my co-founder") against the mentions the annotator finds
  (the speaker aside). Precision, recall and F1 over mentions, and how many of the listed
  non-people (places, organisations, products, titles, pets) were taken for a person.
* **time** — each item's one expression and its expected value (a day, a minute, a month or a
  year) against the value of the mention that covers it; a miss when none does.
* **questions** — does a question ask for a named person's view (``recall.analyze``'s
  holder)? Precision and recall over 500 questions that all name a person, half asking for
  a view and half for a fact (one part only: measured, never tuned on).
* **supersede** — each item's events folded into a fresh namespace; a labelled pair (an older
  and a newer event of one holder) is predicted a supersession when a claim resting on the
  newer event supersedes one resting on the older. Precision and recall over the pairs.
* **views** — does the write path read a view (any claim) in a personal message? Precision
  and recall over messages labelled as holding a view or only telling what happened (half
  of them accounts told vividly: "Nor'easter rolled in tonight. The power flickered twice").
* **intents** — the to-dos a personal message sets its writer (precision and recall of
  finding one; how close its label is to the to-do line a person wrote, by MiniLM cosine)
  and the habits a series of messages shows (precision and recall; the label's cosine);
  see :func:`run_intents`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

from enfold.errors import InputError
from enfold.settings import Settings

PARTS = ("tune", "measure")
#: The sets and the parts each has.
#: (A part named "measure-x" or "tune-x" is a further measure or tune part, by another
#: author: ``--part measure`` or ``--part tune`` runs it too.)
SETS = {"people": (*PARTS, "measure-g", "tune-h", "measure-h", "tune-k", "measure-k",
                   "measure-n", "measure-s"),
        "time": (*PARTS, "measure-g", "tune-h", "measure-h", "tune-j", "measure-j", "tune-k",
                 "measure-k", "tune-m", "measure-m", "tune-n", "tune-p", "measure-q", "tune-r"),
        "supersede": (*PARTS, "tune-i", "measure-e", "measure-f", "measure-i", "tune-p",
                      "measure-p", "tune-q", "measure-q", "tune-long", "measure-long"),
        "questions": ("measure",),
        "views": ("tune", "measure"),
        "intents": ("tune", "measure", "measure-b")}
_DETERMINERS = re.compile(r"^(?:my|our|the|his|her|their|your|a|an)\s+", re.IGNORECASE)
_TITLE = re.compile(r"^(?:dr|mr|mrs|ms|mx|prof|professor)\.?\s+", re.IGNORECASE)


def bundled(kind: str, part: str) -> Path:
    """The path of a bundled set, e.g. ``bundled("people", "measure")``."""
    ref = resources.files("enfold").joinpath("bench", "data", "understanding",
                                             f"{kind}-{part}.jsonl")
    return Path(str(ref))


def _rows(path: Path) -> Iterator[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{n}: not JSON: {exc}") from exc
            if not isinstance(row, dict):
                raise InputError(f"{path}:{n}: expected a JSON object")
            yield row


def _ts(value: str) -> datetime:
    return datetime.fromisoformat(value)


def _norm(name: str) -> str:
    """A person as compared: lower case, without determiner, title or possessive."""
    n = " ".join(name.lower().replace("’", "'").split())
    n = re.sub(r"'s$", "", n)
    n = _DETERMINERS.sub("", n)
    return _TITLE.sub("", n)


def _matches(pred: str, gold: str) -> bool:
    p, g = _norm(pred), _norm(gold)
    if not p or not g:
        return False
    return p == g or p.split()[-1] == g.split()[-1] or p.split()[0] == g.split()[0]


def found_people(text: str, speaker: str | None, gold: list[str], **kw: Any
                 ) -> list[tuple[Any, str, str | None]]:
    """Each person :func:`~enfold.text.people.extract_people` finds in ``text`` (``kw``
    passed on), as (mention, its words, the gold person it is or None), each gold person
    taken by the first mention that matches it; the speaker is left out unless the text
    names them."""
    from enfold.text.people import extract_people

    unmatched = list(gold)
    out: list[tuple[Any, str, str | None]] = []
    for m in extract_people(text, speaker, **kw):
        if m.role == "speaker" and m.start < 0:
            continue  # the speaker, not mentioned in the text
        got = text[m.start:m.end] if m.start >= 0 else m.name
        hit = next((g for g in unmatched if _matches(got, g)), None)
        if hit is not None:
            unmatched.remove(hit)
        out.append((m, got, hit))
    return out


def _prf(tp: int, fp: int, fn: int) -> dict[str, float]:
    """Precision, recall and F1, rounded; a part with nothing to find or nothing found
    scores 1 on that side."""
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4)}


def run_people(path: Path) -> dict[str, Any]:

    tp = fp = fn = leaked = not_people = 0
    misses: list[dict[str, Any]] = []
    for row in _rows(path):
        text, speaker = str(row["text"]), row.get("speaker")
        gold = [str(g) for g in row.get("people", [])]
        traps = [str(t) for t in row.get("not_people", [])]
        found = found_people(text, speaker, gold)
        wrong = [got for _, got, hit in found if hit is None]
        unmatched = list(gold)
        for _, _, hit in found:
            if hit is not None:
                unmatched.remove(hit)
        tp += len(gold) - len(unmatched)
        fn += len(unmatched)
        fp += len(wrong)
        not_people += len(traps)
        leaked += sum(any(_matches(p, t) for p in wrong) for t in traps)
        if unmatched or wrong:
            misses.append({"id": row.get("id"), "text": text, "missed": unmatched,
                           "wrong": wrong})
    return {**_prf(tp, fp, fn), "people": tp + fn, "found": tp + fp, "not_people": not_people,
            "not_people_taken": leaked, "errors": misses}


def run_time(path: Path) -> dict[str, Any]:
    from enfold.text.times import extract_times

    right = day_right = n = 0
    by_direction: dict[str, list[int]] = {}
    misses: list[dict[str, Any]] = []
    for row in _rows(path):
        text, expression, expected = str(row["text"]), str(row["expression"]), \
            str(row["expected"])
        start = text.find(expression)
        if start < 0:
            raise InputError(f"{path}: {row.get('id')}: the expression is not in the text")
        end = start + len(expression)
        mentions = extract_times(text, _ts(str(row["ts"])))
        got = next((m.value for m in mentions if m.start < end and start < m.end), None)
        ok = got == expected
        n += 1
        right += ok
        day_right += got is not None and got[:len(expected)][:10] == expected[:10]
        tally = by_direction.setdefault(str(row.get("direction", "?")), [0, 0])
        tally[0] += ok
        tally[1] += 1
        if not ok:
            misses.append({"id": row.get("id"), "text": text, "ts": row["ts"],
                           "expression": expression, "expected": expected, "got": got})
    return {"accuracy": round(right / n, 4) if n else None,
            "date_accuracy": round(day_right / n, 4) if n else None, "items": n,
            "by_direction": {k: {"accuracy": round(a / b, 4), "items": b}
                             for k, (a, b) in sorted(by_direction.items())},
            "errors": misses}


def run_supersede(path: Path, *, embedder: Any, settings: Settings | None = None
                  ) -> dict[str, Any]:
    """Supersession precision and recall on one set, folded with ``settings`` (None: the
    defaults), so a setting tried on the benchmark (``enfold --set NAME=VALUE bench
    understand --only supersede``) is the one measured."""
    from enfold.memory import Memory
    from enfold.model import EdgeType, NodeKind
    from enfold.store import open_store
    from enfold.write.planner_local import LocalPlanner

    tp = fp = fn = tn = 0
    # Every supersession between two events of a stream, listed or not: one between events
    # no pair names is a false alarm too (the sets list every change of mind they hold).
    found = alarms = 0
    misses: list[dict[str, Any]] = []
    for row in _rows(path):
        mem = Memory(open_store("memory:"), namespace="probe", embedder=embedder,
                     settings=settings, planners=[LocalPlanner(settings, embedder)])
        try:
            ids = [mem.add(str(e["text"]), source=e.get("speaker"), ts=str(e["ts"]))
                   for e in row["events"]]
            mem.consolidate()
            g = mem.graph()
            rests: dict[str, set[str]] = {}  # claim id -> the events it rests on
            for c in g.of_kind(NodeKind.CLAIM):
                rests[c] = {e.dst for e in g.out_edges(c) if e.type is EdgeType.SUPPORTED_BY}
            superseded: set[tuple[str, str]] = set()
            for c, events in rests.items():
                node = g.get(c)
                newer = node.attrs.get("superseded_by") if node else None
                if newer and newer in rests:
                    superseded |= {(a, b) for a in events for b in rests[newer]}
            true_pairs = {(ids[int(p["old"])], ids[int(p["new"])]) for p in row["pairs"]
                          if p["supersedes"]}
            known = set(ids)
            between = {(a, b) for a, b in superseded if a != b and a in known and b in known}
            found += len(between)
            alarms += len(between - true_pairs)
            for pair in row["pairs"]:
                old, new = ids[int(pair["old"])], ids[int(pair["new"])]
                predicted = (old, new) in superseded
                truth = bool(pair["supersedes"])
                tp += predicted and truth
                fp += predicted and not truth
                fn += truth and not predicted
                tn += not predicted and not truth
                if predicted != truth:
                    misses.append({"id": row.get("id"), "pair": pair,
                                   "old": row["events"][int(pair["old"])]["text"],
                                   "new": row["events"][int(pair["new"])]["text"]})
        finally:
            mem.close()
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    strict = (found - alarms) / found if found else 0.0
    return {"precision": round(precision, 4), "recall": round(recall, 4),
            "strict_precision": round(strict, 4), "false_alarms": alarms,
            "pairs": tp + fp + fn + tn, "supersessions": tp + fn, "predicted": tp + fp,
            "errors": misses}


def run_views(path: Path, *, embedder: Any) -> dict[str, Any]:
    """Whether the write path reads a view in each message (any claim at all) against the
    set's label: precision and recall of messages holding a view. The messages are
    personal (diaries, logs, chat), about half of them plain accounts told vividly."""
    from enfold.text.annotate import annotate

    rows = list(_rows(path))
    vectors = embedder.embed([str(r["text"]) for r in rows])
    tp = fp = fn = 0
    misses: list[dict[str, Any]] = []
    for row, vec in zip(rows, vectors, strict=True):
        ann = annotate(str(row["text"]), ts=_ts(str(row.get("ts", "2026-03-01T12:00:00"))),
                       speaker=row.get("speaker"), vector=vec, embedder=embedder.name)
        got, truth = bool(ann.claims), bool(row["view"])
        tp += got and truth
        fp += got and not truth
        fn += truth and not got
        if got != truth:
            misses.append({"id": row.get("id"), "text": row["text"], "view": truth,
                           "read": [c.content for c in ann.claims]})
    return {**_prf(tp, fp, fn), "messages": len(rows), "views": tp + fn, "false_views": fp, "errors": misses}


def run_intents(path: Path, *, embedder: Any, settings: Settings | None = None
                ) -> dict[str, Any]:
    """Intents read from personal messages, against the set's to-do lines and habits.

    * A ``message`` row: does the write path find an obligation in it (precision and recall
      against rows with a ``goal``), and for each one found in a row with a goal, the
      MiniLM cosine between the best-matching obligation's label and the goal
      (``label_cosine``, mean) and whether it reaches CogEval's reference threshold of 0.5
      (``label_match``, share); ``goals_named``: the share of all goals found and named
      at that threshold (what the two give together); ``due_found``: share of goals with a due time whose label
      keeps that time's words.
    * A ``series`` row: its events folded into a fresh namespace (``settings``; None: the
      defaults); a habit intent predicted or not against ``habit`` (precision and recall),
      and the cosine of the habit's label to it (``habit_cosine``, mean over habits found).
    """
    import numpy as np

    from enfold.bench.cogeval import LABEL_THRESHOLD, _reference_embed
    from enfold.memory import Memory
    from enfold.model import NodeKind
    from enfold.store import open_store
    from enfold.text.annotate import annotate
    from enfold.text.goals import goal_of
    from enfold.write.planner_local import LocalPlanner

    embed = _reference_embed(embedder)
    if embed is None:
        raise InputError("the intents set needs MiniLM for its label cosines")

    def cosines(pairs: list[tuple[str, str]]) -> list[float]:
        if not pairs:
            return []
        vecs = np.asarray(embed([t for pair in pairs for t in pair]), dtype=np.float64)
        vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        return [float(vecs[2 * i] @ vecs[2 * i + 1]) for i in range(len(pairs))]

    rows = list(_rows(path))
    tp = fp = fn = 0
    labelled: list[tuple[dict[str, Any], list[str]]] = []
    misses: list[dict[str, Any]] = []
    for row in (r for r in rows if r.get("type") == "message"):
        ann = annotate(str(row["text"]), ts=_ts(str(row["ts"])), speaker=row.get("speaker"))
        labels = [goal_of(ob, str(row["text"])) for ob in ann.obligations]
        goal = row.get("goal")
        tp += bool(labels) and goal is not None
        fp += bool(labels) and goal is None
        fn += not labels and goal is not None
        if labels and goal is not None:
            labelled.append((row, labels))
        elif bool(labels) != (goal is not None):
            misses.append({"id": row.get("id"), "text": row["text"], "goal": goal,
                           "read": labels})
    best: list[float] = []
    due_kept = due_asked = 0
    for row, labels in labelled:
        sims = cosines([(label, str(row["goal"])) for label in labels])
        i = int(np.argmax(sims))
        best.append(sims[i])
        if row.get("due"):
            due_asked += 1
            due_kept += str(row["due"]).lower() in labels[i].lower()
        if sims[i] < LABEL_THRESHOLD:
            misses.append({"id": row.get("id"), "text": row["text"], "goal": row["goal"],
                           "read": labels, "cosine": round(sims[i], 3)})
    htp = hfp = hfn = 0
    habit_pairs: list[tuple[str, str]] = []
    for row in (r for r in rows if r.get("type") == "series"):
        mem = Memory(open_store("memory:"), namespace="probe", embedder=embedder,
                     settings=settings, planners=[LocalPlanner(settings, embedder)])
        try:
            for e in row["events"]:
                mem.add(str(e["text"]), source=row.get("speaker"), ts=str(e["ts"]))
            g = mem.graph()
            habits = [g.nodes[i].text for i in g.of_kind(NodeKind.INTENT)
                      if g.nodes[i].attrs.get("category") == "habit"]
        finally:
            mem.close()
        truth = row.get("habit")
        htp += bool(habits) and truth is not None
        hfp += bool(habits) and truth is None
        hfn += not habits and truth is not None
        if habits and truth is not None:
            habit_pairs += [(habits[0], str(truth))]
        if bool(habits) != (truth is not None):
            misses.append({"id": row.get("id"), "habit": truth, "read": habits})
    habit_sims = cosines(habit_pairs)
    tasks = {f"task_{k}": v for k, v in _prf(tp, fp, fn).items()}
    series = sum(r.get("type") == "series" for r in rows)
    # a part without series says nothing of habits (not a perfect score)
    habit: dict[str, Any] = {f"habit_{k}": v for k, v in _prf(htp, hfp, hfn).items()} | {
        "habits": htp + hfn,
        "habit_cosine": round(float(np.mean(habit_sims)), 4) if habit_sims else 0.0,
    } if series else {}
    return {**tasks, "goals": tp + fn, "label_cosine": round(float(np.mean(best)), 4)
            if best else 0.0,
            "label_match": round(sum(b >= LABEL_THRESHOLD for b in best) / len(best), 4)
            if best else 0.0,
            "goals_named": round(sum(b >= LABEL_THRESHOLD for b in best) / (tp + fn), 4)
            if tp + fn else 1.0,
            "due_found": round(due_kept / due_asked, 4) if due_asked else 1.0,
            **habit, "errors": misses}


def run_questions(path: Path) -> dict[str, Any]:
    from enfold.recall.analyze import analyze

    tp = fp = fn = tn = 0
    misses: list[dict[str, Any]] = []
    for row in _rows(path):
        got = analyze(str(row["q"])).holder
        view = row["label"] == "view"
        tp += got is not None and view
        fp += got is not None and not view
        fn += got is None and view
        tn += got is None and not view
        if (got is not None) != view:
            misses.append({"id": row.get("id"), "q": row["q"], "label": row["label"],
                           "holder": got})
    return {"precision": round(tp / (tp + fp), 4) if tp + fp else 0.0,
            "recall": round(tp / (tp + fn), 4) if tp + fn else 0.0,
            "questions": tp + fp + fn + tn, "views": tp + fn, "errors": misses}


def run(kind: str, path: Path, *, embedder: Any = None,
        settings: Settings | None = None) -> dict[str, Any]:
    """One set's scores (``errors`` lists what was missed, for the tune part's reader).
    ``settings`` are the folding's for changes of mind (the other sets read text alone)."""
    if kind == "people":
        return run_people(path)
    if kind == "time":
        return run_time(path)
    if kind == "questions":
        return run_questions(path)
    if kind == "supersede":
        return run_supersede(path, embedder=embedder, settings=settings)
    if kind == "views":
        return run_views(path, embedder=embedder)
    if kind == "intents":
        return run_intents(path, embedder=embedder, settings=settings)
    raise InputError(f"unknown set {kind!r} (one of {', '.join(SETS)})")
