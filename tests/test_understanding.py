"""Issue 19's examples as regression tests: people, opinion phrasings, changes of mind and
facts, read with the spaCy parse (time expressions are in test_timex.py), and the
understanding benchmark's scorers on the bundled sets."""

from __future__ import annotations

from typing import Any

import pytest

from enfold import Memory
from enfold.bench import understand
from enfold.model import EdgeType, NodeKind
from enfold.text.claims import extract_claims
from enfold.text.people import extract_people

TS = 1_773_500_000  # 2026-03-14


def people(text: str, speaker: str | None = "Maya") -> list[str]:
    return [text[p.start:p.end] for p in extract_people(text, speaker) if p.start >= 0
            and p.role != "speaker"]


@pytest.mark.parametrize("text,thing", [
    ("Finally started reading Designing Data-Intensive Applications on the train.",
     "Designing Data-Intensive Applications"),
    ("Mum called, she wants us all in Leeds for Christmas.", "Leeds"),
    ("Booked flights to Lisbon for May 14 to May 21.", "Lisbon"),
    ("Priya changed her mind: she now thinks Postgres is fine.", "Postgres"),
    ("Play was suspended because of rain.", "Play"),
    ("The app is finally live on the App Store.", "App Store"),
    ("Legs were sore after the long run.", "Legs"),
    ("My Apple Watch says I slept four hours.", "Watch"),
    ("My brother got a job at Stripe.", "Stripe"),
    ("Stripe sent the invoice yesterday.", "Stripe"),
])
def test_places_organisations_products_and_titles_are_not_people(text: str, thing: str) -> None:
    assert not any(thing in p or p in thing for p in people(text)), people(text)


@pytest.mark.parametrize("text,person", [
    ("Mum called, she wants us all in Leeds for Christmas.", "Mum"),
    ("watched a film with grandpa last night", "grandpa"),
    ("the landlord wants to do an inspection on Friday", "the landlord"),
    ("Our accountant recommends filing before the break.", "Our accountant"),
    ("Tell Sam I said hi.", "Sam"),
])
def test_people_named_or_by_their_role_are_people(text: str, person: str) -> None:
    assert person in people(text)


def test_a_name_and_its_short_form_in_one_namespace_are_one_person(minilm: Any) -> None:
    m = Memory.open("memory:", embedder=minilm, planner="local")
    try:
        m.add("Lena Ortiz joined the team as our new designer.", source="Maya", ts=TS)
        m.add("Lena sent the first mock-ups this morning.", source="Maya", ts=TS + 3600)
        names = [m.graph().nodes[p].text for p in m.graph().of_kind(NodeKind.PERSON)]
        assert sum("Lena" in n for n in names) == 1, names
    finally:
        m.close()


@pytest.mark.parametrize("text,holder,predicate", [
    ("I'm certain the landlord will keep the deposit.", "Sam", "believe"),
    ("I feel the new schedule is a mistake.", "Sam", "feel"),
    ("I hope the bakery reopens in spring.", "Sam", "hope"),
    ("I worry the bridge repairs will drag on.", "Sam", "worry"),
    ("I'll keep insisting that we need a second car.", "Sam", "claim"),
    ("Tom argued at the dinner that the board report should lead with costs.", "Tom", "argue"),
    ("Priya keeps insisting the migration will fail.", "Priya", "claim"),
    ("gina reckons the new menu is way too pricey", "Gina", "think"),
    ("my gut says it's the pump", "Sam", "feel"),
    ("Noor the trainer says she's the quickest learner in the group", "Noor", "say"),
])
def test_opinions_in_other_words_are_claims_of_their_holder(text: str, holder: str,
                                                           predicate: str) -> None:
    claims = extract_claims(text, "Sam")
    assert [(c.holder, c.predicate) for c in claims] == [(holder, predicate)]


def test_plain_accounts_are_not_claims() -> None:
    for text in ("The council announced the pool will close on 3 May.",
                 "She said she'd arrive at 6.",
                 "We shipped the release on Tuesday."):
        assert extract_claims(text, "Sam") == [], text


def test_a_concession_reports_no_view_of_the_one_conceded_to() -> None:
    # what Marisol thinks is not said: no claim of hers (a long stream's false change of mind)
    text = "He's fair, whatever Marisol thinks — he sorted the Easter swaps the same day."
    assert all(c.holder != "Marisol" for c in extract_claims(text, "Adaeze"))


