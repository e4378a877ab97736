"""A digest of recall's answers on a kept memory, to show a speed change leaves them alone.

    python scripts/recall_digest.py STORE.db [OUT.json]

Opens the SQLite memory (hash embedder, local planner), asks the scale benchmark's 200
questions with ``touch=False`` (the store is not written), and prints the MD5 of every
answer's evidence, concepts, facts, claims and intents: ids, scores to 9 places and operator
paths. Build the store once with ``Memory.add_many(enfold.bench.perf.synthetic_events(n))``
and compare the digest before and after a change.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from enfold import Memory
from enfold.bench.perf import synthetic_stream


def main() -> None:
    questions = synthetic_stream(0).queries(200)
    out = []
    with Memory.open(Path(sys.argv[1]), embedder="hash", planner="local") as mem:
        for q in questions:
            pack = mem.recall(q, k=10, touch=False)
            out.append([[(i.id, round(i.score, 9), list(i.path)) for i in items]
                        for items in (pack.evidence, pack.concepts, pack.facts, pack.claims,
                                      pack.intents)])
    if len(sys.argv) > 2:
        Path(sys.argv[2]).write_text(json.dumps(out), encoding="utf-8")
    print(hashlib.md5(json.dumps(out).encode()).hexdigest())


if __name__ == "__main__":
    main()
