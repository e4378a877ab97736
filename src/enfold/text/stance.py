"""Views read from the parse: who holds a view, what it is about, and how it is put.

The cue patterns of :mod:`enfold.text.claims` were written for chat text with capitalised
names; text in other registers states views in forms they miss ("gina reckons ...", "Doreen
keeps insisting ...", "Zion is convinced ...", "Ahmad, who runs the bakery, keeps insisting
...", "'It was the wiring,' said Priya", "my gut says ...", "Honestly, that thing is an
eyesore"). Here the dependency parse finds them:

* a **stance verb** (think, reckon, doubt, insist, swear, argue, blame, warn, predict, ...;
  by lemma, whatever its tense or auxiliaries: "has been saying", "keeps insisting") whose
  subject is a person — the holder — and whose clause or object is the view;
* a **stance adjective** after a copula ("is convinced", "'m sure", "is worried",
  "is optimistic") with a person as subject;
* a **stance noun** owned by a person ("Anika's take is that ...", "Barnaby's criticism");
* **first-person stance adverbs** ("honestly", "personally", "frankly", "imo", "tbh",
  "probably") and the speaker's own **modal judgements** ("they should have asked", "it ought
  to be"): the speaker's view.

The holder is the subject's name: an apposition wins ("his coach, Petrov" → Petrov, "Gran
(Edna)" → Edna), a lower-case name is capitalised ("gina" → Gina), "I"/"we" are the
speaker, "she"/"he" the nearest person named before, and "my physio" the relation handle of
:func:`enfold.text.people.relation_holder`. Subjects that are not people ("the report
says", "research suggests") hold no view here.
"""

from __future__ import annotations

import re
from collections.abc import Container
from typing import TYPE_CHECKING

from enfold.text.claims import _NEGATIVE, _POSITIVE, ClaimCandidate, _stance
from enfold.text.people import (
    bare_kin,
    canonical_relation,
    kin_holder,
    relation_holder,
    same_person,
)

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

__all__ = ["asks_whose_view", "bare_view", "evaluative_view", "held_still", "parsed_claims",
           "reports_another", "revision", "view_holder"]

#: Verbs of taking a side, for or against a course or a proposal ("Dubois supports closing
#: the branch", "Priya opposes the new rota"; "approve" only as "approve of": a council that
#: approved a plan decided it). The chat-style report ("gina reckons ...") leaves them out:
#: "app supports dark mode" opens with a thing as often as with a name.
_FOR = ("support", "back", "endorse", "favour", "favor", "champion", "approve")
_AGAINST = ("oppose", "disapprove")
_SIDES = frozenset(_FOR + _AGAINST)
#: Stance verbs by lemma → the claim predicate they give.
VERBS = {
    **dict.fromkeys(["think", "reckon", "guess", "suppose", "figure", "bet", "imagine",
                     "conclude"], "think"),
    **dict.fromkeys(["believe", "suspect", "convince"], "believe"),
    "feel": "feel", "find": "feel",
    **dict.fromkeys(["say", "tell", "mention", "write", "add", "note", "reply"], "say"),
    **dict.fromkeys(["insist", "swear", "claim", "maintain", "contend", "allege"], "claim"),
    **dict.fromkeys(["argue", "warn", "accuse", "blame", "complain", "criticise", "criticize",
                     "object"],
                    "argue"),
    **dict.fromkeys(["doubt", "question"], "doubt"),
    **dict.fromkeys(["worry", "fear"], "worry"),
    "hope": "hope", "wish": "hope",
    **dict.fromkeys(["expect", "predict", "anticipate", "forecast"], "expect"),
    **dict.fromkeys(["love", "like", "enjoy", "adore"], "love"),
    **dict.fromkeys(["hate", "dislike", "despise", "detest", "loathe"], "hate"),
    # "Daniel wants push notifications through OneSignal": a wish about how things should
    # be is a preference; "wants to go" (the holder's own next act) is not a view, see
    # claims._asserts
    "prefer": "prefer", "want": "prefer",
    **dict.fromkeys(_FOR, "prefer"), **dict.fromkeys(_AGAINST, "hate"),
}
#: Verbs of saying report an account as often as a view: they count only when the content
#: is not a plain plan or event (see :func:`_reports_a_view`).
_NEUTRAL_SPEECH = frozenset({"say", "tell", "mention", "write", "add", "note", "reply"})
ADJECTIVES = {
    **dict.fromkeys([
        "sure", "certain", "convinced", "confident", "positive", "adamant",
    ], "believe"),
    **dict.fromkeys([
        "worried", "afraid", "scared", "terrified", "concerned", "anxious", "nervous",
        "wary", "hesitant", "reluctant", "uneasy",
    ], "worry"),
    **dict.fromkeys(["keen", "eager"], "hope"),
    **dict.fromkeys(["hopeful", "optimistic"], "hope"),
    **dict.fromkeys(["doubtful", "sceptical", "skeptical", "pessimistic", "unconvinced",
                     "unsure", "dubious"], "doubt"),
    "opposed": "hate",  # "Cosmin is firmly opposed to merging the clubs" (a side taken)
}
NOUNS = {
    **dict.fromkeys([
        "take", "view", "opinion", "verdict", "position", "stance", "feeling", "sense",
        "belief",
    ], "think"),
    **dict.fromkeys(["criticism", "complaint", "argument", "accusation", "objection"], "argue"),
    **dict.fromkeys(["prediction", "expectation", "forecast", "bet"], "expect"),
    **dict.fromkeys(["worry", "fear", "concern"], "worry"),
    "doubt": "doubt", "hope": "hope", "gut": "feel", "guess": "think", "theory": "think",
}
ADVERBS = frozenset([
    "honestly", "personally", "frankly", "imo", "imho", "tbh", "probably", "presumably",
    "surely", "obviously", "arguably",
])
_FIRST = frozenset({"i", "we", "me", "us"})
_THIRD = frozenset({"he", "she", "they", "him", "her", "them"})
_MODALS = frozenset({"should", "ought", "shouldn't", "must"})
#: Predicates of wanting: with an infinitive of the holder's own act ("I'm hoping to catch
#: the ferry", "Kofi wants to drive up", "keen to try it") they state a plan, not a view of
#: how things are or should be ("hoping the rain holds off", "wants cores drilled first").
_DESIRES = frozenset({"hope", "prefer"})


def parsed_claims(text: str, speaker: str | None, me: str, *, view: bool = False
                  ) -> list[ClaimCandidate]:
    """The views the parse finds in ``text`` (``me`` is the speaker's holder name).
    ``view``: the view classifier reads the whole text as a view, so reported words count
    as a view even when their content shows no sign of one ("Kwame keeps saying he'll go
    under 3:30")."""
    from enfold.text.nlp import parse

    doc = parse(text)
    if doc is None:
        return []
    out: list[ClaimCandidate] = []
    for sent in doc.sents:
        claim = _from_sentence(doc, sent, speaker, me, view) or _chat_report(
            doc, sent, speaker, me)
        if claim is not None:
            out.append(claim)
    return out


#: Third-person and -ing forms of the stance verbs → their lemma, for chat text the tagger
#: misreads ("ruben reckons ..." comes out as two proper nouns).
def _third(lemma: str) -> str:
    if lemma.endswith(("s", "sh", "ch", "x", "z", "o")):
        return lemma + "es"
    if lemma.endswith("y") and lemma[-2:-1] not in "aeiou":
        return lemma[:-1] + "ies"
    return lemma + "s"


def _ing(lemma: str) -> tuple[str, ...]:
    """The -ing forms by the spelling rules ("hope" → "hoping", "bet" → "betting",
    "prefer" → "preferring"): only real forms, so that another verb's ("being") never reads
    as a stance verb's."""
    if lemma.endswith("e") and not lemma.endswith(("ee", "ye", "oe")):
        return (lemma[:-1] + "ing",)
    if lemma[-1] not in "aeiouwxy" and lemma[-2:-1] in tuple("aeiou") \
            and lemma[-3:-2] not in tuple("aeiou"):
        # a final consonant after one vowel doubles when stressed ("betting",
        # "preferring") and not otherwise ("reckoning"): both spellings
        return (lemma + "ing", lemma + lemma[-1] + "ing")
    return (lemma + "ing",)


_THIRD_FORMS = {_third(lemma): lemma for lemma in VERBS}
_ING_FORMS = {f: lemma for lemma in VERBS for f in _ing(lemma)}


def _lemma(tok: Token) -> str:
    """The lemma, with the stance verbs' own forms first ("hoping" is "hope", not the
    small lemmatizer's "hop")."""
    low = tok.lower_
    return _ING_FORMS.get(low) or _THIRD_FORMS.get(low) or tok.lemma_.lower()


#: Dependencies by which a verb of perceiving takes what it judges: a clause or a predicate
#: ("finds the book boring", "found it a waste", "feels that ...", "feel like ...", "felt
#: sick"); with an object alone it perceives or locates ("they couldn't find another way",
#: "Tom found the keys").
_JUDGED = frozenset({"ccomp", "xcomp", "oprd", "acomp", "advcl"})


def _stance_use(verb: Token, lemma: str, *, judged: bool = True) -> bool:
    """Whether a stance verb is used for a view: not in a raising passive (:func:`_raised`),
    and (``judged``) a verb of perceiving ("find", "feel") only with a clause or predicate
    after it (:data:`_JUDGED`). The claim reader asks only the first: a claim of "Tom found
    the keys" is harmless where no view is, and LoCoMo's evidence recall leans on those
    claims (without them @5 and @20 fell by one question each); the test whether a text
    reports another's view asks both, since there it keeps a verdict from its speaker."""
    if _raised(verb):
        return False
    if _other_sense(verb, lemma):
        return False
    if not judged or VERBS[lemma] != "feel":
        return True
    return any(c.dep_ in _JUDGED and c.i > verb.i for c in verb.children)


def _other_sense(verb: Token, lemma: str, *, asked: bool = False) -> bool:
    """A verb of taking a side used for something else than a side on a course or a
    proposal: "approve" without "of" (the council approved the plan: a decision), with a
    particle ("backed up the photos"), or over a person ("support those with similar
    issues", "people who back you", "supporting their mental health": help, not a
    position). A side is taken on a clause ("supports closing the branch") or on a thing
    named with a determiner or in the plural ("opposes the new rota", "backs cuts").
    ``asked``: in a question the object may come first ("What solution does Sami favour?"),
    so only an object after the verb is judged."""
    if lemma not in _SIDES:
        return False
    kids = list(verb.children)
    if any(c.dep_ == "prt" for c in kids):
        return True
    if lemma == "approve":
        return not any(c.dep_ == "prep" and c.lower_ == "of" for c in kids)
    if lemma == "disapprove":
        return False
    if any(c.dep_ in ("xcomp", "ccomp") and c.i > verb.i for c in kids):
        return False
    obj = next((c for c in kids if c.dep_ == "dobj" and (c.i > verb.i or not asked)), None)
    to = _side_to(verb)
    if obj is None and to is not None:  # "is opposed to the new rota", "… to moving"
        if any(g.dep_ == "pcomp" for g in to.children):
            return False
        obj = next((g for g in to.children if g.dep_ == "pobj"), None)
    if obj is None and asked:
        return False
    if obj is None or obj.pos_ != "NOUN" or obj.ent_type_ == "PERSON" \
            or canonical_relation(obj.lower_) is not None:
        return True
    marks = {c.dep_ for c in obj.children}
    return "poss" in marks or not ("det" in marks or obj.tag_ == "NNS")