def _claims_of(m: Memory, holder: str) -> list[Any]:
    g = m.graph()
    return sorted((g.nodes[c] for c in g.of_kind(NodeKind.CLAIM)
                   if str(g.nodes[c].attrs.get("holder")) == holder),
                  key=lambda n: float(n.attrs.get("valid_from") or 0.0))


@pytest.mark.parametrize("events", [
    [("Sam", "Priya thinks Postgres is a bad fit for the analytics workload."),
     ("Sam", "Priya changed her mind: she now thinks Postgres is fine.")],
    [("Tom", "Maya loves the new apartment."),
     ("Tom", "Maya hates this apartment, the walls are paper thin.")],
])
def test_a_change_of_mind_supersedes_the_older_claim(minilm: Any,
                                                     events: list[tuple[str, str]]) -> None:
    m = Memory.open("memory:", embedder=minilm, planner="local")
    try:
        for i, (speaker, text) in enumerate(events):
            m.add(text, source=speaker, ts=TS + 86_400 * 7 * i)
        report = m.consolidate()
        holder = "Priya" if "Priya" in events[0][1] else "Maya"
        old, new = _claims_of(m, holder)
        assert old.attrs.get("superseded_by") == new.id
        assert new.attrs.get("supersedes") == old.id
        assert report.claims_superseded >= 1
        # both stay retrievable
        pack = m.recall(f"What does {holder} think now?", k=5, touch=False)
        texts = {e.text for e in pack.evidence}
        assert events[0][1] in texts and events[1][1] in texts
    finally:
        m.close()


def test_another_holder_disagreeing_is_not_a_change_of_mind(minilm: Any) -> None:
    m = Memory.open("memory:", embedder=minilm, planner="local")
    try:
        m.add("Priya thinks Postgres is a bad fit for the analytics workload.", source="Sam",
              ts=TS)
        m.add("Omar thinks Postgres is a great fit for the analytics workload.", source="Sam",
              ts=TS + 86_400)
        m.consolidate()
        assert all(not c.attrs.get("superseded_by") for c in _claims_of(m, "Priya"))
    finally:
        m.close()


def test_facts_rest_on_accounts_and_render_lists_no_claim_as_a_fact(minilm: Any) -> None:
    m = Memory.open("memory:", embedder=minilm, planner="local")
    try:
        for i in range(4):
            m.add(f"Tom ran {5 + i} km along the river this morning.", source="Tom",
                  ts=TS + 86_400 * i)
        m.add("Tom thinks the board report should lead with the costs.", source="Maya",
              ts=TS + 86_400 * 5)
        m.add("Tom thinks running along the river is the best part of his week.",
              source="Maya", ts=TS + 86_400 * 6)
        m.consolidate()
        g = m.graph()
        opinions = {e.dst for c in g.of_kind(NodeKind.CLAIM) for e in g.out_edges(c)
                    if e.type is EdgeType.SUPPORTED_BY}
        assert opinions
        for f in g.of_kind(NodeKind.FACT):
            assert not set(g.nodes[f].grounded_in) & opinions
        pack = m.recall("What does Tom think about running?", k=5, touch=False)
        section, facts = None, []
        for line in pack.render().splitlines():
            if not line.startswith("- "):
                section = line
            elif section == "Facts:":
                facts.append(line)
        assert not any("thinks" in line for line in facts), facts
    finally:
        m.close()


@pytest.mark.parametrize("kind", sorted(understand.SETS))
def test_the_understanding_scorers_run_on_the_bundled_sets(kind: str) -> None:
    if kind in ("supersede", "views", "intents"):
        pytest.skip("needs MiniLM: covered by the tests around")
    for part in understand.SETS[kind]:
        scores = understand.run(kind, understand.bundled(kind, part))
        # floors a little below what the code reaches; the "measure-g" and "measure-h" parts
        # came later, by other authors, and were never tuned on (docs/benchmarks.md has the
        # numbers)
        fresh = part.startswith("measure-")
        if kind == "time":
            # the parts of session 30 were tuned on for one session: tune-n 0.73 → 0.88,
            # tune-p 0.73 → 0.87, tune-r (weekdays and clock times, mostly traps) 0.53 → 0.67
            later = {"tune-n": 0.8, "tune-p": 0.8, "tune-r": 0.6}
            assert scores["accuracy"] >= (0.75 if fresh else later.get(part, 0.85))
        else:
            floor = 0.55 if fresh else 0.65
            assert scores["precision"] >= floor and scores["recall"] >= floor


