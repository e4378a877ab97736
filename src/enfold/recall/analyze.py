"""Query analysis by rules: what a question asks for, before any search.

Comparison words ask for an intersection; attribution ("what does Gina think", "who said")
asks for someone's claims; time expressions, normalized against the question's own date,
gate the evidence by time; verification ("is it true", "did …") asks for grounding in
source events; names are anchors. The result is a plain value the controller acts on.
"""

from __future__ import annotations

import re
from collections.abc import Container
from dataclasses import dataclass, field
from datetime import datetime

from enfold.text.claims import STANCE_WORDS
from enfold.text.letters import UPPER
from enfold.text.nlp import parse, without_entities
from enfold.text.people import dictionary_word, extract_people, name_key
from enfold.text.stance import asks_whose_view, is_handle, view_holder
from enfold.text.times import extract_times

_COMPARISON = re.compile(r"\b(both|in common|compare|compared|difference|differ|same as|"
                         r"versus|vs\.?|while|whereas|also)\b", re.IGNORECASE)
_ATTRIBUTION = re.compile(
    rf"\b(?:what|how|where|why|which|who)\s+(?:does|did|do)\s+(?P<holder>[{UPPER}][\w.'-]+(?:\s+[{UPPER}][\w'-]+)?)\s+"
    r"(?:think|believe|feel|say|said|claim|prefer|love|hate|like|want|expect|hope|worry|view)\b"
    r"|\b(?P<holder2>[\w'-]+?)(?:'s|’s)\s+(?:opinion|view|take|thoughts?)\b"
    r"|\bwho\s+(?:said|thinks|believes|claimed|feels|prefers|argued)\b", re.IGNORECASE)
# A question about a view: a stance word of the claim extractor's lexicon ("think",
# "suspect", "worried", …) or a noun for a view or for blame.
_OPINION_WORDS = re.compile(
    r"\b(?:" + "|".join(sorted(map(re.escape, STANCE_WORDS | {
        "opinion", "opinions", "view", "views", "thoughts", "stance", "position",
        "blame", "blames", "blamed"}), key=len, reverse=True)) + r")\b", re.IGNORECASE)
_VERIFY = re.compile(r"^\s*(is it true|did|does|was|were|has|have|is|are)\b|\bis it true\b",
                     re.IGNORECASE)
# The current state or the latest occurrence: "who has my ladder", "where is the car now",
# "when did I last ...", "my latest ...". The newest evidence answers these.
_LATEST = re.compile(r"\b(?:last|latest|most recent(?:ly)?|recently|currently|current|now|still|"
                     r"any more|anymore|these days|at the moment|right now|who has|who's got|"
                     r"where(?:'s| is| are) (?:my|the|our))\b", re.IGNORECASE)
# What kind of thing the answer is (the question's expected answer type, as question
# classifiers since Li & Roth's have it): a person ("who", "whom", "whose"), a time
# ("when", "what date"), a sum of money ("how much", "what did the repair cost") or another
# number (a count, a code: "how many", "what's the gate code"). An event that holds a thing of that kind can answer; one that
# shares the question's words but holds none is less likely to.
_ASKS_WHO = re.compile(r"\bwho(?:m|se)?\b", re.IGNORECASE)
_ASKS_MONEY = re.compile(
    r"\bhow much\b|\b(?:price|cost|costs|costing|fee|fees|bill|charge|charged|pay|paid|spend|spent|"
    r"owe|owed|refund|deposit|rent|balance|quote|quoted)\b", re.IGNORECASE)
_ASKS_NUMBER = re.compile(
    r"\bhow (?:many|often|far|fast|old|tall|big|heavy|high)\b|\b(?:total|amount|number|code|pin|password|"
    r"passcode|reference|ref|registration|reg|postcode|zip|id)\b", re.IGNORECASE)
