"""Regression tests for claim families read from the parse (new sentences of our own):
subjects the small parser hangs on an auxiliary, lower-case reported holders, "X's sure"
read as a possessive, questions that ask for a view with a non-view verb, views that carry
amounts, and reference codes taken for people."""

from __future__ import annotations

from datetime import datetime

import pytest

from enfold.recall.analyze import analyze
from enfold.text.annotate import annotate
from enfold.text.claims import extract_claims
from enfold.text.stance import view_holder

_AT = datetime(2026, 3, 14, 12, 0)


@pytest.mark.parametrize(("text", "holder"), [
    ("uncle dev is convinced the boiler needs replacing before winter", "Dev"),
    ("Marguerite is convinced the ferry will be cancelled again.", "Marguerite"),
    ("tobias's sure the exam board will mark it down", "Tobias"),
])
def test_lowercase_and_passive_reported_holders(text: str, holder: str) -> None:
    claims = extract_claims(text, "Noor")
    assert claims and holder in claims[0].holder and not claims[0].holder_is_speaker


def test_a_wary_or_hesitant_speaker_holds_a_view() -> None:
    claims = extract_claims("I'm wary of signing the lease before the survey is back", "Noor")
    assert claims and claims[0].holder == "Noor"


@pytest.mark.parametrize(("question", "holder"), [
    ("How does Omar see the merger?", "Omar"),
    ("Does Ines see her brother as a rival?", "Ines"),
    ("How does Keiko read the polling numbers?", "Keiko"),
    ("What's Dimitri's read on the new manager?", "Dimitri"),
    ("How fast does the trainer Solveig judge the colt to be?", "Solveig"),
    ("What does nurse Aoife predict for his recovery?", "Aoife"),
    ("What is Tunde hoping for from the appeal?", "Tunde"),
    ("What price does Halvard want for the van?", "Halvard"),
    ("According to Gordon, what killed the seedlings?", "Gordon"),
    ("What killed the seedlings, according to the gardener Gordon?", "Gordon"),
    ("According to the forecast, will it rain on Saturday?", None),
    ("What did Omar read on the plane?", None),
    ("When did Ines see the dentist?", None),
    ("How did Keiko fix the shelf?", None),
])
def test_view_questions_with_other_verbs(question: str, holder: str | None) -> None:
    assert view_holder(question) == holder


def test_an_amount_inside_a_judgement_is_not_a_stated_fact() -> None:
    ann = annotate("Ninety minutes is far too long for a toddler's class, I think.", ts=_AT,
                   speaker="Noor")
    assert ann.claims and not ann.states_facts


def test_an_amount_told_beside_a_view_is_a_stated_fact() -> None:
    ann = annotate("The new saddle was £85 and I think it feels much comfier.", ts=_AT, speaker="Noor")
    assert ann.claims and ann.states_facts


def test_reference_codes_are_not_holders() -> None:
    assert analyze("What did Ref kz2291 say about the refund?").holder is None
    assert not [c for c in extract_claims(
        "Ref kz2291 says the refund was refused, which is absurd.", "Noor")
        if "kz2291" in c.holder]


def test_a_verdict_put_in_a_sources_mouth_is_not_the_speakers_view() -> None:
    from enfold.text.stance import reports_another

    assert reports_another("The inspector's report called the stairwell a death trap.")
    assert not reports_another("The stairwell is a death trap.")


@pytest.mark.parametrize("text, reports", [
    # a verb with a complement but no object says what its subject is like: the speaker's view
    ("the new bins seem pointless", False),
    ("Jonas called the new bins pointless", True),
    # a stance verb in a question asks; it reports no one's view
    ("why do tourists love this place, it is a dump", False),
    ("does Farah like the new rota?", False),
    ("Farah likes the new rota", True),
])
def test_whose_view_a_clause_structure_reports(text: str, reports: bool) -> None:
    from enfold.text.stance import reports_another

    assert reports_another(text) is reports


@pytest.mark.parametrize("text", [
    "something tells me there's a loose tile on the roof somewhere",
    "Everything tells me we should hold off on the new kitchen until spring.",
    "everything tells me the quote is too high",
])
def test_a_thing_that_tells_the_speaker_is_no_holder(text: str) -> None:
    """"Something tells me …" is the speaker's hunch: the view is theirs, not held by a
    "Something" read as a lower-case name (the tagger reads these as nouns)."""
    claims = extract_claims(text, "Noor")
    assert claims and all(c.holder == "Noor" and not c.reported for c in claims)


def test_nothing_that_tells_the_speaker_is_no_view_of_theirs() -> None:
    """"Nothing tells me the quote is too high" denies the view: nobody holds it."""
    claims = extract_claims("nothing tells me the quote is too high", "Noor")
    assert not any(c.holder in ("Noor", "Nothing") for c in claims)
