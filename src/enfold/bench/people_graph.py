"""``enfold bench people-graph``: the Person nodes a whole stream folds into, against a gold list.

``bench understand --only people`` reads one message at a time. A user meets people in the
graph a stream leaves: one node per person, named as the stream names them, and nothing else
under the kind — not the channel a message came by ("sms:Teta"), a shop that sent a receipt,
a street or a word at the start of a line. Each gold file (written by hand for one personal
stream of ``tests/data/recall``) lists the stream's author, every person in it with every
form the stream uses for them, and the capitalised things that are not people::

    {"stream": "personal-u", "user": {"name": …, "aliases": ["me", …]},
     "people": [{"name": "Teta", "aliases": ["Teta", "sms:Teta"], "events": […]}, …],
     "not_people": [{"name": "Keystone Property Management", "kind": "organisation"}, …]}

The stream is folded (local planner) and each Person node is matched to the gold by its name
and aliases (case and a possessive "'s" aside; an unnamed relation "Maya's mom" matches the
person the stream names by that kinship word, "Mama", or as "my mom" when Maya is the
author). Reported: ``precision`` — the share of Person nodes that are people (the author
included; a second node of one person counts as a person and is also counted in
``duplicates``); ``recall`` — the share of the gold people (and the author) that have a node;
the wrong nodes split into ``not_people`` (the gold names them as things) and ``unlisted``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Container
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from enfold.model import NodeKind

__all__ = ["Gold", "load_gold", "match", "rates", "score_stream"]

_POSSESSIVE = re.compile(r"(?:'s|’s|'|’)$")
_HANDLE = re.compile(r"^(?P<owner>.+?)(?:'s|’s) (?P<rel>[\w -]+)$")


# Titles the gold lists write, matched apart from the reader's own lists: the yardstick does
# not lean on what it measures.
_TITLE = re.compile(r"^(?:dr|mr|mrs|ms|mx|miss|prof|professor|dra|sr|sra|herr|frau) ")


def _norm(name: str) -> str:
    """A name as matched: case, a possessive and full stops aside ("Dr. Rao" is "dr rao")."""
    return _POSSESSIVE.sub("", " ".join(name.split()).casefold().strip()).replace(".", "")


def _untitled(name: str) -> str:
    """The normalised name without a leading title ("dr rao" → "rao"; a title alone stays)."""
    return _TITLE.sub("", name) or name


@dataclass
class Gold:
    stream: str
    user: set[str]
    people: list[tuple[str, set[str], set[str]]]  # (name, aliases as written, normalised)
    not_people: set[str] = field(default_factory=set)


def load_gold(path: Path) -> Gold:
    data = json.loads(path.read_text(encoding="utf-8"))
    user = {_norm(a) for a in [data["user"].get("name", "me"), *data["user"].get("aliases", [])]}
    people = []
    for p in data["people"]:
        written = {str(a) for a in [p["name"], *p.get("aliases", [])]}
        people.append((str(p["name"]), written, {_norm(a) for a in written}))
    things = {_norm(str(a)) for t in data.get("not_people", [])
              for a in [t["name"], *t.get("aliases", [])]}
    return Gold(str(data["stream"]), user, people, things)


def _relation(word: str) -> str | None:
    from enfold.text.people import bare_kin, canonical_relation

    w = word.strip().lower()
    return bare_kin(w) or canonical_relation(w)


def _candidates(normed: list[str], gold: Gold) -> list[str]:
    """The gold entities ("<user>" or a person's name) a node's normalised names denote, in
    order of preference: its names as written (titles kept), then without titles, then an
    unnamed relation ("me's mom": the author's mother, named "Mama" or "my mom"; "ahmed's
    wife": Ahmed's)."""
    for key in (lambda f: f, _untitled):
        forms = {key(f) for f in normed}
        if forms & {key(u) for u in gold.user}:
            return ["<user>"]
        found = [name for name, _, aliases in gold.people if forms & {key(a) for a in aliases}]
        if found:
            return found
    found = []
    for f in normed:
        m = _HANDLE.match(f)
        if m is None or (rel := _relation(m["rel"])) is None:
            continue
        owner = m["owner"]
        for name, written, aliases in gold.people:
            if owner in gold.user:
                # the author's relation: "my mom", or a kin word used as a name ("Mama")
                if any(a.startswith("my ") and _relation(a[3:]) == rel for a in aliases) or any(
                        w[:1].isupper() and " " not in w and _relation(w) == rel
                        for w in written):
                    found.append(name)
            elif any((h := _HANDLE.match(a)) and h["owner"] == owner
                     and _relation(h["rel"]) == rel for a in aliases):
                found.append(name)
    return found


def match(forms: list[str], gold: Gold, taken: Container[str] = ()) -> str | None:
    """The gold entity a node's names denote, or None; of several (an alias two people
    share), one no earlier node took."""
    found = _candidates([_norm(f) for f in forms if f.strip()], gold)
    return next((f for f in found if f not in taken), found[0] if found else None)


def score_stream(stream_path: Path, gold: Gold, embedder: Any) -> dict[str, Any]:
    """Fold the stream into a fresh in-memory namespace and score its Person nodes."""
    from enfold.memory import Memory

    data = json.loads(stream_path.read_text(encoding="utf-8"))
    mem = Memory.open("memory:", embedder=embedder, planner="local")
    try:
        mem.add_many([{"text": e["text"], "ts": e["ts"], "source": e["source"], "id": e["id"]}
                      for e in data["events"]])
        with mem.reading() as g:
            nodes = [g.nodes[i] for i in g.of_kind(NodeKind.PERSON)]
    finally:
        mem.close()
    matched: dict[str, int] = {}
    wrong_things: list[str] = []
    unlisted: list[str] = []
    for n in sorted(nodes, key=lambda n: n.created_at):
        aliases = n.attrs.get("aliases") or []
        forms = [n.text, *(a for a in aliases if isinstance(a, str))]
        hit = match(forms, gold, matched)
        if hit is None:
            thing = any(_norm(f) in gold.not_people for f in forms)
            (wrong_things if thing else unlisted).append(n.text)
        else:
            matched[hit] = matched.get(hit, 0) + 1
    people = sum(matched.values())
    counts = {"nodes": len(nodes), "people_nodes": people, "gold_people": len(gold.people) + 1,
              "found": len(matched), "duplicates": people - len(matched),
              "not_people": len(wrong_things), "unlisted": len(unlisted)}
    return {**rates(counts), **counts,
            "errors": {"not_people": wrong_things, "unlisted": unlisted,
                       "missed": [name for name, _, _ in gold.people if name not in matched]}}


def rates(counts: dict[str, int]) -> dict[str, float]:
    """Precision, recall and F1 of one stream's counts, or of several streams' summed."""
    p = counts["people_nodes"] / counts["nodes"] if counts["nodes"] else 1.0
    r = counts["found"] / counts["gold_people"]
    return {"precision": round(p, 4), "recall": round(r, 4),
            "f1": round(2 * p * r / (p + r), 4) if p + r else 0.0}
