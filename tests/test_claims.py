"""Claims: who holds which opinion, about what, with which stance."""

from __future__ import annotations

import pytest

from enfold.text.claims import ClaimCandidate, extract_claims, predicate_family, target_key


def one(text: str, speaker: str | None = "Maya") -> ClaimCandidate:
    found = extract_claims(text, speaker)
    assert len(found) == 1, found
    return found[0]


def test_reported_opinion_keeps_its_holder() -> None:
    c = one("Gina thinks Jon being fired was a mistake")
    assert c.holder == "Gina"
    assert not c.holder_is_speaker and c.reported
    assert c.predicate == "think"
    assert c.content == "Jon being fired was a mistake"
    assert c.target == "Jon being fired"
    assert c.stance == "negative"
    assert (c.start, c.end) == (0, 41)


def test_first_person_opinion_belongs_to_the_speaker() -> None:
    c = one("I think the launch slipped because of QA")
    assert (c.holder, c.holder_is_speaker, c.reported) == ("Maya", True, False)
    assert c.predicate == "think"
    assert c.content == "the launch slipped because of QA"
    assert c.target == "the launch"
    unknown = one("I think the launch slipped", speaker=None)
    assert (unknown.holder, unknown.holder_is_speaker) == ("speaker", True)


@pytest.mark.parametrize(
    ("text", "holder", "predicate", "content", "target", "stance"),
    [
        ("Gina said that the budget is fine", "Gina", "say", "the budget is fine", "the budget",
         "positive"),
        ("Omar suspects the outage came from the DNS change", "Omar", "believe",
         "the outage came from the DNS change", "the outage", "neutral"),
        ("my co-founder believes we should pivot", "Maya's co-founder", "believe",
         "we should pivot", "pivot", "neutral"),
        ("According to Sam, the deploy failed.", "Sam", "say", "the deploy failed", "the deploy",
         "negative"),
        ("Sam told me the deploy failed", "Sam", "say", "the deploy failed", "the deploy",
         "negative"),
        ("In Sam's opinion, the office is too loud", "Sam", "think", "the office is too loud",
         "the office", "neutral"),
        ("Dr. Patel, my boss, argued the budget is too small.", "Dr. Patel", "argue",
         "the budget is too small", "the budget", "neutral"),
        ("My co-founder Sam thinks the office is great", "Sam", "think", "the office is great",
         "the office", "positive"),
        ("Our CTO doubts the migration will work.", "Maya's cto", "doubt",
         "the migration will work", "the migration", "negative"),
    ],
)
def test_reported_speech(
    text: str, holder: str, predicate: str, content: str, target: str, stance: str
) -> None:
    c = one(text)
    assert (c.holder, c.predicate, c.content, c.target, c.stance) == (
        holder, predicate, content, target, stance)
    assert c.reported and not c.holder_is_speaker


def test_attitudes_have_object_targets() -> None:
    love = one("I love my job")
    assert (love.predicate, love.stance, love.target) == ("love", "positive", "my job")
    hate = one("I'm quitting, I hate this job")
    assert (hate.predicate, hate.stance, hate.target) == ("hate", "negative", "this job")
    assert target_key(love.target) == target_key(hate.target) == "job"
    assert one("I can't stand the new office").predicate == "hate"
    prefer = one("I prefer tea to coffee")
    assert (prefer.predicate, prefer.target, prefer.stance) == ("prefer", "tea", "positive")


def test_negation_flips_the_stance() -> None:
    c = one("I don't think the plan is good.")
    assert (c.predicate, c.stance) == ("think", "negative")
    assert one("I think the plan is not good").stance == "negative"
    assert one("I don't love my job").stance == "negative"
    assert one("I'm not a fan of the new office").stance == "negative"
    doubt = one("I'm not sure the budget is fine")
    assert (doubt.predicate, doubt.stance) == ("doubt", "negative")


def test_speaker_named_in_third_person_is_the_speaker() -> None:
    c = one("Maya thinks it is fine")
    assert c.holder_is_speaker and not c.reported


def test_trailing_cue_claims_the_clause_before_it() -> None:
    c = one("The plan is great, I think.")
    assert (c.content, c.target, c.stance) == ("The plan is great", "The plan", "positive")


