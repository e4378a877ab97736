"""Changes of mind in long, mixed texts (session 28): a diary entry or an email holds many
views, and a stream of them holds hundreds, so what reads as a change in a two-line probe
must not end an unrelated view there. Sentences are our own, not from the data files."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

import enfold.consolidate.claims as claims_module
from enfold import Memory
from enfold.model import NodeKind
from enfold.settings import Settings
from enfold.text.annotate import annotate
from enfold.text.stance import revision

TS = 1_772_000_000
DAY = 86_400
AT = datetime.fromtimestamp(TS, UTC)


def test_only_the_sentence_that_says_a_view_changed_revises() -> None:
    """One sentence of a long entry says a view changed; the entry's other views are not
    changes of mind, so they end nothing."""
    text = ("Long day at the allotment. Petra says the new water butts are a waste of money. "
            "The courgettes finally came up. I now think the raised beds were worth it.")
    ann = annotate(text, ts=AT, speaker="Wyn")
    assert ann.revises and ann.revised is not None
    start, end = ann.revised
    inside = [c for c in ann.claims if c.start < end and start < c.end]
    outside = [c for c in ann.claims if not (c.start < end and start < c.end)]
    assert [c.holder for c in inside] == ["Wyn"]
    assert "Petra" in {c.holder for c in outside}


def test_a_claim_from_the_planner_revises_only_where_the_change_is_said(minilm: Any) -> None:
    m = Memory.open("memory:", embedder=minilm, planner="local")
    try:
        m.add("Long day at the allotment. Petra says the new water butts are a waste of "
              "money. I now think the raised beds were worth it.", source="Wyn", ts=TS)
        g = m.graph()
        flags = {g.nodes[c].attrs["holder"]: g.nodes[c].attrs["revises"]
                 for c in g.of_kind(NodeKind.CLAIM)}
    finally:
        m.close()
    assert flags.get("Wyn") is True and flags.get("Petra") is False


@pytest.mark.parametrize("text", [
    "The cat is fast asleep in the basket now.",
    "There's a neat square of new tarmac by the gate now.",
    "The kids are at school now.",
])
def test_now_on_how_things_are_is_no_change_of_mind(text: str) -> None:
    assert revision(text, "Wyn", "Wyn") is None


@pytest.mark.parametrize("text", [
    "My sister now thinks the night train is the better option.",
    "Honestly the bypass is the best thing now.",
])
def test_now_on_a_view_is_a_change_of_mind(text: str) -> None:
    assert revision(text, "Wyn", "Wyn") is not None


@pytest.mark.parametrize(("text", "empty"), [
    ("Bryn sat down at the cattle grid and refused to budge. I can't blame him.", "him."),
    ("The bin lorry missed the lane again. Third time since Christmas. Honestly.",
     "Honestly."),
])
def test_a_cue_with_nothing_after_it_is_no_claim(text: str, empty: str) -> None:
    ann = annotate(text, ts=AT, speaker="Wyn")
    assert empty not in {c.content for c in ann.claims}


def _two_views(minilm: Any, monkeypatch: pytest.MonkeyPatch, later_lean: float,
               settings: Settings | None = None) -> bool:
    """Whether the later of two views of one speaker (on things of different names) ends the earlier,
    the later's lean set to ``later_lean`` (the earlier's is -1)."""
    real = claims_module._lean

    def lean(graph: Any, claim: Any, embedder: str | None) -> float:
        if "owner" in claim.text:
            return later_lean
        return -1.0 if "rip-off" in claim.text else real(graph, claim, embedder)

    monkeypatch.setattr(claims_module, "_lean", lean)
    m = Memory.open("memory:", embedder=minilm, planner="local", settings=settings)
    try:
        m.add("I think the butcher on Mill Street is a rip-off.", source="Wyn", ts=TS)
        m.add("I think the new owner of the Mill Street butcher starts on Monday.", source="Wyn",
              ts=TS + 9 * DAY)
        m.consolidate()
        g = m.graph()
        return any(g.nodes[c].attrs.get("superseded_by") for c in g.of_kind(NodeKind.CLAIM))
    finally:
        m.close()


def test_a_lean_the_model_barely_reads_is_no_opposite_stance(
        minilm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    assert not _two_views(minilm, monkeypatch, 0.1)
    assert _two_views(minilm, monkeypatch, 0.1, Settings().with_(claim_lean_floor=0.0))


@pytest.mark.parametrize(("earlier", "later"), [
    (("Tuesday. Bramble was sick again in the night, so we were at the vets by nine. I think "
     "the steroids are doing her no good at all. Ravi wants another week before we change "
     "anything."),
     ("Thursday. Bramble ate all her breakfast and barked at the postman. I think her blood "
     "results are brilliant. Long walk on the Downs after work, and she slept all evening.")),
    (("Monday standup. The deploy broke checkout for an hour and I think the users table "
     "migration was a disaster. Priya is writing it up and we pause releases until Friday."),
     ("Wednesday standup. Checkout has been stable for two days. I think the postmortem was "
     "excellent, clear and blameless. Releases resume on Friday as planned.")),
    (("Rain again, third day. The drip in the back bedroom is back and the preserving pan is "
     "out. I think the roofer's quote is outrageous. Bryn refused his walk at the cattle grid."),
     ("Dry at last. Walked Bryn up to the chapel and back, he trotted the whole way. I think "
     "the new vicar is lovely, she came to the fete meeting with a cake. Quiet evening.")),
])
def test_opposite_views_of_different_things_in_alike_entries_end_nothing(
        minilm: Any, earlier: str, later: str) -> None:
    """Two entries of one diary are alike as wholes (the same dog, the same week); their
    views are about different things, named by no word the other shares."""
    m = Memory.open("memory:", embedder=minilm, planner="local")
    try:
        m.add(earlier, source="Wyn", ts=TS)
        m.add(later, source="Wyn", ts=TS + 5 * DAY)
        assert m.consolidate().claims_superseded == 0
    finally:
        m.close()


def test_the_strict_precision_counts_a_supersession_no_pair_lists(minilm: Any,
                                                                   tmp_path: Any) -> None:
    """``bench understand``'s supersession scores: a supersession between two events that
    no pair names is a false alarm in the strict precision, not ignored."""
    import json

    from enfold.bench import understand

    events = [{"speaker": "Tom", "text": "Maya loves the new apartment.",
               "ts": "2026-03-01T09:00:00"},
              {"speaker": "Tom", "text": "Maya hates this apartment, the walls are thin.",
               "ts": "2026-03-20T09:00:00"}]
    listed = {"old": 0, "new": 1, "supersedes": True, "holder": "Maya"}
    scores = {}
    for name, pairs in (("listed", [listed]), ("unlisted", [])):
        path = tmp_path / f"{name}.jsonl"
        path.write_text(json.dumps({"id": "s1", "events": events, "pairs": pairs}) + "\n")
        scores[name] = understand.run_supersede(path, embedder=minilm)
    assert scores["listed"]["recall"] == 1.0 and scores["listed"]["false_alarms"] == 0
    assert scores["listed"]["strict_precision"] == 1.0
    assert scores["unlisted"]["false_alarms"] == 1
    assert scores["unlisted"]["strict_precision"] == 0.0
