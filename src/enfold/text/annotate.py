"""Annotate one event: times, people, claims, obligations and causal/completion cues.

Step 2 of the write path (after the append, before planning): everything the local
planner and the intent layer need to know about an event's text, computed by pure
functions without I/O. This module combines :mod:`~enfold.text.times`,
:mod:`~enfold.text.people` and :mod:`~enfold.text.claims` and adds three cue detectors of its own:

* **Obligations** (explicit intents): "I need to", "I have to", "I've got to",
  "I gotta", "I must", "I'm supposed to", "remind me to", "don't forget to", a note's
  subjectless "need to / have to / gotta / must" opening its clause,
  commitments made to someone ("promised ... I'd", "volunteered to", "told X I'd"), tasks
  set by someone ("wants me to", "asked that you") or falling to the writer ("it's on me
  to", "my job this week:"), labelled notes ("note to self:", "reminder:"), requests made
  of the reader ("can you ...", "if you could ...") and "I'll ..." or "Please ..." when a
  time or a please is on them, plus any sentence
  with "deadline", "is due" or a deadline-flagged time still ahead of the event ("submit it
  by Friday"; not a tally such as "1,200 downloads by noon"). The obligation
  text runs from the cue to the end of its clause (for deadline sentences: the sentence);
  ``due`` is the deadline-flagged time in that span, else the first time in it that ends after
  the event. Not obligations: negated or past cues ("I don't need to", "I had to"),
  discourse markers ("I gotta say", "I have to admit"), a duty verb with nothing after it
  ("I have to go —"), relative clauses ("what we still have to do"), "due to / due back /
  due out" (expected, not owed), a deadline in another person's clause ("Ollie has to
  finish his project by Monday"), and "remind me to" unless it is a request
  (sentence-initial, or after "please" / "can you"): "these moments remind me to slow
  down" is not one.
* **Causal** cues that tie this event to an earlier one: "because", "so" as a conjunction
  (", so I ...", "So we ..."), "as a result", "due to", "led to", "caused", "that's why",
  "which is why", "therefore", "thanks to", "resulted in", "consequently".
* **Resolution** cues that close an open intent: "I submitted", "(I) finished",
  "done with", "sent (it) off", "handed in", "wrapped up", "completed", "I booked/paid/fixed
  ...", "... is done". Negated ("I haven't finished"), conditional ("when you're finished")
  and questioned ("Did you finish?") forms do not count.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from enfold.text.claims import ClaimCandidate, extract_claims, holder_name, speaker_view
from enfold.text.goals import NOTE_CUE
from enfold.text.people import PersonMention, extract_people, is_person_noun
from enfold.text.polarity import polarity
from enfold.text.stance import bare_view, evaluative_view, reports_another, revision
from enfold.text.subjectivity import is_view, view_probability
from enfold.text.times import TimeMention, extract_times, parse_timestamp

__all__ = ["Annotation", "Obligation", "annotate"]


@dataclass(frozen=True)
class Obligation:
    """An explicit obligation in the text ("I need to renew my passport by June").

    ``text`` is the obligation's clause, ``start``/``end`` its offsets, ``due`` the time that
    bounds it when the text gives one.
    """

    text: str
    start: int
    end: int
    due: TimeMention | None


@dataclass(frozen=True)
class Annotation:
    """Everything the write path extracts from one event's text.

    ``causal`` is True when an explicit causal cue links this event to an earlier one;
    ``resolution`` when a completion cue may resolve a pending intent.
    """

    times: tuple[TimeMention, ...]
    people: tuple[PersonMention, ...]
    claims: tuple[ClaimCandidate, ...]
    obligations: tuple[Obligation, ...]
    causal: bool
    resolution: bool
    revises: bool = False  # the text says a view changed ("changed her mind", "no longer")
    # Where it says so (character offsets of the change's claim): of a long text's claims,
    # only those there are the changed view; None: the whole text.
    revised: tuple[int, int] | None = None
    # Whose view it says changed, when it is the speaker's own: another's view told there
    # ("she was right about the pens, she said they never work") is not the one that
    # changed. None: any holder's claims there.
    reviser: str | None = None
    # The text also states checkable particulars (an amount, a date, a count): a view mixed
    # with an account ("the new A string was £12 and sounds much brighter").
    states_facts: bool = False


_SUBJ = r"(?:\b[Ii]|\b[Ww]e)"
# (a point between two digits is a decimal point, "£2.4k", and neither ends nor starts a clause)
_CLAUSE_START = r"(?:^|(?<=[.!?;:,—–\n] )|(?<=[!?;:—–\n])|(?<=\.)(?:(?<!\d\.)|(?!\d)))"
_FILLER = r"(?:\s+(?:really|still|just|also|definitely|seriously|absolutely|totally|will|do|so))*"
# "I gotta say", "I have to admit": discourse markers, not duties.
_NOT_A_DUTY = r"(?!\s+(?:say|tell|admit|agree|ask|thank|hand\s+it|give\s+it|love|wonder)\b)"
_OBLIGATION_CUE = re.compile(
    rf"{_SUBJ}(?:{_FILLER}\s+(?:need|have)\s+to\b|['’]ll{_FILLER}\s+(?:need|have)\s+to\b"
    rf"|['’]ve\s+got\s+to\b|{_FILLER}\s+gotta\b|{_FILLER}\s+must\b(?!\s+(?:be|have)\b)"
    rf"|(?:['’]m|['’]re|\s+am|\s+are){_FILLER}\s+supposed\s+to\b){_NOT_A_DUTY}"
    # A request: "Remind me to ..." opening a sentence, or after "please" / "can you".
    r"|(?:(?<![\w,] )|(?<=[Pp]lease )|(?<=you ))\b[Rr]emind\s+(?:me|us)\s+to\b"
    r"|\b(?:[Dd]on['’]t|[Dd]o\s+not)\s+(?:let\s+me\s+)?forget\s+to\b"
    # A note's own subjectless cue, opening its clause: "need to take them back", "Have to
    # fill in the form", "gotta pick up the dry cleaning", "Must remember to ...".
    rf"|{_CLAUSE_START}(?:[Rr]eally\s+|[Dd]efo\s+|[Dd]efinitely\s+|[Ss]till\s+|[Aa]lso\s+)?"
    # ("Must've taken you ages", "Must feel great": what must be so, not what must be done;
    # "Got to see some lovely scenery": a chance that came)
    rf"(?:[Nn]eed\s+to|[Hh]ave\s+to|[Gg]otta|[Oo]ught\s+to"
    rf"|[Mm]ust(?!['’]ve|\s+(?:be|have|feel|seem|look|sound|mean|know)\b)){_NOT_A_DUTY}"
    # A commitment made to someone: "Promised Coach Danny I'd wash ...", "I volunteered to
    # draft ...", "told Priti I'd proofread ...".
    rf"|(?:{_CLAUSE_START}|{_SUBJ}\s+)(?:(?:[Pp]romised|[Vv]olunteered|[Aa]greed|[Oo]ffered)"
    r"(?:\s+[\w'’-]+){0,3}?\s+(?:to|[Ii]['’]d|[Ii]\s+would|[Ww]e['’]d)"
    r"|(?:told|said)(?:\s+[\w'’-]+){0,2}?\s+(?:[Ii]['’]d|[Ii]\s+would|[Ww]e['’]d))\s"
    # A task set by someone: "Vet nurse wants me to bring in a stool sample".
    r"|\b(?:wants|needs|asked|expects|told)\s+(?:me|us)\s+to\b|\basked\s+that\s+(?:you|I|we)\s"
    # A task that falls to the writer: "it's on me to book the hall", "My job this week:
    # count the float", "It's my turn to do the flowers".
    r"|\b(?:[Ii]t['’]s|is)\s+on\s+(?:me|us)\s+to\b"
    r"|\b(?:[Mm]y|[Oo]ur)\s+(?:job|turn|task)\b(?:\s+[\w'’-]+){0,2}?\s*(?:\s+to\b|:)"
    # A note that says what it is: "note to self: call the vet", "Reminder - pay the gas bill".
    rf"|\b{NOTE_CUE}"
)
# "We launched! 1,200 downloads by noon", "we hit 300 signups by Friday": a count opening its
# clause (or after had/got/hit/reached…) right before the time ("Submit 3 reports by Friday"
# is still a duty).
_TALLY_BEFORE = re.compile(
    r"(?:^|[.!?;:,]\s*|\b(?:had|got|hit|reached|saw|made|passed|crossed)\s+)"
    r"\d[\d,.]*\s*[kKmM%]?\s+[A-Za-z-]+\s+$")
# "what we still have to do": a relative clause describes, it does not commit.
_RELATIVE_BEFORE = re.compile(r"\b(?:what|which)\s+$", re.IGNORECASE)
_DEADLINE_CUE = re.compile(
    # ("is due to lamb", "are due back", "due out on": expected, not a deadline)
    r"\bdeadlines?\b|\b(?:is|are|was)\s+due\b(?!\s+(?:to|back|out)\b)"
    r"|\bdue\s+(?:on|by|at|today|tomorrow|tonight|next"
    r"|this)\b",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"[!?;\n]|(?<!\d)\.|\.(?!\d)")
# "I have to go —", "I have to laugh": the duty's verb with nothing to do it to or with.
_BARE_VERB = re.compile(r"\s*[\w'’-]+\s*(?:[,;:!?.—–)]|\s-\s|$)")
_REQUEST = re.compile(r"(?<![\w'’])(?:(?:[Cc]an|[Cc]ould|[Ww]ould|[Ww]ill)\s+(?:you|u)"
                      r"|\bif\s+you\s+(?:could|would|can))\s+(?:please\s+)?(?=[a-z])")
_TIMED_DUTY = re.compile(rf"{_SUBJ}['’]ll\s+(?!(?:need|have|be|see|probably|never)\b)"
                         rf"(?=[a-z])|{_CLAUSE_START}[Pp]lease\s+(?=[a-z])")
_PLEASE = re.compile(r"\bplease\b|\bpls\b", re.IGNORECASE)
_CAUSAL = re.compile(
    r"\b(?:because|cause\s+of|as\s+a\s+(?:result|consequence)|due\s+to|owing\s+to|led\s+to"
    r"|leads?\s+to|leading\s+to|caused|causes|that['’]s\s+why|which\s+is\s+why|this\s+is\s+why"
    r"|therefore|thanks\s+to|resulted\s+in|results\s+in|consequently|hence)\b"
    r"|(?:^|[,;.!?]\s*|\band\s+)[Ss]o\s+(?:I|we|he|she|they|it|that|the|my|our|now|i['’]m"
    r"|we['’]re|i['’]ve|I['’]m|I['’]ve|you)\b",
    re.IGNORECASE,
)
_RESOLUTION = re.compile(
    r"\b(?:submitted|finished|completed|handed\s+in|turned\s+in|wrapped\s+up|sent\s+off"
    r"|sent\s+(?:it|them|that|this)\s+off|done\s+with|all\s+done|finally\s+done"
    r"|checked\s+off|crossed\s+off|got\s+it\s+done|took\s+care\s+of)\b"
    r"|\b(?:[Ii]|[Ww]e)(?:['’]ve|\s+have)?(?:\s+(?:just|finally|already|officially))*\s+"
    r"(?:booked|paid|filed|delivered|shipped|fixed|resolved|renewed|registered|signed\s+up"
    r"|sent)\b"
    r"|\b(?:is|are|was)\s+(?:now\s+|finally\s+|all\s+)?(?:done|finished|submitted|complete"
    r"|completed|sorted)\b",
    re.IGNORECASE,
)
# Negated or conditional completion: "haven't finished", "when you're finished".
_NEGATED = re.compile(
    r"(?:n['’]t|\bnot|\bnever|\byet|\bwhen|\bonce|\bif|\buntil|\bafter)(?:\s+[\w'’]+){0,2}\s*$",
    re.IGNORECASE,
)


def annotate(
    text: str, *, ts: datetime, speaker: str | None, known_people: Iterable[str] = (),
    known_keys: Container[str] = frozenset(), vector: Any = None, embedder: str | None = None,
) -> Annotation:
    """Annotate one event's ``text``; relative times are resolved against ``ts``.

    ``speaker`` is the event's source person (or None); ``known_people`` are names already in
    the namespace, which lets sentence-initial names be recognized; ``known_keys`` the same
    as :func:`~enfold.text.people.name_key` keys (from an index of the namespace's people).
    ``vector`` (the text's embedding by ``embedder``) lets the view classifier of
    :mod:`enfold.text.subjectivity` read a bare evaluation as the speaker's view.
    """
    times = extract_times(text, ts)
    looks_like_a_view = is_view(vector, embedder)
    claims = [c for c in extract_claims(text, speaker, view=looks_like_a_view)
              if _says_something(text, c)]
    me = holder_name(speaker)
    changed = revision(text, speaker, me)
    there = [] if changed is None else [c for c in claims if c.start < changed.end
                                        and changed.start < c.end]
    own = changed is not None and changed.holder == me
    if changed is not None and not any(c.holder == changed.holder for c in there) \
            and (own or not there):
        # "Sophie's changed her mind": a view, whatever its wording, and also when other
        # sentences of the text hold views of their own (a diary entry's "I was wrong
        # about the man" among what the day brought)
        claims = [*claims, changed]
    if not claims and looks_like_a_view and not reports_another(text):
        claims = [bare_view(text, speaker, me) or speaker_view(text, speaker)]
    elif not claims and _leans_to_a_view(vector, embedder) and not reports_another(text):
        judged = evaluative_view(text, speaker, me)
        claims = [] if judged is None else [judged]
    side = polarity(vector, embedder) if any(c.stance == "neutral" for c in claims) else None
    if side is not None:
        # The lexicon saw no evaluative word; the meaning still leans one way.
        claims = [replace(c, stance=side) if c.stance == "neutral" else c for c in claims]
    return Annotation(
        times=tuple(times),
        people=tuple(extract_people(text, speaker, known=known_people,
                                    known_keys=known_keys)),
        claims=tuple(claims),
        revises=changed is not None,
        revised=None if changed is None else (changed.start, changed.end),
        # the speaker's own change ("I was wrong about it", "she was right"): another's
        # view told beside it did not change
        reviser=changed.holder if own and changed is not None else None,
        states_facts=bool(claims) and (bool(times) or _has_particulars(text)),
        obligations=tuple(find_obligations(text, times, after=ts)),
        causal=has_causal_cue(text),
        resolution=has_resolution_cue(text),
    )


#: Parts of speech that say what a view is about or what it holds.
_CONTENT_POS = frozenset({"NOUN", "PROPN", "VERB", "ADJ", "NUM"})


def _says_something(text: str, claim: ClaimCandidate) -> bool:
    """Whether the claim's words say something beyond the cue: a content word (a noun, a
    name, a verb, an adjective, a number) that is not a stop word. A long text's stray
    cue leaves words that hold no view of anything ("I can't blame him." read as "him.",
    "He's terribly keen though." as "though.", a closing "Honestly."). Without a parse,
    or where the words are not found in the text, the claim is kept."""
    from enfold.text.nlp import parse

    doc = parse(text)
    at = text.find(claim.content, claim.start) if claim.content else -1
    if doc is None or at < 0:
        return True
    end = at + len(claim.content)
    return any(at <= t.idx < end and t.pos_ in _CONTENT_POS and not t.is_stop for t in doc)


#: The view probability above which a text with a sentence that judges (see
#: :func:`enfold.text.stance.evaluative_view`) is read as its speaker's view although the
#: classifier's own threshold is not met: an account of what was done beside the verdict
#: ("sold the new phone ... biggest waste of money this year") pulls the whole text's
#: vector towards an account.
VIEW_WITH_A_VERDICT = 0.3


def _leans_to_a_view(vector: Any, embedder: str | None) -> bool:
    p = view_probability(vector, embedder)
    return p is not None and p >= VIEW_WITH_A_VERDICT


_PARTICULARS = frozenset({"MONEY", "QUANTITY", "CARDINAL", "PERCENT", "DATE", "TIME"})


#: Relations that open a clause of their own.
_CLAUSE_DEPS = frozenset({"ROOT", "conj", "ccomp", "advcl", "parataxis", "relcl", "xcomp"})


def _has_particulars(text: str, times: Iterable[TimeMention] = ()) -> bool:
    """Whether the text states checkable particulars (an amount, a date, a count) in a
    clause that reports rather than evaluates: "the new A string was £12 and sounds much
    brighter" states a price, "27 average is way too quick" judges a pace (the number is
    what the view is about, not a fact told beside it)."""
    from enfold.text.nlp import parse

    times = list(times)
    doc = parse(text)
    if doc is None:
        return bool(times) or False
    starts = [e.root for e in doc.ents if e.label_ in _PARTICULARS]
    for t in times:
        span = doc.char_span(t.start, t.end, alignment_mode="expand")
        if span is not None:
            starts.append(span.root)
    return any(not _evaluative(_clause_head(tok)) for tok in starts)


def _clause_head(tok: Any) -> Any:
    for _ in range(12):
        if tok.dep_ in _CLAUSE_DEPS and tok.pos_ in ("VERB", "AUX", "ADJ") or tok.head is tok:
            return tok
        tok = tok.head
    return tok


def _evaluative(head: Any) -> bool:
    """A clause whose predicate is a judgement: a predicate adjective ("is way too quick",
    "is plenty"), an adjective clause or a modal of obligation ("should", "must")."""
    if head.pos_ == "ADJ":
        return True
    copula = head.lemma_.lower() in _COPULAS
    return any(c.dep_ in ("acomp", "oprd") and c.pos_ == "ADJ" and copula
               or c.dep_ == "aux" and c.lower_ in ("should", "must", "ought")
               for c in head.children)


#: Verbs that predicate a property of their subject ("is too quick", "looks shabby",
#: "sounds brighter"); other verbs with an adjective state a change or a state of affairs
#: ("went dark", "stay connected", "got married"), not a judgement.
_COPULAS = frozenset({"be", "seem", "look", "sound", "feel", "appear", "smell", "taste"})


def find_obligations(
    text: str, times: Iterable[TimeMention] = (), *, after: datetime | None = None,
    claims: Iterable[ClaimCandidate] = (),
) -> list[Obligation]:
    """Explicit obligations in ``text``; ``times`` (already extracted) supply their due dates.

    ``after`` is the event time: a non-deadline time only serves as ``due`` if it ends after it.
    """
    times = list(times)
    if after is not None:
        after = parse_timestamp(after)
    spans = [
        (m.start(), _clause_end(text, m.end()))
        for m in _OBLIGATION_CUE.finditer(text)
        if not _RELATIVE_BEFORE.search(text, max(0, m.start() - 12), m.start())
        and not _BARE_VERB.match(text, m.end())
    ]

    def timed(m: re.Match[str], end: int, *, ahead: bool) -> bool:
        return any(m.end() <= t.start and t.end <= end
                   and (not ahead or after is None or t.end_ts > after) for t in times)

    # A request made of the reader with a time or a "please" on it: "can you pick Mateo up
    # from swimming at 5:30 today?" ("Can you believe it?" asks nothing to be done).
    for m in _REQUEST.finditer(text):
        end = _clause_end(text, m.end())
        if _PLEASE.search(text, max(0, m.start() - 12), end) or timed(m, end, ahead=False):
            spans.append((m.start(), end))
    # What the writer says they will do at a given time: "ok fine, I'll bring it on
    # Tuesday"; a request opening with "please": "Please bring your own apron ... on Saturday".
    for m in _TIMED_DUTY.finditer(text):
        end = _clause_end(text, m.end())
        if timed(m, end, ahead=True):
            spans.append((m.start(), end))
    # Sentences with a deadline but no explicit cue ("The report is due Friday.") count whole.
    seeds = [m.start() for m in _DEADLINE_CUE.finditer(text)]
    # A deadline-flagged time seeds one only while it lies ahead, and not after a count
    # ("1,200 downloads by noon" reports a tally; it commits to nothing).
    seeds += [t.start for t in times
              if t.is_deadline and (after is None or t.end_ts > after)
              and not _TALLY_BEFORE.search(text, max(0, t.start - 40), t.start)
              and _bounds_a_task(text, t)]
    for pos in seeds:
        sentence = _sentence(text, pos)
        if not any(s < sentence[1] and sentence[0] < e for s, e in spans):
            spans.append(sentence)
    out: list[Obligation] = []
    for start, end in sorted(spans):
        if out and start < out[-1].end:
            continue  # one obligation per clause: the first one wins
        inside = [t for t in times if start <= t.start and t.end <= end]
        due = next((t for t in inside if t.is_deadline), None)
        if due is None:
            due = next((t for t in inside if after is None or t.end_ts > after), None)
        out.append(Obligation(text[start:end].strip(), start, end, due))
    return out


#: Verbs under which another person's clause still sets the speaker a task: what someone
#: says, asks, wants or expects of them by a time ("my boss expects the report by Friday").
_TASK_SETTERS = frozenset({"say", "tell", "ask", "want", "expect", "need", "require", "remind",
                           "mention", "write", "email", "text", "confirm", "note", "warn"})


def _bounds_a_task(text: str, time: TimeMention) -> bool:
    """Whether a deadline-flagged time ("by Friday") bounds something still to be done, by
    the parse: the time belongs to a clause with a verb (a verbless note states what was
    the case: "33 degrees at the shelters by noon", "Three alarms at Corrigan by 8am", "Back
    at the station by 1pm"; "both due Monday" is a task: "due" is its predicate), that verb
    is not told in the past ("the crew had the cabinets off by 10", "was finished by noon"),
    and its clause is not what another person holds true (see :data:`_TASK_SETTERS`).
    Without a parse: True (the cue decides)."""
    from enfold.text.nlp import parse

    doc = parse(text)
    if doc is None:
        return True
    span = doc.char_span(time.start, time.end, alignment_mode="expand")
    if span is None:
        return True
    head = span.root
    for _ in range(16):  # up to the verb the time hangs from
        if head.lower_ == "due":
            return True
        if head.pos_ in ("VERB", "AUX") or head.dep_ == "ROOT":
            break
        head = head.head
    if head.pos_ not in ("VERB", "AUX"):
        return False
    if head.tag_ == "VBD" or any(c.dep_ in ("aux", "auxpass") and c.tag_ == "VBD"
                                 for c in head.children):
        return False
    # a clause someone else holds true ("the plumber swears the boiler will be working by
    # Thursday", "he reckons we'll be cooking again by Oct 2") is their prediction
    governor = head.head
    if head.dep_ == "ccomp" and governor.pos_ == "VERB" \
            and governor.lemma_.lower() not in _TASK_SETTERS:
        subject = next((c for c in governor.children if c.dep_ == "nsubj"), None)
        if subject is not None and subject.lower_ not in ("i", "we"):
            return False
    # another person's own task ("Ollie has to finish his project by Monday", "the plumber
    # will be here by 10"): the clause's subject, or its obligation verb's, is someone else
    if head.lemma_.lower() not in _TASK_SETTERS:
        holder = head.head if head.dep_ == "xcomp" and head.head.pos_ in ("VERB", "AUX") \
            else head
        subject = next((c for c in holder.children if c.dep_ in ("nsubj", "nsubjpass")), None)
        while subject is None and holder.dep_ == "conj":
            # a verb conjoined to another shares its subject ("he'll back off the limiter
            # and give the drums room by the 16th")
            holder = holder.head
            subject = next((c for c in holder.children if c.dep_ in ("nsubj", "nsubjpass")),
                           None)
        if subject is not None and _someone_else(subject):
            return False
    return True


def _someone_else(tok: Any) -> bool:
    """Whether a subject is a person other than the writer: he, she, they, a name the
    recogniser calls a person, or a role or kin word ("the plumber", "Mum")."""
    low = tok.lower_
    if low in ("he", "she", "they"):
        return True
    if tok.ent_type_ == "PERSON":
        return True
    return tok.pos_ in ("NOUN", "PROPN") and is_person_noun(tok)


def has_causal_cue(text: str) -> bool:
    """Whether the text has an explicit causal connective ("because", ", so I", "led to")."""
    return _CAUSAL.search(text) is not None


def has_resolution_cue(text: str) -> bool:
    """Whether the text reports something completed ("I submitted", "done with", "sent off").

    Negated ("haven't finished") and questioned ("Did you finish?") cues do not count.
    """
    for m in _RESOLUTION.finditer(text):
        if _NEGATED.search(text, max(0, m.start() - 25), m.start()):
            continue
        if text[_clause_end(text, m.end()) : _clause_end(text, m.end()) + 1] == "?":
            continue
        return True
    return False


def _clause_end(text: str, pos: int) -> int:
    m = _CLAUSE_END.search(text, pos)
    return m.start() if m else len(text)


def _sentence(text: str, pos: int) -> tuple[int, int]:
    start = max((m.end() for m in _CLAUSE_END.finditer(text, 0, pos)), default=0)
    while start < pos and text[start].isspace():
        start += 1
    return start, _clause_end(text, pos)
