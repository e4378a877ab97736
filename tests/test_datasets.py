"""The shipped datasets load and meet their stated constraints; malformed input is named."""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from enfold.bench.datasets import (
    load_cogeval,
    load_collapse,
    load_demo,
    load_locomo,
)
from enfold.errors import InputError

LOCOMO_DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / \
    "locomo10-dev.json"
STOP = {"and", "the", "of", "with", "to", "a", "for", "on", "in"}


def _label_words(label: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", label.lower()) if w not in STOP]


def _mentions(text: str, word: str) -> bool:
    return re.search(rf"\b{re.escape(word)}\b", text.lower()) is not None


# --------------------------------------------------------------------------- CogEval-Bench

@pytest.fixture(scope="module")
def scenarios() -> list[Any]:
    return load_cogeval()


def test_cogeval_ships_six_scenarios(scenarios: list[Any]) -> None:
    assert [s.id for s in scenarios] == ["academic", "health", "news", "softeng", "support",
                                         "team"]
    assert len({s.domain for s in scenarios}) == 6


def test_cogeval_scale_matches_the_paper(scenarios: list[Any]) -> None:
    for s in scenarios:
        g = s.gold
        assert 40 <= len(s.events) <= 46, s.id
        assert 8 <= len(g.concepts) <= 9, s.id
        assert 1 <= len(g.hierarchy) <= 3, s.id
        assert 9 <= len(g.relations) <= 14, s.id
        assert len(g.intents) == 2, s.id
        assert len(g.chains) == 2, s.id
        share = len(s.distractors) / len(s.events)
        assert 0.10 <= share <= 0.15, (s.id, share)
        assert all(len(i.supporting) >= 2 for i in g.intents), s.id


def test_cogeval_events_are_ordered_interleaved_and_span_weeks(scenarios: list[Any]) -> None:
    for s in scenarios:
        stamps = [e.ts for e in s.events]
        assert stamps == sorted(stamps), s.id
        span = stamps[-1] - stamps[0]
        assert timedelta(days=14) <= span <= timedelta(days=42), (s.id, span)
        labels = [e.gold_concept for e in s.events if e.gold_concept]
        switches = sum(a != b for a, b in pairwise(labels))
        assert switches >= 0.7 * len(labels), s.id  # concepts are interleaved, not in blocks


def test_cogeval_chains_cross_concepts(scenarios: list[Any]) -> None:
    for s in scenarios:
        for chain in s.gold.chains:
            hops = len(chain.events) - 1
            assert 3 <= hops <= 4, (s.id, chain.id)
            events = [s.event(e) for e in chain.events]
            assert all(e.gold_concept for e in events), (s.id, chain.id)
            assert len({e.gold_concept for e in events}) >= 2, (s.id, chain.id)
            assert [e.ts for e in events] == sorted(e.ts for e in events), (s.id, chain.id)


def test_cogeval_gold_is_consistent_and_wording_varies(scenarios: list[Any]) -> None:
    for s in scenarios:
        ids = {e.id for e in s.events}
        for c in s.gold.concepts:
            assert set(c.expected_events) <= ids
            assert {e.id for e in s.events if e.gold_concept == c.id} == set(c.expected_events)
            assert len(c.expected_events) >= 3, (s.id, c.id)
            texts = [s.event(e).text for e in c.expected_events]
            for word in _label_words(c.label):
                assert not all(_mentions(t, word) for t in texts), (s.id, c.id, word)
        assert len({e.source for e in s.events}) == 1  # one first-person narrator


def test_cogeval_loads_a_single_file_too(scenarios: list[Any]) -> None:
    folder = Path(__file__).resolve().parents[1] / "src" / "enfold" / "bench" / "data" / \
        "cogeval"
    assert load_cogeval(folder) == scenarios
    assert load_cogeval(folder / "news.json") == [s for s in scenarios if s.id == "news"]


# --------------------------------------------------------------------------- collapse probe

def test_collapse_probe_shape() -> None:
    items = load_collapse()
    assert len(items) >= 40
    assert len({i.id for i in items}) == len(items)
    claims = [c for i in items for c in i.claims]
    reported = sum(c.reported for c in claims) / len(claims)
    assert 0.25 <= reported <= 0.35, reported
    assert sum(i.counter_claim is not None for i in items) >= 8
    assert len({c.holder for c in claims}) >= 30  # varied names
    for item in items:
        assert 2 <= len(item.queries) <= 3, item.id
        kinds = Counter(q.expects for q in item.queries)
        assert kinds["fact"] >= 1 and kinds["claim"] >= 1, item.id
        fact_words = {w for w in re.findall(r"[a-z]{4,}", item.fact.text.lower())}
        claim_words = {w for w in re.findall(r"[a-z]{4,}", item.claim.text.lower())}
        assert fact_words & claim_words, item.id  # shared vocabulary is the point
        for c in item.claims:
            assert c.reported == (c.speaker != c.holder)


# --------------------------------------------------------------------------- demo

def test_demo_stream() -> None:
    events, gold = load_demo()
    assert 45 <= len(events) <= 55
    assert events[0].ts.isoformat().startswith("2026-10-01")
    assert events[-1].ts - events[0].ts >= timedelta(weeks=5)
    assert {e.kind for e in events} == {"chat", "note", "calendar", "email"}
    assert {"Maya", "Omar", "Gina", "Priya"} <= {e.source for e in events}
    by_id = {e.id: e for e in events}
    assert len(gold.concepts) == 5
    for c in gold.concepts:
        assert 5 <= len(c.events) <= 9, c.id
        for word in _label_words(c.label):
            assert not all(_mentions(by_id[e].text, word) for e in c.events), (c.id, word)
    assert 5 <= len(gold.distractors) <= 7
    assigned = {e for c in gold.concepts for e in c.events} | set(gold.distractors)
    assert assigned == set(by_id)


def test_demo_gold_annotations() -> None:
    events, gold = load_demo()
    by_id = {e.id: e for e in events}
    position = {e.id: i for i, e in enumerate(events)}
    deadline = gold.deadlines[0]
    assert "due" in by_id[deadline.event].text
    assert any(by_id[e.id].ts.date() < deadline.due for e in events)
    grant = next(r for r in gold.resolutions if r.resolves == "grant")
    assert position[deadline.event] < position[grant.event]
    assert by_id[grant.event].ts.date() <= deadline.due
    habit = gold.habits[0]
    stamps = [by_id[e].ts for e in habit.events]
    assert any(stamps[i + 2] - stamps[i] <= timedelta(days=7) for i in range(len(stamps) - 2))
    reported = [c for c in gold.claims if c.reported]
    assert len(reported) >= 3
    assert all(by_id[c.event].source != c.holder for c in reported)
    assert any(not c.reported for c in gold.claims)
    update = gold.updates[0]
    assert position[update.old] < position[update.new]
    obligation = gold.obligations[0]
    assert "need to" in by_id[obligation.event].text
    assert any(r.resolves == obligation.id for r in gold.resolutions)
    assert any("because" in by_id[c.effect].text.lower() for c in gold.causal)


# --------------------------------------------------------------------------- LoCoMo

@pytest.fixture(scope="module")
def locomo() -> list[Any]:
    if not LOCOMO_DEV.exists():
        pytest.skip(f"LoCoMo dev copy not found at {LOCOMO_DEV}")
    return load_locomo(LOCOMO_DEV)


def test_locomo_dev_copy_loads(locomo: list[Any]) -> None:
    assert [c.sample_id for c in locomo] == ["conv-26", "conv-30", "conv-41", "conv-42",
                                             "conv-43"]
    for conv in locomo:
        assert [t.position for t in conv.turns] == list(range(len(conv.turns)))
        assert {t.speaker for t in conv.turns} == {conv.speaker_a, conv.speaker_b}
        assert [t.session for t in conv.turns] == sorted(t.session for t in conv.turns)
        ids = {t.dia_id for t in conv.turns}
        for qa in conv.qa:
            assert set(qa.evidence) <= ids
    assert sum(len(c.turns) for c in locomo) == 2760
    assert sum(len(c.qa) for c in locomo) == 999
    first = locomo[0].turns[0]
    assert (first.dia_id, first.session, first.date_time) == ("D1:1", 1, "1:56 pm on 8 May, 2023")
    assert first.ts.isoformat() == "2023-05-08T13:56:00+00:00"


def test_locomo_broken_evidence_is_counted_not_dropped(locomo: list[Any]) -> None:
    unresolved = {c.sample_id: c.unresolved_evidence for c in locomo}
    assert unresolved == {"conv-26": 0, "conv-30": 0, "conv-41": 0, "conv-42": 2, "conv-43": 0}
    conv42 = locomo[3]
    assert conv42.qa[58].unresolved == ("D10:19",)  # session 10 has 16 turns
    assert conv42.qa[88].unresolved == ("D",)
    assert locomo[4].qa[18].repaired == (("D:11:26", "D11:26"),)
    assert locomo[0].qa[37].evidence == ("D8:6", "D9:17")  # was one string "D8:6; D9:17"
    orphan_dates = [i for i in locomo[0].issues if "has no session_" in i]
    assert len(orphan_dates) == 16  # conv-26 lists date-times for sessions 20-35 it lacks


def test_locomo_captions_are_optional(locomo: list[Any]) -> None:
    turn = locomo[0].turn("D1:5")
    assert turn.text.endswith("[shares: " + turn.caption + "]")
    plain = load_locomo(LOCOMO_DEV, image_captions=False)[0].turn("D1:5")
    assert "[shares:" not in plain.text and plain.caption == turn.caption


def test_locomo_questions_and_answers(locomo: list[Any]) -> None:
    conv = locomo[0]
    assert {q.category for q in conv.questions()} == {1, 2, 3, 4}
    adversarial = conv.questions([5])
    assert adversarial and all(q.adversarial_answer for q in adversarial)
    assert all(isinstance(q.answer, str) for q in conv.questions())  # ints became strings
    assert conv.qa[0].category_name == "temporal"


# --------------------------------------------------------------------------- malformed input

def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _collapse_row(n: int) -> dict[str, Any]:
    return {"id": f"c{n:02d}", "fact": {"speaker": "Ana", "text": "The bridge closed."},
            "claim": {"speaker": "Ana", "holder": "Ana", "text": "I think the bridge is unsafe.",
                      "reported": False},
            "queries": [{"q": "What happened to the bridge?", "expects": "fact"},
                        {"q": "What does Ana think?", "expects": "claim", "holder": "Ana"}]}


def _raises(match: str, fn: Any, *args: Any) -> str:
    with pytest.raises(InputError) as info:
        fn(*args)
    message = str(info.value)
    for part in match.split("|"):
        assert part in message, message
    return message


@pytest.mark.parametrize(("edit", "expected"), [
    (lambda r: r["claim"].pop("holder"), 'line 2 (id "c02")|field "claim.holder" is missing'),
    (lambda r: r["claim"].update(reported="yes"), 'field "claim.reported" is invalid'),
    (lambda r: r["claim"].update(reported=True), 'field "claim.reported" is true but'),
    (lambda r: r["queries"][1].pop("holder"), 'field "queries[1].holder" is missing'),
    (lambda r: r["queries"][1].update(holder="Bo"), 'field "queries[1].holder" is "Bo"'),
    (lambda r: r["fact"].update(text="  "), 'field "fact.text" is invalid: must not be blank'),
    (lambda r: r.update(extra=1), 'field "extra" is not a known field'),
    (lambda r: r.update(counter_claim=dict(r["claim"])), 'field "counter_claim.holder" must'),
    (lambda r: r.update(id="c01"), 'field "id" repeats "c01"'),
])
def test_collapse_rejects_malformed_items(tmp_path: Path, edit: Any, expected: str) -> None:
    bad = _collapse_row(2)
    edit(bad)
    path = _write_jsonl(tmp_path / "collapse.jsonl", [_collapse_row(1), bad])
    _raises("collapse.jsonl: line 2|" + expected, load_collapse, path)


def test_jsonl_rejects_broken_lines(tmp_path: Path) -> None:
    path = tmp_path / "collapse.jsonl"
    path.write_text(json.dumps(_collapse_row(1)) + "\n\n{not json\n")
    _raises("collapse.jsonl: line 3|not valid JSON", load_collapse, path)
    path.write_text("")
    _raises("collapse.jsonl: contains no records", load_collapse, path)
    _raises("nope.jsonl: no such file", load_collapse, tmp_path / "nope.jsonl")


def _scenario_file(tmp_path: Path, edit: Any) -> Path:
    source = Path(__file__).resolve().parents[1] / "src" / "enfold" / "bench" / "data" / \
        "cogeval" / "softeng.json"
    raw = json.loads(source.read_text())
    edit(raw)
    path = tmp_path / "softeng.json"
    path.write_text(json.dumps(raw))
    return path


@pytest.mark.parametrize(("edit", "expected"), [
    (lambda r: r["events"][2].update(gold_concept="gardening"),
     'events[2] (id "e03")|field "gold_concept" refers to unknown concept "gardening"'),
    (lambda r: r["events"][2].update(gold_concept="mentoring"),
     'events[2] (id "e03")|field "gold_concept" is "mentoring" but'),
    (lambda r: r["gold"]["chains"][0]["events"].append("e99"),
     'gold.chains[0] (id "ch_auth_demo")|field "events" refers to unknown event "e99"'),
    (lambda r: r["gold"]["concepts"][1].pop("label"),
     'gold.concepts[1] (id "sprint_planning")|field "label" is missing'),
    (lambda r: r["gold"]["relations"][0].update(type="LIKES"),
     'gold.relations[0]|field "type" is invalid'),
    (lambda r: r["gold"]["relations"][0].update(target="nowhere"),
     'gold.relations[0]|field "target" refers to unknown concept "nowhere"'),
    (lambda r: r["gold"]["intents"][0]["supporting"].append("ghost"),
     'gold.intents[0] (id "i_stable_release")|field "supporting" refers to unknown concept'),
    (lambda r: r["gold"]["hierarchy"][0]["children"].append("ghost"),
     'gold.hierarchy[0] (id "h_work")|field "children" refers to unknown concept "ghost"'),
    (lambda r: r["events"][5].update(ts="2026-03-02T08:00:00Z"),
     'events[5] (id "e06")|field "ts" is earlier than the event before it'),
    (lambda r: r["events"][5].update(ts="2026-03-03T08:00:00"),
     'events[5] (id "e06")|field "ts" is invalid: must carry a timezone'),
    (lambda r: r["events"][-1].update(ts="2026-04-30T08:00:00Z"),
     'field "ts" falls outside the scenario'),
    (lambda r: r["events"][3].update(id="e03"), 'events[3] (id "e03")|field "id" repeats'),
    (lambda r: r["gold"]["concepts"][0]["expected_events"].append("e02"),
     'gold.concepts[0] (id "code_review")|field "expected_events" lists event "e02"'),
    (lambda r: r.pop("domain"), 'softeng.json: field "domain" is missing'),
])
def test_cogeval_rejects_broken_references(tmp_path: Path, edit: Any, expected: str) -> None:
    _raises("softeng.json|" + expected, load_cogeval, _scenario_file(tmp_path, edit))


def test_cogeval_rejects_an_empty_directory(tmp_path: Path) -> None:
    _raises("no *.json scenario files", load_cogeval, tmp_path)


def _locomo_sample() -> dict[str, Any]:
    return {"sample_id": "s1",
            "conversation": {"speaker_a": "A", "speaker_b": "B",
                             "session_1_date_time": "1:56 pm on 8 May, 2023",
                             "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "Hi"},
                                           {"speaker": "B", "dia_id": "D1:2", "text": "Hey"}]},
            "qa": [{"question": "Who said hi?", "answer": "A", "evidence": ["D1:1"],
                    "category": 4}]}


