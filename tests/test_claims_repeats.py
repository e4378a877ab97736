"""A repeated view is not a change of mind, and what a linking verb judges is its subject
(session 23; sentences of our own, not from the probe's data files):

* a claim the reading left neutral beside a polar claim of the same holder and target is the
  view repeated, not changed, unless the polarity model reads the neutral one as clearly
  opposite; the merged claim keeps the polar stance;
* "the X is a Y" as a bare view is about X, not about Y;
* a chat interjection parsed as a subject ("nah changed my mind") is no one: the change is
  the speaker's.
"""

from __future__ import annotations

from typing import Any

import pytest

from enfold import Memory
from enfold.model import NodeKind
from enfold.text.stance import bare_view, revision

TS = 1_773_500_000


def _claims(m: Memory) -> list[Any]:
    g = m.graph()
    return sorted((g.nodes[c] for c in g.of_kind(NodeKind.CLAIM)),
                  key=lambda n: n.attrs.get("valid_from") or 0)


@pytest.mark.parametrize("embedder", ["hash", "minilm"])
def test_a_neutral_restatement_of_a_view_repeats_it(embedder: str, request: Any) -> None:
    emb = request.getfixturevalue("minilm") if embedder == "minilm" else "hash"
    m = Memory.open("memory:", embedder=emb, planner="local")
    try:
        m.add("I think the 7:52 train is terrible, every single morning.", source="Ana",
              ts=TS)
        m.add("Still think the 7:52 train is what it always was.", source="Ana",
              ts=TS + 86_400 * 3)
        m.consolidate()
        claims = _claims(m)
        assert [c.attrs.get("stance") for c in claims][:1] == ["negative"]
        assert not any(c.attrs.get("superseded_by") for c in claims)
        assert len(claims) == 1  # merged: one view, said twice
        assert len(claims[0].grounded_in) == 2
    finally:
        m.close()


@pytest.mark.parametrize(("text", "target"), [
    ("the new kettle is a real step up, glad I bought it", "the new kettle"),
    ("Chez Laurent was a total letdown. Slow and overpriced.", "Chez Laurent"),
    ("That hiking app has become my favourite thing on the phone", "That hiking app"),
])
def test_a_linking_verbs_subject_is_what_a_bare_view_is_about(text: str, target: str) -> None:
    found = bare_view(text, "Ana", "Ana")
    assert found is not None and found.target == target


@pytest.mark.parametrize("text", [
    "nah changed my mind, keeping the beard",
    "yeah changed my mind about the sofa",
])
def test_an_interjection_is_not_whose_mind_changed(text: str) -> None:
    found = revision(text, "Ana", "Ana")
    assert found is not None and found.holder == "Ana"


@pytest.mark.parametrize(("text", "relation"), [
    ("Sis just rang about the wedding seating plan.", "sister"),
    ("Hubby finally fixed the gate latch.", "husband"),
])
def test_bare_kinship_words_of_chat_name_a_relation(text: str, relation: str) -> None:
    from enfold.text.people import extract_people

    found = [p for p in extract_people(text, "Ana") if p.role == "mentioned"]
    assert [p.relation for p in found] == [relation]


@pytest.mark.parametrize(("text", "name"), [
    ("Can't come Friday, my nonna is moving house.", "Ana's grandma"),
    ("Our abuelo still drives to the market every morning.", "Ana's grandpa"),
])
def test_kin_words_of_other_languages_after_my_are_the_speakers_relation(text: str,
                                                                           name: str) -> None:
    from enfold.text.people import extract_people

    found = [p for p in extract_people(text, "Ana") if p.role == "mentioned"]
    assert [p.name for p in found] == [name]


@pytest.mark.parametrize("text", [
    "Gran says the new bakery's bread is nothing like it used to be.",   # the cue pattern
    "Sis finally sold the campervan, says it was never worth the hassle.",  # no subject
])
def test_a_kinship_word_used_as_a_name_holds_the_view_of_that_relation(text: str) -> None:
    from enfold.text.claims import extract_claims

    claims = extract_claims(text, "Ana")
    assert claims and claims[0].holder.startswith("Ana's ")
