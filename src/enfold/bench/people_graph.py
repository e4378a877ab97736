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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from enfold.model import NodeKind

__all__ = ["Gold", "load_gold", "score_stream"]

_POSSESSIVE = re.compile(r"(?:'s|’s|'|’)$")
_HANDLE = re.compile(r"^(?P<owner>.+?)(?:'s|’s) (?P<rel>[\w -]+)$")


_TITLE = re.compile(r"^(?:dr|mr|mrs|ms|mx|miss|prof|professor|dra|sr|sra|herr|frau)\.?\s+")


def _norm(name: str) -> str:
    """A name as matched: case, a possessive, full stops and a leading title aside ("Dr.
    Rao", "Dr Rao" and "Rao" are one form; a title alone is kept)."""
    low = _POSSESSIVE.sub("", " ".join(name.split()).casefold().strip()).replace(".", "")
    bare = _TITLE.sub("", low)
    return bare if bare else low


@dataclass
class Gold:
    stream: str
    user: set[str]
    people: list[tuple[str, set[str]]]  # (name, normalised aliases)
    not_people: set[str] = field(default_factory=set)


def load_gold(path: Path) -> Gold:
    data = json.loads(path.read_text(encoding="utf-8"))
    user = {_norm(a) for a in [data["user"].get("name", "me"), *data["user"].get("aliases", [])]}
    people = [(str(p["name"]), {_norm(a) for a in [p["name"], *p.get("aliases", [])]})
              for p in data["people"]]
    things = {_norm(t["name"]) for t in data.get("not_people", [])}
    return Gold(str(data["stream"]), user, people, things)


def _relation(word: str) -> str | None:
    from enfold.text.people import bare_kin, canonical_relation

    w = word.strip().lower()
    return bare_kin(w) or canonical_relation(w)


def _match(forms: list[str], gold: Gold) -> str | None:
    """The gold entity (a person's name, or "<user>") a node's names denote, or None."""
    normed = [_norm(f) for f in forms if f.strip()]
    for f in normed:
        if f in gold.user:
            return "<user>"
        for name, aliases in gold.people:
            if f in aliases:
                return name
    for f in normed:  # "me's mom": the author's relation; "ahmed's wife": Ahmed's
        m = _HANDLE.match(f)
        if m is None or (rel := _relation(m["rel"])) is None:
            continue
        owner = m["owner"]
        for name, aliases in gold.people:
            for a in aliases:
                if owner in gold.user:
                    if _relation(a) == rel or (a.startswith("my ") and _relation(a[3:]) == rel):
                        return name
                else:
                    h = _HANDLE.match(a)
                    if h and h["owner"] == owner and _relation(h["rel"]) == rel:
                        return name
    return None


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
        hit = _match(forms, gold)
        if hit is None:
            (wrong_things if _norm(n.text) in gold.not_people else unlisted).append(n.text)
        else:
            matched[hit] = matched.get(hit, 0) + 1
    people = sum(matched.values())
    total = len(gold.people) + 1
    found = len(matched)
    p = people / len(nodes) if nodes else 1.0
    r = found / total
    return {
        "precision": round(p, 4), "recall": round(r, 4),
        "f1": round(2 * p * r / (p + r), 4) if p + r else 0.0,
        "nodes": len(nodes), "people_nodes": people, "gold_people": total,
        "found": found, "duplicates": people - found,
        "not_people": len(wrong_things), "unlisted": len(unlisted),
        "errors": {"not_people": wrong_things, "unlisted": unlisted,
                   "missed": [name for name, _ in gold.people if name not in matched]},
    }