def test_to_dos_are_found_and_named_in_personal_messages(minilm: Any) -> None:
    # floors a little below what the code reaches (task F1 / goals named: tune 0.90 / 0.71,
    # measure 0.80 / 0.55, measure-b 0.72 / 0.44; the code before reached 0.62 / 0.28,
    # 0.51 / 0.30 and 0.48 / 0.18)
    for part, f1, named in (("tune", 0.85, 0.65), ("measure", 0.75, 0.5),
                            ("measure-b", 0.68, 0.4)):
        scores = understand.run("intents", understand.bundled("intents", part),
                                embedder=minilm)
        assert scores["task_f1"] >= f1 and scores["goals_named"] >= named, scores
        assert scores["goals"] >= 55


def test_views_in_personal_messages_are_read_and_accounts_are_not(minilm: Any) -> None:
    # floors a little below what the code reaches (tune 0.98 / 0.88, measure 0.86 / 0.88)
    for part, floor in (("tune", 0.85), ("measure", 0.8)):
        scores = understand.run("views", understand.bundled("views", part), embedder=minilm)
        assert scores["precision"] >= floor and scores["recall"] >= floor
        assert scores["messages"] == 120


def test_a_verdict_beside_an_account_is_a_view(minilm: Any) -> None:
    from datetime import datetime

    from enfold.text.annotate import annotate

    # the account of the morning pulls the whole text's vector to 0.32
    text = "The docs for this library are a disaster, took me all morning to find one flag."
    ann = annotate(text, ts=datetime(2026, 3, 1), speaker="Sam",
                   vector=minilm.embed([text])[0], embedder=minilm.name)
    assert [c.holder for c in ann.claims] == ["Sam"]


def test_the_polarity_model_reads_a_lean_the_word_lists_miss(minilm: Any) -> None:
    from datetime import datetime

    from enfold.text.annotate import annotate
    from enfold.text.polarity import polarity

    text = "Oskar reckons the night ferry is a lifeline for the island"
    vector = minilm.embed([text])[0]
    plain = annotate(text, ts=datetime(2026, 3, 14), speaker="Ana")
    read = annotate(text, ts=datetime(2026, 3, 14), speaker="Ana", vector=vector,
                    embedder=minilm.name)
    assert [c.stance for c in plain.claims] == ["neutral"]  # no evaluative word
    assert [(c.holder, c.stance) for c in read.claims] == [("Oskar", "positive")]
    bad = "the evening ferry leaves me stranded on the pier twice a week"
    assert polarity(minilm.embed([bad])[0], minilm.name) == "negative"
    assert polarity(vector, "hash") is None  # the model belongs to one embedder


def test_an_opposite_lean_with_no_stance_word_supersedes(minilm: Any) -> None:
    m = Memory.open("memory:", embedder=minilm, planner="local")
    try:
        m.add("Oskar reckons the night ferry is a lifeline for the island", source="Ana",
              ts=TS)
        m.add("Oskar reckons the night ferry is a waste, half empty every crossing",
              source="Ana", ts=TS + 86_400 * 30)
        m.consolidate()
        old, new = _claims_of(m, "Oskar")
        assert old.attrs.get("superseded_by") == new.id
    finally:
        m.close()


@pytest.mark.parametrize("gap, superseded", [(None, 1), (2.0, 0)])
def test_a_lean_the_lexicon_leaves_neutral_is_read_against_the_earlier_stance(
        minilm: Any, gap: float | None, superseded: int) -> None:
    """The later view has no evaluative word the lexicon knows (its stance is neutral); the
    polarity model reads it leaning against what the earlier one praised. With
    ``claim_lean_gap`` 2 only two read stances can be opposite, as before."""
    from enfold import Settings

    settings = Settings() if gap is None else Settings().with_(claim_lean_gap=gap)
    m = Memory.open("memory:", embedder=minilm, planner="local", settings=settings)
    try:
        m.add("Teo thinks the evening pottery class is the best part of his week",
              source="Ana", ts=TS)
        m.add("Teo thinks the pottery class is a chore, the teacher just reads from "
              "her phone", source="Ana", ts=TS + 86_400 * 30)
        assert m.consolidate().claims_superseded == superseded
        old, new = _claims_of(m, "Teo")
        assert new.attrs.get("stance") == "neutral"  # the lexicon reads no lean
        assert (old.attrs.get("superseded_by") == new.id) is bool(superseded)
    finally:
        m.close()


