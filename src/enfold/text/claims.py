"""Claim candidates: opinions and reported speech, each with the person who holds it.

CogMem's point is that "Gina thinks Jon being fired was a mistake" is not the fact "Jon being
fired was a mistake": it is Gina's claim, told by the speaker. This module finds such
statements with cue patterns and keeps the holder, the normalized predicate, the asserted
content, the target the claim is about and a coarse stance.

Recognized cues (holder → predicate):

* first person — "I think/believe/suspect/guess/feel like/doubt/hope/expect/worry that ...",
  "I love/like/enjoy/prefer/hate/can't stand X", "I'm sure/convinced/worried ...",
  "I'm (not) a fan of X", "I said ...", a trailing "..., I think"; "we" counts as the speaker;
* reported — "Gina thinks/said/told me/believes ...", "Dr. Patel, my boss, argued ...",
  "my co-founder believes ...", "According to Sam, ...", "In Sam's opinion, ...";
* communication to someone — "Hannah privately told Charlotte that ...", "Charlotte publicly
  claimed that ...": the claim keeps its **addressee** (the person told, when named; a named
  addressee needs "that" after it) and its **audience** — "public" or "private" when an adverb
  (publicly/openly, privately/secretly) says so, else None.

Holders: the speaker's name for first person ("speaker" when unknown); the person's name for
reported speech; for an unnamed relation the handle :func:`enfold.text.people.relation_holder`
gives, e.g. ``"Maya's co-founder"``. Pronoun holders ("she said") are not resolved and are
skipped, as are questions, wishes ("I'd love to", "I hope you ...") and attitudes towards a bare
pronoun ("I love it") which carry no target.

The target is the clause's subject noun phrase ("Jon being fired", "the launch"); when the
subject is a personal pronoun ("we should pivot") it is the verb phrase that follows ("pivot");
for attitude verbs it is the object ("my job"). :func:`target_key` normalizes targets so that
"my job" and "this job" meet in claim reconciliation; :func:`predicate_family` groups
predicates ("love" and "hate" are both attitudes) for the same purpose.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, replace

from enfold.text.letters import CAPITALISED
from enfold.text.people import (
    RELATION_NOUNS,
    canonical_relation,
    kin_holder,
    looks_like_name,
    relation_holder,
    same_person,
)

__all__ = ["ClaimCandidate", "extract_claims", "names_nothing", "predicate_family",
           "target_key"]


def _words(block: str) -> frozenset[str]:
    """A word list written as a whitespace-separated block (easier to read and edit)."""
    return frozenset(block.split())



@dataclass(frozen=True)
class ClaimCandidate:
    """A subjective statement attributed to a holder, found in one event's text.

    ``predicate`` is one of think, believe, feel, say, claim, argue, prefer, love, hate, doubt,
    worry, hope, expect. ``content`` is the asserted clause, ``target`` a short phrase it is
    about, ``stance`` "positive" | "negative" | "neutral" towards the target. ``reported`` is
    True when the speaker relays someone else's claim. ``start``/``end`` span cue and content.
    """

    holder: str
    holder_is_speaker: bool
    predicate: str
    content: str
    target: str
    stance: str
    reported: bool
    start: int
    end: int
    addressee: str | None = None
    audience: str | None = None


# surface verb → (predicate, "clause" | "object" | "feel")
_VERBS = {
    **dict.fromkeys(["think", "thinks", "thought", "guess", "suppose", "reckon", "reckons",
                     "bet"], ("think", "clause")),
    **dict.fromkeys(["believe", "believes", "believed"], ("believe", "clause")),
    **dict.fromkeys(["suspect", "suspects", "suspected"], ("believe", "clause")),
    **dict.fromkeys(["feel", "feels", "felt"], ("feel", "feel")),
    **dict.fromkeys(["say", "says", "said", "mentioned"], ("say", "clause")),
    **dict.fromkeys(["claim", "claims", "claimed", "insist", "insists", "insisted"],
                    ("claim", "clause")),
    **dict.fromkeys(["argue", "argues", "argued"], ("argue", "clause")),
    **dict.fromkeys(["prefer", "prefers", "preferred"], ("prefer", "object")),
    **dict.fromkeys(["love", "loves", "loved", "like", "likes", "liked", "enjoy", "enjoys",
                     "enjoyed", "adore", "adores", "adored"], ("love", "object")),
    **dict.fromkeys(["hate", "hates", "hated", "dislike", "dislikes", "disliked", "detest",
                     "detests", "despise", "despises"], ("hate", "object")),
    **dict.fromkeys(["doubt", "doubts", "doubted"], ("doubt", "clause")),
    "stand": ("hate", "object"),  # only as "can't stand"
    **dict.fromkeys(["worry", "worries", "worried"], ("worry", "clause")),
    **dict.fromkeys(["hope", "hopes", "hoped"], ("hope", "clause")),
    **dict.fromkeys(["expect", "expects", "expected"], ("expect", "clause")),
}
# Verb forms a named or relation holder can take: third person singular or past.
_THIRD_PERSON = frozenset(
    v for v in _VERBS if v.endswith(("s", "ed")) or v in ("thought", "felt", "said", "bet")
)
_COPULAS = {"sure": "believe", "convinced": "believe", "certain": "believe",
            "positive": "believe", "worried": "worry", "concerned": "worry", "afraid": "worry",
            "fan of": "love", "tired of": "hate", "sick of": "hate"}
#: The words here that mark a view held (belief, report, doubt, worry, hope; not a liking,
#: which a question asks about as a fact of the person): what the query analysis reads as a
#: question about a view, so both sides share one lexicon.
VIEW_PREDICATES = frozenset({"think", "believe", "feel", "say", "claim", "argue", "doubt",
                             "worry", "hope"})
STANCE_WORDS = frozenset([*(v for v, (p, _) in _VERBS.items() if p in VIEW_PREDICATES
                            and v != "stand"),
                          *(c for c, p in _COPULAS.items()
                            if p in VIEW_PREDICATES and " " not in c and c != "positive")])

_NAME = rf"(?:(?:Dr|Mr|Mrs|Ms|Mx|Prof)\.?\s+)?{CAPITALISED}(?:[-'’]{CAPITALISED})*(?:\s+{CAPITALISED})?"
_REL = "|".join(sorted((re.escape(r) for r in RELATION_NOUNS), key=len, reverse=True))
_RELATION = (
    rf"(?:\b[Mm]y|\b[Oo]ur)\s+(?:(?P<best>best)\s+|(?:older|younger|little|big|new|old|former)\s+)?"
    rf"(?P<rel>(?i:{_REL}))(?![\w-])(?:,?\s+(?P<relname>{_NAME}),?)?"
)
_ADV = (
    r"(?:(?:really|honestly|truly|personally|also|still|just|strongly|kind\s+of|kinda|sort\s+of"
    r"|publicly|openly|privately|secretly"
    r"|totally|absolutely|actually|definitely|seriously|genuinely|firmly|always|never|do|does"
    r"|did|don['’]t|doesn['’]t|didn['’]t|do\s+not|does\s+not|did\s+not|can['’]t|cannot"
    r"|would|used\s+to|have|has|had|will|['’]d|['’]ve|['’]ll)\s+)*"
)
_VERB = "|".join(sorted(_VERBS, key=len, reverse=True))
_COP = (
    r"(?:['’]m|['’]re|['’]s|\s+am|\s+are|\s+is|\s+was|\s+were)\s+(?P<cneg>not\s+)?"
    r"(?:(?:really|so|very|quite|totally|absolutely|pretty|a\s+bit|kind\s+of|a|big|huge"
    r"|such\s+a)\s+)*(?P<cop>sure|convinced|certain|positive|worried|concerned|afraid"
    r"|fan\s+of|tired\s+of|sick\s+of)\b"
)
_CUE = re.compile(
    rf"(?:(?P<first>\b[Ii]|\b[Ww]e)(?=[\s'’])|(?P<relphrase>{_RELATION})"
    rf"|(?P<name>\b{_NAME})(?:,\s+(?:my|our)\s+(?i:{_REL}),)?)"
    rf"(?:{_COP}|(?P<contr>['’](?:ve|d|ll))?\s+(?P<adv>{_ADV})(?P<verb>{_VERB})\b"
    rf"(?P<obj>\s+(?:me|us|him|her|them)\b)?"
    rf"|(?P<told>\s+(?:{_ADV})(?:told|tells)\s+(?:(?:me|us|him|her|them)\b"
    rf"|(?P<addressee>{_NAME})(?=\s+that\b))))"
)
_ACCORDING = re.compile(
    rf"\b(?:[Aa]ccording\s+to\s+(?:(?P<relphrase>{_RELATION})|(?P<name>{_NAME}))"
    rf"|[Ii]n\s+(?P<oname>{_NAME})['’]s\s+(?:opinion|view)),\s*"
)
# The channel of a communication, from the adverb of its cue.
_AUDIENCE = re.compile(r"\b(?:(?P<public>publicly|openly)|(?P<private>privately|secretly))\b")
_RELATIVE_BEFORE = re.compile(
    r"\b(?:what|how|which|that|when|where|why|whatever)\s+$", re.IGNORECASE
)
_CANNOT = re.compile(r"\bcan['’]t\b|\bcannot\b|\bcouldn['’]t\b")
_NEGATION_ADV = re.compile(r"n['’]t\b|\bnot\b|\bnever\b|\bcannot\b")
_CONTENT_END = re.compile(r"[.!?;\n\"”]|,\s+(?:but|and|so|though)\b|\s[-–—]\s|$")
# "that" is a complementizer unless a verb follows it ("I think that was great").
_CONTENT_LEAD = re.compile(
    r"[\s,:]*(?:(?:that(?!\s+(?:is|was|'s|would|will|has|had|sounds|looks|seems)\b)|whether"
    r"|about|like)\b)?[\s\"“']*"
)
_VOCATIVE_TAIL = re.compile(rf",\s*{CAPITALISED}\s*$")
_TRAILING_CUE = re.compile(r"\s*[.!?]")

_WORD = re.compile(r"[A-Za-z0-9][\w'’-]*")
_AUX = _words(
    """
    is are was were be been am has have had will would can could should might may must shall do
    does did isn't aren't wasn't weren't won't can't couldn't shouldn't doesn't don't didn't
    hasn't haven't hadn't wouldn't seems seemed looks looked sounds sounded feels felt needs
    needed went got made makes works work sucks helps matters means costs takes goes rocks
    """
)
# Irregular past forms (and a few present ones) that end a subject noun phrase as surely as
# an auxiliary: "the leak came from the contractor", "the deal fell through".
_IRREGULAR_VERBS = _words(
    """
    came comes became began broke brought bought built caught chose did drew drove ate fell
    felt flew forgot froze gave grew held hid kept knew led left lost meant met paid quit ran
    rose said sent sold spent stole stood struck threw took told understood woke won wore
    wrote sank shrank spread blew
    """
)
_PRONOUN_SUBJECTS = _words(
    """
    i we you they he she one people everyone
    """
)
_CONTRACTED_SUBJECT = re.compile(
    r"^(it|that|this|there|he|she|what|who|everything|nothing|something|i|we|you|they)"
    r"['’](s|re|ll|d|ve|m)$",
    re.IGNORECASE,
)
_PHRASE_STOP = _words(
    """
    with to for at in on about from by over than because but and or so when since while if as
    which who that until after before into during like
    """
)
# Content opening with these is not an assertion: "I think so", "I'm not sure what to do".
_NOT_ASSERTIONS = _words(
    """
    so not in what how why where when who which whether if and or but
    """
)
# Prepositions after a verb of speech that name the other party or the subject of the talk.
_SPEECH_COMPANIONS = frozenset({"with", "about", "over", "to"})
_SUBJECT_ADVERBS = _words(
    """
    just really still also always never actually totally even finally definitely probably truly
    """
)
_BARE_PRONOUNS = _words(
    """
    it that this them him her you those these everything
    """
)
_DETERMINERS = _words(
    """
    the a an this that these those my our your his her their its some any every each no such
    """
)
_POSITIVE = _words(
    """
    love loved like liked great good fine awesome amazing excellent wonderful right smart happy
    fantastic best better success successful helpful nice cool perfect brilliant beautiful fun
    exciting enjoy enjoyed worth glad proud correct wise solid impressive win works improved
    fair fantastic incredible terrific
    """
)
_NEGATIVE = _words(
    """
    hate hated bad mistake terrible awful wrong horrible worst worse fail failed failure
    disaster poor stupid sad broken waste unfair problem problems boring annoying dislike
    slipped overpriced useless ugly risky dangerous mess sucks crap disappointing late
    """
)
_NEGATORS = _words(
    """
    not no never hardly neither nor without
    """
)


def extract_claims(text: str, speaker: str | None, *, view: bool = False
                   ) -> list[ClaimCandidate]:
    """Find the opinions and reported statements in ``text`` said by ``speaker``.

    Plain factual statements ("We shipped the release on Tuesday") yield nothing. Claims come
    back in text order.
    """
    me = holder_name(speaker)
    out: list[ClaimCandidate] = []
    for m in _CUE.finditer(text):
        claim = _from_cue(text, m, me, speaker)
        if claim is not None:
            out.append(claim)
    for m in _ACCORDING.finditer(text):
        holder = _holder(m, me)
        if holder is None:
            continue
        pred = "think" if m.group("oname") else "say"
        claim = _build(text, m.start(), m.end(), holder, pred, "clause", False, me, speaker)
        if claim is not None:
            out.append(claim)
    from enfold.text.stance import parsed_claims

    # The parse adds the views the patterns miss; where both read one, the patterns' wording
    # stays, but a holder the parse names (a lower-case name, an apposition) beats the
    # patterns' fallback to the speaker.
    for p in parsed_claims(text, speaker, me, view=view):
        if not _asserts(p):
            continue
        same = [i for i, c in enumerate(out) if p.start < c.end and c.start < p.end]
        if not same:
            out.append(p)
        for i in same:
            if out[i].holder_is_speaker and not p.holder_is_speaker:
                out[i] = dataclasses.replace(out[i], holder=p.holder, holder_is_speaker=False,
                                             reported=True)
    return sorted(out, key=lambda c: c.start)


def _asserts(c: ClaimCandidate) -> bool:
    """The checks the patterns make, applied to a view the parse found: a wish ("I'd love
    to", "I hope you ..."), a bare pronoun as object ("I love it") or an open question ("not
    sure what to do") asserts nothing."""
    words = [w.lower() for w in _WORD.findall(c.content)]
    if not words or words[0] in _NOT_ASSERTIONS:
        return False
    if c.predicate in ("love", "hate", "prefer") and (
            words[0] == "to" or " ".join(words) in _BARE_PRONOUNS):
        return False
    if c.predicate in ("argue", "say", "claim") and words[0] in _SPEECH_COMPANIONS:
        return False  # "don't argue with me", "we're arguing about a contractor": the act
    # of arguing or speaking, with whom or on what, holds no position
    return not (c.predicate == "hope" and words[0] in (
        "you", "you'll", "you're", "you've", "your", "y'all"))


def holder_name(speaker: str | None) -> str:
    """The holder name of the speaker's own views ("speaker" when the event has none)."""
    return speaker.strip() if speaker and speaker.strip() else "speaker"


def speaker_view(text: str, speaker: str | None) -> ClaimCandidate:
    """The whole text as the speaker's own view (a bare evaluation the view classifier
    found: "that sunscreen is useless")."""
    me = holder_name(speaker)
    words = _WORD.findall(text)
    target = _subject(words) or _phrase(words) or text[:40]
    return ClaimCandidate(holder=me, holder_is_speaker=True, predicate="think",
                          content=text.strip(), target=target,
                          stance=_stance("think", "clause", False, words), reported=False,
                          start=0, end=len(text))


def _holder(m: re.Match[str], me: str) -> str | None:
    """The holder named by a cue match, or None when it is not a person."""
    gd = m.groupdict()
    if gd.get("first"):
        return me
    if gd.get("relphrase"):
        if gd.get("relname") and looks_like_name(gd["relname"]):
            return " ".join(gd["relname"].split())
        rel = canonical_relation(gd["rel"], bool(gd.get("best")))
        return relation_holder(None if me == "speaker" else me, rel) if rel else None
    name = gd.get("name") or gd.get("oname")
    if name and " " not in name and (name.endswith("ing")
                                     or (name.endswith("ly") and len(name) >= 7)):
        # "Having loved ones ...", "Honestly said ...": a gerund or an adverb, not a holder.
        # Short "-ly" words are names far more often than sentence-opening adverbs
        # ("Emily said ...", "Lily thinks ..."; "Really" and "Totally" are stop words).
        return None
    kin = kin_holder(name, None if me == "speaker" else me) if name else None
    if kin is not None:
        return kin  # "Gran says ...", "Sis reckons ...": the speaker's relation
    if name and looks_like_name(name):
        return " ".join(name.split())
    return None


def _from_cue(
    text: str, m: re.Match[str], me: str, speaker: str | None
) -> ClaimCandidate | None:
    holder = _holder(m, me)
    if holder is None or _RELATIVE_BEFORE.search(text, max(0, m.start() - 12), m.start()):
        return None  # "what I said", "the things that I love": not an assertion
    if m.group("cop"):
        pred = _COPULAS[re.sub(r"\s+", " ", m.group("cop"))]
        kind = "object" if pred in ("love", "hate") else "clause"
        negated = bool(m.group("cneg"))
        if negated and pred == "believe":
            pred, negated = "doubt", False  # "I'm not sure that ..." doubts it
    elif m.group("told"):
        pred, kind = "say", "clause"
        negated = bool(_NEGATION_ADV.search(m.group("told")))
    else:
        adv, verb = (m.group("contr") or "") + " " + (m.group("adv") or ""), m.group("verb")
        pred, kind = _VERBS[verb]
        if m.group("first") is None and verb not in _THIRD_PERSON:
            return None  # "Sounds like ...", "Events like these": not a holder and a verb
        if verb == "stand" and not _CANNOT.search(adv):
            return None
        if verb != "stand" and pred in ("believe", "say") and _CANNOT.search(adv):
            return None  # "I can't believe it", "I can't say": surprise and hedging
        if kind == "object" and re.search(r"\bwould\b|['’]d\b", adv):
            return None  # "I'd love to ..." is a wish, not an opinion
        if kind == "feel":
            if not re.match(r"\s+(?:that|like)\b", text[m.end() :]):
                return None  # "I feel great" is a mood, not a claim
            kind = "clause"
        if m.group("obj") and pred != "say":
            return None  # "I love him", "she hates them": no target beyond a pronoun
        negated = bool(_NEGATION_ADV.search(adv))
    claim = _build(text, m.start(), m.end(), holder, pred, kind, negated, me, speaker)
    if claim is None:
        return None
    addressee = m.group("addressee")
    channel = _AUDIENCE.search(m.group(0))
    audience = None if channel is None else "public" if channel.group("public") else "private"
    if addressee is None and audience is None:
        return claim
    return replace(claim, addressee=" ".join(addressee.split()) if addressee else None,
                   audience=audience)


def _build(
    text: str, start: int, cue_end: int, holder: str, pred: str, kind: str, negated: bool,
    me: str, speaker: str | None,
) -> ClaimCandidate | None:
    lead = _CONTENT_LEAD.match(text, cue_end)
    c_start = lead.end() if lead else cue_end
    stop = _CONTENT_END.search(text, c_start)
    assert stop is not None
    c_end = stop.start()
    if stop.group().startswith("?"):
        return None
    if kind == "object":
        comma = text.find(",", c_start, c_end)
        c_end = comma if comma >= 0 else c_end  # "I love my job, it's great" → "my job"
    vocative = _VOCATIVE_TAIL.search(text, c_start, c_end)
    if vocative:
        c_end = vocative.start()  # "..., Jon!"
    content = text[c_start:c_end].strip(" ,")
    if not content and _TRAILING_CUE.match(text, cue_end) and text[:start].rstrip().endswith(","):
        # "The plan is great, I think." — the claim is the clause before the cue.
        left = max((x.end() for x in re.finditer(r"[.!?;\n]", text[:start])), default=0)
        content = text[left:start].strip(" ,")
        c_start, c_end = left, cue_end
    words = _WORD.findall(content)
    if not words:
        return None
    if kind == "clause":
        first = words[0].lower()
        if first in _NOT_ASSERTIONS or (pred == "hope" and first in ("you", "you'll")):
            return None
        target = _subject(words)
        if target is None:
            return None
    else:
        target = _phrase(words)
        if not target or target.lower() in _BARE_PRONOUNS:
            return None
    is_me = holder == me or (speaker is not None and same_person(holder, speaker))
    return ClaimCandidate(
        holder=me if is_me else holder,
        holder_is_speaker=is_me,
        predicate=pred,
        content=content,
        target=target,
        stance=_stance(pred, kind, negated, words),
        reported=not is_me,
        start=min(start, c_start),
        end=max(c_end, cue_end),
    )


def _subject(words: list[str]) -> str | None:
    """The subject noun phrase of a clause, or the verb phrase after a pronoun subject.

    None when the words do not look like a clause (no verb within the first few words).
    """
    for i, w in enumerate(words[:8]):
        lw = w.lower().replace("’", "'")
        contracted = _CONTRACTED_SUBJECT.match(lw)
        if contracted:
            pronoun = contracted.group(1)
            if i > 0:
                return " ".join(words[:i] + [pronoun])
            if pronoun in _PRONOUN_SUBJECTS:
                return _after_pronoun(pronoun, words[1:])
            if pronoun == "it":
                return _extraposed(["is", *words[1:]]) or pronoun
            return pronoun  # "it's great": the referent is not resolved here
        is_verb = lw in _AUX or lw in _IRREGULAR_VERBS or (
            lw.endswith("ed") and i > 0 and words[i - 1].lower() not in ("being", "been", "get",
                                                                         "got", "getting")
        )
        if is_verb and i > 0:
            subj_words = [x for x in words[:i] if x.lower() not in _SUBJECT_ADVERBS] or words[:1]
            if len(subj_words) == 1 and subj_words[0].lower() in _PRONOUN_SUBJECTS:
                return _after_pronoun(subj_words[0], words[i:])
            if [x.lower() for x in subj_words] == ["it"]:
                return _extraposed(words[i:]) or "it"
            return " ".join(subj_words[:6])
    return None


def _extraposed(rest: list[str]) -> str | None:
    """"it's important to stand up" is about standing up: the phrase after "<adj> to"."""
    if len(rest) >= 4 and rest[0].lower() in _AUX and rest[2].lower() == "to":
        return _phrase(rest[3:]) or None
    return None


def _after_pronoun(pronoun: str, rest: list[str]) -> str:
    """For "we should pivot" the target is "pivot": skip auxiliaries, keep a short phrase."""
    i = 0
    while i < len(rest) and (rest[i].lower() in _AUX or rest[i].lower() in ("not", "be", "to")):
        i += 1
    phrase = _phrase(rest[i:])
    return phrase or pronoun


def _phrase(words: list[str]) -> str:
    """A short noun-ish phrase: the words before the first preposition or conjunction."""
    out: list[str] = []
    for w in words:
        if w.lower() in _PHRASE_STOP and out:
            break
        if w.lower() == "to" and not out:
            continue  # "I love to paint" → "paint"
        out.append(w)
        if len(out) == 5:
            break
    return " ".join(out)


def _stance(pred: str, kind: str, negated: bool, words: list[str]) -> str:
    """Lexicon stance towards the target, flipped by negation of the verb or the word."""
    if pred in ("love", "prefer"):
        score = 1
    elif pred == "hate":
        score = -1
    else:
        score = 0
        lowered = [w.lower().replace("’", "'") for w in words]
        for i, w in enumerate(lowered):
            polarity = (w in _POSITIVE) - (w in _NEGATIVE)
            window = lowered[max(0, i - 3) : i]
            if polarity and any(x in _NEGATORS or x.endswith("n't") for x in window):
                polarity = -polarity
            score += polarity
        if pred == "doubt":
            score = -score if score else -1
        elif score == 0 and pred == "worry":
            score = -1
        elif score == 0 and pred == "hope":
            score = 1
    if negated:
        score = -score
    return "positive" if score > 0 else "negative" if score < 0 else "neutral"


def names_nothing(key: str) -> bool:
    """Whether a target key names no thing of its own: empty, or a bare pronoun ("it",
    "that"), which two views of one holder share whatever they are about."""
    return not key or key in _BARE_PRONOUNS


def target_key(target: str) -> str:
    """A normalized key for a claim target, so "my job", "This job" and "jobs" meet.

    Lowercase; possessive "'s" and punctuation dropped; leading determiners and possessive
    pronouns removed; each word crudely singularized ("companies" → "company", "jobs" → "job";
    words ending in -ss, -us, -is are kept).
    """
    words = [w.lower().replace("’", "'") for w in _WORD.findall(target)]
    words = [w.removesuffix("'s") for w in words]
    while len(words) > 1 and words[0] in _DETERMINERS:
        words = words[1:]
    return " ".join(_singular(w) for w in words)


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "xes", "sses")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "'s")):
        return word[:-1]
    return word


def predicate_family(predicate: str) -> str:
    """Group predicates whose claims can supersede each other: "attitude" (love, hate,
    prefer), "speech" (say, claim, argue) or "belief" (think, believe, feel, doubt, worry,
    hope, expect)."""
    if predicate in ("love", "hate", "prefer"):
        return "attitude"
    if predicate in ("say", "claim", "argue"):
        return "speech"
    return "belief"
