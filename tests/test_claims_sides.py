"""Taking a side as a view (new sentences of our own): the verbs of supporting and opposing
a course, "against" and "in favour of" with the copula, a name the tagger reads as a
common noun, and the questions that ask for such a side. Each case failed before the
side-taking verbs were read (session 22)."""

from __future__ import annotations

import pytest

from enfold.recall.analyze import analyze
from enfold.text.claims import extract_claims
from enfold.text.stance import view_holder


@pytest.mark.parametrize(("text", "holder", "predicate"), [
    ("Ingrid supports moving the standup to ten.", "Ingrid", "prefer"),
    ("Our treasurer Malik backs the new fee structure.", "Malik", "prefer"),
    ("Teodor opposes the plan to sell the minibus.", "Teodor", "hate"),
    ("Yusra strongly disapproves of the late-night opening.", "Yusra", "hate"),
    ("Benedikt is against renaming the society.", "Benedikt", "hate"),
    ("Odile is firmly in favour of a second vote.", "Odile", "prefer"),
    ("fenna is dead set against moving the match to Sunday", "Fenna", "hate"),
    ("Bartek is all for trying the new supplier.", "Bartek", "prefer"),
    ("Wilhelmina is opposed to the longer opening hours.", "Wilhelmina", "hate"),
    ("Cosmin is firmly opposed to merging the two clubs.", "Cosmin", "hate"),
    ("Hamish at the allotment is adamant the frost killed the beans.", "Hamish", "believe"),
    ("Harold is adamant that the clutch is fine.", "Harold", "believe"),  # "Harold": NOUN
])
def test_a_side_taken_is_its_holders_view(text: str, holder: str, predicate: str) -> None:
    claims = extract_claims(text, "Noor")
    assert len(claims) == 1 and holder in claims[0].holder  # ("Treasurer Malik")
    assert claims[0].predicate == predicate and not claims[0].holder_is_speaker


def test_the_speaker_taking_a_side_holds_it() -> None:
    claims = extract_claims("I fully endorse the proposal for a quiet carriage.", "Noor")
    assert [(c.holder, c.stance) for c in claims] == [("Noor", "positive")]


@pytest.mark.parametrize("text", [
    "The committee approved the extension on Monday.",  # a decision, not a view
    "Priya backed up the photos to the NAS last night.",  # another verb
    "My friends always support me when things get hard.",  # help given to a person
    "We were never opposed to him as a person.",
    "It's been great having people who back you.",
    "The new firmware supports two displays.",  # a thing's ability
    "The ladder is against the garage wall.",  # a thing's place
    "Dancing makes me so happy these days.",  # a thing, not an untagged name
])
def test_the_other_senses_hold_no_side(text: str) -> None:
    # (view=True too: a text the classifier reads as a view goes through the reported-view
    # reading, where a capitalised subject was first taken for a name)
    for view in (False, True):
        assert not any(c.predicate in ("prefer", "hate") or c.holder in ("Dancing", "Ladder")
                       for c in extract_claims(text, "Noor", view=view))


@pytest.mark.parametrize(("question", "holder"), [
    ("Does Ingrid support moving the standup?", "Ingrid"),
    ("Does Yusra approve of the late opening?", "Yusra"),
    ("Why is Benedikt against renaming the society?", "Benedikt"),
    ("Is Odile in favour of a second vote?", "Odile"),
    ("What option does Teodor favour?", "Teodor"),  # the object asked first
    ("Did Ingrid approve the invoice?", None),
    ("Did Priya back up the photos?", None),
    ("Does Malik support Ingrid?", None),  # a person supported, not a course
])
def test_questions_asking_for_a_side(question: str, holder: str | None) -> None:
    assert view_holder(question) == holder


def test_who_takes_a_side_asks_for_a_view_and_who_helped_does_not() -> None:
    assert analyze("Who opposes the plan to sell the minibus?").asks_opinion
    assert not analyze("Who supported Ingrid after the accident?").asks_opinion