_WHEN = re.compile(r"\bwhen\b|\bwhat(?:'s|’s| is| was)?(?: the)? (?:date|day|time|year|month)\b|"
                   r"\bhow long\b", re.IGNORECASE)


@dataclass(frozen=True)
class QueryAnalysis:
    query: str
    people: tuple[str, ...] = ()
    holder: str | None = None  # attribution: whose claims are asked for
    asks_opinion: bool = False
    comparison: bool = False
    verification: bool = False
    asks_latest: bool = False  # the current state or the latest occurrence
    window: tuple[float, float] | None = None  # temporal gate (epoch seconds)
    time_expressions: tuple[str, ...] = ()
    answer_type: str | None = None  # "person", "time", "money", "number" (_answer_type)
    asks_holder: bool = False  # who holds a view ("Who admires ...?"): its holder answers
    notes: list[str] = field(default_factory=list)


#: Subjects of an attribution pattern that name a thing, not a holder (as one-word lists).
_THING_SUBJECTS = (["it"], ["this"], ["that"], ["there"])


#: The auxiliaries and modals English fronts in a question: with the wh-words (:data:`_WH`),
#: the words that open a question and are never a name.
_AUXILIARIES = frozenset({
    "is", "are", "was", "were", "am", "do", "does", "did", "has", "have", "had", "can",
    "could", "will", "would", "should", "shall", "may", "might", "must"})


def analyze(query: str, *, at: datetime | None = None,
            known_keys: Container[str] = frozenset()) -> QueryAnalysis:
    """Rules over the question text; ``at`` is the date the question is asked;
    ``known_keys``: the namespace's people as :func:`~enfold.text.people.name_key` keys
    (the people index's), recognized even where a name could be an ordinary word.

    A question that opens with a wh-word or an auxiliary ("what", "how", "did") and has no
    capital letter after it, or only known people's names standing alone
    (:func:`_only_known_names`), is parsed without the entity recogniser (speed, issue 23:
    half the parse's cost; :func:`~enfold.text.nlp.without_entities`): the readers of a
    question ask for the entity types of capitalised names other than known people's, and
    for PERSON, which the small pipeline gives to capitalised words."""
    first, _, rest = query.strip().partition(" ")
    opener = first.lower().strip("\"'(¿¡")
    if (opener in _WH or opener in _AUXILIARIES) and _only_known_names(rest, known_keys):
        with without_entities(query):
            return _analyze(query, at, known_keys)
    return _analyze(query, at, known_keys)


_WORD_EDGE = re.compile(r"^[\"'(“‘]+|(?:['’]s)?[\"'),.;:!?”’]*$")


def _only_known_names(rest: str, known_keys: Container[str]) -> bool:
    """Whether every capitalised word of ``rest`` is a person the namespace knows, standing
    alone: a single word of letters, no capitalised neighbour ("Mr. Grant", "Team Pipit"
    are read by the recogniser), and not a word that is also an ordinary one ("Will",
    "Rose", "Reading"): the readers that ask for entity types pass over known names."""
    words = [_WORD_EDGE.sub("", w) for w in rest.split()]
    capital = [bool(w[:1].isupper()) for w in words]
    for i, w in enumerate(words):
        if not capital[i] and not any(ch.isupper() for ch in w):
            continue
        if not (capital[i] and w.isalpha() and w[1:].islower()):
            return False
        if i and capital[i - 1] or i + 1 < len(words) and capital[i + 1]:
            return False
        if name_key(w) not in known_keys or dictionary_word(w.lower()):
            return False
    return True


