"""People in event text: the speaker, the names mentioned, and "my co-founder" style relations.

The graph keeps *who* apart from *what* (PEC2F's Person nodes), so every event is annotated with
the people it involves. Without an NER model this is done with orthography and small word
lists, tuned on chat text (LoCoMo):

* A **name** is a run of capitalized words (``Gina``, ``Gina Rossi``, ``O'Brien``) or a title
  followed by one (``Dr. Patel``). All-caps tokens (acronyms) and single letters never count.
* A **stoplist** drops frequent capitalized non-names: pronouns and function words,
  interjections ("Hey", "Wow"), weekdays, months, holidays, "God", nationalities and languages,
  common places and brands. A run containing a place word ("Grand Canyon", "Universal Studios")
  is dropped whole.
* A word at the **start of a sentence** is capitalized anyway, so it only counts when it is a
  known name (the ``known`` argument and the speaker), when it has a title, or when a
  name-like continuation follows ("Gina said", "Gina thinks", "Gina and I", "Gina, my ...").
  Otherwise the whole run is dropped ("Finding Home", "Harry Potter" at the start of a quote
  are titles more often than people).
* Titles of things are not people: runs inside quotes, after "the" or a capitalized
  possessive ("the Hobbit", "Philosopher's Stone"), or around "of" ("Game of Thrones",
  "Cliffs of Moher") are dropped unless they are known names or followed by a speech verb.
* A **relation** is a kinship or role noun after "my"/"our" ("my co-founder", "our mom"). With a
  name next to it ("my co-founder Sam", "Sam, my co-founder") the named person gets the
  relation; without one the person is named by :func:`relation_holder`, e.g.
  ``"Maya's co-founder"`` — a stable, per-speaker handle that the claims layer uses as holder.

With the spaCy parse (:func:`_with_parse`), entity types veto names in a place's,
organisation's or product's position, and the parse keeps names the rules dropped when it
shows a person (:func:`_person_evidence`: a subject of saying, the one told, addressed by
name, coordinated with a person, the owner of a kin noun, or the antecedent of a later
she/him). Known limitations: titles of books, films and brands with a title ("Harry
Potter", "Dr Pepper") can read as names; pronouns are not otherwise resolved.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Container, Iterable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from enfold.text.letters import CAPITALISED, UPPER
from enfold.text.person_screen import person_probability, threshold

__all__ = [
    "RELATION_NOUNS",
    "PersonMention",
    "canonical_relation",
    "extract_people",
    "looks_like_name",
    "relation_holder",
    "same_person",
]


def _words(block: str) -> frozenset[str]:
    """A word list written as a whitespace-separated block (easier to read and edit)."""
    return frozenset(block.split())



@dataclass(frozen=True)
class PersonMention:
    """A person an event involves.

    ``name`` is the canonical surface form ("Gina", "Dr. Patel", or "Maya's mom" for an unnamed
    relation). ``role`` is ``"speaker"`` (offsets -1/-1 unless the text names the speaker) or
    ``"mentioned"``. ``relation`` is the canonical kinship/role noun when the text gives one
    after "my"/"our" ("co-founder", "mom", "boss"), relative to the speaker.
    """

    name: str
    start: int
    end: int
    role: str
    relation: str | None


_TITLES = {"dr": "Dr.", "mr": "Mr.", "mrs": "Mrs.", "ms": "Ms.", "mx": "Mx.", "prof": "Prof.",
           "professor": "Prof."}
_TITLED = tuple(f"{t} " for t in set(_TITLES.values()))  # the start of a titled name
HONORIFICS = frozenset(_TITLES)  # the titles a name is read with, lower case, no stop

_STOP = _words(
    """
    i i'm me my mine we us our you your he him his she her it its they them their this that
    these those there here the a an and or but so if then than when where what who whom whose
    which why how yes yeah yep yup no nope not ok okay oh ah aw aww awww hmm hm um uh wow whoa
    yay hey hi hello hiya bye goodbye thanks thank congrats congratulations cool nice great
    awesome sure well good bad happy sad sorry please dear love lol haha hahaha omg btw fyi
    anyway also just really totally definitely absolutely exactly right true maybe perhaps same
    glad hope let let's lets what's that's it's there's here's how's who's can could would
    should will shall must may might do does did is are was were be been being have has had get
    got go going gonna wanna morning afternoon evening night today tomorrow yesterday tonight
    day week month year weekend monday tuesday wednesday thursday friday saturday sunday mon tue
    tues wed thu thurs fri sat sun january february march april june july august september
    october november december jan feb mar apr jun jul aug sep sept oct nov dec christmas easter
    thanksgiving halloween hanukkah diwali ramadan eid passover xmas valentine valentine's new
    year year's birthday holiday holidays spring summer autumn fall winter god lord jesus christ
    allah buddha heaven mother's father's mom mum dad mommy daddy mama papa grandma grandpa
    granny nana auntie aunt uncle sis bro english spanish french german italian chinese japanese
    korean indian american british irish scottish european african asian mexican canadian
    australian russian dutch swedish polish greek turkish arabic hindi portuguese brazilian
    latin midwestern western eastern northern southern america usa uk europe asia africa
    australia canada mexico japan china india italy france spain germany sweden norway denmark
    finland ireland scotland england britain wales russia brazil argentina greece turkey egypt
    israel korea thailand vietnam peru chile portugal netherlands switzerland austria poland
    iceland hawaii alaska california texas florida oregon washington michigan minnesota ohio
    colorado arizona nevada utah georgia virginia carolina york jersey london paris rome berlin
    madrid tokyo seattle chicago boston miami denver austin vegas atlanta dallas houston
    portland tampa galway dublin edinburgh amsterdam barcelona midwest northwest northeast
    southwest southeast coast north south east west central pacific atlantic internet google
    apple amazon facebook instagram twitter youtube netflix spotify tiktok zoom slack uber
    microsoft tesla nike adidas iphone android xbox playstation nintendo reddit linkedin
    whatsapp discord twitch disney marvel pokemon lego starbucks walmart covid ai tv dm pm am
    ceo cto vp hr phd lgbtq see pride
    """
)
# Words that make a capitalized run a place, organisation or event rather than a person.
_PLACE_WORDS = _words(
    """
    city county state street st avenue ave road rd park lake river mountain mountains canyon
    falls beach island islands bay valley hill hills tower bridge studios studio university
    college school academy institute center centre hospital museum library festival club church
    cafe restaurant hotel airport station mall market company inc corp ltd team league cup
    finals championship conference summit stadium arena theater theatre gallery forest national
    ocean sea desert
    """
)

_TOKEN = rf"(?:[OD]['’])?{CAPITALISED}(?:{CAPITALISED})?(?:[-'’]{CAPITALISED})*"
_GROUP = re.compile(
    rf"(?<![\w'’\-])(?:(?P<title>Dr|Mr|Mrs|Ms|Mx|Prof|Professor|Coach|Nurse|Captain|Officer"
    rf"|Detective|Sergeant|Sgt|Judge|Rev|Reverend|Pastor|Rabbi|Imam|Councillor|Senator)\.?\s+)?"
    rf"(?P<toks>{_TOKEN}(?:[ \t]+{_TOKEN})*)(?![\w-])"
)
_TOKEN_RE = re.compile(_TOKEN)
_SENTENCE_END = re.compile(r"(?:^|[.!?:;\n(\[\"“]|\s-)[\s\"“'‘(]*$")
# "the Hobbit", "Philosopher's Stone": a capitalized run after "the" or after another
# capitalized possessive is the title of something, not a person.
_TITLE_CONTEXT = re.compile(rf"(?:\b[Tt]he|\b[{UPPER}][\w]*['’]s)\s+$")
_NAME_CONTINUATION = re.compile(
    r"^(?:\s+(?:also|just|really|never|always|finally|still|once))?\s+(?:said|says|told|tells"
    r"|thinks|thought|believes|believed|feels|felt|asked|asks|wants|wanted|called|calls|texted"
    r"|emailed|mentioned|suggested|agreed|replied|explained|claims|claimed|argues|argued"
    r"|prefers|loves|hates|likes|doubts|worries|hopes|expects|reckons|and\s+I|and\s+me)\b"
)
# A quoted span ("Finding Home", 'Embracing Identity') holds titles, not people.
_QUOTED = re.compile(r"\"[^\"\n]{1,80}\"|“[^”\n]{1,80}”|(?<!\w)'[^'\n]{1,60}'(?!\w)")
_TITLE_AFTER = re.compile(rf"\s+of\s+(?:the\s+)?[{UPPER}]")
_TITLE_BEFORE = re.compile(rf"{CAPITALISED}\s+(?:of|with)\s+(?:the\s+)?$")

_RELATIONS = {
    "mom": "mom", "mother": "mom", "mum": "mom", "mommy": "mom", "mama": "mom",
    "dad": "dad", "father": "dad", "daddy": "dad", "papa": "dad", "parents": "parents",
    "sister": "sister", "brother": "brother", "sibling": "sibling", "siblings": "siblings",
    "son": "son", "daughter": "daughter", "kid": "kid", "child": "kid", "kids": "kids",
    "children": "kids", "wife": "wife", "husband": "husband", "spouse": "spouse",
    "partner": "partner", "boyfriend": "boyfriend", "girlfriend": "girlfriend",
    "fiance": "fiancé", "fiancé": "fiancé", "fiancee": "fiancé", "fiancée": "fiancé",
    "friend": "friend", "buddy": "friend", "pal": "friend", "bestie": "best friend",
    "boss": "boss", "manager": "manager", "supervisor": "supervisor", "coworker": "coworker",
    "co-worker": "coworker", "colleague": "colleague", "co-founder": "co-founder",
    "cofounder": "co-founder", "roommate": "roommate", "flatmate": "roommate",
    "neighbor": "neighbor", "neighbour": "neighbor", "aunt": "aunt", "uncle": "uncle",
    "cousin": "cousin", "grandma": "grandma", "grandmother": "grandma", "granny": "grandma",
    "grandpa": "grandpa", "grandfather": "grandpa", "niece": "niece", "nephew": "nephew",
    "teacher": "teacher", "mentor": "mentor", "therapist": "therapist", "doctor": "doctor",
    "coach": "coach", "landlord": "landlord", "classmate": "classmate", "teammate": "teammate",
    "ex": "ex", "ceo": "ceo", "cto": "cto", "team lead": "team lead", "lead": "lead",
    "mother-in-law": "mother-in-law", "father-in-law": "father-in-law",
    "sister-in-law": "sister-in-law", "brother-in-law": "brother-in-law",
}
#: Kinship and role nouns recognized after "my"/"our" (the keys of the canonical map).
RELATION_NOUNS = frozenset(_RELATIONS)
_REL_WORDS = "|".join(sorted((re.escape(k) for k in _RELATIONS), key=len, reverse=True))
_RELATION_RE = re.compile(
    rf"\b(?:my|our)\s+(?:(?P<best>best)\s+|(?:older|younger|little|big|baby|oldest|youngest"
    rf"|late|new|old|dear|former|current)\s+)?(?P<rel>{_REL_WORDS})(?![\w-])"
    rf"(?:,?[ \t]+(?-i:(?P<name>(?:(?:Dr|Mr|Mrs|Ms|Mx|Prof)\.?[ \t]+)?{_TOKEN}(?:[ \t]+{_TOKEN})?)))?",
    re.IGNORECASE,
)
_APPOSITION = re.compile(
    rf"(?P<name>{_TOKEN}(?:[ \t]+{_TOKEN})?),\s+(?:my|our)\s+(?:(?P<best>best)\s+)?"
    rf"(?P<rel>{_REL_WORDS})(?![\w-])",
)


def relation_holder(speaker: str | None, relation: str) -> str:
    """The stable name of an unnamed relation of the speaker: ``"Maya's co-founder"``.

    Without a known speaker the handle is ``"speaker's co-founder"``.
    """
    return f"{speaker or 'speaker'}'s {relation}"


def canonical_relation(word: str, best: bool = False) -> str | None:
    """The canonical relation for a kinship/role noun ("mother" → "mom"), or None."""
    rel = _RELATIONS.get(word.lower())
    if rel == "friend" and best:
        return "best friend"
    return rel


def extract_people(
    text: str, speaker: str | None, known: Iterable[str] = (),
    known_keys: Container[str] = frozenset(), *, screen: bool = True,
) -> list[PersonMention]:
    """The speaker (first, when given) and every person mentioned in ``text``, in text order.

    ``known`` names (and the speaker) are recognized even at the start of a sentence and even
    when they collide with the stoplist ("Will", "Grace"); ``known_keys`` are more of them,
    already through :func:`name_key` (a caller's index of the namespace's people). Mentions
    of the speaker's own name set the speaker's offsets instead of producing a second
    mention. ``screen``: drop the mentions :mod:`enfold.text.person_screen` holds unlikely
    to be people (not those of known names).
    """
    extra = {name_key(k) for k in known if k.strip()}
    if speaker:
        extra.add(name_key(speaker))
    known_keys = Either(extra, known_keys)
    found: dict[tuple[int, int], PersonMention] = {}
    for m in _GROUP.finditer(text):
        for start, end, name in _names_in_group(text, m, known_keys):
            found[(start, end)] = PersonMention(name, start, end, "mentioned", None)
    covered: list[tuple[int, int]] = []  # relation phrases already bound to a name
    for rm in [*_APPOSITION.finditer(text), *_RELATION_RE.finditer(text)]:
        rel = canonical_relation(rm.group("rel"), bool(rm.group("best")))
        if rel is None or any(s <= rm.start("rel") < e for s, e in covered):
            continue
        name = rm.group("name")
        if name and _binds_name(text, rm, known_keys):
            s, e = rm.span("name")
            for key in [k for k in found if k[0] < e and s < k[1]]:
                del found[key]
            found[(s, e)] = PersonMention(_canonical(name), s, e, "mentioned", rel)
            covered.append(rm.span())
        elif rm.re is _RELATION_RE:
            s, e = rm.start(), rm.end("rel")
            found[(s, e)] = PersonMention(relation_holder(speaker, rel), s, e, "mentioned", rel)
    from enfold.text.nlp import parse

    doc = parse(text)
    if doc is not None:
        found = _with_parse(text, doc, found, speaker, known_keys)
        if screen:
            found = _screened(doc, found, known_keys)
    mentions = sorted(found.values(), key=lambda p: p.start)
    if not speaker:
        return mentions
    own = [p for p in mentions if p.relation is None and same_person(p.name, speaker)]
    others = [p for p in mentions if p not in own]
    start, end = (own[0].start, own[0].end) if own else (-1, -1)
    return [PersonMention(speaker.strip(), start, end, "speaker", None), *others]


def _screened(doc: Any, found: dict[tuple[int, int], PersonMention],
              known_keys: Container[str]) -> dict[tuple[int, int], PersonMention]:
    """``found`` without the mentions the person screen holds unlikely to be people."""
    floor = threshold()
    out = {}
    for key, m in found.items():
        if m.start >= 0 and name_key(m.name) not in known_keys \
                and not m.name.startswith(_TITLED):  # "Prof. Lee": a title names a person
            p = person_probability(doc, m.start, m.end, m.relation)
            if p is not None and p < floor:
                continue
        out[key] = m
    return out


# Entity types that are not people, and prepositions that make a name a place ("in Leeds",
# "from Toronto", "at the Royal Oak").
_NOT_PERSON_ENTS = frozenset({"GPE", "LOC", "FAC", "ORG", "PRODUCT", "WORK_OF_ART", "EVENT",
                              "LAW", "LANGUAGE", "NORP", "DATE", "TIME", "MONEY", "QUANTITY"})
_PLACE_PREPS = frozenset({"in", "at", "from", "into", "near", "around", "across", "through",
                          "outside", "inside", "via", "towards", "toward", "round"})
_PLACE_ENTS = frozenset({"GPE", "LOC", "FAC"})
# Kinship words that name a person on their own ("Mum called", "with grandpa", "Auntie Bev").
_BARE_KIN = {"mum": "mom", "mom": "mom", "mummy": "mom", "mommy": "mom", "mam": "mom",
             "dad": "dad", "daddy": "dad", "gran": "grandma", "granny": "grandma",
             "grandma": "grandma", "nan": "grandma", "nana": "grandma", "nanna": "grandma",
             "grandpa": "grandpa", "grandad": "grandpa", "granddad": "grandpa",
             "auntie": "aunt", "aunty": "aunt", "aunt": "aunt", "uncle": "uncle",
             "sis": "sister", "hubby": "husband"}
# The same words as other languages and families say them, used as names ("Nonna still
# makes the sauce", "bhaiya said", "Halmeoni watched"): a closed class, listed whole.
_BARE_KIN |= {w: "mom" for w in ["ma", "mammy", "mamma", "mama", "mamá", "mãe", "amma", "ammi", "umma", "mutti", "maman", "mommy", "moms", "mummy"]}
_BARE_KIN |= {w: "dad" for w in ["da", "pa", "pops", "pop", "papa", "papá", "pai", "appa", "abba", "abbu", "baba", "vati", "papi", "dada", "pappy"]}
_BARE_KIN |= {w: "grandma" for w in ["nonna", "oma", "omi", "ouma", "abuela", "abuelita", "babcia", "babushka", "halmeoni", "halmoni", "yiayia", "yaya", "lola", "vovó", "vovo", "nani", "dadi", "obaachan", "tutu", "tūtū", "grandmama", "gramma", "granma"]}
_BARE_KIN |= {w: "grandpa" for w in ["nonno", "opa", "oupa", "abuelo", "abuelito", "dziadek", "dedushka", "harabeoji", "papou", "lolo", "vovô", "nana-ji", "nanaji", "dadaji", "ojiichan", "gramps", "grandpapa", "grampa"]}
_BARE_KIN |= {w: "aunt" for w in ["tia", "tía", "zia", "tante", "tita", "bua", "mausi", "chachi", "masi"]}
_BARE_KIN |= {w: "uncle" for w in ["tio", "tío", "zio", "onkel", "tito", "chacha", "mamu"]}
_BARE_KIN |= {w: "brother" for w in ["bhaiya", "bhai", "kuya", "anna"] if w != "anna"}
_BARE_KIN |= {w: "sister" for w in ["didi", "ate"] if w != "ate"}
_BARE_KIN |= {"jiju": "brother-in-law", "bhabhi": "sister-in-law", "sogra": "mother-in-law",
              "sogro": "father-in-law"}


def bare_kin(word: str) -> str | None:
    """The canonical relation of a kinship word used as a name ("Gran", "Sis", "Nonna"), or
    None."""
    return _BARE_KIN.get(word.lower())


def kin_holder(word: str, speaker: str | None) -> str | None:
    """Whom a kinship word used as a name means: the speaker's relation ("Gran", said by
    Beth, is "Beth's grandma", as "my gran" is; :func:`relation_holder`), or None when
    the word is none."""
    kin = bare_kin(word.strip())
    return None if kin is None else relation_holder(speaker, kin)


# Roles that are people with any determiner ("the landlord", "our accountant").
_ROLES = frozenset([
    "landlord", "landlady", "vet", "physio", "physiotherapist", "dentist", "accountant",
    "lawyer", "solicitor", "plumber", "electrician", "builder", "nurse", "gp", "doctor",
    "surgeon", "midwife", "trainer", "tutor", "babysitter", "nanny", "cleaner", "manager",
    "boss", "supervisor", "teacher", "headteacher", "coach", "therapist", "mentor",
    "neighbour", "neighbor", "co-founder", "cofounder", "colleague", "coworker", "flatmate",
    "roommate", "housemate", "partner", "husband", "wife", "boyfriend", "girlfriend", "fiance",
    "fiancé", "fiancee", "fiancée", "mother", "father", "brother", "sister", "son", "daughter",
    "cousin", "niece", "nephew", "grandmother", "grandfather", "stepmum", "stepmom", "stepdad",
    "mother-in-law", "father-in-law", "sister-in-law", "brother-in-law", "ceo", "cto",
    "director", "chair", "principal", "editor",
    # people by occupation or standing, as a speaker meets them ("the receptionist",
    # "our new intern", "her line manager", "the estate agent")
    "receptionist", "intern", "assistant", "secretary", "consultant", "surveyor", "agent",
    "architect", "engineer", "developer", "designer", "analyst", "recruiter", "auditor",
    "inspector", "officer", "detective", "sergeant", "constable", "judge", "barrister",
    "attorney", "paralegal", "notary", "clerk", "cashier", "waiter", "waitress", "barista",
    "bartender", "chef", "cook", "baker", "butcher", "gardener", "handyman", "mechanic",
    "carpenter", "decorator", "painter", "roofer", "locksmith", "courier", "postman",
    "postwoman", "postie", "driver", "pilot", "conductor", "porter", "caretaker", "janitor",
    "concierge", "receptionist", "pharmacist", "optician", "paramedic", "radiologist",
    "anaesthetist", "anesthetist", "psychiatrist", "psychologist", "counsellor", "counselor",
    "consultant", "specialist", "dermatologist", "cardiologist", "oncologist", "gynaecologist",
    "obstetrician", "paediatrician", "pediatrician", "orthodontist", "hygienist", "osteopath",
    "chiropractor", "nutritionist", "dietitian", "midwife", "carer", "caregiver", "childminder",
    "au pair", "governess", "headmaster", "headmistress", "lecturer", "professor", "supervisor",
    "examiner", "invigilator", "tutor", "instructor", "trainer", "referee", "umpire",
    "captain", "skipper", "goalkeeper", "priest", "vicar", "rabbi", "imam", "pastor",
    "minister", "chaplain", "councillor", "councilor", "mayor", "senator", "governor",
    "ambassador", "president", "chairman", "chairwoman", "chairperson", "treasurer",
    "founder", "patient", "guest", "applicant", "candidate", "banker", "broker", "realtor", "valuer",
    "freelancer", "tenant", "lodger",
    "interviewer",
    "manager", "superintendent", "foreman", "steward",
    "stewardess", "nanny", "babysitter", "godmother", "godfather", "godson", "goddaughter",
    "stepson", "stepdaughter", "stepsister", "stepbrother", "stepfather", "stepmother",
    "grandson", "granddaughter", "grandchild", "granddad", "grandad", "fiancé", "ex-wife",
    "ex-husband", "ex-boyfriend", "ex-girlfriend", "bridesmaid", "groom", "bride",
    "mentee", "apprentice", "trainee", "understudy", "deputy", "vice-principal",
    "registrar", "matron", "surgeon", "hairdresser", "barber", "stylist", "beautician",
    "therapist", "masseuse", "optometrist", "dentist", "translator", "interpreter",
    "journalist", "reporter", "photographer", "agent",
    "landlady", "housekeeper", "neighbour", "neighbor", "classmate", "teammate",
    "bandmate", "housemate", "roomie", "bestie", "boyfriend", "girlfriend",
])
_OWNERS = frozenset({"my", "our", "the", "your", "his", "her", "their"})


@functools.cache
def _lexicon() -> tuple[frozenset[str], frozenset[str]]:
    """The nouns that name a person in their usual sense ("contractor", "caterer", "guy",
    "nurse"), and the two-word compounds of them that name things ("heat exchanger"):
    derived from WordNet 3.0 by ``scripts/build_person_nouns.py``."""
    text = resources.files("enfold").joinpath("data", "person_nouns.txt").read_text("utf-8")
    lines = [w for w in text.split("\n") if w and not w.startswith("#")]
    return (frozenset(w for w in lines if not w.startswith("!")),
            frozenset(w[1:] for w in lines if w.startswith("!")))


def names_a_person(word: str) -> bool:
    """Whether a word's usual sense is a person ("baker", "nurse"; the WordNet-derived
    lexicon of :func:`_lexicon`), in any case."""
    return word.lower() in _lexicon()[0]


def dictionary_word(word: str, upos: str | None = None) -> bool:
    """Whether ``word`` is in lemminflect's English dictionary (as ``upos``, "NOUN", "VERB",
    …, or as any part of speech)."""
    from lemminflect import getAllLemmas

    return bool(getAllLemmas(word, upos))


def _person_noun(tok: Any) -> bool:
    """A singular common noun whose usual sense is a person, written in lower case ("the
    contractor", "the IT guy": roles the list above does not name) or as an abbreviation
    ("the CFO", "my GP")."""
    nouns, things = _lexicon()
    if tok.text.isupper() and 2 <= len(tok.text) <= 4 and tok.pos_ in ("NOUN", "PROPN"):
        return tok.lower_ in nouns or tok.lower_ in _ROLES
    if tok.pos_ != "NOUN" or tok.tag_ != "NN" or not tok.text.islower() \
            or tok.lemma_.lower() not in nouns:
        return False
    # "the heat exchanger": a compound of the word that names a thing
    return not any(c.dep_ == "compound" and f"{c.lower_} {tok.lower_}" in things
                   for c in tok.children)


def is_person_noun(tok: Any) -> bool:
    """Whether a word names a person by role or kin ("the plumber", "Mum", "my GP")."""
    return _person_noun(tok) or bare_kin(tok.lower_) is not None or tok.lower_ in _ROLES


# What only a person does: a name the recogniser calls an organisation is still a person
# when it says or thinks ("Tasha said", "Callum reckons").
_SPEECH_LEMMAS = frozenset([
    "say", "tell", "think", "reckon", "believe", "feel", "ask", "reply", "text", "call",
    "email", "mention", "promise", "agree", "insist", "argue", "claim",
])


def _with_parse(text: str, doc: Any, found: dict[tuple[int, int], PersonMention],
                speaker: str | None, known: Container[str]
                ) -> dict[tuple[int, int], PersonMention]:
    """The rule mentions checked and completed with the parse: a name the entity
    recogniser calls a place, organisation, product or title is dropped when its position
    agrees (a place preposition, or no sign of a person: not a PERSON entity, not the
    subject of a verb, not possessed by someone); PERSON entities the rules missed are
    added (a capitalised subject opening a sentence is not: "Rose is coming" and "Stripe
    sent the invoice" look alike, and on the measured set adding them cost precision);
    kinship words used as names ("Mum", "grandpa") and roles with a determiner ("the
    landlord", "our accountant") become people."""
    out = dict(found)
    for key, m in list(out.items()):
        if m.relation is not None or name_key(m.name) in known:
            continue
        span = doc.char_span(m.start, m.end, alignment_mode="expand")
        if span is None:
            continue
        labels = {t.ent_type_ for t in span if t.ent_type_}
        root = span.root
        if "PERSON" in labels and not any(c.dep_ == "poss" for c in root.children):
            continue
        if any(c.dep_ == "poss" and c.lower_ in _OWNERS for c in root.children):
            del out[key]  # "my Apple Watch", "her Kindle": a thing someone has
            continue
        prep = root.head.lower_ if root.dep_ == "pobj" else None
        owned = any(c.dep_ == "case" for c in root.children)  # "at Kat's": her place
        if prep in _PLACE_PREPS | {"on", "up", "for"} and not owned:
            del out[key]  # "a job at Stripe", "hours on Duolingo", "up Snowdon"
            continue
        if not labels and _modifies_a_noun(root):
            del out[key]  # "mostly Go and Python people": a kind of thing, not someone
            continue
        if not labels & _NOT_PERSON_ENTS or prep == "with" and not labels & _PLACE_ENTS:
            continue  # "ran 5 km with Priya": company is a person, whatever the label
        if labels & _PLACE_ENTS and root.dep_ in ("compound", "amod", "nmod") or any(
                c.dep_ == "det" and c.lower_ == "the" for c in root.children):
            del out[key]  # "the new Sichuan place", "the Boston Children's team"
            continue
        place = prep in ("to", "from") and bool(labels & _PLACE_ENTS)
        # a place does not act: "Imogen has already finished it" is a name the recogniser
        # took for a place
        acts = labels == {"GPE"} and len(span) == 1 and root.dep_ == "nsubj" \
            and root.head.lemma_ != "be"
        if root.dep_ in ("nsubj", "nsubjpass") and labels & {"ORG", "PRODUCT", "GPE"} \
                and root.head.lemma_.lower() not in _SPEECH_LEMMAS and not acts:
            place = True  # "Stripe sent the invoice", "Postgres is fine"
        thing = bool(labels & {"PRODUCT", "WORK_OF_ART", "ORG"}) and root.dep_ in (
            "dobj", "compound", "nmod") or bool(labels & {"PRODUCT", "WORK_OF_ART"}) \
            and root.dep_ not in ("nsubj", "poss", "conj")
        if place or thing or labels <= {"DATE", "TIME", "NORP", "LANGUAGE", "EVENT"}:
            del out[key]
    for ent in doc.ents:
        if ent.label_ != "PERSON":
            continue
        toks = [t for t in ent if t.pos_ == "PROPN"]  # "Tell Sam": the name is "Sam"
        if not toks or toks[-1].i - toks[0].i + 1 != len(toks):
            continue
        start, end = toks[0].idx, toks[-1].idx + len(toks[-1].text)
        words = text[start:end]
        if words.endswith(("'s", "’s")):
            end -= 2
            words = words[:-2]
        first = ent[0].lower_
        if first in _BARE_KIN or canonical_relation(first) is not None or not words[:1].isupper():
            continue  # kinship is read below; a lower-case "person" is a guess
        if name_key(words) in _STOP and name_key(words) not in known:
            continue
        if any(s < end and start < e for s, e in out):
            continue
        out[(start, end)] = PersonMention(_canonical(words), start, end, "mentioned", None)
    out = _evidenced(text, doc, out, known)
    for key, m in list(out.items()):
        if m.relation is None and name_key(m.name) not in known and (
                _named_thing(doc, m) or _common_plural(doc, m)):
            del out[key]
    for tok in doc:
        low = tok.lower_
        owner = next((c for c in tok.children if c.dep_ in ("det", "poss")), None)
        if low in _BARE_KIN and owner is None and tok.pos_ in ("PROPN", "NOUN"):
            end = tok.idx + len(tok.text)
            nxt = tok.nbor(1) if tok.i + 1 < len(doc) else None
            if nxt is not None and nxt.pos_ == "PROPN" and nxt.text[:1].isupper():
                end = nxt.idx + len(nxt.text)  # "Auntie Bev", "Uncle Ray"
                name = _canonical(text[tok.idx:end])
                mention = PersonMention(name, tok.idx, end, "mentioned", _BARE_KIN[low])
            else:  # used as a name ("Mum called"): named as written, like the stream's "Mum"
                mention = PersonMention(tok.text[:1].upper() + tok.text[1:], tok.idx, end,
                                        "mentioned", _BARE_KIN[low])
            for k in [k for k in out if k[0] < end and tok.idx < k[1]]:
                del out[k]
            out[(tok.idx, end)] = mention
        elif (_role_word(tok, out) or (
                low in _BARE_KIN or canonical_relation(low)) and owner is not None
                and (owner.lower_ not in _OWNERS or low not in _RELATIONS
                     and owner.lower_ in ("my", "our"))) \
                and owner is not None and tok.dep_ != "attr" \
                and (owner.lower_ in _OWNERS or _named_owner(owner, out)) \
                and tok.pos_ in ("NOUN", "PROPN"):
            start, end = owner.idx, tok.idx + len(tok.text)
            rel = canonical_relation(low) or bare_kin(low) or low  # "my abuela"
            if any(s < end and start < e for s, e in out if not s <= owner.idx < e) or any(
                    m.relation == rel for m in out.values()):
                continue  # "Dana, my boss": the rules bound it to the name
            word = tok.text if tok.text.isupper() else low  # "the CFO" as written
            if owner.lower_ not in _OWNERS:  # "Chidi's mum": a person of their own
                start = tok.idx
                name = f"{text[owner.idx:owner.idx + len(owner.text)]}'s {word}"
            else:
                name = relation_holder(speaker, word if rel == low else rel) \
                    if owner.lower_ in ("my", "our") else f"{owner.lower_} {word}"
            out[(start, end)] = PersonMention(name, start, end, "mentioned", rel)
    return out


def _role_word(tok: Any, found: dict[tuple[int, int], PersonMention]) -> bool:
    """A noun that is a person with a determiner or owner: a role of the list ("the
    landlord"), kin in the plural ("the kids", not "Boston Children's"), or a person noun
    no mention covers yet ("the contractor"; "my best friend" is one already)."""
    low = tok.lower_
    return low in _ROLES and tok.tag_ == "NN" or low in _KIN_PLURALS and tok.text.islower() \
        or _person_noun(tok) and not any(s <= tok.idx < e for s, e in found)


# Pronouns only a person is ("she's so excited", "cannot wait to see her").
_PERSONAL = frozenset({"he", "she", "him", "her", "his", "hers", "himself", "herself"})
# Verbs whose object is someone spoken to or met ("told priya", "ask Grace").
_ADDRESS_LEMMAS = frozenset([
    "tell", "ask", "text", "message", "thank", "hug", "kiss", "marry", "remind", "warn",
    "congratulate", "dm", "wish", "introduce", "invite",
])
_NAME_POS = frozenset({"PROPN", "NOUN", "ADJ", "VERB"})


def _is_person_token(tok: Any, found: dict[tuple[int, int], PersonMention]) -> bool:
    """A token that stands for a person: "I", a mention already found, a kinship or role
    noun ("her husband")."""
    if tok.lower_ in ("i", "me", "we", "us", "you"):
        return True
    if tok.lower_ in _BARE_KIN or tok.lower_ in _ROLES or canonical_relation(tok.lower_):
        return True
    return any(s <= tok.idx < e for s, e in found)


def _person_evidence(tok: Any, doc: Any, found: dict[tuple[int, int], PersonMention],
                     strong: bool = False) -> bool:
    """Whether the parse shows ``tok`` is a person, whatever the entity recogniser calls it
    (the small model's labels for one-word first names are unreliable: "Ingrid" ORG,
    "Brooklyn" GPE). The signs: it is the subject of a verb of saying or thinking; the
    person spoken to ("told priya"); addressed by name ("Jamal, can you ..."); coordinated
    with a person ("Christian and I", "Marta and her husband"); the owner of a kinship or
    role noun ("Tasha's cousin"); or a later "she"/"him"/"his" with no other candidate in
    between refers back to it ("Brooklyn starts school and she's so excited"). ``strong``
    asks for the first or the last sign only (for a word that is also a common one: "Hope
    says hi", not "thank God")."""
    dep, head = tok.dep_, tok.head
    if dep in ("nsubj", "nsubjpass") and head.lemma_.lower() in _SPEECH_LEMMAS:
        return True
    if strong:
        return tok.pos_ == "PROPN" and dep in ("nsubj", "nsubjpass") and _referred_back(
            tok, doc, found)
    if dep in ("dobj", "dative") and head.lemma_.lower() in _ADDRESS_LEMMAS:
        return True
    if dep == "poss" and (head.lower_ in _ROLES or canonical_relation(head.lower_)):
        return True
    nxt = doc[tok.i + 1: tok.i + 3]
    if len(nxt) == 2 and nxt[0].lower_ == "and" and nxt[1].lower_ in ("i", "me"):
        return True  # "Christian and I": the parser may make both subjects
    if dep == "conj" and _is_person_token(head, found) or any(
            c.dep_ == "conj" and _is_person_token(c, found) for c in tok.children):
        return True
    if tok.pos_ != "PROPN" and tok.ent_type_ != "PERSON":
        return False  # a capitalised common word opening a sentence: only the signs above
    sent = tok.sent
    if tok.i == sent.start and len(nxt) and nxt[0].text == "," and any(
            t.lower_ in ("you", "u", "please") for t in sent):
        return True  # addressed by name
    if dep == "conj" and head.pos_ == "PROPN" and "PERSON" in (head.ent_type_, tok.ent_type_):
        return True  # "aisha and joe": one of them a person, so both
    if dep not in ("nsubj", "nsubjpass", "conj", "dobj") and not (
            dep == "pobj" and head.lower_ == "with"):
        return False
    return _referred_back(tok, doc, found)


def _referred_back(tok: Any, doc: Any, found: dict[tuple[int, int], PersonMention]) -> bool:
    """Whether a later personal pronoun, with no other candidate nearer, refers to ``tok``."""
    head = tok.head
    for later in doc[tok.i + 1:]:
        if later.lower_ in _PERSONAL and later.pos_ == "PRON":
            if later.head.i == head.i and later.dep_ not in ("nsubj", "nsubjpass", "poss"):
                return False  # "Stripe emailed him": someone else
            return later.dep_ in ("nsubj", "nsubjpass", "poss") or later.head.i != head.i
        if later.ent_type_ in _PLACE_ENTS or later.dep_ == "pobj" \
                and later.head.lower_ in _PLACE_PREPS | {"to"}:
            continue  # "Paris is visiting from Atlanta, she's ...": a place is no candidate
        if later.pos_ == "PROPN" and later.text[:1].isupper() or _is_person_token(
                later, found) and later.lower_ not in ("i", "me", "we", "us", "you"):
            return False  # another candidate stands nearer to the pronoun
    return False


def _evidenced(text: str, doc: Any, found: dict[tuple[int, int], PersonMention],
               known: Container[str]) -> dict[tuple[int, int], PersonMention]:
    """Names the rules dropped (a sentence's first word, a stop word like "Hope" or "June",
    a lower-case chat name, a first name the recogniser calls a place) that the parse shows
    are people (:func:`_person_evidence`)."""
    out = dict(found)
    for tok in doc:
        if tok.pos_ not in _NAME_POS or not tok.is_alpha or len(tok.text) < 2 \
                or tok.tag_ == "VBG" or _adverb_like(text, [(tok.idx, tok.idx + len(tok.text),
                                                            tok.text)]):
            continue
        low = tok.lower_
        if low in _BARE_KIN or low in _ROLES or canonical_relation(low) or low in _PLACE_WORDS:
            continue
        upper = tok.text[:1].isupper() and not tok.text.isupper()
        if not upper and not (tok.pos_ == "PROPN" and text == text.lower()):
            continue  # a lower-case name only in an all-lower-case (chat) text
        if tok.pos_ != "PROPN" and tok.i != tok.sent.start:
            continue
        common = name_key(low) in _STOP and name_key(low) not in known
        if common and (tok.pos_ != "PROPN" or tok.ent_type_ in ("DATE", "TIME")
                       and tok.dep_ not in ("nsubj", "nsubjpass")):
            continue
        if tok.ent_type_ in ("DATE", "TIME", "MONEY", "CARDINAL", "ORDINAL", "QUANTITY",
                             "PERCENT", "NORP", "LANGUAGE") and tok.dep_ != "nsubj":
            continue  # a month or a nationality, unless it does something ("June's flying in")
        start, end = tok.idx, tok.idx + len(tok.text)
        first = tok
        while first.i > 0 and doc[first.i - 1].dep_ == "compound" and doc[first.i - 1].pos_ \
                == "PROPN" and doc[first.i - 1].text[:1].isupper():
            first = doc[first.i - 1]
        if tok.dep_ == "compound" or any(
                c.dep_ == "poss" and c.lower_ in _OWNERS for c in tok.children):
            continue  # "the Figma link", "my Apple Watch": part of a thing's name, or owned
        start = first.idx
        if any(s < end and start < e for s, e in out):
            continue
        if not _person_evidence(tok, doc, out, strong=common):
            continue
        if _common_noun(tok):
            continue  # a common noun the tagger read, opening a sentence: not a name
        words = text[start:end]
        out[(start, end)] = PersonMention(_canonical(words), start, end, "mentioned", None)
    return out


# Kin in the plural, people all the same ("the kids", "Paolo's parents").
_KIN_PLURALS = frozenset({"kids", "children", "parents", "grandparents", "in-laws", "twins",
                          "cousins"})


# Nouns that say a name belongs to an animal or a thing ("Frankie the cat", "the boat Lady
# Grace", "Storm Eowyn", "Victoria station"), and verbs whose object is a work or a product
# ("reading Anna Karenina", "watched Squid Game", "downloaded Notion").
_THING_NOUNS = frozenset(["cat", "dog", "puppy", "pup", "kitten", "kitty", "hamster", "rabbit", "bunny", "parrot", "budgie", "horse", "pony", "tortoise", "turtle", "goldfish", "ferret", "snake", "lizard", "gecko", "pooch", "pet", "boat", "yacht", "ship", "car", "van", "storm", "hurricane", "typhoon", "cyclone", "station", "airport", "hospital", "road", "street", "avenue", "lane", "bridge", "song", "album", "book", "novel", "film", "movie", "show", "series", "play", "musical", "game", "app", "band", "restaurant", "cafe", "bar", "pub", "shop", "store", "hotel", "brand"])
_CONSUME_LEMMAS = frozenset(["read", "reread", "watch", "rewatch", "binge", "stream", "listen", "download", "install", "hum", "sing"])


def _named_thing(doc: Any, m: PersonMention) -> bool:
    """Whether the parse says a name is an animal's or a thing's: in apposition to (or a
    compound of) a noun of :data:`_THING_NOUNS`, or the object of a verb of reading,
    watching or listening."""
    span = doc.char_span(m.start, m.end, alignment_mode="expand")
    if span is None:
        return False
    root = span.root
    near = [*root.children, root.head] if root.dep_ in ("appos", "compound") else [
        *root.children]
    if any(t.lower_ in _THING_NOUNS and t.pos_ == "NOUN" and (
            t.dep_ in ("appos", "compound", "nmod") or t.i == root.head.i) for t in near):
        return True
    head = root.head
    return root.dep_ == "dobj" and head.lemma_.lower() in _CONSUME_LEMMAS \
        and "PERSON" not in {t.ent_type_ for t in span}


def _common_noun(tok: Any) -> bool:
    """A capitalised word the tagger reads as a common noun ("Reference calls for Lena"),
    that is one in the dictionary (lemminflect's), not a PERSON entity and not joined to
    another name ("Faith and Grace are in Charlotte": a name all the same)."""
    return tok.pos_ == "NOUN" and tok.ent_type_ != "PERSON" and tok.dep_ != "conj" \
        and not any(c.dep_ == "conj" for c in tok.children) \
        and dictionary_word(tok.lower_, "NOUN")


def _modifies_a_noun(tok: Any) -> bool:
    """A word that modifies a common noun (or is joined to one that does), not as its
    owner: "Python" in "Go and Python people", "Figma" in "the Figma file"."""
    if tok.dep_ == "conj":
        tok = tok.head
    return tok.dep_ in ("compound", "nmod", "amod") and tok.head.pos_ == "NOUN"


def _common_plural(doc: Any, m: PersonMention) -> bool:
    """A capitalised plural common noun the recogniser does not call a person and that
    says or thinks nothing: "Legs felt heavy" opens a sentence, it names no one."""
    span = doc.char_span(m.start, m.end, alignment_mode="expand")
    if span is None or len(span) != 1:
        return False
    tok = span[0]
    if tok.tag_ != "NNS" or tok.pos_ != "NOUN" or tok.ent_type_ == "PERSON":
        return False
    head = tok.head  # "Mercedes said ...": a name the tagger took for a plural still speaks
    return not (tok.dep_ == "nsubj" and head.lemma_.lower() in _SPEECH_LEMMAS
                and not any(c.dep_ == "acomp" for c in head.children))


def _named_owner(owner: Any, found: dict[tuple[int, int], PersonMention]) -> bool:
    """A possessive owner that is a person found in the text ("Yusuf's teacher")."""
    return owner.dep_ == "poss" and owner.pos_ == "PROPN" and any(
        s <= owner.idx < e for s, e in found)


def _binds_name(text: str, rm: re.Match[str], known: Container[str]) -> bool:
    """Whether the capitalized words next to a relation ("my boss Dana", "Dana, my boss")
    name the person. "Thankfully, my son ..." is an adverb, not an apposition."""
    name = rm.group("name")
    if not _is_named(name, known):
        return False
    if rm.re is _RELATION_RE or name_key(name) in known:
        return True
    return not _adverb_like(text, [(*rm.span("name"), name)])


def _names_in_group(
    text: str, m: re.Match[str], known: Container[str]
) -> Iterable[tuple[int, int, str]]:
    title = m.group("title")
    tokens = [(t.start(), t.end(), t.group()) for t in _TOKEN_RE.finditer(text, *m.span("toks"))]
    if title:
        # A title always introduces a name, even at the start of a sentence.
        if not any(w.lower() in _PLACE_WORDS for _, _, w in tokens) and len(tokens) <= 3:
            yield m.start(), m.end(), _canonical(m.group())
        return
    if any(w.lower() in _PLACE_WORDS for _, _, w in tokens):
        return
    initial = bool(_SENTENCE_END.search(text, 0, m.start()))
    quoted = any(q.start() < m.start() < q.end() for q in _QUOTED.finditer(text))
    run: list[tuple[int, int, str]] = []
    runs: list[tuple[list[tuple[int, int, str]], bool]] = []
    for tok in tokens:
        if name_key(tok[2]) in known or name_key(tok[2]) not in _STOP:
            run.append(tok)
            continue
        if run:
            runs.append((run, initial and run[0] is tokens[0]))
        run = []
    if run:
        runs.append((run, initial and run[0] is tokens[0]))
    for run, at_start in runs:
        if at_start and len(run) > 1 and name_key(" ".join(w for _, _, w in run[1:])) in known:
            run, at_start = run[1:], False  # "Tell Sam ...": an imperative before a known name
        if _accept_initial(text, run, known) and not _adverb_like(text, run):
            pass  # a known name or "<Name> said": a person wherever it stands
        elif (
            at_start
            or quoted
            or len(run) > 3
            or _TITLE_CONTEXT.search(text, 0, run[0][0])
            or _TITLE_BEFORE.search(text, 0, run[0][0])
            or _TITLE_AFTER.match(text, run[-1][1])
        ):
            continue
        start, end = run[0][0], run[-1][1]
        yield start, end, " ".join(w for _, _, w in run)


def _accept_initial(text: str, run: list[tuple[int, int, str]], known: Container[str]) -> bool:
    joined = name_key(" ".join(w for _, _, w in run))
    if joined in known or name_key(run[0][2]) in known:
        return True
    return bool(_NAME_CONTINUATION.match(text[run[-1][1] :]))


def looks_like_name(name: str, known: Iterable[str] = ()) -> bool:
    """Whether a capitalized phrase can name a person: not a stop word, month or place, and
    not a bare title. The claims layer uses it to accept reported-speech holders."""
    words = name.split()
    if not words or not all(_TOKEN_RE.fullmatch(w) for w in words[1:] if w):
        return False
    if words[0].rstrip(".").lower() in _TITLES:
        return len(words) > 1
    if not _TOKEN_RE.fullmatch(words[0]) or any(w.lower() in _PLACE_WORDS for w in words):
        return False
    return _is_named(name, {name_key(k) for k in known})


def _adverb_like(text: str, run: list[tuple[int, int, str]]) -> bool:
    """"Thankfully, ..." and "Winning felt ..." read as an adverb and a gerund, not names."""
    if len(run) != 1:
        return False
    word = run[0][2].lower()
    return word.endswith("ing") or (word.endswith("ly") and text[run[0][1] : run[0][1] + 1] == ",")


def _is_named(name: str, known: Container[str]) -> bool:
    first = name.split()[0]
    return name_key(name) in known or name_key(first) in known or name_key(first) not in _STOP


def _canonical(name: str) -> str:
    """Collapse whitespace and normalize a leading title ("Dr  Patel" → "Dr. Patel")."""
    words = name.split()
    title = _TITLES.get(words[0].rstrip(".").lower()) if len(words) > 1 else None
    return " ".join(([title] + words[1:]) if title else words)


class Either:
    """Membership in either of two collections, without copying the larger one."""

    def __init__(self, a: Container[str], b: Container[str]) -> None:
        self.a, self.b = a, b

    def __contains__(self, item: object) -> bool:
        return item in self.a or item in self.b


def name_key(name: str) -> str:
    return " ".join(name.replace("’", "'").split()).casefold()


def split_title(name: str) -> tuple[str | None, list[str]]:
    words = name_key(name).removesuffix("'s").split()
    if len(words) > 1 and words[0].rstrip(".") in _TITLES:
        return _TITLES[words[0].rstrip(".")], words[1:]
    return None, words


def same_person(a: str, b: str) -> bool:
    """Whether two names in one namespace can be taken as the same person.

    Deliberately conservative (a wrong merge mixes two people's beliefs; a missed one only
    splits evidence). The same person when, after case folding, whitespace collapsing and
    dropping a possessive "'s":

    * the names are equal, ignoring a title ("Dr. Patel" ~ "Patel") — but two *different*
      titles ("Mr. Lee" vs "Mrs. Lee") are different people;
    * one is a single word equal to the first word of the other, a full name ("Gina" ~
      "Gina Rossi"), or, when it carries a title, to the last word ("Dr. Patel" ~ "Anil Patel").

    Nicknames and spelling variants ("Jon" ~ "Jonathan", "Mel" ~ "Melanie") are *not* merged.
    """
    ta, wa = split_title(a)
    tb, wb = split_title(b)
    if not wa or not wb:
        return False
    if ta and tb and ta != tb:
        return False
    if wa == wb:
        return True
    if len(wa) > 1 and len(wb) > 1:
        return False
    (short, t_short), long_ = ((wa, ta), wb) if len(wa) == 1 else ((wb, tb), wa)
    return short[0] == (long_[-1] if t_short else long_[0])


_NAME_PART = re.compile(r"[^\W\d_]+")


def name_parts(name: str) -> frozenset[str]:
    """The lowercased letter runs of a name without its title: "Dr. Sunita Rao" → {sunita,
    rao}; a handle "kenji_t" → {kenji, t}; "Maestro Ivanov" → {maestro, ivanov}."""
    _, words = split_title(name)
    return frozenset(p.lower() for w in words for p in _NAME_PART.findall(w))


_POSSESSIVE = re.compile(r"\w['’]s\s+\w")


def refers_to(asked: str, names: Iterable[tuple[str, str]]) -> str | None:
    """Which of ``names`` ((key, full name) pairs) a name asked in a question means: the first
    :func:`same_person` accepts; else the only one whose name holds every part of the asked
    name ("Brooks" → "Prof. Danielle Brooks", "Kenji" → "kenji_t", "Ivanov" → "Maestro
    Ivanov"). A question names someone already known, so a part that only one person's name
    has is that person; where two names share it, nobody is chosen."""
    pairs = list(names)
    for key, full in pairs:
        if same_person(full, asked):
            return key
    parts = {p for p in name_parts(asked) if len(p) > 1}
    if not parts:
        return None
    found = [(key, full) for key, full in pairs if parts <= name_parts(full)]
    if len(found) > 1:
        # a description through someone else ("Coach Dimitra's physio") is not that
        # someone: where it holds the asked name only as its owner's, the owner is meant
        found = [(key, full) for key, full in found if not _POSSESSIVE.search(full)]
    return found[0][0] if len(found) == 1 else None

