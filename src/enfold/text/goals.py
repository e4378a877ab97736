"""Intent labels written as goals: what to do, and by when (issue 20).

An intent's label is what a person would write on a to-do list, read from the parse
(:mod:`enfold.text.nlp`) of the words that stated it:

* **An obligation** ("Hi Maya, I need to renew my passport before the trip in June") becomes
  its action: the verb phrase governed by the obligation cue ("need to", "have to", "must",
  "remind me to", "don't forget to"), capitalised, cut at the next clause, with its due time
  appended when the phrase does not already say it: "Renew my passport before the trip in
  June". A deadline stated of a thing ("your NSF SBIR Phase I proposal is due November 13")
  becomes the thing and its due time: "NSF SBIR Phase I proposal due November 13". A duty
  stated of a thing is named by what is done to it ("the car cover has to be renewed by
  March 31" -> "Renew the car cover by March 31"; "Timesheets have to be in by 5pm" ->
  "Get timesheets in by 5pm"), and a vague "it has to be done" gives way to an action in
  the same words that says what.
* **A habit** becomes "Keep <doing it>", from the activity at least half of its occurrences
  report (the commonest content verb, or noun that is also a verb: "a long run"), inflected
  by ``lemminflect``: "Keep running". Without one, "Keep <concept>" when the concept is
  named as an activity ("Keep hiring engineers"), else "Keep up: <concept>".

Whatever the parse cannot read keeps the stated words (the clause), as before.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any

from enfold.text import nlp
from enfold.text.people import is_person_noun
from enfold.text.themes import TIME_ENTS

if TYPE_CHECKING:
    from spacy.tokens import Token

    from enfold.text.annotate import Obligation

__all__ = ["goal_of", "habit_label", "obligation_label"]

MAX_CHARS = 120
#: Verbs that carry an obligation: the action is the verb they govern.
_CUE_LEMMAS = frozenset({"need", "have", "must", "got", "get", "forget", "remind", "remember",
                         "supposed", "gotta", "should", "ought", "plan", "want"})
#: Verbs that name no activity of their own (a habit is not "Keep having").
_LIGHT = frozenset({"be", "have", "do", "get", "go", "make", "take", "feel", "say", "think",
                    "want", "need", "let", "know", "see", "try", "keep", "start", "come",
                    "seem", "look", "tell", "ask", "use", "give", "put", "hope", "like"})
_DUE_LEADS = frozenset({"by", "before", "on", "until", "till", "due", "in", "at", "next",
                        "tomorrow", "tonight", "today", "this"})
_NAME_POS = frozenset({"PROPN", "NOUN", "ADJ", "NUM"})
_POSSESSIVE_DROP = frozenset({"your", "our", "the", "my", "his", "her", "their", "a", "an", "this",
                              "that"})
_STOP_DEPS = frozenset({"advcl", "conj", "cc", "parataxis", "mark", "punct", "relcl", "aux",
                        "auxpass", "nsubj", "nsubjpass", "intj", "expl", "vocative"})


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _phrase(head: Token) -> str:
    """The head's words and its dependents', stopping at the next clause."""
    keep = [head]
    stack = list(head.children)
    while stack:
        t = stack.pop()
        # the head's own clause-level dependents (subject, auxiliaries, other clauses) and
        # "please" (politeness) are not part of the action
        if t.dep_ in _STOP_DEPS and t.head.i == head.i or t.lower_ == "please":
            continue
        keep.append(t)
        stack.extend(c for c in t.children if c.dep_ not in ("relcl", "parataxis"))
    toks = sorted(keep, key=lambda t: t.i)
    # the contiguous run from the first word (a gap means another clause came between)
    out = [toks[0]]
    for t in toks[1:]:
        if t.i != out[-1].i + 1:
            break
        out.append(t)
    return "".join(t.text_with_ws for t in out).strip(" ,;:-")


def _text(words: Sequence[Token]) -> str:
    """The words as written, without a leading determiner or possessive."""
    words = _whole(words)
    start = 0
    while start < len(words) and words[start].lower_ in _POSSESSIVE_DROP:
        start += 1
    return "".join(t.text_with_ws for t in words[start:]).strip()


def _whole(words: Sequence[Token]) -> list[Token]:
    """The words with the rest of a hyphenated word at either end: a label never splits a
    written word ("year-two progress report", not "two progress report")."""
    out = list(words)
    if not out:
        return out
    while out[0].i >= 2 and out[0].nbor(-1).text == "-" and not out[0].nbor(-1).whitespace_ \
            and not out[0].nbor(-2).whitespace_:
        out[0:0] = [out[0].nbor(-2), out[0].nbor(-1)]
    while out[-1].i + 2 < len(out[-1].doc) and not out[-1].whitespace_ \
            and out[-1].nbor(1).text == "-" and not out[-1].nbor(1).whitespace_:
        out.extend([out[-1].nbor(1), out[-1].nbor(2)])
    return out


def _falls_to_me(cue: Token) -> bool:
    """"It's on me to ...", "Prof. Lee told me to ...", "they asked us to ...": the task
    falls to the writer (the cue's object is the writer, and the action its complement)."""
    return any((c.dep_ == "prep" and c.lower_ == "on"
                and any(o.lower_ in ("me", "us") for o in c.children))
               or (c.dep_ in ("dobj", "dative") and c.lower_ in ("me", "us"))
               for c in cue.children)


def _action(doc: Any, before: str = "") -> str | None:
    """The action an obligation's clause states; ``before``: the words before the clause,
    where a pronoun the duty is stated of finds its thing (:func:`_of_a_thing`)."""
    def thing_of(pronoun: str) -> str | None:
        return _antecedent(before, pronoun, subject=True) if before.strip() else None

    vague: str | None = None
    for tok in doc:
        if tok.pos_ not in ("VERB", "AUX") or tok.dep_ != "xcomp" and tok.dep_ != "ccomp":
            continue
        if tok.lemma_.lower() in _CUE_LEMMAS \
                and any(c.dep_ in ("xcomp", "ccomp") for c in tok.children):
            continue  # "wants ... need to hand back": the action is under the inner cue
            # ("need to get the sheep off the top field": "get" with no verb under it acts)
        if tok.i > tok.head.i and (tok.head.lemma_.lower() in _CUE_LEMMAS
                                   or tok.head.lower_ in _CUE_LEMMAS or _falls_to_me(tok.head)):
            # the action follows its cue ("the letter came — the cover has to be renewed")
            if tok.tag_ == "VBN" and tok.head.lemma_.lower() in ("get", "have") \
                    and any(c.dep_ in ("nsubj", "nsubjpass") for c in tok.children):
                return _phrase(tok.head)  # what is had done: "get the car serviced"
            found = _of_a_thing(tok, tok.head, thing_of) or _phrase(tok)
            if tok.lemma_.lower() in ("do", "be") and vague is None:
                vague = found  # "it has to be done before Friday": another may say what
                continue
            return found
    if vague is not None:
        return vague
    for tok in doc:  # "Must call the bank", "Gotta renew it": the verb after the cue
        if tok.lower_ in ("must", "gotta", "should") and tok.i + 1 < len(doc):
            nxt = doc[tok.i + 1]
            if nxt.pos_ in ("VERB", "AUX"):
                verb = nxt.head if nxt.dep_ in ("auxpass", "aux") and nxt.head.i > nxt.i \
                    else nxt
                return _of_a_thing(verb, verb, thing_of) or _phrase(verb)
    for tok in doc:  # a thing asked for: "she wants the research statement draft by Friday"
        if tok.pos_ == "VERB" and tok.lemma_.lower() in ("want", "need", "expect") \
                and not any(c.dep_ in ("xcomp", "ccomp") for c in tok.children):
            obj = next((c for c in tok.children if c.dep_ == "dobj" and c.pos_ != "PRON"), None)
            if obj is not None:
                phrase = _text(_noun_phrase(obj))
                if phrase:
                    return phrase
    for tok in doc:  # a request: "Can you get me two oven quotes by the 22nd?"
        if tok.pos_ == "VERB" and any(c.dep_ == "nsubj" and c.lower_ == "you"
                                      for c in tok.children) \
                and any(c.dep_ == "aux" and c.lower_ in ("can", "could", "would", "will")
                        for c in tok.children):
            return _phrase(tok)
    for tok in doc:  # what the writer says they will do: "I'll bring the cake on Tuesday"
        if tok.pos_ == "VERB" and tok.dep_ == "ROOT" \
                and any(c.dep_ == "nsubj" and c.lower_ in ("i", "we") for c in tok.children) \
                and any(c.dep_ == "aux" and c.lower_ in ("will", "'ll", "’ll", "shall")
                        for c in tok.children):
            return _phrase(tok)
    for tok in doc:  # an imperative: "Submit the grant report by July 15"
        if tok.dep_ == "ROOT" and tok.tag_ == "VB" and tok.pos_ == "VERB" \
                and not any(c.dep_ in ("nsubj", "nsubjpass") for c in tok.children):
            return _phrase(tok)
    return None


def _of_a_thing(verb: Token, cue: Token,
                thing_of: Callable[[str], str | None] | None = None) -> str | None:
    """The action of a duty stated of a thing rather than a person: "the car cover has to
    be renewed by March 31" -> "Renew the car cover by March 31"; "Timesheets have to be in
    by 5pm Friday" -> "Get timesheets in by 5pm Friday"; "Spring tuition has to clear by
    Jan 15" -> "Spring tuition to clear by Jan 15". A subject "it" or "they" is the thing
    ``thing_of`` finds for it in the words before ("Grandad's birthday card ... It needs to
    be in the post by Tuesday" -> "Get Grandad's birthday card in the post by Tuesday").
    None when the subject is a person, or a pronoun without its thing (the action is
    theirs, or its thing is named elsewhere)."""
    subject = next((c for c in cue.children if c.dep_ in ("nsubj", "nsubjpass")), None) \
        or next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if subject is None or subject.i > verb.i:
        return None
    pronoun = _SUBJECT_PRONOUNS.get(subject.lower_)
    if pronoun is not None and thing_of is not None:
        found = thing_of(pronoun)
        if found is None:
            return None
        thing = found
    elif subject.pos_ not in ("NOUN", "PROPN") or subject.ent_type_ == "PERSON" \
            or is_person_noun(subject):
        return None
    else:
        words_of = _whole(_noun_phrase(subject))
        thing = "".join(t.text_with_ws for t in words_of).strip()  # "the car cover"
        if words_of and words_of[0].is_sent_start and words_of[0].pos_ == "NOUN" \
                and not words_of[0].text.isupper():
            thing = thing[:1].lower() + thing[1:]  # capitalised only as the sentence's first
    rest = _phrase(verb)
    words = rest.split(" ", 1)
    tail = words[1] if len(words) > 1 else ""
    if any(c.dep_ == "auxpass" for c in verb.children):  # "be renewed by ..."
        return f"{_capital(verb.lemma_.lower())} {thing} {tail}".strip()
    if verb.lemma_.lower() == "be":  # "be in by 5pm", "be in the post by Tuesday"
        return f"Get {thing} {tail}".strip() if tail else None
    return _capital(f"{thing} to {rest}")


#: The words a note opens with to say it is a to-do ("note to self: call the vet").
NOTE_CUE = r"(?i:note\s+to\s+self|reminder|to-?do|on\s+my\s+list)\s*[:–—-]\s*"
_NOTE_CUE = re.compile(rf"^\s*{NOTE_CUE}")
_DEADLINE_CUE = re.compile(r"^(?:the\s+)?deadline\s+(?:is\s+|of\s+)?", re.IGNORECASE)
_PREDICATE_DEPS = frozenset({"ROOT", "conj", "xcomp", "ccomp", "advcl"})
_LEFT_DEPS = frozenset({"compound", "amod", "nmod", "poss", "det", "nummod", "quantmod"})
_RIGHT_DEPS = frozenset({"prep", "pobj", "compound", "amod", "nummod"})
_PHRASE_DEPS = _LEFT_DEPS | _RIGHT_DEPS


def _noun_phrase(head: Token, exclude: Collection[int] = ()) -> list[Token]:
    """The head noun with the modifiers next to it (not a whole clause the parse hung on it)."""
    run = [head]
    for t in reversed(list(head.doc[max(0, head.i - 8):head.i])):
        if t.i in exclude or t.dep_ not in _LEFT_DEPS or t.head.i not in {r.i for r in run}:
            break
        run.insert(0, t)
    for t in head.doc[head.i + 1:head.i + 8]:
        inside = {r.i for r in run}
        attached = t.head.i in inside and t.dep_ in _RIGHT_DEPS
        # the modifiers of a phrase already begun: "for [the physio] clinic"
        ahead = t.dep_ in _PHRASE_DEPS and t.head.i > t.i \
            and t.head.head.i in inside and t.head.dep_ in _RIGHT_DEPS
        if t.i in exclude or not (attached or ahead):
            break
        run.append(t)
    while len(run) > 1 and run[-1].pos_ in ("ADP", "DET", "CCONJ", "PUNCT", "PART"):
        run.pop()  # "an application with" ends at its noun
    return run


def _thing_due(doc: Any) -> tuple[str, bool] | None:
    """(the thing that is due, whether the text calls it a deadline) of a deadline statement."""
    for tok in doc:  # "The internal nomination deadline is October 20"
        if tok.lemma_.lower() == "deadline" and tok.dep_ == "nsubj" \
                and tok.head.lemma_ == "be":
            return _text(_noun_phrase(tok)), True
    for tok in doc:
        if tok.lower_ != "due":
            continue
        verb = tok.head if tok.dep_ in ("acomp", "attr", "advmod", "amod", "prep") else tok
        subj = next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")), None)
        if subj is None and tok.dep_ == "amod":
            subj = tok.head
            if subj.dep_ in ("attr", "acomp"):
                # "the report is due end of next month", parsed as a "due end": the time is
                # the copula's complement, the thing due its subject
                subj = next((c for c in subj.head.children if c.dep_ == "nsubj"), subj)
        if subj is None or subj.pos_ == "PRON":
            continue
        words = _noun_phrase(subj, exclude={t.i for t in tok.subtree})
        # The small model can split a long name ("NSF SBIR Phase I proposal"): the subject
        # extends left over the name-like words next to it.
        left = subj.i
        while left > 0 and (doc[left - 1].pos_ in _NAME_POS or doc[left - 1].text.isupper()) \
                and doc[left - 1].lower_ not in _POSSESSIVE_DROP:
            left -= 1
        if left < words[0].i:
            words = [*doc[left:words[0].i], *words]
        phrase = _text(words)
        if phrase:
            return phrase, False
    return None


_OBJECT_PRONOUNS = {"it": "NN", "them": "NNS"}
#: A subject pronoun a duty may be stated of, as the object pronoun of its number.
_SUBJECT_PRONOUNS = {"it": "it", "they": "them"}


def _antecedent(before: str, pronoun: str, *, subject: bool = False) -> str | None:
    """The thing an object pronoun of the action stands for: the last noun phrase before the
    obligation whose head is a common noun of the pronoun's number and no person or time
    ("my library books are overdue, need to take them back" -> "my library books").
    ``subject``: the pronoun is the duty's subject, which stands first for the last
    sentence's own subject ("The boiler is making that noise again. It has to be serviced"
    -> "the boiler", not "that noise")."""
    doc = nlp.parse(before) if before.strip() else None
    if doc is None:
        return None
    tag = _OBJECT_PRONOUNS[pronoun]
    chunks = [c for c in doc.noun_chunks
              if c.root.pos_ == "NOUN" and c.root.tag_ == tag
              and c.root.ent_type_ not in TIME_ENTS and not is_person_noun(c.root)
              and c.root.dep_ not in ("npadvmod", "attr")]
    if subject and chunks:
        last = list(doc.sents)[-1]
        subjects = [c for c in chunks if c.root.dep_ in ("nsubj", "nsubjpass")
                    and c.start >= last.start]
        chunks = subjects or chunks
    for chunk in reversed(chunks):
        words = [t for t in chunk if t.pos_ != "PRON" or t.dep_ == "poss"]
        text = "".join(t.text_with_ws for t in words).strip()
        return text[:1].lower() + text[1:] if words and words[0].is_sent_start \
            and words[0].pos_ not in ("PROPN",) else text
    return None


def obligation_label(clause: str, due: str | None = None, before: str = "") -> str:
    """A goal label for the obligation stated in ``clause``; ``due`` is its due time's
    expression as written ("by Friday", "November 13"), if any; ``before``: the words of
    the event before the clause, where a pronoun the action acts on ("take them back")
    finds the thing it stands for."""
    noted = _NOTE_CUE.sub("", clause, count=1)  # "note to self: call the vet"
    clause = _capital(noted) if noted and noted != clause else clause
    doc = nlp.parse(clause)
    if doc is None:
        return clause[:200]
    action = _action(doc, before)
    if action:
        words = action.split(" ")
        at = next((i for i, w in enumerate(words[1:], 1) if w.lower() in _OBJECT_PRONOUNS),
                  None)
        if at is not None and before:
            thing = _antecedent(before, words[at].lower())
            if thing is not None:
                words[at] = thing
                action = " ".join(words)
        label = _capital(action)
        if due and due.lower() not in label.lower():
            lead = due.split()[0].lower()
            label = f"{label} {due if lead in _DUE_LEADS else 'by ' + due}"
        return label[:MAX_CHARS]
    found = _thing_due(doc)
    if found is not None and found[1]:  # a deadline named as such: "... deadline October 20"
        when = _DEADLINE_CUE.sub("", due or "")
        return _capital(found[0] + (f" {when}" if when else ""))[:MAX_CHARS]
    if found is not None:
        when = "" if not due else due if due.lower().startswith("due") else f"due {due}"
        label = _capital(found[0]) + (f" {when}" if when else " due")
        return label[:MAX_CHARS]
    return clause[:200]


def goal_of(obligation: Obligation, text: str) -> str:
    """The goal label of an obligation :func:`enfold.text.annotate.annotate` found in
    ``text`` (its clause, its due time as written, the words before it)."""
    due = obligation.due.expression if obligation.due is not None else None
    return obligation_label(obligation.text, due, text[:obligation.start])


def _keep_up(concept_label: str) -> str:
    """A habit whose occurrences share no activity: "Keep <the concept>" when the concept is
    named as an activity (a gerund heading its label: "Running", "Hiring engineers"), else
    "Keep up: <concept>"."""
    from lemminflect import getAllLemmas

    doc = nlp.parse(concept_label)
    if doc is not None and len(doc) > 0:
        head = doc[0]  # the gerund must lead the label and head it ("Building permits" no)
        lemmas = getAllLemmas(head.lower_, "VERB").get("VERB", ())
        if head.dep_ == "ROOT" and head.is_alpha and head.lower_.endswith("ing") \
                and any(lemma != head.lower_ for lemma in lemmas):
            return f"Keep {concept_label[:1].lower()}{concept_label[1:]}"
    return f"Keep up: {concept_label}"


def habit_label(concept_label: str, texts: Sequence[str]) -> str:
    """A habit's label from its occurrences' texts; see the module docstring."""
    from lemminflect import getAllLemmas, getInflection

    def lemma_of(t: Token) -> str:
        found = getAllLemmas(t.lower_, "VERB").get("VERB") if t.pos_ == "VERB" else None
        return found[0] if found else t.lemma_.lower()

    docs = [d for d in nlp.parse_many(list(texts)) if d is not None]
    # An activity is a verb the texts use as one; the nouns of the same word count too
    # ("Ran 10K", "a long run", "three runs").
    # Only a verb that is what the text reports (its predicate), or a noun heading a note
    # ("Long run: 14 miles"), counts; "straight-leg raises" or "a double charge" do not.
    def reported(t: Token) -> bool:
        if t.pos_ == "VERB":
            return t.dep_ in _PREDICATE_DEPS
        return t.pos_ == "NOUN" and t.dep_ == "ROOT"

    verbs = {lemma_of(t) for d in docs for t in d if t.pos_ == "VERB" and t.is_alpha
             and reported(t)}
    verbs = {v for v in verbs if v not in _LIGHT and getAllLemmas(v, "VERB")}
    counts: Counter[str] = Counter()
    for d in docs:
        counts.update({lemma_of(t) for t in d if reported(t) and lemma_of(t) in verbs})
    if not counts:
        return _keep_up(concept_label)
    verb, n = counts.most_common(1)[0]
    # an activity is what at least two occurrences, and half of them, report: one is no
    # pattern ("exports now run in the background" does not make a running habit)
    forms = getInflection(verb, "VBG") if n >= 2 and n * 2 >= len(texts) else ()
    if not forms:
        return _keep_up(concept_label)
    # What is practised: a noun the verb governs or is compounded with in two occurrences.
    things: Counter[str] = Counter()
    for d in docs:
        found = set()
        for t in d:
            if lemma_of(t) != verb or t.pos_ not in ("VERB", "NOUN"):
                continue
            for c in t.children:
                if c.dep_ in ("dobj", "compound") and c.pos_ in ("NOUN", "PROPN"):
                    found.add(c.text if c.pos_ == "PROPN" else c.lower_)
                    found.update(g.text if g.pos_ == "PROPN" else g.lower_
                                 for g in c.children if g.dep_ == "compound")
        things.update(found)
    thing = things.most_common(1)[0] if things else None
    return f"Keep {forms[0]}" + (f" {thing[0]}" if thing and thing[1] >= 2 else "")