def _past_to(content: Span) -> Span:
    """A side's content without the preposition it is taken with ("opposed to the new
    rota": the rota; an infinitive's "to" is no preposition and stays)."""
    if len(content) > 1 and content[0].lower_ == "to" and content[0].dep_ == "prep":
        return content[1:]
    return content


def _side_to(verb: Token) -> Token | None:
    """The "to" a side is taken with ("Priya is opposed to the new rota"), if any."""
    return next((c for c in verb.children if c.dep_ == "prep" and c.lower_ == "to"
                 and c.i > verb.i), None)


def _raised(verb: Token) -> bool:
    """A passive with a to-infinitive ("Farida is supposed to do them twice a day", "the
    bridge is expected to reopen", "he is said to be furious"): its subject is what is
    supposed, expected or said of, and whoever holds that is not named."""
    return any(c.dep_ in ("nsubjpass", "auxpass") for c in verb.children) and any(
        c.dep_ == "xcomp" and any(g.dep_ == "aux" and g.lower_ == "to" for g in c.children)
        for c in verb.children)


def _chat_report(doc: Doc, sent: Span, speaker: str | None, me: str) -> ClaimCandidate | None:
    """"gina reckons ...", "kwame keeps saying ...": a lower-case word that is not a
    function word, then a third-person stance verb (or "keeps" and one), opening a clause."""
    toks = list(sent)
    for i, tok in enumerate(toks[:-2]):
        verb_at = i + 2 if toks[i + 1].lower_ in ("keeps", "kept") else i + 1
        verb = toks[verb_at]
        lemma = _THIRD_FORMS.get(verb.lower_) or (
            _ING_FORMS.get(verb.lower_) if verb_at == i + 2 else None)
        if lemma is None or lemma in _SIDES:
            continue
        if not (tok.is_alpha and tok.is_lower and not tok.is_stop and len(tok) > 2):
            continue
        if i > 0 and not (toks[i - 1].is_punct or toks[i - 1].lower_ in ("and", "but", "so")):
            continue
        rest = doc[verb.i + 1:sent.end]
        holder = _name(tok)
        if not len(rest) or holder is None:
            return None
        return _claim(doc, sent, verb, rest, holder, VERBS[lemma], me, speaker)
    return None


def _from_sentence(doc: Doc, sent: Span, speaker: str | None, me: str, view: bool = False
                   ) -> ClaimCandidate | None:
    for tok in sent:
        lemma = _lemma(tok) if tok.pos_ in ("VERB", "AUX") else tok.lemma_.lower()
        if tok.pos_ in ("VERB", "AUX") and lemma in VERBS and tok.dep_ != "amod" \
                and _stance_use(tok, lemma, judged=False):
            subj = _subject(tok)
            if subj is None and tok.tag_ == "VBZ" and not _is_question(tok):
                # "Says she'd never go back", "..., thinks it's a tear": a verb in the third
                # person with its subject left out is said of the one the text was about
                # (the subject of the clause it hangs on, else the person named before)
                shared = _subject(tok.head) if tok.dep_ in _OWN_CLAUSE else None
                holder = _holder(doc, shared, speaker, me) if shared is not None \
                    else _antecedent(doc, tok, speaker)
                content = _content(tok, sent)
                if holder is not None and holder != me and content is not None \
                        and (lemma not in _NEUTRAL_SPEECH or view or _reports_a_view(content)) \
                        and not (VERBS[lemma] in _DESIRES and content[0].lower_ == "to"):
                    return _claim(doc, sent, tok, content, holder, VERBS[lemma], me, speaker)
            elided = subj is None and _elided_speaker(tok, sent) and any(
                c.dep_ == "ccomp" and _subject(c) is not None for c in tok.children) \
                and lemma not in _NEUTRAL_SPEECH | {"imagine", "suppose"}
            if subj is None and not elided \
                    or tok.tag_ == "VB" and tok.dep_ == "xcomp" and lemma == "like":
                continue
            content = _content(tok, sent)
            if content is None:
                continue
            if lemma in _SIDES:
                content = _past_to(content)
            if lemma in _NEUTRAL_SPEECH and not (view or _reports_a_view(content)):
                continue
            if VERBS[lemma] in _DESIRES and content[0].lower_ == "to":
                continue
            if _disbelief(tok):
                continue  # "I can't believe I made so much money": surprise, not a view
            holder = me if subj is None else _holder(doc, subj, speaker, me)
            if holder is not None:
                return _claim(doc, sent, tok, content, holder, VERBS[lemma], me, speaker)
        if tok.pos_ == "ADJ" and lemma in ADJECTIVES and tok.dep_ in ("acomp", "ROOT", "amod"):
            head = tok.head if tok.dep_ == "acomp" else tok
            subj = _subject(head) or _contracted_copula_subject(tok)
            if subj is None and not (tok.dep_ == "ROOT" and _elided_speaker(tok, sent)):
                continue
            holder = me if subj is None else _holder(doc, subj, speaker, me)
            content = _content(tok, sent) or _after(tok, sent)
        elif tok.pos_ == "ADJ" and lemma in ADJECTIVES and tok.dep_ == "advmod" \
                and _opens(tok, sent) and _clause_after(tok):
            holder, content = me, _after(tok, sent)  # "Pretty sure it's the compressor"
        else:
            holder = content = None
        if content is not None:
            if lemma == "opposed":
                content = _past_to(content)
            if ADJECTIVES[lemma] in _DESIRES and content[0].lower_ == "to":
                continue
            if holder is not None:
                return _claim(doc, sent, tok, content, holder, ADJECTIVES[lemma], me, speaker)
        side = _side_taken(tok)
        if side is not None:
            # "Graham is against changing suppliers", "Omar is in favour of the merger"
            subj = _subject(side[1])
            holder = _holder(doc, subj, speaker, me) if subj is not None else None
            if holder is not None and tok.i + 1 < sent.end:
                return _claim(doc, sent, tok, doc[tok.i + 1:sent.end], holder, side[0], me,
                              speaker)
        rather = _rather(tok)
        if rather is not None:
            # "Piotr would rather we postponed it", "Elif would sooner sell the van than
            # pay for an MOT": a preference between courses, the subject's
            subj = _subject(tok)
            holder = _holder(doc, subj, speaker, me) if subj is not None else None
            if holder is not None and rather.i + 1 < sent.end:
                return _claim(doc, sent, rather, doc[rather.i + 1:sent.end], holder,
                              "prefer", me, speaker)
        if tok.pos_ == "NOUN" and lemma in NOUNS and tok.dep_ == "pobj" \
                and tok.head.lower_ == "of" and tok.head.head.lemma_ == "be":
            # "The GP was of the view that ...", "Priya is of the opinion that ...": the
            # copula's subject holds the view the noun names
            subj = _subject(tok.head.head)
            holder = _holder(doc, subj, speaker, me) if subj is not None else None
            if holder is not None:
                return _claim(doc, sent, tok, _after(tok, sent), holder, NOUNS[lemma], me,
                              speaker)
        if tok.pos_ == "NOUN" and (lemma in NOUNS or lemma in _FRAMING_NOUNS) \
                and tok.dep_ == "pobj" and tok.head.lower_ in ("in", "to", "from") \
                and tok.head.dep_ == "prep" and tok.head.i < tok.head.head.i:
            # "In my estimation ...", "In Kemi's view, ...": a framing phrase before the
            # clause, owned by the holder
            owner = next((c for c in tok.children if c.dep_ == "poss"), None)
            holder = _holder(doc, owner, speaker, me) if owner is not None else None
            if holder is not None:
                return _claim(doc, sent, tok, _after(tok, sent), holder, "think", me,
                              speaker)
        if tok.pos_ == "NOUN" and lemma in NOUNS and tok.dep_ == "dobj" \
                and _lemma(tok.head) in _HOLDING_VERBS and _held(tok):
            # "I have my doubts he really swapped eleven", "Sam voiced her concerns about
            # the budget": a view the verb's subject has, voices or shares
            subj = _subject(tok.head)
            holder = _holder(doc, subj, speaker, me) if subj is not None else None
            if holder is not None:
                return _claim(doc, sent, tok, _after(tok, sent), holder, NOUNS[lemma], me,
                              speaker)
        if tok.pos_ == "NOUN" and lemma in NOUNS:
            owner = next((c for c in tok.children if c.dep_ == "poss"), None)
            if owner is not None and (tok.dep_ in ("nsubj", "attr", "ROOT")
                                      or tok.head.lemma_ in ("say", "tell")):
                holder = _holder(doc, owner, speaker, me)
                if holder is not None:
                    return _claim(doc, sent, tok, _after(tok, sent), holder, NOUNS[lemma],
                                  me, speaker)
    if view:
        reported = _reported_view(doc, sent, speaker, me)
        if reported is not None:
            return reported
    for tok in sent:
        if tok.lower_ in ADVERBS and tok.dep_ in ("advmod", "intj", "npadvmod", "ROOT", "dep"):
            return _claim(doc, sent, tok, sent, me, "think", me, speaker)
        if tok.lower_ in _MODALS and tok.dep_ == "aux":
            subj = _subject(tok.head)
            if subj is not None and subj.lower_ not in _FIRST:
                return _claim(doc, sent, tok, sent, me, "think", me, speaker)
        if _elided_inference(tok, sent):
            return _claim(doc, sent, tok, sent, me, "think", me, speaker)
    return None


def _side_taken(tok: Token) -> tuple[str, Token] | None:
    """A side taken with the copula, and the word whose subject takes it: "against"
    ("Graham is against changing suppliers", "dead set against") gives "hate", "in favour
    of" ("Omar is in favour of the merger") and "all for" ("I'm all for moving it")
    "prefer"; None otherwise ("the bike is against the wall" has a thing for its subject,
    which :func:`_holder` refuses)."""
    head = tok.head
    if tok.lower_ == "against" and tok.dep_ == "prep":
        if head.lemma_ == "be" or head.lemma_ == "set" and (
                head.dep_ == "acomp" and head.head.lemma_ == "be"
                or any(c.dep_ == "auxpass" and c.lemma_ == "be" for c in head.children)):
            return "hate", head  # ("dead set against": "set" parsed as acomp or passive)
        if head.dep_ == "nsubj" and head.head.lemma_ == "be":
            return "hate", head.head  # (in a question it may hang on the subject)
    if tok.lower_ in ("favour", "favor") and tok.dep_ == "pobj" and head.lower_ == "in" \
            and head.head.lemma_ == "be" and any(c.lower_ == "of" for c in tok.children):
        return "prefer", head.head
    if tok.lower_ == "for" and tok.dep_ == "prep" and head.lemma_ == "be" and any(
            c.lower_ == "all" and c.dep_ == "advmod" and c.i == tok.i - 1
            for c in head.children):
        return "prefer", head
    return None


def _held(noun: Token) -> bool:
    """A view noun as something held, not a thing ("a view of the sea"): owned ("my
    doubts"), or with what it is about ("doubts about the contractor") or a clause of its
    own ("a feeling it'll rain")."""
    return any(c.dep_ == "poss" or c.dep_ in ("relcl", "acl", "ccomp") and _subject(c) is not None
               or c.dep_ == "prep" and c.lower_ in ("about", "over") for c in noun.children)