def _analyze(query: str, at: datetime | None, known_keys: Container[str]) -> QueryAnalysis:
    people = tuple(dict.fromkeys(
        p.name for p in extract_people(query, None, known_keys=known_keys)
        if p.role == "mentioned"))
    holder = None
    m = _ATTRIBUTION.search(query)
    if m and (m.group("holder") or "").lower().split()[:1] in _THING_SUBJECTS:
        m = None  # "what does it look like": a thing's look, nobody's view
    if m:
        holder = m.group("holder") or m.group("holder2")
        if holder and (holder.lower() in ("you", "i", "we", "they", "he", "she")
                       or any(ch.isdigit() for ch in holder) and not is_handle(holder)):
            holder = None  # a pronoun, or a reference code ("Ref xq0412"): not a holder
    if holder:
        holder = re.sub(r"['’]s$", "", holder)
    parsed = view_holder(query, known_keys)
    if parsed is not None:
        holder = parsed
    window = None
    expressions: tuple[str, ...] = ()
    if at is not None:
        times = extract_times(query, at)
        if times:
            window = (min(t.start_ts.timestamp() for t in times),
                      max(t.end_ts.timestamp() for t in times))
            expressions = tuple(t.expression for t in times)
    whose = holder is None and asks_whose_view(query)
    return QueryAnalysis(
        query=query,
        people=people,
        holder=holder,
        asks_opinion=bool(m) or parsed is not None or bool(_OPINION_WORDS.search(query))
        or whose,
        comparison=bool(_COMPARISON.search(query)) and len(people) >= 2,
        verification=bool(_VERIFY.search(query)),
        asks_latest=bool(_LATEST.search(query)),
        window=window,
        time_expressions=expressions,
        answer_type=_answer_type(query),
        asks_holder=whose,
    )


def _answer_type(query: str) -> str | None:
    """The kind of thing the question asks for: "person", "time", "money", "number" or None
    (an answer named by its words alone: "what did Mum want?"). Read from the asked
    wh-phrases (:func:`asked_phrases`), so a "who" or "when" of a subordinate clause ("how
    much did the plumber who came on Friday charge?", "who did Theo play when he scored?")
    does not decide it; the money and number words are read anywhere in the question."""
    asked = " … ".join(asked_phrases(query))
    if _WHEN.search(asked):
        return "time"
    if _ASKS_WHO.search(asked):
        return "person"
    if _ASKS_MONEY.search(query):  # the asked phrases are part of the question
        return "money"
    if _ASKS_NUMBER.search(query):
        return "number"
    return None


#: Question words (the wh-words English fronts in a question or an embedded one).
_WH = frozenset({"who", "whom", "whose", "what", "which", "when", "where", "why", "how"})
#: Clauses that modify something rather than carry the question: a relative clause ("the
#: plumber who came"), an adverbial one ("when she slipped"), a clausal modifier of a noun.
_MODIFYING = frozenset({"relcl", "advcl", "acl"})
_PHRASE_WORDS = 3  # tokens kept after an asked wh-word: "how much", "what's the date"
_LEADING = frozenset({"PUNCT", "SPACE", "CCONJ", "INTJ", "ADP"})


def asked_phrases(query: str) -> list[str]:
    """The question's asked wh-phrases, each a wh-word and the three tokens after it: those
    of the main clause, of a coordinated question ("…, and how much was it?") and of an
    embedded question ("remind me who has the ladder"), not those that open a relative or
    adverbial clause. The question's first word is always asked (the parse sometimes hangs
    a fronted "when" in an adverbial clause). Without the parse: every wh-word's phrase."""
    doc = parse(query)
    if doc is None:
        words = query.split()
        return [" ".join(words[i:i + 1 + _PHRASE_WORDS]) for i, w in enumerate(words)
                if w.lower().strip("?,.;:!'\"") in _WH]
    out = []
    # the first word, after any "and", "oh" or preposition ("and when…", "for whom…")
    first = next((t.i for t in doc if t.pos_ not in _LEADING), 0)
    for t in doc:
        if t.lower_ not in _WH:
            continue
        if t.i != first and any(a.dep_ in _MODIFYING for a in (t, *t.ancestors)):
            continue
        out.append(doc[t.i:t.i + 1 + _PHRASE_WORDS].text)
    return out