def test_a_change_of_mind_ends_every_restatement_of_the_view(minilm: Any) -> None:
    m = Memory.open("memory:", embedder=minilm, planner="local")
    try:
        for i, text in enumerate(["the new tram line is a pointless vanity project",
                                  "still think the new tram line is a pointless vanity project",
                                  "ok I take it back, the tram line has been great"]):
            m.add(text, source="Ana", ts=TS + 86_400 * 7 * i)
        m.consolidate()
        claims = _claims_of(m, "Ana")
        # the restatement ("still think <the same words>") is read from the parse as the
        # same view in the same words: one claim on two utterances, or two claims
        assert len(claims) in (2, 3), [c.attrs for c in claims]
        *earlier, last = claims
        assert all(c.attrs.get("superseded_by") == last.id for c in earlier)
        assert last.attrs.get("supersedes") in [c.id for c in earlier]
        g = m.graph()
        supported = {e.dst for c in earlier for e in g.out_edges(c.id)
                     if e.type is EdgeType.SUPPORTED_BY}
        assert len(supported) == 2  # both utterances of the old view are ended
    finally:
        m.close()


@pytest.mark.parametrize("question,holder", [
    # the small parser reads "Precious" as an adjective and "Marisol worried" as a noun
    # phrase: the inverted word order still names the holder
    ("What does Precious blame for the flooded cellar?", "Precious"),
    ("What's Marisol worried about with the roof?", "Marisol"),
    ("How does Gina describe the feeling that dance brings?", "Gina"),
    # a view noun as the object of a verb that is not one of holding a view asks a fact
    ("What position did Kenji finish in at the regatta?", None),
    ("Which flat did Ines take in the end?", None),
    # a verb whose object is a finite clause holds or reports a proposition
    ("Does Tomasz accept that the new rota is fairer?", "Tomasz"),
    ("Is Ayesha convinced the quote is too high?", "Ayesha"),
    ("When did Bruno move to Porto?", None),
    # the wh-word's own noun before the inverted auxiliary
    ("What remedy does Ilse favour for the damp?", "Ilse"),
    ("What road did Ilse take to the coast?", None),
    ("What cure does Dr. Ilse Berg recommend?", "Dr. Ilse Berg"),
])
def test_the_holder_a_question_asks_about(question: str, holder: str | None) -> None:
    from enfold.text.stance import view_holder

    assert view_holder(question) == holder


@pytest.mark.parametrize("text,speaker,holder", [
    ("my mum brigitte is convinced the boiler is on its last legs", "Hannah", "Brigitte"),
    ("Aunt Rosa thinks the hedge is far too tall", "Tom", "Rosa"),
])
def test_a_holder_named_with_a_relation_word_is_the_name(text: str, speaker: str,
                                                          holder: str) -> None:
    assert [c.holder for c in extract_claims(text, speaker)] == [holder]


@pytest.mark.parametrize("text,holder", [
    # the tagger reads "Lily" as an adverb; she is still the one who changed her mind
    ("Lily no longer believes the landlord will pay for the boiler", "Lily"),
    # the cue's clause has no subject: the speaker's change, not the man named after it
    ("can't stand Omar anymore, he took the last parking space again", "Ana"),
    # the one persuaded holds the view, not the persuader
    ("alright, you've convinced me, the four-day week makes sense", "Ana"),
    # a phrase over a clause about a thing: the speaker's change of mind ...
    ("on second thought the harbour route is too windy in winter", "Ana"),
    # ... or that of the person whose view the clause is
    ("Rafa thinks the harbour route is too windy these days after all", "Rafa"),
])
def test_the_holder_of_a_change_of_mind(text: str, holder: str) -> None:
    from enfold.text.stance import revision

    found = revision(text, "Ana", "Ana")
    assert found is not None and found.holder == holder


