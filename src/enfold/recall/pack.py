"""The ContextPack: what recall gives back — evidence with provenance, rendered for a prompt."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from enfold.model import format_time


@dataclass(frozen=True)
class Item:
    """One recalled node with the operator path that produced it."""

    id: str
    kind: str
    text: str
    score: float
    path: tuple[str, ...]
    ts: float | None = None
    source: str | None = None
    holder: str | None = None
    external_id: str | None = None
    attrs: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "kind": self.kind, "text": self.text,
                             "score": round(self.score, 6), "path": list(self.path)}
        for key in ("ts", "source", "holder", "external_id"):
            value = getattr(self, key)
            if value is not None:
                d[key] = value
        if self.ts is not None:
            d["date"] = _iso(self.ts)
        if self.attrs:
            d["attrs"] = self.attrs
        return d


def _iso(ts: float) -> str:
    return format_time(ts)


@dataclass
class ContextPack:
    """Ranked evidence events (verbatim), concepts, facts, claims, intents and the steps."""

    query: str
    evidence: list[Item] = field(default_factory=list)
    concepts: list[Item] = field(default_factory=list)
    facts: list[Item] = field(default_factory=list)
    claims: list[Item] = field(default_factory=list)
    intents: list[Item] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)
    answer: str | None = None
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "evidence": [i.to_dict() for i in self.evidence],
            "concepts": [i.to_dict() for i in self.concepts],
            "facts": [i.to_dict() for i in self.facts],
            "claims": [i.to_dict() for i in self.claims],
            "intents": [i.to_dict() for i in self.intents],
            "steps": self.steps,
            "answer": self.answer,
            "note": self.note,
        }

    def render(self, token_budget: int = 2000) -> str:
        """A prompt-ready context within ``token_budget`` (≈ 4 characters a token).

        Claims are marked as their holder's view, never as facts.
        """
        budget = token_budget * 4
        lines: list[str] = []

        def add(line: str) -> bool:
            nonlocal budget
            if len(line) + 1 > budget:
                return False
            lines.append(line)
            budget -= len(line) + 1
            return True

        sections = [
            ("Facts", [f"- {f.text}" for f in self.facts]),
            ("Opinions (attributed; not facts)",
             [f"- {c.holder or 'someone'} holds: {c.text}" for c in self.claims]),
            ("Evidence (verbatim, oldest first)",
             [f"- [{_iso(e.ts) if e.ts else '?'}] {e.source or 'unknown'}: {e.text}"
              for e in sorted(self.evidence, key=lambda e: e.ts or 0.0)]),
            ("Themes", [f"- {c.text}" for c in self.concepts]),
            ("Open intents", [f"- {i.text}" for i in self.intents]),
        ]
        for title, body in sections:
            if not body:
                continue
            if not add(f"{title}:"):
                break
            for line in body:
                if not add(line):
                    break
        return "\n".join(lines)
