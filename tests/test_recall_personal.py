"""Recall on personal-assistant streams (issue 23): a question whose answer is one event
gets that event near the top, whether or not the event belongs to any concept.

Streams in ``tests/data/recall/``, folded with the packaged MiniLM embedder and the local
planner:

* ``personal-a`` (126 events, 58 questions) — written by a helper with its own brief; the
  ranking weights were fitted on it;
* ``personal-b`` (105 events, 63 questions) — written by another helper with another brief;
  never fitted on, only measured;
* ``personal-e`` (116 events, 60 questions; a retired teacher's long dictated messages) and
  ``personal-g`` (105 events, 60 questions; a pharmacist's pasted emails and receipts) —
  written by two more helpers, each with its own brief; fitted on;
* ``personal-f`` (126 events, 60 questions; a food-truck owner's terse notes with calendar,
  bank, text and to-do feeds) — written by another helper; only measured;
* ``personal-h`` (115 events, 60 questions; a court interpreter's long multi-topic emails,
  minutes and voice notes, one-off facts buried mid-message) — written by another helper
  with its own brief, session 34; only measured;
* ``personal-i`` (121 events; an ICU nurse's terse night-shift notes in Scottish English)
  and ``personal-j`` (118 events; a plumber's voice-to-text notes with Spanish code-switching)
  — written by two helpers with fresh briefs in session 38; fitted on;
* ``personal-k`` (122 events; a postdoc's lab notebook and family messages in Indian and
  Australian English) and ``personal-l`` (123 events; a retired couple's yacht logbook and
  marina emails) — written by two more helpers in session 38; only measured. At least half
  of the questions of i–l share no content word with their answer, by their briefs.
* ``personal-m`` (117 events; a Polish lorry driver's run-on dictated cab notes, dispatcher,
  ferry and fines messages) and ``personal-n`` (116 events; a Marlborough vineyard couple's
  clipped harvest notes, lab results, council, bank and daycare threads) — written by two
  more helpers with fresh briefs in session 39, committed before any run; only measured,
  and measured once, after the ranking model of that session was chosen; ``personal-o`` (121
  events; a rural GP and beekeeper's dictated memos, practice emails, family texts) and
  ``personal-p`` (116 events; an architecture intern's Pidgin-English studio chats, registrar
  emails, his mother's voice notes) — two more, the same session, measured once the same way.
  Session 40 fitted on m–p (so they joined the fitted streams) and measured four more, each
  measured once with the model the session shipped: ``personal-q`` (114 events; a
  marine-biology PhD student's lab Slack, supervisor emails and boat schedules in Hobart),
  ``personal-r`` (124 events; a food-truck father's voice-to-text notes, suppliers and
  co-parenting texts in Columbus), ``personal-s`` (115 events; a retired teacher's careful
  journal, genealogy emails, choir and garden shifts in Honolulu) and ``personal-t`` (118
  events; a touring sound engineer's lowercase notes, tour riders and venue emails in
  Berlin), written by helpers with fresh briefs and committed before any run.
* ``issue-examples`` — the questions the issue names ("Who has my ladder?", "Easter", …)
  around a climbing habit and a work project: each answer must be in the top 3.

The shares asserted are floors a little below what the packaged weights reach
(docs/benchmarks.md has the numbers): a regression test, not the measurement. With ``-s``
each stream also prints a flat dense ranking's shares beside recall's (every event before
the question's time by MiniLM cosine, :class:`~enfold.bench.baselines.DenseRetriever`): on
the session-38 streams it finds more answers first than recall does, which is printed, not
asserted (issue 23 is open on it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from enfold import Memory
from enfold.bench.baselines import DenseRetriever

pytestmark = pytest.mark.minilm
DATA = Path(__file__).parent / "data" / "recall"


def _ranks(name: str, embedder: Any) -> tuple[list[int], dict[str, Any]]:
    data = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    m = Memory.open("memory:", embedder=embedder, planner="local")
    m.add_many([{"text": e["text"], "ts": e["ts"], "source": e["source"], "id": e["id"]}
                for e in data["events"]])
    ranks = []
    for q in data["questions"]:
        got = [e.external_id for e in m.recall(q["q"], k=10, at=q["at"], touch=False).evidence]
        ranks.append(got.index(q["answer"]) + 1 if q["answer"] in got else 99)
    stats = m.stats()
    m.close()
    return ranks, stats


def _dense_ranks(name: str, embedder: Any) -> list[int]:
    """The flat baseline: each question's answer's place among the events before it, by
    MiniLM cosine of the whole text and nothing else."""
    data = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    flat = DenseRetriever(embedder.embed)
    flat.index([e["id"] for e in data["events"]], [e["text"] for e in data["events"]])
    when = {e["id"]: e["ts"] for e in data["events"]}
    ranks = []
    for q in data["questions"]:
        got = [i for i, _ in flat.search(q["q"], len(when)) if when[i] <= q["at"]]
        ranks.append(got.index(q["answer"]) + 1)
    return ranks


def _share(ranks: list[int], k: int) -> float:
    return sum(r <= k for r in ranks) / len(ranks)


def test_every_question_the_issue_names_has_its_answer_in_the_top_3(minilm: Any) -> None:
    ranks, stats = _ranks("issue-examples", minilm)
    data = json.loads((DATA / "issue-examples.json").read_text(encoding="utf-8"))
    missed = [(q["q"], r) for q, r in zip(data["questions"], ranks, strict=True) if r > 3]
    assert not missed
    assert stats["nodes"].get("concept", 0) >= 1  # the habits did fold into concepts


@pytest.mark.parametrize("name, top1, top3, top10", [
    ("personal-a", 0.85, 0.93, 0.97),
    ("personal-b", 0.57, 0.76, 0.90),
    ("personal-e", 0.68, 0.90, 0.95),
    ("personal-f", 0.63, 0.88, 0.95),
    ("personal-g", 0.70, 0.90, 0.97),
    ("personal-h", 0.53, 0.83, 0.95),
    ("personal-i", 0.27, 0.58, 0.72),
    ("personal-j", 0.47, 0.68, 0.78),
    ("personal-k", 0.42, 0.63, 0.78),
    ("personal-l", 0.42, 0.58, 0.70),
    ("personal-m", 0.30, 0.47, 0.67),
    ("personal-n", 0.23, 0.48, 0.70),
    ("personal-o", 0.28, 0.60, 0.78),
    ("personal-p", 0.35, 0.52, 0.70),
    ("personal-q", 0.45, 0.67, 0.80),
    ("personal-r", 0.33, 0.58, 0.68),
    ("personal-s", 0.50, 0.72, 0.85),
    ("personal-t", 0.22, 0.42, 0.65),
])
def test_one_off_facts_among_habits_are_found(minilm: Any, name: str, top1: float,
                                              top3: float, top10: float) -> None:
    ranks, _ = _ranks(name, minilm)
    flat = _dense_ranks(name, minilm)
    print(f"{name}: top1 {_share(ranks, 1):.3f} top3 {_share(ranks, 3):.3f} "
          f"top10 {_share(ranks, 10):.3f} of {len(ranks)}; flat dense top1 "
          f"{_share(flat, 1):.3f} top3 {_share(flat, 3):.3f} top10 {_share(flat, 10):.3f}")
    assert _share(ranks, 1) >= top1
    assert _share(ranks, 3) >= top3
    assert _share(ranks, 10) >= top10
