"""A view turned by what its holder did, not by what they said they think (session 24;
sentences of our own, not from the probe's data files): a later event of the same speaker
that holds no view of its own but leans, by the polarity model's calibrated reading, the
other way about the same thing (renewing the membership of a gym once called overpriced)
is the speaker's new stance, and it supersedes the old one, history kept. A plain notice
about the same thing, or another person's account, changes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from enfold import Memory
from enfold.model import NodeKind

TS = 1_768_000_000
DAY = 86_400
VIEW = "I think the climbing gym on Dock Street is overpriced and way too crowded."
RENEWED = ("Renewed my Dock Street climbing membership for another year, already booked "
           "Thursday's session.")


def _claims(m: Memory) -> list[Any]:
    g = m.graph()
    return sorted((g.nodes[c] for c in g.of_kind(NodeKind.CLAIM)),
                  key=lambda n: n.attrs.get("valid_from") or 0)


def _fold(minilm: Any, later: str, speaker: str) -> list[Any]:
    m = Memory.open("memory:", embedder=minilm, planner="local")
    try:
        m.add(VIEW, source="Ivo", ts=TS)
        m.add(later, source=speaker, ts=TS + 50 * DAY)
        m.consolidate()
        return _claims(m)
    finally:
        m.close()


def test_an_account_that_turns_against_a_view_supersedes_it(minilm: Any) -> None:
    old, new = _fold(minilm, RENEWED, "Ivo")
    assert old.attrs["stance"] == "negative"
    assert new.attrs["holder"] == "Ivo" and new.attrs["stance"] == "positive"
    assert new.attrs["target"] == old.attrs["target"]
    assert old.attrs["superseded_by"] == new.id and new.attrs["supersedes"] == old.id


@pytest.mark.parametrize(("later", "speaker"), [
    ("Reminder: the Dock Street climbing gym is closed on Monday for the holiday.", "Ivo"),
    (RENEWED, "Sam"),
])
def test_a_notice_or_another_persons_account_changes_nothing(minilm: Any, later: str,
                                                             speaker: str) -> None:
    claims = _fold(minilm, later, speaker)
    assert all(not c.attrs.get("superseded_by") for c in claims)
    assert [c.attrs["holder"] for c in claims if c.attrs.get("holder") == "Ivo"] == ["Ivo"]


CHANGE = "Changed my mind about the kitchen: yellow would be far too loud, we're keeping it white."


def _fold_change(minilm: Any, earlier: list[tuple[str, str]]) -> tuple[list[str], list[Any]]:
    m = Memory.open("memory:", embedder=minilm, planner="local")
    try:
        ids = [m.add(text, source=who, ts=TS + i * DAY) for i, (who, text) in enumerate(earlier)]
        ids.append(m.add(CHANGE, source="Tomás", ts=TS + 20 * DAY))
        m.consolidate()
        return ids, _claims(m)
    finally:
        m.close()


def _resting_on(claim: Any, m_ids: list[str]) -> int:
    return m_ids.index(claim.grounded_in[0])


def test_a_change_of_mind_ends_the_wish_it_changes(minilm: Any) -> None:
    """A wish is no view by itself, so no claim was read from it; the change of mind that
    ends it finds it among its holder's earlier words (and not in an unrelated note)."""
    ids, claims = _fold_change(minilm, [
        ("Tomás", "I want to paint the kitchen a bright yellow this spring."),
        ("Tomás", "Fixed the bike chain this morning before work.")])
    old, new = claims
    assert _resting_on(old, ids) == 0 and _resting_on(new, ids) == 2
    assert old.attrs["holder"] == "Tomás" and old.attrs["target_key"] == new.attrs["target_key"]
    assert old.attrs["superseded_by"] == new.id and new.attrs["supersedes"] == old.id


def test_a_change_of_mind_does_not_end_another_persons_wish(minilm: Any) -> None:
    ids, claims = _fold_change(minilm, [
        ("Ines", "I want to paint the kitchen a bright yellow this spring.")])
    assert [_resting_on(c, ids) for c in claims] == [1]
    assert not claims[0].attrs.get("supersedes")


@pytest.mark.parametrize(("text", "target"), [
    (CHANGE, "the kitchen"),
    ("Dana changed her mind on the allotment: the waiting list is too long.", "the allotment"),
])
def test_a_change_of_mind_is_about_its_thing_not_the_mind(text: str, target: str) -> None:
    from enfold.text.stance import revision

    found = revision(text, "Tomás", "Tomás")
    assert found is not None and found.target == target


def test_the_supersede_benchmark_measures_the_settings_given(minilm: Any, tmp_path: Any
                                                             ) -> None:
    """``enfold --set NAME=VALUE bench understand --only supersede`` folds with that setting
    (it folded with the defaults whatever was set)."""
    import json

    from enfold.bench.understand import run
    from enfold.settings import Settings

    rows = tmp_path / "supersede.jsonl"
    rows.write_text(json.dumps({"id": "s1", "events": [
        {"speaker": "Ivo", "text": VIEW, "ts": "2026-01-10T18:00:00"},
        {"speaker": "Ivo", "text": RENEWED, "ts": "2026-03-02T18:00:00"}],
        "pairs": [{"old": 0, "new": 1, "supersedes": True}]}) + "\n", encoding="utf-8")
    assert run("supersede", rows, embedder=minilm)["recall"] == 1.0
    unreachable = Settings(claim_opposite_similarity=1.0)
    assert run("supersede", rows, embedder=minilm, settings=unreachable)["recall"] == 0.0
