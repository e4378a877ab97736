"""The semantic-collapse probe (CogMem): does recall keep *who said what* apart from *what
happened*?

Each item's utterances (a fact, a claim, optionally a counter-claim by another holder) are
ingested into their own namespace; each query is recalled. A query is misattributed when
the top item is of the wrong type or, for a claim, of the wrong holder. The flat baseline
ranks the same utterances by dense cosine with the same embedder. Also reported: the mean
cosine between each fact and its claim (how close the two are for the embedder).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from enfold.bench.datasets import load_collapse


def _label(item: Any, text: str) -> tuple[str, str | None]:
    if text == item.fact.text:
        return "fact", None
    for c in item.claims:
        if text == c.text:
            return "claim", c.holder
    return "other", None


def _wrong(expects: str, holder: str | None, got: tuple[str, str | None]) -> bool:
    kind, who = got
    if kind != expects:
        return True
    return expects == "claim" and (who or "").lower() != (holder or "").lower()


def run(data: Path | None, *, embedder: Any) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    from enfold.memory import Memory
    from enfold.store import open_store
    from enfold.write.planner_local import LocalPlanner

    items = load_collapse(data)
    wrong = {"enfold": 0, "dense": 0}
    n = 0
    cosines: list[float] = []
    for item in items:
        utterances: list[Any] = [item.fact, *item.claims]
        texts = [u.text for u in utterances]
        vecs = np.asarray(embedder.embed(texts), dtype=np.float32)
        cosines.append(float(vecs[0] @ vecs[1]))
        mem = Memory(open_store("memory:"), namespace="probe", embedder=embedder,
                     planners=[LocalPlanner(None, embedder)])
        for i, u in enumerate(utterances):
            mem.add(u.text, source=u.speaker, ts=1_700_000_000 + 3600 * i)
        for q in item.queries:
            n += 1
            pack = mem.recall(q.q, k=3, touch=False)
            top = pack.evidence[0].text if pack.evidence else ""
            wrong["enfold"] += _wrong(q.expects, q.holder, _label(item, top))
            qv = np.asarray(embedder.embed([q.q])[0], dtype=np.float32)
            best = texts[int(np.argmax(vecs @ qv))]
            wrong["dense"] += _wrong(q.expects, q.holder, _label(item, best))
        mem.close()
    systems = {name: {"misattribution_rate": round(w / n, 4) if n else None,
                      "misattributed": w, "queries": n} for name, w in wrong.items()}
    return systems, {"items": len(items),
                     "mean_fact_claim_cosine": round(float(np.mean(cosines)), 4)}