def _elided_inference(tok: Token, sent: Span) -> bool:
    """The writer's inference with its subject dropped: "Must be the wiring", "Has to be.",
    "Got to be the fuse": a modal of necessity (or "has/got to") over a copula "be" that
    opens the sentence and has no subject ("Has to be done by Friday" is a passive: a
    duty, not an inference)."""
    if _subject(tok) is not None or not (tok.dep_ == "ROOT" or tok.lemma_ == "be"):
        return False
    if tok.lemma_ == "be" and tok.pos_ == "AUX":
        cue = next((c for c in tok.children if c.dep_ == "aux" and c.lower_ in _MODALS), None)
    elif tok.lemma_.lower() in ("have", "get", "got"):
        cue = next((c for c in tok.children if c.dep_ == "xcomp" and c.lemma_ == "be"
                    and c.pos_ == "AUX"), None)
        cue = tok if cue is not None else None
    else:
        return False
    return cue is not None and all(t.dep_ in ("advmod", "neg", "intj") or t.pos_ == "PUNCT"
                                   for t in sent if t.i < min(cue.i, tok.i))


def _reported_view(doc: Doc, sent: Span, speaker: str | None, me: str
                   ) -> ClaimCandidate | None:
    """In a text the view classifier reads as a view, someone else's words by the clause
    structure alone, whatever the verb: a person other than the speaker is the subject of a
    verb whose object is a finite clause or a predicate ("The Dean, Prof. Kalu, has
    suggested that the module is no longer viable", "Ivanov has made it clear that ...",
    "Yusuf called it two hours of pretentious noise")."""
    for tok in sent:
        if tok.pos_ not in ("VERB", "AUX"):
            continue
        content = next((c for c in tok.children if c.dep_ in ("ccomp", "oprd")
                        and c.i > tok.i), None)
        subj = _subject(tok)
        if content is None or subj is None or subj.lower_ in _FIRST:
            continue
        if content.tag_ == "VB" and not any(c.dep_ == "aux" for c in content.children) \
                or any(c.dep_ == "dobj" and c.lower_ in _FIRST for c in tok.children):
            # a bare infinitive is what the subject made or let happen ("ravi made me try
            # it"); the speaker as object is what it did to them ("London has eaten me
            # alive"): neither is the subject's verdict
            continue
        holder = _holder(doc, subj, speaker, me)
        if holder is None or holder == me or speaker and same_person(holder, speaker):
            continue
        span = doc[tok.i + 1:content.right_edge.i + 1]
        return _claim(doc, sent, tok, span, holder, "claim", me, speaker)
    return None


#: Nouns that frame a clause as someone's judgement in "in my ...", "to her ...".
_FRAMING_NOUNS = frozenset({"estimation", "judgement", "judgment", "book", "mind", "eyes",
                            "experience", "reckoning"})


def _rather(verb: Token) -> Token | None:
    """The "rather"/"sooner" of "would rather ...", "'d sooner ..." on a verb."""
    if verb.pos_ not in ("VERB", "AUX") or not any(
            c.dep_ == "aux" and c.lower_ in ("would", "'d", "’d") for c in verb.children):
        return None
    return next((c for c in verb.children if c.dep_ == "advmod"
                 and c.lower_ in ("rather", "sooner")), None)


def _elided_speaker(tok: Token, sent: Span) -> bool:
    """A stance word opening its sentence with the subject left out ("Pretty sure it's the
    bug going round", "Not convinced it'll work", "Doubt it'll last the winter"): in notes
    and chat the dropped subject is the writer. Not an imperative ("Be sure to lock up",
    "Don't worry about it"): no auxiliary of its own; only adverbs and a negation before
    it."""
    if _subject(tok) is not None or any(c.dep_ in ("aux", "auxpass") for c in tok.children):
        return False
    return _opens(tok, sent)


def _opens(tok: Token, sent: Span) -> bool:
    """Whether only adverbs, a negation or punctuation come before ``tok`` in its
    sentence."""
    return tok.i > sent.start - 1 and all(
        t.dep_ in ("advmod", "neg", "punct", "intj") or t.pos_ in ("PUNCT", "ADV", "PART")
        for t in sent if t.i < tok.i)


def _clause_after(adj: Token) -> bool:
    """An adjective the small parser hung on the clause it governs ("Pretty sure it's
    the compressor going": "sure" read as a modifier of "going"): its head comes after it
    and has a subject of its own."""
    head = adj.head
    return head.i > adj.i and head.pos_ in ("VERB", "AUX") and _subject(head) is not None


def _contracted_copula_subject(adj: Token) -> Token | None:
    """"naomi's sure she won't ...": the parser reads the contracted "is" as a possessive
    and the adjective as a modifier of the name; the name is the subject when the
    adjective follows it and governs a clause of its own."""
    head = adj.head
    if adj.dep_ != "amod" or head is adj or head.i > adj.i:
        return None
    if not any(c.dep_ == "case" and c.lower_ in ("'s", "’s") for c in head.children):
        return None
    if not any(c.dep_ in ("ccomp", "xcomp", "prep") for c in adj.children):
        return None
    return head


def _disbelief(verb: Token) -> bool:
    children = {c.lower_ for c in verb.children}
    return verb.lemma_.lower() == "believe" and bool(children & {"n't", "not"}) \
        and bool(children & {"ca", "can", "could", "cannot"})


def _subject(verb: Token) -> Token | None:
    """The subject of a verb, through the chain it sits in ("keeps insisting", "has been
    saying": the subject of the chain's top)."""
    tok = verb
    for _ in range(4):
        subj = next((c for c in tok.children if c.dep_ in ("nsubj", "nsubjpass")), None)
        if subj is None:
            # "rosa is convinced ...": the small parser hangs the subject on the auxiliary
            subj = next((g for c in tok.children if c.dep_ in ("aux", "auxpass")
                         for g in c.children if g.dep_ in ("nsubj", "nsubjpass")), None)
        if subj is not None:
            # "nah changed my mind": a chat interjection parsed as the subject stands for
            # no one; the clause has none
            return None if subj.lower_ in _INTERJECTIONS else subj
        if tok.dep_ in ("xcomp", "acomp", "conj") and tok.head is not tok:
            tok = tok.head
            continue
        break
    return None


def _content(verb: Token, sent: Span) -> Span | None:
    """The view itself: the verb's clause complement, else what follows the verb; none for
    a concession ("He's fair, whatever Marisol thinks": what she thinks is not said)."""
    if any(c.lower_ in ("whatever", "whatsoever") and c.dep_ in ("dobj", "ccomp", "nsubj")
           for c in verb.children):
        return None
    for c in verb.children:
        if c.dep_ in ("ccomp", "xcomp") and c.i > verb.i:
            return sent.doc[c.left_edge.i:c.right_edge.i + 1]
    for c in verb.children:
        if c.dep_ in ("dobj", "prep", "advcl", "attr") and c.i > verb.i:
            return sent.doc[verb.i + 1:sent.end]
    # "'It was the wiring,' said Priya": the clause before the verb.
    quoted = [c for c in verb.children if c.dep_ == "ccomp" and c.i < verb.i]
    if quoted:
        c = quoted[0]
        return sent.doc[c.left_edge.i:c.right_edge.i + 1]
    return None


def _after(tok: Token, sent: Span) -> Span:
    rest = sent.doc[tok.i + 1:sent.end]
    return rest if len(rest) else sent


def _reports_a_view(content: Span) -> bool:
    """Whether reported words are a view (an evaluation, a modal judgement, a comparison)
    rather than an account ("she said she'd arrive at 6")."""
    for t in content:
        if t.pos_ == "ADJ" and t.dep_ in ("acomp", "attr", "amod", "oprd", "conj"):
            return True
        if t.tag_ in ("JJR", "JJS", "RBR", "RBS"):
            return True
        if t.lower_ in _MODALS or t.lower_ in ("never", "only", "always", "everyone",
                                                "nobody", "literally"):
            return True
    return False


def _holder(doc: Doc, subj: Token, speaker: str | None, me: str) -> str | None:
    low = subj.lower_
    if low in _FIRST or low in ("my", "our"):
        return me
    if any(c.dep_ == "conj" and c.lower_ in _FIRST for c in subj.children):
        return me  # "the governors and I have revisited ...", "Sam and I think ...": the
        # speaker holds it too
    if low in _THIRD:
        return _antecedent(doc, subj, speaker, near=low not in ("they", "them"))
    if low in _THINGS:
        # "Something tells me there's a leak": a thing holds no view; the one it tells does
        # ("nothing tells me ..." says the opposite of a view: no one's)
        told = any(c.dep_ in ("dative", "dobj") and c.lower_ in ("me", "us")
                   for c in subj.head.children)
        return me if told and low in ("something", "everything") else None
    appos = next((c for c in subj.children if c.dep_ == "appos" and c.pos_ == "PROPN"), None)
    if appos is not None:
        return _name(appos)
    if subj.pos_ == "NOUN" and subj.head is not subj:
        # "Noor the trainer says ...": the name parsed as a modifier of the verb
        named = next((c for c in subj.head.children if c.dep_ in ("npadvmod", "nmod")
                      and c.pos_ == "PROPN" and c.i < subj.i), None)
        if named is not None:
            return _name(named)
    rel = canonical_relation(low) or bare_kin(low)  # "Sis says ...": the speaker's sister
    if rel is not None:
        owner = next((c for c in subj.children if c.dep_ == "poss"), None)
        named = next((c for c in subj.children if c.dep_ in ("appos", "compound", "npadvmod")
                      and c.tag_ in ("NNP", "NN") and canonical_relation(c.lower_) is None
                      and c.i > subj.i), None)
        if named is not None:
            return _name(named)
        if owner is None or owner.lower_ in ("my", "our"):
            return relation_holder(speaker, rel)
        return None
    if subj.pos_ == "PROPN" or subj.ent_type_ == "PERSON":
        return _name(subj)
    if subj.pos_ in ("ADV", "ADJ", "X", "INTJ") and subj.text[:1].isupper() and subj.is_alpha \
            and not subj.is_stop:
        return _name(subj)  # a name the tagger took for another word ("Lily no longer ...")
    kin = any(c.dep_ == "compound" and canonical_relation(c.lower_) for c in subj.children)
    if subj.is_lower and subj.tag_ == "NN" and subj.is_alpha and (kin or not any(
            c.dep_ in ("det", "poss", "amod", "compound") for c in subj.children)):
        return _name(subj)  # chat style: "gina reckons ...", "my mum brigitte is ..."
    if _untagged_name(subj):
        return _name(subj)
    return None


def _untagged_name(subj: Token) -> bool:
    """A name the tagger took for a common noun ("Harold at the shop is adamant ..."): a
    capitalised singular noun with no determiner, the subject of a stance verb or adjective
    (a view needs someone to hold it; "Art's allowed me ...", "Dancing makes me happy" and
    "Change starts small" have things for subjects, and no stance word)."""
    if not (subj.text[:1].isupper() and subj.tag_ == "NN" and subj.is_alpha
            and not subj.is_stop and subj.lower_ not in _INDEFINITE) or any(
            c.dep_ in ("det", "poss", "amod", "compound", "nummod") for c in subj.children):
        return False
    head = subj.head
    return head.pos_ in ("VERB", "AUX") and _lemma(head) in VERBS or any(
        c.dep_ == "acomp" and c.lemma_.lower() in ADJECTIVES for c in head.children)


