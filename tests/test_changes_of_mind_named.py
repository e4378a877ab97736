"""Changes of mind in long entries (session 33): a change told in one sentence among the
entry's other views is still a change; a change that names its thing ends the holder's
view of that thing, not a view of something else whose entry reads alike; the words that
say the change are neither its stance nor its target; a view said to hold still is no
change of it. Sentences are our own, not from the data files."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from enfold import Memory
from enfold.model import NodeKind
from enfold.text.annotate import annotate
from enfold.text.stance import held_still, revision

TS = 1_772_000_000
DAY = 86_400
AT = datetime.fromtimestamp(TS, UTC)


def test_a_change_told_beside_other_views_is_kept() -> None:
    """The entry's first sentences hold views of their own (the sister's, the speaker's on
    the weather); the last says the speaker's view of the choir changed."""
    text = ("Wet Sunday. Carys reckons the new bus timetable is hopeless. The bread came "
            "out flat again, which is maddening. I was wrong about the choir, it's the best "
            "evening of my week.")
    ann = annotate(text, ts=AT, speaker="Wyn")
    assert ann.revises and ann.revised is not None
    start, end = ann.revised
    changed = [c for c in ann.claims if c.start < end and start < c.end]
    assert [c.holder for c in changed] == ["Wyn"]
    assert "choir" in changed[0].target
    assert "Carys" in {c.holder for c in ann.claims}


@pytest.mark.parametrize(("text", "target"), [
    ("I was wrong about the choir.", "the choir"),
    ("Okay, I take it back about the plumber.", "the plumber"),
])
def test_the_words_that_say_the_change_are_not_its_stance(text: str, target: str) -> None:
    """"Wrong" judges the speaker's old view, not the choir."""
    found = revision(text, "Wyn", "Wyn")
    assert found is not None and found.target == target and found.stance == "neutral"


@pytest.mark.parametrize("text", [
    "Dafydd convinced me.",
    "Ok. I take it back.",
    "Bethan was right, it suits us.",
])
def test_a_change_that_names_no_thing_has_no_target(text: str) -> None:
    """The persuader, the one granted or the words of taking back are not what changed."""
    found = revision(text, "Wyn", "Wyn")
    assert found is not None and found.target == ""


def test_another_view_told_beside_the_speakers_own_change_did_not_change() -> None:
    """"She said the pens never work, and she was right": the speaker concedes; Bethan's
    view is the one granted, not one she changed."""
    text = ("The passport office went fine. Bethan brought a pen because she said the office "
            "pens never work, and she was right.")
    ann = annotate(text, ts=AT, speaker="Wyn")
    assert ann.revises and ann.reviser == "Wyn"
    from enfold.write.planner_local import _revises
    flagged = {c.holder for c in ann.claims if _revises(ann, c)}
    assert "Bethan" not in flagged


@pytest.mark.parametrize(("text", "still"), [
    ("Still think the parking charges are daylight robbery.", True),
    ("The quote for the roof is too high still.", True),
    ("That opening song still gives me chills.", True),
    ("I still love the café on the square.", True),
    ("Still, I have to admit the café is lovely.", False),
    ("Keep still while I cut your fringe.", False),
    ("The water was still.", False),
    ("The parking charges are daylight robbery.", False),
])
def test_a_view_said_to_hold_still(text: str, still: bool) -> None:
    """The adverb of continuance, not the concessive "Still, ..." or the adjective."""
    assert held_still(text) is still


def test_a_visit_about_something_is_no_change_of_mind() -> None:
    assert revision("Alun came round about the raffle.", "Wyn", "Wyn") is None


def _views(m: Memory) -> dict[str, Any]:
    g = m.graph()
    return {str(g.nodes[c].attrs.get("target")): g.nodes[c].attrs
            for c in g.of_kind(NodeKind.CLAIM) if g.nodes[c].attrs.get("holder") == "Wyn"}


def test_a_change_that_names_its_thing_ends_the_view_of_that_thing(minilm: Any) -> None:
    """Three diary entries of one week read alike as wholes; the change names the choir,
    so it ends the view of the choir, not the more recent view of the bypass."""
    m = Memory.open("memory:", embedder=minilm, planner="local")
    try:
        m.add("Monday. Rain all day, the dog sulked by the Aga. I think the new choir is a "
              "waste of a Thursday evening. Made leek soup.", source="Wyn", ts=TS)
        m.add("Wednesday. Rain again, the dog sulked by the Aga. I think the bypass is a "
              "disaster for the village. Made cawl.", source="Wyn", ts=TS + 2 * DAY)
        m.add("Friday. Dry at last, walked the dog to the chapel. I was wrong about the "
              "choir, the harmonies last night were glorious. Made Welsh cakes.",
              source="Wyn", ts=TS + 4 * DAY)
        m.consolidate()
        views = _views(m)
    finally:
        m.close()
    choir = next(a for t, a in views.items() if "choir" in t and not a.get("revises"))
    bypass = next(a for t, a in views.items() if "bypass" in t)
    assert choir.get("superseded_by")
    assert not bypass.get("superseded_by")