def test_pronoun_and_extraposed_subjects() -> None:
    assert one("I think you'd be a great counselor").target == "a great counselor"
    assert one("I think it's important to stand up for others").target == "stand up"
    assert one("I think it is broken").target == "it"  # unresolved referent stays a pronoun


@pytest.mark.parametrize(
    "text",
    [
        "We shipped the release on Tuesday",
        "The launch slipped by two weeks.",
        "I'd love to support those with similar issues.",  # a wish
        "I think so!",
        "I hope you have a great day",
        "Do you think it's fine?",
        "I love it!",  # no target beyond a pronoun
        "I feel great",  # a mood
        "She thinks the plan is bad",  # pronoun holders are not resolved
        "Sounds like a great plan, Jon!",
        "Looks like you had fun",
        "Events like these are great",
        "I can't believe I made so much money",
        "I'm not sure what to do with it",
        "Having loved ones who support us is so important",
        "I told Mel about the trip",  # a named addressee needs "that"
        "That's what I said and how it went",
    ],
)
def test_no_claim(text: str) -> None:
    assert extract_claims(text, "Maya") == []


@pytest.mark.parametrize(
    ("text", "holder", "predicate", "content", "addressee", "audience"),
    [
        ("Hannah privately told Charlotte that the carrot is in the blue_container.", "Hannah",
         "say", "the carrot is in the blue_container", "Charlotte", "private"),
        ("Charlotte publicly claimed that carrot is in the green_envelope.", "Charlotte",
         "claim", "carrot is in the green_envelope", None, "public"),
        ("Gina told Sam that the budget is fine", "Gina", "say", "the budget is fine", "Sam",
         None),
        ("Omar secretly believes the deal is off", "Omar", "believe", "the deal is off", None,
         "private"),
    ],
)
def test_communication_keeps_addressee_and_audience(
    text: str, holder: str, predicate: str, content: str, addressee: str | None,
    audience: str | None,
) -> None:
    c = one(text)
    assert (c.holder, c.predicate, c.content) == (holder, predicate, content)
    assert (c.addressee, c.audience) == (addressee, audience)


def test_short_ly_names_hold_claims() -> None:
    assert one("Emily thinks the plan is great").holder == "Emily"
    assert one("Lily said that the office is loud").holder == "Lily"


def test_several_claims_in_order() -> None:
    found = extract_claims("Gina says the office is great. I think the office is awful.", "Maya")
    assert [(c.holder, c.stance, target_key(c.target)) for c in found] == [
        ("Gina", "positive", "office"),
        ("Maya", "negative", "office"),
    ]


@pytest.mark.parametrize(
    ("target", "key"),
    [
        ("my job", "job"),
        ("This job", "job"),
        ("jobs", "job"),
        ("the companies", "company"),
        ("Jon's firing", "jon firing"),
        ("the new offices", "new office"),
        ("the boss", "boss"),
        ("a status", "status"),
        ("this", "this"),
    ],
)
def test_target_key(target: str, key: str) -> None:
    assert target_key(target) == key


def test_predicate_family() -> None:
    assert predicate_family("love") == predicate_family("hate") == "attitude"
    assert predicate_family("say") == predicate_family("argue") == "speech"
    assert predicate_family("think") == predicate_family("doubt") == "belief"


def test_clauses_with_irregular_verbs_are_claims() -> None:
    c = one("I believe the leak came from the contractor.")
    assert (c.holder, c.predicate, c.target) == ("Maya", "believe", "the leak")
    assert c.content == "the leak came from the contractor" and not c.reported
    assert one("I think the deal fell through.").target == "the deal"
    assert one("I suspect the cat knocked it over").predicate == "believe"


def test_a_stance_adverb_is_never_a_holder() -> None:
    """"Honestly" opening a sentence is the speaker's stance, not a person called Honestly."""
    assert all(c.holder == "Maya" for c in extract_claims("Honestly said it was fine", "Maya"))


def test_a_view_reported_by_any_verb_with_a_clause_is_its_subjects() -> None:
    # "suggest" is no stance verb: the clause structure names the holder once the text
    # reads as a view; without that reading the sentence yields no claim of anyone.
    text = "The treasurer, Mrs. Adebayo, has suggested that the fees are far too low."
    (claim,) = extract_claims(text, "Tom", view=True)
    assert claim.holder == "Mrs. Adebayo" and claim.reported
    assert extract_claims(text, "Tom") == []