#: Interjections of chat the tagger may read as a lower-case subject ("nah changed my
#: mind", "yep confirmed again"): no one's name.
_INTERJECTIONS = frozenset({"nah", "naw", "nope", "yeah", "yep", "yup", "yes", "no", "ok",
                            "okay", "lol", "lmao", "omg", "ugh", "meh", "hmm", "welp", "ah",
                            "oh", "oops", "wow", "haha", "tbh", "ngl", "imo", "idk", "btw"})
#: Indefinite pronouns the tagger may read as nouns ("Everybody say ..."): nobody's name.
_INDEFINITE = frozenset({"everybody", "everyone", "somebody", "someone", "anybody", "anyone",
                         "nobody", "noone"})
#: Indefinite pronouns of things: no one's name, and no one who holds a view.
_THINGS = frozenset({"something", "everything", "nothing", "anything"})
#: Entity types of proper nouns that are not people: never the one "she" or "he" is.
_NOT_PEOPLE = frozenset({"GPE", "LOC", "FAC", "NORP", "PRODUCT", "WORK_OF_ART", "EVENT",
                         "LANGUAGE", "LAW", "DATE", "TIME", "MONEY", "QUANTITY", "PERCENT",
                         "CARDINAL", "ORDINAL"})


#: The relations of a noun phrase's head that can name someone referred to afterwards.
_NOUN_PHRASE_DEPS = frozenset({"nsubj", "nsubjpass", "dobj", "pobj", "poss", "appos",
                               "conj", "attr", "dative"})


def _antecedent(doc: Doc, at: Token, speaker: str | None, *, near: bool = True
                ) -> str | None:
    """The person a third-person pronoun (or a verb whose subject is left out) at ``at``
    refers to: the nearest person before it, not the speaker. A person is a PERSON entity or
    a proper noun as subject or owner anywhere before; in the sentence just before, also a
    proper noun in any relation that is no place or thing ("Back at the GP. She's changed
    her tune": the GP); in either, a relation noun ("Rang my sister. She says ...").
    ``near=False`` ("they", often a group) asks for the first kind only."""
    sent = at.sent
    previous = doc[sent.start - 1].sent if sent.start > 0 else None
    start = sent.start if previous is None else previous.start

    def before(t: Token) -> bool:  # a noun phrase's head in the sentence just before
        return near and start <= t.i < sent.start and t.dep_ in _NOUN_PHRASE_DEPS

    for t in reversed(doc[:at.i]):
        kin = kin_holder(t.lower_, speaker)
        if kin is not None and t.dep_ in ("nsubj", "poss") and (
                t.i >= sent.start or near) and not any(c.dep_ == "poss" for c in t.children):
            return kin  # "Sis just cancelled it, says ..."
        if t.ent_type_ == "PERSON" or t.tag_ == "NNP" and t.dep_ in ("nsubj", "poss") \
                or before(t) and t.tag_ == "NNP" and t.ent_type_ not in _NOT_PEOPLE \
                and canonical_relation(t.lower_) is None:
            name = _name(t)
            if name and not (speaker and same_person(name, speaker)):
                return name
        if near and t.i >= start and t.pos_ in ("NOUN", "PROPN") \
                and t.dep_ in _NOUN_PHRASE_DEPS:
            rel = canonical_relation(t.lower_)
            owner = next((c for c in t.children if c.dep_ == "poss"), None)
            if rel is not None and (owner is None or owner.lower_ in ("my", "our")):
                return relation_holder(speaker, rel)
    return None


def _is_question(verb: Token) -> bool:
    """Whether ``verb``'s clause is a question ("how do people enjoy this", "does Omar like
    it"): a wh-word or an auxiliary before its subject. A question reports no one's view."""
    subj = _subject(verb)
    for c in verb.children:
        if c.tag_ in ("WRB", "WP", "WDT") and c.i < verb.i:
            return True
        if subj is not None and c.dep_ == "aux" and c.i < subj.i:
            return True
    return False


def reports_another(text: str) -> bool:
    """Whether ``text`` reports someone else's view (a stance verb with a subject other than
    the speaker), whoever that is: such a view is never the speaker's own."""
    from enfold.text.nlp import parse

    doc = parse(text)
    if doc is None:
        return False
    for tok in doc:
        if tok.pos_ in ("VERB", "AUX") and tok.lemma_.lower() in VERBS \
                and _stance_use(tok, tok.lemma_.lower()) and not _is_question(tok):
            subj = _subject(tok)
            if subj is not None and subj.lower_ not in _FIRST and subj.pos_ != "PRON" \
                    or subj is not None and subj.lower_ in _THIRD:
                return True
        if tok.pos_ == "ADJ" and tok.lemma_.lower() in ADJECTIVES and tok.dep_ == "acomp":
            # "Sandra is keen to try it", "Omar is sceptical": her state of mind, not the
            # speaker's, whether or not it is a view
            subj = _subject(tok.head)
            if subj is not None and subj.lower_ not in _FIRST and (
                    subj.pos_ != "PRON" or subj.lower_ in _THIRD):
                return True
        if tok.pos_ == "NOUN" and tok.lemma_.lower() in NOUNS and tok.dep_ == "pobj" \
                and tok.head.lower_ == "of" and tok.head.head.lemma_ == "be":
            subj = _subject(tok.head.head)  # "The GP was of the view that ..."
            if subj is not None and subj.lower_ not in _FIRST and subj.pos_ != "PRON":
                return True
        if tok.pos_ == "VERB" and any(c.dep_ == "oprd" and c.i > tok.i for c in tok.children) \
                and any(c.dep_ == "dobj" for c in tok.children):
            # "The review called it a glorious mess", "the panel deemed it unsafe": a
            # verdict put in another's mouth by the clause structure, whatever the verb
            # (a verb with no object, "the neighbours seem lovely", says what the subject
            # is like, and the view is the speaker's)
            subj = _subject(tok)
            if subj is not None and subj.pos_ in ("NOUN", "PROPN"):
                return True
    return False


def _name(tok: Token) -> str | None:
    # "my mum brigitte", "Aunt Rosa": the relation word is a role, the rest the name.
    # A word with digits in it is a code ("Ref xq0412", "Unit 4B"), never part of a name.
    if _coded(tok) or any(_coded(c) for c in tok.children if c.dep_ in ("compound", "flat")):
        return None
    named = canonical_relation(tok.lower_) is None
    parts = [c for c in tok.children if c.dep_ in ("compound", "flat") and c.i < tok.i
             and not (named and canonical_relation(c.lower_) is not None)] + [tok]
    words = [p.text for p in sorted(parts, key=lambda p: p.i)]
    name = " ".join(w[:1].upper() + w[1:] if w.islower() else w for w in words)
    name = name.removesuffix("'s").removesuffix("’s")
    return name if name and name[0].isalpha() else None


def _coded(tok: Token) -> bool:
    """A reference code next to the name, or as it: "Ref xq0412" (the code may be the
    subject the small parser found, or the name's neighbour)."""
    neighbours = [tok, *(t for t in (tok.nbor(1) if tok.i + 1 < len(tok.doc) else None,)
                         if t is not None)]
    return any(any(ch.isdigit() for ch in t.text) and any(ch.isalpha() for ch in t.text)
               and not is_handle(t.text) for t in neighbours)


def is_handle(word: str) -> bool:
    """A chat handle ("jd_93", "mike.r42"): letters first, then an underscore or a dot
    between parts, digits allowed; a reference code ("xq0412", "4B") has no separator."""
    return bool(_HANDLE.fullmatch(word))


_HANDLE = re.compile(r"[^\W\d_][^\W_]*(?:[_.][^\W_]+)+")


def _claim(doc: Doc, sent: Span, cue: Token, content: Span, holder: str, pred: str, me: str,
           speaker: str | None, skip: frozenset[int] = frozenset()) -> ClaimCandidate:
    words = [t.text for t in content if not t.is_punct]
    negated = any(c.dep_ == "neg" for c in cue.children)
    # Without a noun phrase, the first words; a change of mind told without one names no
    # thing ("Ngozi convinced me", "I take it back"), whatever words say the change.
    target = _target(content, skip) or ("" if skip else " ".join(words[:5]))
    is_me = holder == me or (speaker is not None and same_person(holder, speaker))
    start = min(sent.start_char, content.start_char)
    # The words that say how the view is put are no stance on its thing: "wrong" in "I was
    # wrong about the man" judges the speaker's old view, not the man.
    judged = [t.text for t in content if not t.is_punct and t.i not in skip]
    return ClaimCandidate(
        holder=me if is_me else holder, holder_is_speaker=is_me, predicate=pred,
        content=content.text.strip(" ,"), target=target,
        stance=_stance(pred, "clause", negated, judged), reported=not is_me,
        start=start, end=max(sent.end_char, content.end_char))