@pytest.mark.parametrize(("edit", "expected"), [
    (lambda s: s["conversation"]["session_1"][1].pop("text"),
     'sample 0 (sample_id "s1")|field "conversation.session_1[1].text" is missing'),
    (lambda s: s["qa"][0].pop("category"), 'field "qa[0].category" is missing'),
    (lambda s: s["qa"][0].update(category=9), 'field "qa[0].category" must be 1-5'),
    (lambda s: s["qa"][0].update(evidence="D1:1"), 'field "qa[0].evidence" must be a list'),
    (lambda s: s["qa"][0].pop("answer"), 'field "qa[0].answer" is missing'),
    (lambda s: s["conversation"].update(session_1_date_time="yesterday"),
     'field "conversation.session_1_date_time" is not like'),
    (lambda s: s["conversation"]["session_1"][1].update(dia_id="D1:1"),
     'field "conversation.session_1[1].dia_id" repeats "D1:1"'),
    (lambda s: s.pop("conversation"), 'field "conversation" is missing'),
])
def test_locomo_rejects_malformed_samples(tmp_path: Path, edit: Any, expected: str) -> None:
    sample = _locomo_sample()
    edit(sample)
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([sample]))
    _raises("locomo.json|" + expected, load_locomo, path)


def test_locomo_flags_unresolvable_evidence(tmp_path: Path) -> None:
    sample = _locomo_sample()
    sample["qa"][0]["evidence"] = ["D1:1; D1:2", "D:1:2", "D7:1"]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([sample]))
    qa = load_locomo(path)[0].qa[0]
    assert qa.evidence == ("D1:1", "D1:2", "D1:2")
    assert qa.unresolved == ("D7:1",)
    assert qa.repaired == (("D:1:2", "D1:2"),)
    path.write_text(json.dumps({"not": "a list"}))
    _raises("locomo.json: must be a JSON list", load_locomo, path)


def test_demo_rejects_bad_kind_and_dangling_gold(tmp_path: Path) -> None:
    events = _write_jsonl(tmp_path / "demo.jsonl", [
        {"id": "d01", "ts": "2026-10-01T10:00:00Z", "source": "Maya", "kind": "chat",
         "text": "Ran 5 miles."},
        {"id": "d02", "ts": "2026-10-02T10:00:00Z", "source": "Maya", "kind": "tweet",
         "text": "Ran 6 miles."},
    ])
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps({"concepts": [{"id": "run", "label": "Running",
                                              "keywords": ["run"], "events": ["d01", "d09"]}]}))
    _raises('demo.jsonl: line 2 (id "d02")|field "kind" is invalid', load_demo, events, gold)
    events.write_text(events.read_text().replace("tweet", "note"))
    _raises('gold.json: concepts[0] (id "run")|field "events" refers to unknown event "d09"',
            load_demo, events, gold)
