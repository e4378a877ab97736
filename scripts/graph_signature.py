"""The graph signature of a fixed stream: did a change leave folding's behaviour alone?

    python scripts/graph_signature.py [--events 5000] [--embedder hash]

Ingests the first N events of the perf benchmark's synthetic stream into a fresh store,
runs a full consolidation pass, and prints one digest over every node (kind, type, label,
status, grounding) and every edge (source, type, target), plus counts by kind. Two
checkouts that print the same digest built the same graph from the same words.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
from collections import Counter
from pathlib import Path

from enfold import Memory
from enfold.bench.perf import synthetic_events


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=5000)
    ap.add_argument("--embedder", default="hash")
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--dump", type=Path, default=None,
                    help="also write the signed rows here (to diff two checkouts)")
    args = ap.parse_args()
    events = list(synthetic_events(args.events))
    with tempfile.TemporaryDirectory() as tmp:
        mem = Memory.open(Path(tmp) / "sig.db", embedder=args.embedder, planner="local")
        for i in range(0, len(events), args.batch):
            mem.add_many(events[i:i + args.batch])
        mem.consolidate()
        g = mem.graph()
        # Ids are fresh every run: events are named by their place in the log, the rest
        # by what they say.
        seq_of = {nid: seq for seq, nid in g.events_by_seq.items()}

        def key(nid: str) -> str:
            n = g.nodes.get(nid)
            if n is None:
                return nid
            if n.kind.value == "event":
                return f"event#{seq_of.get(nid)}"
            return f"{n.kind.value}:{n.text}"

        digest = hashlib.sha256()
        kinds: Counter[str] = Counter()
        rows = []
        for n in g.nodes.values():
            kinds[str(n.kind.value)] += 1
            rows.append(json.dumps([key(n.id), n.attrs.get("status"), n.attrs.get("type"),
                                    sorted(key(x) for x in n.grounded_in)], default=str))
        for row in sorted(rows):
            digest.update(row.encode())
        edges = sorted(json.dumps((key(s), t.value, key(d)))
                       for s, outs in g.out.items() for (t, d) in outs)
        for e in edges:
            digest.update(e.encode())
        if args.dump is not None:
            args.dump.write_text("\n".join([*sorted(rows), *edges]) + "\n")
        mem.close()
    print(json.dumps({"events": args.events, "embedder": args.embedder,
                      "nodes": dict(sorted(kinds.items())), "edges": len(edges),
                      "signature": digest.hexdigest()[:32]}))


if __name__ == "__main__":
    main()