def _target(content: Span, skip: frozenset[int] = frozenset()) -> str | None:
    """What the view is about: the clause's subject noun phrase, else its first noun
    phrase that is not a pronoun; a phrase headed at a token of ``skip`` (the words that
    say the view changed: "my mind" of "changed my mind about the kitchen") is passed
    over."""
    root = content.root
    subj = next((c for c in root.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if subj is not None and subj.pos_ != "PRON" and subj.i not in skip:
        return content.doc[subj.left_edge.i:subj.i + 1].text
    for chunk in content.noun_chunks:
        if chunk.root.pos_ != "PRON" and chunk.root.i not in skip:
            return chunk.text
    return None


# The verbs a question asks for a view with: the stance verbs that are not plain reporting
# ("add", "write", "mention" ask what was said or done), and verbs of judging: "How does Bea
# rate the book?", "Does Karim trust the result?", "Who does Matteo hold responsible?".
# ("find" only as "How did X find ...", below; "convince" is a passive's, not a question's).
_ASKING_VERBS = (VERBS.keys() - _NEUTRAL_SPEECH - {"find", "convince"}) | {
    "say", "trust", "rate", "regard", "recommend", "suggest", "credit", "judge", "consider",
    "attribute", "agree", "disagree", "oppose", "favour", "favor", "dismiss", "defend",
    "hold", "compare", "explain", "foresee", "propose", "accept", "regret", "characterise",
    "characterize", "want",
    # the verbs of liking and disliking (Levin's "admire" class, 31.2) and of judging
    # (class 33) that the claim lexicon does not hold: "Who admires the new rota?"
    "abhor", "admire", "appreciate", "cherish", "deplore", "dread", "envy", "esteem",
    "idolize", "idolise", "lament", "pity", "relish", "resent", "revere", "treasure",
    "venerate", "distrust", "mistrust", "applaud", "praise", "condemn", "commend", "fault",
    # (left out for their other senses: "welcome" the guests, "respect" a deadline,
    # "tolerate" lactose, "worship" at a church)
}
#: Verbs of responding: "How did Jolene react to the decision?" asks how she took it.
_REACTING_VERBS = frozenset({"react", "respond"})
#: Nouns for a person by the side they take ("Is Kwabena a fan of the night shifts?").
_SIDE_NOUNS = frozenset({"fan", "supporter", "critic", "admirer", "sceptic", "skeptic",
                         "believer", "advocate", "detractor"})
#: Adjectives and participles of feeling toward something (appraisal's affect): with
#: "about", "with" or "over" they say how the subject takes it ("relaxed about the rent",
#: "happy with the rota"); other predicates there state a fact ("told about the fire",
#: "familiar with the area", "busy with the move").
_FEELINGS = frozenset(ADJECTIVES) | frozenset({
    "happy", "unhappy", "pleased", "displeased", "glad", "delighted", "thrilled", "excited",
    "upset", "angry", "annoyed", "furious", "frustrated", "disappointed", "relaxed",
    "comfortable", "uncomfortable", "fine", "okay", "ok", "impressed", "unimpressed",
    "satisfied", "dissatisfied", "content", "fussed", "bothered", "mad", "livid", "chuffed",
    "gutted", "stoked", "irritated", "grateful", "thankful", "sad", "sorry", "jealous",
    "envious", "enthusiastic", "unenthusiastic", "proud", "ashamed", "embarrassed", "calm",
    "keen", "cross", "fed", "bored", "passionate", "ecstatic", "miffed",
    # ("sick" and "tired" left out: with "with" they are an illness or a state, "sick with
    # the flu"; as a feeling they take "of", which this reading does not)
})
_ASKING_NOUNS = frozenset({
    "concern", "attitude", "explanation", "verdict", "reaction", "assessment",
    "impression", "complaint", "advice", "recommendation", "suggestion", "theory",
    "excuse", "worry", "fear", "hope", "doubt", "prediction", "criticism", "argument",
    "objection", "take", "view", "opinion", "position", "stance", "feeling", "feelings",
    "thoughts", "sense", "read", "reading", "judgement", "judgment", "perspective",
})


def view_holder(question: str, known: Container[str] = frozenset()) -> str | None:
    """The person whose view a question asks for, from its parse: a named person who is the
    subject of a stance or judging verb ("What does Gina blame ...", "How did Lucia find
    ...", "Does Karim trust ..."), of an adjective ("Is Ben hopeful ..."), who owns a
    noun for a view ("What's Rob's concern ...", "Pavel's view"), or whom the question
    attributes its content to ("According to Gordon, what killed ..."). None otherwise ("When did
    Sam leave?"). ``known``: the lower-cased parts of the namespace's names; a noun among
    them names its person ("the rabbi" for Rabbi Feldman, "the imam" for Imam Rashid)."""
    from enfold.text.nlp import parse

    doc = parse(question)
    if doc is None:
        return None
    for tok in doc:
        if not (_is_named(tok) or tok.pos_ == "NOUN" and tok.lower_ in known):
            continue
        head, dep = tok.head, tok.dep_
        if dep == "appos" and head.dep_ in ("nsubj", "nsubjpass", "pobj"):
            # "does the conductor Ivanov consider ...", "according to the gardener Gordon"
            head, dep = head.head, head.dep_
        elif dep == "dobj" and tok.i > 0 and doc[tok.i - 1].dep_ == "nsubj" \
                and doc[tok.i - 1] in (head, *head.children) and doc[tok.i - 1].pos_ == "NOUN":
            # "does coach Ravi predict": the role noun read as the subject, the name as its
            # or the verb's object
            head, dep = doc[tok.i - 1].head, "nsubj"
        if dep in ("nsubj", "nsubjpass"):
            lemma = _lemma(head)
            if lemma in _HOLDING_VERBS and any(
                    c.dep_ in ("dobj", "attr") and c.lemma_.lower() in _ASKING_NOUNS
                    for c in head.children):
                return _name(tok)  # "What concern does Efua have?", "What excuse ..."
            if lemma == "put" and any(c.lower_ == "down" for c in head.children):
                return _name(tok)  # "What does Ngozi put the mark down to?"
            if lemma in _CONSTRUING_VERBS and _construes(head):
                return _name(tok)  # "How does Omar see the merger?", "... read it as ..."
            if _asks_with(head, lemma) and not _raised(head) \
                    or lemma == "make" and any(c.lower_ == "of" for c in head.children):
                return _name(tok)  # (and "What does X make of ...")
            if head.lemma_ == "be" and any(_side_taken(t) for c in head.children
                                           for t in (c, *c.children)):
                return _name(tok)  # "Is Graham against ...?", "... in favour of ...?"
            if head.pos_ == "VERB" and any(c.dep_ == "ccomp" and not _asks(c)
                                           for c in head.children):
                # a verb with a finite clause for its object holds or reports a proposition:
                # "Does Oduya accept that the lane hurt trade?", "Is Priya convinced her
                # pet is healthy?"
                return _name(tok)
            if head.pos_ == "VERB" and _hypothetical(head):
                return _name(tok)  # "Would Nadia buy it again?": her disposition
            if lemma == "find" and any(c.lower_ == "how" for c in head.children):
                return _name(tok)  # "How did Lucia find Fushimi Inari?"
            if lemma in _REACTING_VERBS and any(c.lower_ == "how" for c in head.children):
                return _name(tok)  # "How did Jolene react to ...?"
            if head.lemma_ == "be" and _side_noun(head, tok):
                return _name(tok)  # "Is Kwabena a fan of ...?"
            if head.pos_ == "AUX" and any(c.dep_ == "acomp" and c.pos_ == "ADJ"
                                          for c in head.children):
                return _name(tok)  # "Is Ben hopeful about ...?"
            if head.pos_ == "AUX" and head.i < tok.i and any(
                    c.dep_ == "amod" and c.pos_ == "ADJ" and c.i > tok.i for c in tok.children):
                # "Is Farida optimistic about ...?": the small parser hangs the predicate
                # on the name, but a name takes no adjective after it
                return _name(tok)
            if head.pos_ == "ADJ":
                return _name(tok)
        if tok.dep_ == "poss" and head.lemma_.lower() in (NOUNS.keys() | _ASKING_NOUNS):
            return _name(_taker(head) or tok)
        if dep == "pobj" and head.lower_ == "to" and head.head.lower_ == "according":
            return _name(tok)  # "According to Gordon, what killed the seedlings?"
    return _inverted_subject(doc, known)


#: Verbs whose subject takes a side on a view they have for object ("share", "echo",
#: "dispute"), beside the verbs a question asks for a view with.
_TAKING_VERBS = frozenset({"share", "echo", "support", "dispute", "reject", "question",
                           "doubt", "endorse", "buy"})


def _asks_with(verb: Token, lemma: str) -> bool:
    """Whether a question's verb asks for a view: one of :data:`_ASKING_VERBS` in that
    sense (a side-taking verb over a person or with a particle does not,
    :func:`_other_sense`)."""
    return lemma in _ASKING_VERBS and not _other_sense(verb, lemma, asked=True)


def _hypothetical(verb: Token) -> bool:
    """A question opening with "would" over a person's own act ("Would Nadia buy it
    again?", "Would Omar take the job?"): it asks what they are disposed to do, which
    their views answer, not what happened."""
    first = verb.doc[0]
    return first.lower_ == "would" and first.head.i == verb.i and first.dep_ == "aux"


def _asks(clause: Token) -> bool:
    """A clause that is a question of its own ("..., how big is it?"), not a proposition
    someone holds: a wh-word opens it."""
    first = clause.doc[clause.left_edge.i]
    return first.tag_ in ("WRB", "WP", "WDT", "WP$")


def _taker(view: Token) -> Token | None:
    """The person who takes a stance on another's view ("Does Lorraine share Bev's
    worry?", "Does Ade accept Kim's explanation?"): the named subject of the verb the view
    is the object of, who is asked about, not the view's owner. The small parser may hang
    the name on the verb by another relation ("Lorraine" as an amod of "share")."""
    verb = view.head
    if view.dep_ != "dobj" or verb.pos_ != "VERB" or not (
            _lemma(verb) in _ASKING_VERBS | _TAKING_VERBS):
        return None
    return next((c for c in verb.children if c.i < verb.i and _is_named(c)
                 and c.dep_ in ("nsubj", "amod", "npadvmod", "dep", "compound")), None)


def asks_whose_view(question: str) -> bool:
    """A question that asks who holds a view ("Who considers the documentary the best
    film?", "Who blames the council?", "Who is worried about the roof?"): "who" is the
    subject of a stance or judging verb, or of a stance adjective."""
    from enfold.text.nlp import parse

    doc = parse(question)
    if doc is None:
        return False
    for tok in doc:
        if not _asks_who(tok) or tok.dep_ not in ("nsubj", "nsubjpass", "attr"):
            continue
        head = tok.head
        if head.lemma_ == "be" and _side_noun(head, tok):
            return True  # "Who is a fan of ...?" ("who" may be parsed as the predicate)
        if tok.dep_ == "attr":
            continue
        if head.dep_ in ("aux", "auxpass") and head.head.pos_ == "VERB":
            head = head.head  # "Who is opposed to ...?": the parser may hang "who" on "is"
        if head.pos_ in ("VERB", "AUX") and _asks_with(head, _lemma(head)):
            return True
        if any(c.dep_ == "acomp" and c.lemma_.lower() in ADJECTIVES for c in head.children):
            return True
        if _feels_about(head):
            return True  # "Which of them is relaxed about the rent going up?"
    return False


def _feels_about(predicate: Token) -> bool:
    """A predicate of feeling toward something: a word of :data:`_FEELINGS` (an adjective,
    or a participle the parser made the verb: "is relaxed about") with "about", "with" or
    "over" after it ("happy with the rota", "upset over the fees"), or a copula with such
    a word."""
    for word in (predicate, *(c for c in predicate.children if c.dep_ == "acomp")):
        if word.lower_ in _FEELINGS and any(
                c.dep_ == "prep" and c.lower_ in ("about", "with", "over")
                for c in word.children):
            return True
    return False


def _asks_who(tok: Token) -> bool:
    """A question's word for the person asked about: "who", or "which" (or "which one") of
    a group of people ("Which of them prefers ...?", "Which one of you ...?")."""
    if tok.lower_ in ("who", "whom"):
        return True
    if tok.lower_ == "one":
        if not any(c.lower_ == "which" for c in tok.children):
            return False
    elif tok.lower_ != "which":
        return False
    return any(c.lower_ == "of" and any(g.lower_ in ("them", "you", "us", "those", "these")
                                          for g in c.children) for c in tok.children)


def _side_noun(copula: Token, subject: Token) -> bool:
    """Whether the subject of ``copula`` is called by the side it takes: "a"/"an" and a noun
    of :data:`_SIDE_NOUNS` with "of" or "in" after it, as the predicate, hung on the
    subject, or (after "who", which the parser makes the predicate) the copula's subject
    ("Is Kwabena a fan of ...?", "Who is a fan of ...?")."""
    for noun in (*copula.children, *subject.children):
        if noun is subject or noun.dep_ not in ("attr", "appos", "nsubj"):
            continue
        if noun.lemma_.lower() in _SIDE_NOUNS and any(
                c.dep_ == "det" and c.lower_ in ("a", "an") for c in noun.children) and any(
                c.dep_ == "prep" and c.lower_ in ("of", "in") for c in noun.children):
            return True
    return False


#: Verbs of perceiving used for construing: a question asks for a view with them when it
#: asks how the person takes something ("How does Omar see the merger?") or what as
#: ("Does Ines see him as a rival?"), not what they saw or read.
_CONSTRUING_VERBS = frozenset({"see", "read", "view", "perceive", "size", "sum", "take",
                               "interpret", "assess", "gauge", "weigh"})


def _construes(verb: Token) -> bool:
    kids = list(verb.children)
    if any(c.dep_ == "prep" and c.lower_ == "as" for c in kids):
        return True
    return any(c.lower_ == "how" and c.dep_ == "advmod" for c in kids) and any(
        c.dep_ == "dobj" for c in kids)


#: The verbs a view noun is the object of when a question asks for someone's view ("What
#: concern does Efua have?", "What doubts did Ravi raise?"); other verbs ask for an account
#: ("What position did Zion finish in?").
_HOLDING_VERBS = frozenset({"have", "hold", "take", "give", "express", "raise", "voice",
                            "share", "offer", "make", "be", "do", "describe"})
_WH = frozenset({"what", "why", "how", "which", "who", "whom", "whose"})
_INVERTING = frozenset({"do", "does", "did", "is", "was", "are", "were", "'s", "’s"})


def _inverted_subject(doc: Doc, known: Container[str] = frozenset()) -> str | None:
    """The holder of an inverted question read from its word order, for the questions
    the small parser mis-tags ("What does Precious credit for ...?": "Precious" read as an
    adjective, "credit" as a noun; "What's Rosa worried about ...?"; "Does the imam foresee
    ...?": both read as adjectives): a wh-word or the question's start, an inverting
    auxiliary, a capitalised name (or "the" and a part of a ``known`` name), then a stance
    or judging verb (in its base form) or a stance adjective."""
    toks = [t for t in doc if not t.is_punct]
    for i in range(-1, len(toks) - 3):
        if i >= 0 and toks[i].lower_ not in _WH:
            continue
        aux = i + 1  # "What solution does Sami favour?": the wh-word's noun comes between
        while i >= 0 and aux < min(i + 3, len(toks)) and toks[aux].pos_ == "NOUN":
            aux += 1
        if aux >= len(toks) or toks[aux].lower_ not in _INVERTING:
            continue
        start = j = aux + 1  # the name's words, a title ("Dr.", "Prof.") among them
        if j + 1 < len(toks) and toks[j].lower_ == "the" and toks[j + 1].lower_ in known:
            start = j = j + 1
        while j < len(toks) and (_name_word(toks[j]) or toks[j].lower_ in known):
            j += 1
        if j == start or j >= len(toks):
            continue
        word = toks[j].lower_
        if _asks_with(toks[j], word) or word in ADJECTIVES or word == "against" or word == "in" \
                and j + 1 < len(toks) and toks[j + 1].lower_ in ("favour", "favor"):
            return " ".join(t.text for t in toks[start:j])
    return None


def _name_word(tok: Token) -> bool:
    """A capitalised word or title of a name in word order (not a pronoun)."""
    text = tok.text
    return text[:1].isupper() and (tok.is_alpha or text.endswith(".") and text[:-1].isalpha()) \
        and tok.lower_ not in _FIRST | _THIRD


def _is_named(tok: Token) -> bool:
    """A person's name in a question: a proper noun or PERSON entity, or a capitalised word
    inside the sentence that the tagger took for something else ("Is Precious ...")."""
    if not tok.text[:1].isalpha() or tok.lower_ in _FIRST | _THIRD:
        return False
    return tok.pos_ == "PROPN" or tok.ent_type_ == "PERSON" or is_handle(tok.text) or (
        tok.text[:1].isupper() and not tok.is_sent_start
        and tok.pos_ in ("NOUN", "ADJ", "ADV", "VERB", "X", "INTJ"))


#: Relations that open a clause of its own: the subject of the clause above is not the
#: one whose view changed.
_OWN_CLAUSE = frozenset({"advcl", "ccomp", "parataxis", "conj"})
_CHANGE_NOUNS = frozenset({"mind", "view", "opinion", "tune", "position", "stance"})
#: A judgement someone gives, which changes when they change their mind: a view, a
#: verdict, a vote, advice, a recommendation.
_JUDGEMENTS = _CHANGE_NOUNS | {"vote", "verdict", "advice", "recommendation", "rec",
                               "assessment", "ruling", "guidance", "endorsement", "rating",
                               # what someone put forward or held against something
                               "suggestion", "proposal", "objection", "opposition",
                               "support", "approval", "complaint", "criticism", "claim",
                               "prediction", "estimate", "hypothesis", "impression",
                               "decision", "take", "review", "statement", "remark"}
#: Verbs that take back or redo a judgement ("retract my recommendation", "she's revised
#: her advice", "switch my vote", "disregard my earlier suggestion"), and their nouns ("a
#: correction to my advice").
_REVOKING = frozenset({"retract", "withdraw", "revise", "revisit", "reverse", "rescind",
                       "revoke", "amend", "switch", "correct", "disregard", "ignore", "scrap",
                       "scratch", "overturn", "drop", "forget"})
#: Verbs that take back what was said with "back" ("walking back what I said", "rowing back
#: on my suggestion", "went back on my decision").
_BACK_VERBS = frozenset({"walk", "row", "go", "backtrack"})
#: Verbs of saying or holding that make "what I said" the speaker's own judgement.
_SAYING = frozenset({"say", "write", "suggest", "think", "post", "tell", "claim", "argue",
                     "recommend", "propose", "predict"})
_REVOKING_NOUNS = frozenset({"correction", "retraction", "revision", "reversal"})
#: Verbs of a judgement that was off the mark ("I underestimated her", "we misjudged it").
_MISJUDGING = frozenset({"underestimate", "overestimate", "misjudge", "misread", "underrate",
                         "overrate"})


#: Verbs whose "still" is motionless ("keep still", "sit still"), not "yet".
_STILL_AS_MOTIONLESS = frozenset({"keep", "stay", "stand", "sit", "lie", "hold"})


def held_still(text: str | Span | Doc) -> bool:
    """Whether the words say a view holds still ("Still think the charges are robbery",
    "that opener still gives me chills", "Too high still"): the adverb of continuance,
    not the concessive "Still, ..." and not the adjective ("keep still", "the water was
    still"). A view said to go on is no change of it, whatever stance the reading gave
    either. ``text``: a text, or a parsed sentence of one."""
    if isinstance(text, str):
        from enfold.text.nlp import parse

        doc = parse(text)
        if doc is None:
            return False
        words: Span | Doc = doc
    else:
        words = text

    def continuance(t: Token) -> bool:
        if t.lower_ != "still" or t.pos_ != "ADV":
            return False
        nxt = t.nbor(1) if t.i + 1 < len(t.doc) else None
        if nxt is not None and nxt.text == ",":
            return False  # "Still, I have to admit ..."
        before = t.nbor(-1).lemma_.lower() if t.i else ""
        if {t.head.lemma_.lower(), before} & _STILL_AS_MOTIONLESS:
            return False
        # "the water was still": the copula's only complement
        return not (t.head.lemma_.lower() == "be" and not any(
            c.dep_ in ("acomp", "attr", "ccomp", "xcomp") for c in t.head.children))

    return any(continuance(t) for t in words)


def revision(text: str, speaker: str | None, me: str) -> ClaimCandidate | None:
    """A text that says a view changed, as the claim of whoever changed it ("Sophie's
    changed her mind, she wants to elope now" → Sophie's); None when it says no such thing
    or names no holder."""
    cue = _revision_cue(text)
    if cue is None:
        return None
    if _retraction(cue) or _regret(cue) or _own_error(cue) or _concession(cue) \
            or _a_mistake(cue):
        # "scratch that", "should've moved", "I was wrong to", "Leah was right", "selling
        # it was a mistake"
        holder: str | None = me
    elif _coming_to_a_view(cue):
        # "Starting to think ...": whose onset it is, the speaker's when no one's is said
        subj = _own_subject(cue)
        holder = me if subj is None else _holder(cue.doc, subj, speaker, me)
    elif cue.lemma_.lower() in _PERSUADED:
        # "you've convinced me", "Tom won her over": the one persuaded holds the view now
        obj = next((c for c in cue.children if c.dep_ in ("dobj", "nsubjpass")), None)
        holder = me if obj is None else _holder(cue.doc, obj, speaker, me)
        persuader = _subject(cue)
        if holder is not None and persuader is not None and persuader.pos_ == "PROPN" \
                and _name(persuader) == holder:
            holder = None  # "Tom won her over": "her" is not Tom
    else:
        tok = cue
        holder = me  # no subject found: the speaker's change of mind
        thing = False  # a subject passed over: a thing, not whose view it is
        for _ in range(4):
            subj = _subject(tok)
            if subj is not None:
                holder = _holder(cue.doc, subj, speaker, me)
                if holder is None and cue.pos_ not in ("VERB", "AUX") and \
                        subj.pos_ != "PRON" and subj.ent_type_ != "PERSON":
                    # a phrase said over a clause about a thing ("on second thought
                    # bristol's too pricey", "the class is a chore now"): whose view is the
                    # clause over it, or the speaker's
                    subj, holder, thing = None, me, True
            if subj is not None or tok.head is tok:
                break
            if tok.dep_ in _OWN_CLAUSE and not thing:
                break  # "can't stand Matt anymore, he took credit ...": not his change of mind
            tok = tok.head
    if holder is None:
        return None
    sent = cue.sent
    # the cue's own words and whoever changed are how the change is said, not what it is
    # about ("Dana changed her mind on the allotment")
    said = frozenset({cue.i, *(c.i for c in cue.children
                               if c.dep_ in ("dobj", "nsubj", "nsubjpass")),
                      # and the one granted a copula's complement ("Wei Ling was right"),
                      # or whose verb an adverb of change is on ("Priya now thinks ...")
                      *(c.i for c in cue.head.children if (
                          cue.dep_ in ("acomp", "attr") or cue.dep_ == "advmod"
                          and cue.head.lemma_.lower() != "be")
                        and c.dep_ in ("nsubj", "nsubjpass"))})
    return _claim(cue.doc, sent, cue, sent, holder, "think", me, speaker, said)


#: Revision cues whose object, not their subject, is the one whose view changed.
#: The cues of _revision_cue whose object changed ("convinced me", "won her over",
#: "talked me round", "I've been persuaded").
_PERSUADED = frozenset({"convince", "win", "persuade", "talk"})


def _revision_cue(text: str) -> Token | None:
    """The word that says a view changed: "changed her mind", "now thinks", "no longer",
    "I take it back", "on second thought", "I used to think ...", "came round to", "not
    anymore", "I stand corrected", "won me over". Read from the parse (lemmas and their
    relations), so tense and person do not matter."""
    from enfold.text.nlp import parse

    doc = parse(text)
    if doc is None:
        return None
    for tok in doc:
        lemma = tok.lemma_.lower()
        kids = {c.lemma_.lower() for c in tok.children}
        if lemma == "change" and any(c.lemma_.lower() in _CHANGE_NOUNS for c in tok.children
                                     if c.dep_ in ("dobj", "nsubj", "nsubjpass")):
            if _asked_or_supposed(tok) or _maybe(tok):
                continue  # "I won't be changing my mind", "should I change my mind?"
            return tok
        if tok.lower_ == "longer" and tok.i > 0 and tok.nbor(-1).lower_ == "no":
            subjects = [c for c in tok.head.children if c.dep_ in ("nsubj", "nsubjpass")]
            if subjects and all(c.pos_ in ("NOUN", "PROPN") and c.ent_type_ != "PERSON"
                                and canonical_relation(c.lower_) is None for c in subjects):
                continue  # "the bus route no longer goes past the hospital": the world
            return tok
        if lemma == "take" and "back" in kids:
            if _asked_or_supposed(tok) or any(
                    c.dep_ == "dobj" and c.pos_ in ("NOUN", "PROPN")
                    and c.lemma_.lower() not in _JUDGEMENTS for c in tok.children):
                continue  # "took the jumper back", "I'm not taking back anything"
            return tok
        if lemma == "thought" and tok.i > 0 and tok.nbor(-1).lower_ == "second":
            return tok
        if lemma == "use" and tok.lower_ == "used" and any(
                c.dep_ == "xcomp" and c.lemma_.lower() in VERBS for c in tok.children):
            return tok
        if lemma in ("come", "bring") and kids & {"round", "around"}:
            preps = {c.lower_ for t in (tok, *(c for c in tok.children
                                                 if c.lower_ in ("round", "around")))
                     for c in t.children if c.dep_ == "prep"}
            if _asked_or_supposed(tok) or "to" not in preps and preps & {
                    "for", "from", "at", "with", "in", "after", "about"}:
                continue  # "came round for dinner", "came round from the anaesthetic",
                # "Alun came round about the tombola" (a visit)
            return tok
        if lemma == "convince" and any(c.lower_ in ("me", "us") for c in tok.children):
            return tok  # "you've convinced me"
        if lemma in ("reconsider", "rethink", "convert") or lemma == "correct" and \
                tok.head.lemma_.lower() == "stand":
            if _asked_or_supposed(tok) or _maybe(tok) or lemma == "convert" \
                    and tok.pos_ == "VERB" and any(c.dep_ == "dobj" and c.pos_ == "NOUN"
                                                   for c in tok.children):
                continue  # "maybe I'll reconsider", "converted the loft into an office"
            return tok
        if tok.lower_ == "corrected" and tok.i > 0 and tok.nbor(-1).lower_ == "stand":
            return tok  # "i stand corrected", parsed as a passive
        if _revokes(tok) or _misjudged(tok):
            return tok
        if lemma == "win" and "over" in kids:
            return tok
        if lemma == "talk" and kids & {"round", "around"} and any(
                c.dep_ == "dobj" and c.pos_ == "PRON" for c in tok.children) \
                and not _asked_or_supposed(tok):
            return tok  # "you talked me round"
        if lemma == "persuade" and tok.tag_ in ("VBD", "VBN") and any(
                c.dep_ in ("dobj", "nsubjpass") and c.lower_ in _FIRST for c in tok.children) \
                and not _asked_or_supposed(tok) and not any(
                c.dep_ == "xcomp" for c in tok.children):
            return tok  # "I've been persuaded", "she persuaded me", not "persuaded me to go"
        if tok.lower_ == "after" and tok.i + 1 < len(doc) and tok.nbor(1).lower_ == "all" \
                and not (tok.i + 2 < len(doc) and tok.nbor(2).pos_ in ("DET", "NOUN", "NUM",
                                                                      "ADJ", "PRON")):
            return tok  # "going short after all", not "after all these years"
        if tok.lower_ in ("anymore", "any more") and any(
                t.dep_ == "neg" for t in tok.head.children):
            return tok
        if lemma == "now" and tok.dep_ == "advmod" and _now_holds(tok.head):
            return tok
        if _coming_to_a_view(tok) or _own_error(tok) or _regret(tok) or _retraction(tok) \
                or _abandons(tok) or _hindsight(tok) or _concession(tok) or _a_mistake(tok) \
                or _attitude_shift(tok):
            return tok
    return None


#: Phrasal verbs of an attitude that moved ("I've warmed to the layout", "gone off the
#: idea", "softened on the homework policy", "cooling on Bali"), by verb and particle or
#: preposition.
_SHIFTS = {"warm": ("to",), "go": ("off",), "soften": ("on", "towards", "toward"),
           "cool": ("on", "off", "towards", "toward"), "sour": ("on",), "turn": ("against",)}


def _attitude_shift(tok: Token) -> bool:
    """A verb of an attitude that moved, with its particle or preposition and something
    it moved about ("I've warmed to the new office", "she's gone off the idea"), not
    asked, supposed or denied, and not of the weather or a machine ("it warmed up", "the
    alarm went off": the subject is a person or none)."""
    lemma = tok.lemma_.lower()
    parts = _SHIFTS.get(lemma)
    if parts is None or tok.pos_ != "VERB" or _asked_or_supposed(tok) \
            or lemma == "go" and tok.tag_ != "VBN":
        return False  # "I've gone off the idea", not "we went off the road"
    # what it moved about: the object of the particle or preposition, or of the verb
    # ("gone off the idea" is parsed both ways)
    has_object = any(g.dep_ == "dobj" for g in tok.children)
    if not any(c.dep_ in ("prep", "prt") and c.lower_ in parts
               and (has_object or any(g.dep_ == "pobj" for g in c.children))
               for c in tok.children):
        return False
    subj = _own_subject(tok)
    return subj is None or subj.lower_ in _FIRST or subj.lower_ in ("he", "she", "they") \
        or subj.pos_ == "PROPN" or subj.ent_type_ == "PERSON"


def _maybe(tok: Token) -> bool:
    """Whether ``tok`` is only possible: under a modal of possibility ("I might change my
    mind", "maybe I'll reconsider")."""
    return any(c.dep_ == "aux" and c.lower_ in ("might", "may", "could", "would")
               or c.dep_ == "advmod" and c.lower_ in ("maybe", "perhaps")
               for c in tok.children)


#: The predicates of verbs that report or argue rather than hold ("say", "insist",
#: "argue").
_REPORTING = frozenset({"say", "claim", "argue"})


def _now_holds(head: Token) -> bool:
    """Whether "now" on ``head`` says a view is held now that was not: on a verb or
    adjective of stance ("she now thinks", "I now agree"), or on a linking "be" whose
    complement judges ("the class is a chore now" read with "so"/"such", "it's the best
    now"); "he's asleep now", "there's a square of tarmac now" say how things are."""
    lemma = head.lemma_.lower()
    if VERBS.get(lemma) in _REPORTING:
        # a verb of saying holds a view only with what is said: "she now says the plan is
        # fine", not "now we're arguing about a contractor"
        return any(c.dep_ == "ccomp" for c in head.children)
    if lemma in VERBS or lemma in ADJECTIVES or lemma == "agree":
        return True
    return lemma == "be" and any(c.dep_ in ("acomp", "attr") and _evaluative(c)
                                 for c in head.children)


def _asked_or_supposed(tok: Token) -> bool:
    """Whether ``tok``'s sentence is a question, or its clause is supposed or denied ("if
    Tom is right", "she wasn't right"), so it says nothing has changed."""
    if tok.sent.text.rstrip().endswith("?"):
        return True
    node = tok
    for _ in range(3):
        if any(c.dep_ == "neg" or c.dep_ == "mark" and c.lower_ in ("if", "unless", "whether")
               for c in node.children):
            return True
        if node.head is node:
            break
        node = node.head
    return False


def _revokes(tok: Token) -> bool:
    """A judgement taken back or redone: a verb of :data:`_REVOKING` whose object is a
    judgement ("I must retract my recommendation", "she's revised her advice", "can you
    switch my vote"), or one of its nouns over one ("a small correction to my advice").
    "Revisit" only when done (the governors "have revisited" their position), not planned."""
    lemma = tok.lemma_.lower()
    back = lemma in _BACK_VERBS and tok.pos_ == "VERB" and (
        lemma == "backtrack" or any(c.lower_ == "back" for c in tok.children))
    if lemma in _REVOKING and tok.pos_ in ("VERB", "NOUN") or back:
        if lemma == "revisit" and tok.tag_ not in ("VBD", "VBN"):
            return False
        objects = [c for c in tok.children if c.dep_ in ("dobj", "nsubjpass", "ccomp")]
        if back:  # "rowing back on my suggestion", "went back on my decision"
            objects += [g for c in tok.children if c.dep_ == "prep" and c.lower_ == "on"
                        for g in c.children if g.dep_ == "pobj"]
    elif lemma in _REVOKING_NOUNS and tok.pos_ == "NOUN":
        objects = [g for c in tok.children if c.dep_ == "prep" and c.lower_ in ("to", "of", "on")
                   for g in c.children if g.dep_ == "pobj"]
    else:
        return False
    return any(o.dep_ != "ccomp" and o.lemma_.lower() in _JUDGEMENTS or _own_saying(o)
               for o in objects) \
        and not _asked_or_supposed(tok)


def _own_saying(obj: Token) -> bool:
    """"what I said (earlier)", "what I wrote about the hotel": an object that is the
    speaker's own saying, a clause of saying or holding in the first person whose object
    is a free relative "what" (the parse hangs it as the verb's clausal complement)."""
    if obj.dep_ != "ccomp" or obj.lemma_.lower() not in _SAYING:
        return False
    kids = list(obj.children)
    return any(c.dep_ == "nsubj" and c.lower_ in _FIRST for c in kids) \
        and any(c.dep_ == "dobj" and c.lower_ == "what" for c in kids)


def _misjudged(tok: Token) -> bool:
    """"Miss Patel says she underestimated Ava", "I'd misjudged the hill": a judgement
    that was off, told in the past (whose it was is the verb's subject)."""
    return tok.lemma_.lower() in _MISJUDGING and tok.tag_ in ("VBD", "VBN") \
        and not _asked_or_supposed(tok)


def _concession(tok: Token) -> bool:
    """The speaker granting that someone else's view holds: "Chloe's right, it's actually
    great", "ok leah was right", "you were right about the van", "fine, I concede". The
    one granted is a person (a name, a pronoun of a person, a kinship word), not a thing
    ("the forecast was right") or the speaker; not asked, supposed or denied."""
    lemma = tok.lemma_.lower()
    if lemma == "concede" and tok.pos_ == "VERB":
        subj = _own_subject(tok)
        return (subj is None or subj.lower_ in _FIRST) and not _asked_or_supposed(tok) \
            and not _in_reported(tok)
    if tok.lower_ != "right" or tok.dep_ not in ("acomp", "attr") \
            or tok.head.lemma_.lower() != "be" or _asked_or_supposed(tok):
        return False
    subj = _own_subject(tok.head)
    if subj is None or subj.lower_ in _FIRST or _in_reported(tok):
        return False
    low = subj.lower_
    return low in ("you", "he", "she", "they") or subj.pos_ == "PROPN" \
        or subj.ent_type_ == "PERSON" or canonical_relation(low) is not None \
        or bare_kin(low) is not None \
        or subj.pos_ in ("INTJ", "X") and subj.is_alpha and not subj.is_stop


def _a_mistake(tok: Token) -> bool:
    """An earlier course judged a mistake: "merging the teams was a mistake", "I've
    concluded that no-dig was a mistake" (a past copula's complement; not a question, not
    a supposition, not someone else's words)."""
    return tok.lemma_.lower() in ("mistake", "error") and tok.dep_ == "attr" \
        and tok.head.lemma_.lower() == "be" and tok.head.tag_ == "VBD" \
        and not _asked_or_supposed(tok) and not _in_reported(tok)


#: The stance verbs whose onset is a change of view ("starting to think", "beginning to
#: like"), not those that look ahead ("starting to worry" about what is to come).
_ONSET = frozenset({"think", "believe", "feel", "doubt", "love", "hate"})


def _coming_to_a_view(tok: Token) -> bool:
    """"Starting to think caffeine was never the culprit", "she's beginning to like it": a
    verb of onset whose complement is a stance verb says the view is new."""
    return tok.lemma_.lower() in ("start", "begin") and any(
        c.dep_ == "xcomp" and VERBS.get(_lemma(c)) in _ONSET for c in tok.children)


#: Adjectives of a judgement gone wrong: "I was wrong to write it off", "I was too quick
#: to relax it" ("too" and a complement after it), "we were mistaken about ...".
_ERRING = frozenset({"wrong", "mistaken"})
_HASTY = frozenset({"quick", "hasty", "fast", "harsh", "rash", "early", "soon"})


def _own_error(tok: Token) -> bool:
    """The speaker saying their earlier judgement was wrong: a past copula with "I" or "we"
    for subject and an adjective of error ("I was so wrong to write it off", "I was very
    wrong about it being twee", "I was too quick to relax it")."""
    if tok.lower_ in _ERRING and _first_person_was(tok):
        return not _in_reported(tok)  # "i was wrong lol": read from the words' order
    if tok.pos_ != "ADJ" or tok.dep_ != "acomp" or tok.head.tag_ != "VBD":
        return False
    subj = _subject(tok.head)
    if subj is None or subj.lower_ not in _FIRST:
        return False
    low = tok.lower_
    erring = low in _ERRING or low in _HASTY and any(c.lower_ == "too" for c in tok.children) \
        and any(c.dep_ in ("xcomp", "prep") for c in tok.children)
    return erring and not _in_reported(tok)


def _first_person_was(tok: Token) -> bool:
    """Whether "I was" or "we were" (adverbs between allowed: "I was so") comes right
    before ``tok``, whatever the parse made of them."""
    j = tok.i - 1
    while j >= 0 and tok.doc[j].pos_ == "ADV":
        j -= 1
    return j >= 1 and tok.doc[j].lower_ in ("was", "were") \
        and tok.doc[j - 1].lower_ in ("i", "we")


def _regret(tok: Token) -> bool:
    """"Should've moved ages ago", "we shouldn't have signed it": the speaker wishing their
    own past course otherwise (a modal of obligation with a perfect; the subject "I", "we"
    or left out)."""
    if tok.tag_ != "VBN":
        return False
    kids = [c for c in tok.children if c.dep_ == "aux"]
    if not (any(c.lower_ in ("should", "shouldn't") for c in kids)
            and any(c.lower_ in ("have", "'ve", "’ve") for c in kids)):
        return False
    subj = _own_subject(tok)
    return (subj is None or subj.lower_ in _FIRST) and not _in_reported(tok)


def _in_reported(tok: Token) -> bool:
    """Whether ``tok`` is inside the words a stance verb of another subject reports
    ("Declan says it was a danger and should've gone years ago": Declan's regret, not the
    speaker's)."""
    node = tok
    for _ in range(12):
        if node.head is node:
            return False
        node = node.head
        if node.pos_ in ("VERB", "AUX") and _lemma(node) in VERBS:
            subj = _subject(node)
            if subj is not None and subj.lower_ not in _FIRST:
                return True
    return False


def _own_subject(verb: Token) -> Token | None:
    """The verb's own subject (not one it shares as a conjunct: "the pipeline is green,
    should've moved ages ago" leaves "moved" without one)."""
    return next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")), None)


#: Imperatives that withdraw what was said ("scratch that", "forget that") or what was
#: chosen ("scrap the green", "ditch the plan").
_WITHDRAW = frozenset({"scratch", "forget", "ignore", "disregard"})
_DISCARD = frozenset({"scrap", "ditch"})


def _retraction(tok: Token) -> bool:
    """An imperative of :data:`_WITHDRAW` over "that" or "this", or of :data:`_DISCARD`
    over a noun; "scratch that" opening a clause also when the small parser misreads it (as
    a name)."""
    lemma = tok.lemma_.lower()
    if tok.lower_ in _WITHDRAW and tok.i + 1 < len(tok.doc) \
            and tok.nbor(1).lower_ in ("that", "this") \
            and (tok.i == 0 or tok.nbor(-1).is_punct):
        return True
    # ("Scrap the blue tiles" opening a sentence may be tagged a noun with an object)
    imperative = tok.tag_ in ("VB", "VBP") or tok.is_sent_start and tok.pos_ == "NOUN"
    if lemma not in _WITHDRAW | _DISCARD or not imperative \
            or _own_subject(tok) is not None or any(c.dep_ == "aux" for c in tok.children):
        return False
    obj = next((c for c in tok.children if c.dep_ == "dobj"), None)
    if obj is None or _in_reported(tok):
        return False
    return obj.lower_ in ("that", "this") if lemma in _WITHDRAW else obj.pos_ != "PRON"


def _abandons(tok: Token) -> bool:
    """"Gave up on the no-screens rule", "Jo's gone off Japan": giving up on a course or
    going off a thing (a noun after the particle)."""
    lemma = tok.lemma_.lower()
    kids = list(tok.children)
    if lemma == "give":
        if not any(c.lower_ == "up" and c.dep_ == "prt" for c in kids):
            return False
        prep = "on"
    elif lemma == "go":
        prep = "off"
    else:
        return False
    return any(c.lower_ == prep and c.dep_ in ("prep", "prt") and any(
        g.dep_ == "pobj" and g.pos_ in ("NOUN", "PROPN") for g in c.children) for c in kids)


def _hindsight(tok: Token) -> bool:
    """"On reflection ...", "in hindsight ...", "with hindsight ...": the view after it is
    a reconsidered one."""
    return tok.lower_ in ("reflection", "hindsight") and tok.dep_ == "pobj" \
        and tok.head.lower_ in ("on", "in", "with")


#: Relations of a verb's dependents that name what it acts on.
_OBJECTS = ("dobj", "attr", "oprd")


def bare_view(text: str, speaker: str | None, me: str) -> ClaimCandidate | None:
    """The speaker's view that the view classifier found in a text no cue reads, with what
    it is about from the parse of its first clause with a subject (or a verb with none, as
    notes put the writer's own doing): the verb's object,
    or the object of its particle or preposition ("switched back to Windows", "gone off the
    idea"), else the subject when it is a thing ("that sunscreen is useless"). None without
    a parse or a clause with a subject (the caller then keeps the text's first words).

    (Giving the view to another person who is the clause's subject, "Dad now drives the
    hybrid everywhere", was tried: it found two more changes of mind on the tune parts and
    misattributed two more views in collapse-c-tune.)"""
    from enfold.text.nlp import parse

    doc = parse(text)
    if doc is None:
        return None
    for sent in doc.sents:
        root = sent.root
        subj = _subject(root)
        if subj is None and root.pos_ != "VERB":
            continue
        # the subject when it is a thing ("that sunscreen", not "she", "I" or a name)
        subject = doc[subj.left_edge.i:subj.i + 1] if subj is not None and subj.pos_ != "PRON" \
            and subj.ent_type_ != "PERSON" and subj.lower_ not in _FIRST else None
        # "The new phone is a huge upgrade": a linking verb's complement says what its
        # subject is; the view is about the subject.
        thing = subject if subject is not None and _lemma(root) in _LINKING \
            else _acted_on(root)
        if subj is None:  # the writer's own doing, as notes say it ("Swapped my road bike
            if thing is None:  # for a gravel bike and it's pure joy")
                continue
        elif thing is None:
            thing = subject
        if thing is None:
            return None
        return _own_view(text, me, thing.text, doc)
    return None


def _own_view(text: str, me: str, target: str, words: Span | Doc) -> ClaimCandidate:
    """The whole ``text`` as the speaker's view about ``target``, its stance read from the
    tokens of ``words``."""
    return ClaimCandidate(
        holder=me, holder_is_speaker=True, predicate="think", content=text.strip(),
        target=target,
        stance=_stance("think", "clause", False, [t.text for t in words if not t.is_punct]),
        reported=False, start=0, end=len(text))


def _acted_on(verb: Token) -> Span | None:
    """The noun phrase a verb acts on: its object, or the object of a particle or
    preposition after it ("gone off the idea", "switched to Linux"), not a pronoun."""
    doc = verb.doc
    for c in verb.children:
        if c.dep_ in _OBJECTS and c.pos_ in ("NOUN", "PROPN") and c.i > verb.i:
            return doc[c.left_edge.i:c.i + 1]
    for c in verb.children:
        if c.dep_ in ("prt", "prep") and c.i > verb.i:
            obj = next((g for g in c.children if g.dep_ == "pobj"
                        and g.pos_ in ("NOUN", "PROPN")), None)
            if obj is not None:
                return doc[obj.left_edge.i:obj.i + 1]
    return None


#: Verbs that predicate a property of their subject ("is gorgeous", "looks a bit twee",
#: "have become my favourite part").
_LINKING = frozenset({"be", "seem", "look", "sound", "become", "feel", "taste", "smell"})
#: Words of degree that make an adjective a judgement ("so kind", "too noisy", "a bit
#: twee"), not a description.
_DEGREE = frozenset({"so", "too", "very", "really", "pretty", "quite", "bit", "super",
                     "totally", "absolutely", "utterly", "such", "incredibly", "genuinely"})


def _evaluative(word: Token) -> bool:
    """A predicate word that judges: a superlative or one modified by one ("the best
    setup", "biggest waste of money", "my favourite part"), a word of the evaluative
    lexicon, or an adjective (or a noun the tagger took for one) under a word of degree."""
    if word.tag_ in ("JJS", "RBS") or word.lower_ in _POSITIVE | _NEGATIVE \
            or word.lower_ in ("favourite", "favorite"):
        return True
    for c in word.children:
        if c.dep_ in ("amod", "poss", "advmod") and (
                c.tag_ in ("JJS", "RBS") or c.lower_ in ("favourite", "favorite")):
            return True
        if c.dep_ in ("advmod", "npadvmod") and c.lower_ in _DEGREE \
                and word.pos_ in ("ADJ", "NOUN"):
            return True
    return False


def _judged(sent: Span) -> Token | None:
    """The thing a sentence judges, or the sentence's root when it judges what came before
    ("biggest waste of money this year"); None when it judges nothing. A sentence judges
    when a linking verb with no first-person subject has an evaluative complement ("The
    duck is gorgeous", "Those people have become my favourite part of the week", "Looks a
    bit twee to me") or a verbless sentence is an evaluative phrase."""
    root = sent.root
    if root.pos_ in ("NOUN", "ADJ") and _evaluative(root):
        return root
    for verb in (root, *(c for c in root.children if c.dep_ == "conj")):
        if verb.lemma_.lower() not in _LINKING or verb.pos_ not in ("VERB", "AUX"):
            continue
        subj = _own_subject(verb)
        if subj is not None and subj.lower_ in _FIRST:
            continue
        to_me = any(c.dep_ == "prep" and c.lower_ == "to" and any(
            g.lower_ in ("me", "us") for g in c.children) for c in verb.children)
        if to_me or any(c.dep_ in ("acomp", "attr", "oprd") and _evaluative(c)
                        for c in verb.children):
            return subj if subj is not None else verb
    return None


def evaluative_view(text: str, speaker: str | None, me: str) -> ClaimCandidate | None:
    """The speaker's view in a text that tells what they did and judges it, read from the
    parse, for a text whose meaning the view classifier finds too mixed to call a view: a
    sentence that judges (:func:`_judged`). The target is the judged subject when it is a
    thing ("the duck"), else what the text's first clause acts on ("sold the new phone.
    biggest waste of money this year" is about the new phone)."""
    from enfold.text.nlp import parse

    doc = parse(text)
    if doc is None:
        return None
    for sent in doc.sents:
        judged = _judged(sent)
        if judged is None:
            continue
        if judged.pos_ in ("NOUN", "PROPN") and judged.dep_ in ("nsubj", "nsubjpass"):
            target = doc[judged.left_edge.i:judged.i + 1].text
        else:
            first = bare_view(text, speaker, me)
            target = first.target if first is not None else sent.text
        return _own_view(text, me, target, sent)
    return None