def test_a_view_said_to_hold_still_ends_nothing(minilm: Any,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """"Still think …": whatever stance each reading gave (here the two leans are set
    opposite, as a misread gives them), the speaker says the view goes on, so the later
    entry does not supersede the earlier."""
    import enfold.consolidate.claims as claims_module
    real = claims_module._lean

    def lean(graph: Any, claim: Any, embedder: str | None) -> float:
        if "Still" in claim.text or "robbery" in claim.text and "shift" not in claim.text:
            return 1.0
        return -1.0 if "shift" in claim.text else real(graph, claim, embedder)

    monkeypatch.setattr(claims_module, "_lean", lean)
    m = Memory.open("memory:", embedder=minilm, planner="local")
    try:
        m.add("I think the hospital parking charges are daylight robbery, nine pounds a "
              "shift.", source="Wyn", ts=TS)
        m.add("Still think the parking charges are robbery.", source="Wyn", ts=TS + 3 * DAY)
        m.consolidate()
        g = m.graph()
        ended = [g.nodes[c].text for c in g.of_kind(NodeKind.CLAIM)
                 if g.nodes[c].attrs.get("superseded_by")]
    finally:
        m.close()
    assert ended == []


def test_now_on_a_verb_of_saying_needs_what_is_said() -> None:
    """"Now we're arguing about a contractor" is a quarrel, not a view held anew."""
    for text in ("The quote came in high, so now we are arguing about a cheaper builder.",
                 "Now they're arguing about the bins again."):
        assert revision(text, "Wyn", "Wyn") is None
    found = revision("Tom now insists the van is fine.", "Wyn", "Wyn")
    assert found is not None and found.holder == "Tom"


@pytest.mark.parametrize(("text", "holder", "target"), [
    ("Priya now thinks Postgres is fine.", "Priya", "Postgres"),
    ("Tom now insists the van is fine.", "Tom", "the van"),
    ("Honestly the bypass is the best thing now.", "Wyn", "the bypass"),
])
def test_who_changed_is_not_what_changed(text: str, holder: str, target: str) -> None:
    found = revision(text, "Wyn", "Wyn")
    assert found is not None and (found.holder, found.target) == (holder, target)


def test_two_views_of_it_are_not_one_thing(minilm: Any) -> None:
    """"It" in two entries is no shared thing: the café and the cup final."""
    m = Memory.open("memory:", embedder=minilm, planner="local")
    try:
        m.add("Tried the new café on the square this morning. I think it's perfect.",
              source="Wyn", ts=TS)
        m.add("Watched the cup final at the Red Lion tonight. I think it's awful.",
              source="Wyn", ts=TS + 9 * DAY)
        assert m.consolidate().claims_superseded == 0
    finally:
        m.close()


def _ended_by_change(minilm: Any, entries: list[str]) -> set[int]:
    """Which entries' views the last entry (a change that names its thing) ended."""
    m = Memory.open("memory:", embedder=minilm, planner="local")
    try:
        ids = [m.add(text, source="Wyn", ts=TS + i * 3 * DAY) for i, text in enumerate(entries)]
        m.consolidate()
        g = m.graph()
        change = next(c for c in g.of_kind(NodeKind.CLAIM)
                      if g.nodes[c].attrs.get("revises"))
        return {ids.index(e) for c in g.of_kind(NodeKind.CLAIM)
                if g.nodes[c].attrs.get("superseded_by") == change
                for e in g.nodes[c].grounded_in if e in ids}
    finally:
        m.close()


def test_a_named_change_ends_each_entry_that_held_the_view(minilm: Any) -> None:
    """(Session 42.) "I was wrong about the standing desks" ends the view however each
    entry put it: "it" in the sentence after the desks are named, and an entry whose view
    was not read at all ("Gimmick, as I said"). The entry about the allotment, between
    them, keeps its view."""
    ended = _ended_by_change(minilm, [
        ("Facilities put standing desks on our floor today. I think it's a gimmick, honestly. "
         "Nobody will stand after the first week."),
        "The allotment committee wants to ban bonfires. I think that's a terrible idea.",
        ("Second week with the standing desks. Calves ache, stood for maybe an hour in total. "
         "Gimmick, like I said."),
        ("Right, I was wrong about the standing desks. My lower back has stopped hurting and "
         "I stand most afternoons now.")])
    assert ended == {0, 2}


def test_it_far_from_the_named_thing_is_another_thing(minilm: Any) -> None:
    """(Session 42.) "It" right after the desks are named is the desks; "it" after the
    canteen, with the desks two sentences back, is the canteen: the change of mind about
    the desks ends the first view only."""
    ended = _ended_by_change(minilm, [
        "Standing desks arrived on our floor today. I think it's a gimmick, honestly.",
        ("Standing desks were in the all-hands slides again. The new canteen opened too. "
         "I think it's brilliant, the curry was superb."),
        ("Right, I was wrong about the standing desks. My lower back has stopped hurting and "
         "I stand most afternoons now.")])
    assert ended == {0}


def test_a_named_change_ends_a_view_of_the_thing_read_with_another_stance(minilm: Any) -> None:
    """(Session 42.) Two views of the desks in other words than the change's: it ends the
    more alike, and the other too, whatever stance its reading gave (a read stance is a
    guess). The view of the bins stays current."""
    ended = _ended_by_change(minilm, [
        "I think the new desks are a silly gimmick.",
        "These tall desks are pointless, nobody uses them.",
        "The council's new bin rota is a shambles.",
        "I was wrong about the standing desks. My back has never felt better."])
    assert ended == {0, 1}