def test_a_view_asked_by_surname_returns_that_persons_words(minilm: Any) -> None:
    m = Memory.open("memory:", embedder=minilm, planner="local")
    try:
        m.add("The inspection on 3 May found the footbridge sound, and it reopened after repairs "
              "costing £180,000.",
              source="Harriet Lowe", ts=TS)
        m.add("Councillor Mbeki argued at the meeting that the repairs were money well spent.",
              source="Harriet Lowe", ts=TS + 3600)
        m.add("Frankly the bridge was patched, not fixed; it will be shut again within a year.",
              source="Dr. Amara Okonjo", ts=TS + 7200)
        pack = m.recall("Does Okonjo accept that the bridge is sound now?", k=3, touch=False)
        assert pack.evidence and pack.evidence[0].source == "Dr. Amara Okonjo"
        pack = m.recall("What does Mbeki make of the cost?", k=3, touch=False)
        assert pack.evidence and "Mbeki" in pack.evidence[0].text
    finally:
        m.close()


@pytest.mark.parametrize("setting,events,default,raised", [
    # an opposite stance alone (the heads differ: apartment, place; the later words name
    # the apartment, so the two are about one thing)
    ("claim_opposite_similarity",
     ["Maya loves the new apartment.",
      "Maya hates the new place, the apartment walls are paper thin."],
     1, 0),
    # the same head word (apartment): the revision's similarity applies
    ("claim_revision_similarity",
     ["Maya loves the new apartment.", "Maya hates this apartment, the walls are paper thin."],
     1, 0),
    # the restatement is ended too only while it is alike enough to the ended claim (a
    # change that names no thing; one that names it ends each view of it)
    ("claim_restatement_similarity",
     ["I hate the new tram line, it is a vanity project.",
      "I still hate that tram line, such a vanity project.",
      "OK, I take it back, I love it now."], 2, 1),
])
def test_the_change_of_mind_similarities_are_settings(minilm: Any, setting: str,
                                                      events: list[str], default: int,
                                                      raised: int) -> None:
    from enfold import Settings

    for value, superseded in ((None, default), (0.99, raised)):
        settings = Settings() if value is None else Settings().with_(**{setting: value})
        m = Memory.open("memory:", embedder=minilm, planner="local", settings=settings)
        try:
            for i, text in enumerate(events):
                m.add(text, source="Tom", ts=TS + 86_400 * 7 * i)
            assert m.consolidate().claims_superseded == superseded, (setting, value)
        finally:
            m.close()


def test_a_chat_handle_with_digits_is_a_holder_not_a_code() -> None:
    """ "kt_77" is someone's handle (a separator between its parts); "Ref qz8841" stays a
    reference code and holds no view."""
    from enfold.recall.analyze import analyze
    from enfold.text.stance import is_handle

    assert is_handle("kt_77") and is_handle("bo.rivers2")
    assert not is_handle("qz8841") and not is_handle("7B")
    asked = analyze("Where does kt_77 think the leak comes from?")
    assert asked.holder is not None and asked.holder.lower() == "kt_77"
    assert analyze("What does Ref qz8841 say?").holder is None


def test_a_change_of_mind_in_the_same_words_is_not_a_repeat(minilm: Any) -> None:
    """Both views leave the lexicon neutral and share their target ("a cat"): the newer says
    the view changed, so it supersedes the older instead of merging into it as a repeat."""
    m = Memory.open("memory:", embedder=minilm, planner="local")
    try:
        m.add("a cat would be too much hassle with all our travelling", source="Ana", ts=TS)
        m.add("ok I've come round, let's adopt a cat", source="Ana", ts=TS + 86_400 * 20)
        report = m.consolidate()
        old, new = _claims_of(m, "Ana")
        assert report.claims_merged == 0
        assert old.attrs.get("superseded_by") == new.id
    finally:
        m.close()


def test_a_name_the_recogniser_calls_a_place_is_a_person_when_it_acts() -> None:
    """Session 30: a place does not act, so a single name the entity recogniser took for a
    place (GPE) that is the subject of a verb of doing stays a person; "be" does not act."""
    acted = "We got there late and Jericho had already eaten."
    assert [p.name for p in extract_people(acted, None)] == ["Jericho"]
    assert extract_people("We flew out and Paris was lovely.", None) == []
