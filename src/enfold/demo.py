"""The bundled demo scenario and a readable summary of what a memory folded.

The scenario (``enfold/data/demo.jsonl``) is six weeks of a founder's messages, notes and
calendar items: a grant deadline, marathon training, hiring, a move, an app launch, a few
one-off distractors, and opinions of other people. ``enfold demo`` streams it through the
write path; :func:`summarize` reads the resulting graph back.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import TYPE_CHECKING, Any

from enfold.model import EdgeType, NodeKind, format_time

if TYPE_CHECKING:
    from enfold.memory import Memory


def demo_events() -> list[dict[str, Any]]:
    text = (resources.files("enfold") / "data" / "demo.jsonl").read_text("utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def demo_gold() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (resources.files("enfold") / "data" / "demo_gold.json").read_text("utf-8"))
    return data


def _day(ts: float | None) -> str:
    if ts is None:
        return "?"
    return format_time(ts, "%Y-%m-%d")


def summarize(mem: Memory) -> dict[str, Any]:
    """Concepts (with parents and events), claims, time anchors and intents of a memory."""
    g = mem.graph()
    concepts = []
    for cid in g.of_kind(NodeKind.CONCEPT):
        n = g.nodes[cid]
        concepts.append({
            "id": cid, "label": n.text, "events": len(n.grounded_in),
            "parents": [g.nodes[e.dst].text for e in g.out_edges(cid)
                        if e.type is EdgeType.PART_OF],
            "children": [g.nodes[e.src].text for e in g.in_edges(cid)
                         if e.type is EdgeType.PART_OF],
            "keywords": n.attrs.get("keywords", []),
            "example": n.attrs.get("summary", ""),
        })
    concepts.sort(key=lambda c: -c["events"])
    claims = [{
        "holder": g.nodes[c].attrs.get("holder"), "predicate": g.nodes[c].attrs.get("predicate"),
        "text": g.nodes[c].text, "reported": g.nodes[c].attrs.get("reported"),
    } for c in g.of_kind(NodeKind.CLAIM)]
    times = sorted(({
        "value": g.nodes[t].text,
        "expressions": g.nodes[t].attrs.get("expressions", []),
        "events": sum(1 for _ in g.in_edges(t)),
    } for t in g.of_kind(NodeKind.TIME)), key=lambda t: t["value"])
    intents = [{
        "label": g.nodes[i].text, "category": g.nodes[i].attrs.get("category"),
        "status": g.nodes[i].attrs.get("status"), "due": _day(g.nodes[i].attrs.get("due"))
        if g.nodes[i].attrs.get("due") else None,
    } for i in g.of_kind(NodeKind.INTENT)]
    return {"stats": mem.stats(), "concepts": concepts, "claims": claims, "times": times,
            "intents": intents}


def render_summary(s: dict[str, Any]) -> str:
    st = s["stats"]
    derived = sum(st["nodes"].values()) - st["nodes"].get("event", 0)
    kinds = ", ".join(f"{v} {k}" for k, v in sorted(st["nodes"].items()) if k != "event")
    headline = (f"Folded {st['folded']} of {st['events']} events into {derived} derived "
                f"nodes ({kinds}).")
    lines = [headline, "", "Concepts:"]
    for c in s["concepts"]:
        if c["parents"]:
            continue
        lines.append(f"  • {c['label']}  ({c['events']} events)")
        for child in (x for x in s["concepts"] if c["label"] in x["parents"]):
            lines.append(f"      └ {child['label']}  ({child['events']} events)")
    lines += ["", "Claims (who holds what):"]
    for c in s["claims"]:
        tag = "reported" if c["reported"] else "own view"
        lines.append(f"  • {c['holder']} {c['predicate']}s: {c['text']}  [{tag}]")
    lines += ["", "Time anchors:"]
    for t in s["times"]:
        lines.append(f"  • {t['value']:<17} ← {', '.join(repr(e) for e in t['expressions'])}")
    lines += ["", "Intents:"]
    for i in s["intents"]:
        due = f" (due {i['due']})" if i["due"] else ""
        lines.append(f"  • [{i['category']}] {i['label']}{due} — {i['status']}")
    return "\n".join(lines)
