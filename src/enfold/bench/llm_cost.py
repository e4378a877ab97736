"""What LLM folding costs per event, with micro-batching off and on.

:func:`measure` folds a stream of events with the LLM planner against the scripted
OpenAI-compatible server (:mod:`enfold.testing.fake_llm`; real HTTP, no network, no model)
once per batch size and reports calls, prompt tokens and completion tokens per event. The
server plays a simple deterministic "executive" (:func:`scripted_executive`) that reads the
prompt like a model would — it reinforces the nearest concept when the prompt shows a close
one — so every reply is a valid plan and the numbers measure the prompt, not failures.

Token counts are the fake server's (whitespace-separated words, see
:func:`enfold.testing.fake_llm.count_tokens`); ``prompt_chars_per_event / 4`` is the usual
estimate of real tokenizer tokens. Completion numbers reflect the short scripted replies; a
real model writes more. Run ``python -m enfold.bench.llm_cost`` for the bundled demo.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from enfold.embed import HashingEmbedder
from enfold.llm import LLMClient, LLMConfig
from enfold.memory import Memory
from enfold.settings import Settings
from enfold.store import open_store
from enfold.testing.fake_llm import Reply, ScriptedLLMServer
from enfold.write.planner_llm import LLMPlanner
from enfold.write.planner_local import LocalPlanner

__all__ = ["measure", "scripted_executive"]

_NEW_EVENT = re.compile(r'<event handle="(E\d+)"[^>]*>\n(.*?)\n</event>', re.DOTALL)
_NEAREST = re.compile(r"^concepts: (.*)$", re.MULTILINE)
_HIT = re.compile(r"\[(\d+)\] ([0-9.]+)")
_LOOSE = re.compile(r"^(E\d+) event \([^)]*\): (.*)$", re.MULTILINE)
_WORD = re.compile(r"[a-z]+")
_EVIDENCE = re.compile(r"<event>(.*?)</event>", re.DOTALL)
_COMMON = frozenset([
    "about", "after", "again", "before", "being", "could", "every", "first", "their", "there",
    "these", "thing", "think", "those", "three", "today", "tomorrow", "which", "while", "would",
    "still", "since", "maybe", "really", "right", "where", "other",
])


def _content(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) >= 5 and w not in _COMMON}


def _op(op: str, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"op": op, "ref": None, "kind": None, "text": None, "src": None,
                            "dst": None, "type": None, "target": None, "grounded_in": [],
                            "attributes": [], "reasoning": ""}
    return {**base, **fields}


def scripted_executive(body: Mapping[str, Any], *, reinforce_at: float = 0.2) -> Reply:
    """A deterministic stand-in for the model, valid by construction.

    It reads only what the prompt shows, as a model would: it reinforces the nearest concept
    when the prompt shows a close one, and otherwise forms a concept when a new event shares
    two or more content words with at least two events not yet in any concept.
    """
    prompt = str(body["messages"][-1]["content"])
    schema = (body.get("response_format") or {}).get("json_schema") or {}
    if schema.get("name") in ("statement", "label"):  # a fact statement or an intent label
        first = next(iter(_EVIDENCE.findall(prompt)), "what the events report")
        return Reply(json.dumps({schema["name"]: " ".join(first.split()[:12])}))
    new = _NEW_EVENT.findall(prompt)
    loose_part = prompt.split("## Recent events not yet in any concept", 1)[-1]
    loose_part = loose_part.split("\n## ", 1)[0]
    pool = [(h, _content(t)) for h, t in _LOOSE.findall(loose_part)]
    ops: list[dict[str, Any]] = []
    near = _NEAREST.search(prompt)
    hits = [(h, float(c)) for h, c in _HIT.findall(near.group(1))] if near else []
    used: set[str] = set()
    for i, (handle, text) in enumerate(new):
        words = _content(text)
        if i == 0 and hits and hits[0][1] >= reinforce_at:
            # The cosines are the first event's; reinforce its nearest concept.
            ops.append(_op("ADD_EDGE", src=handle, dst=hits[0][0], type="REINFORCES",
                           grounded_in=[handle], reasoning="close to the concept's centroid"))
            continue
        matches = [h for h, w in pool if h not in used and len(words & w) >= 1][:4]
        if len(matches) >= 2:
            members = [*matches, handle]
            common = set(words)
            for h, w in pool:
                if h in matches:
                    common &= w
            shared = sorted(common)
            label = " ".join((shared or sorted(words))[:2]).title() or "Recurring theme"
            ref = f"n{len(ops) + 1}"
            ops.append(_op("ADD_NODE", ref=ref, kind="concept", text=label,
                           grounded_in=members, reasoning="a recurring pattern",
                           attributes=[{"key": "keywords", "value": ", ".join(shared[:5])}]))
            ops += [_op("ADD_EDGE", src=m, dst=ref, type="GROUNDS", grounded_in=[m],
                        reasoning="evidence") for m in members]
            used.update(members)
        else:
            pool.append((handle, words))
    reply = {"reasoning": f"{len(new)} event(s); {len(ops)} operation(s).", "operations": ops}
    return Reply(json.dumps(reply))


def measure(
    events: Sequence[Mapping[str, Any]],
    batch_sizes: Sequence[int],
    *,
    settings: Settings | None = None,
) -> dict[int, dict[str, float]]:
    """Fold ``events`` once per batch size; per-event LLM cost for each.

    Returns ``{batch: {calls_per_event, prompt_tokens_per_event,
    completion_tokens_per_event, prompt_chars_per_event, fallbacks, from_batch,
    stale_shares}}``.
    """
    settings = settings or Settings()
    n = max(1, len(events))
    out: dict[int, dict[str, float]] = {}
    for batch in batch_sizes:
        with ScriptedLLMServer(responder=scripted_executive) as srv:
            client = LLMClient(LLMConfig(base_url=srv.base_url, api_key="bench",
                                         model="scripted"), sleep=lambda _s: None)
            store = open_store("memory:")
            embedder = HashingEmbedder()
            planner = LLMPlanner(client, settings, batch_size=batch, store=store)
            mem = Memory(store, embedder=embedder, settings=settings, auto_fold=False,
                         planners=[planner, LocalPlanner(settings, embedder)])
            try:
                mem.add_many(events, fold=False)
                mem.fold()
                usage = planner.usage(mem.namespace)
                chars = sum(len(str(m.get("content", ""))) for r in srv.chat_requests
                            for m in r.get("messages", []))
            finally:
                client.close()
                mem.close()
        out[batch] = {
            "calls_per_event": usage["calls"] / n,
            "prompt_tokens_per_event": usage["prompt_tokens"] / n,
            "completion_tokens_per_event": usage["completion_tokens"] / n,
            "prompt_chars_per_event": chars / n,
            "fallbacks": float(usage["fallbacks"]),
            "from_batch": float(usage["from_batch"]),
            "stale_shares": float(usage["stale_shares"]),
        }
    return out


def main(argv: Sequence[str] | None = None) -> None:
    """Print the cost table for the bundled demo scenario (batch sizes from argv)."""
    from enfold.demo import demo_events

    sizes = [int(a) for a in (argv if argv is not None else sys.argv[1:])] or [1, 2, 4, 8]
    events = demo_events()
    table = measure(events, sizes)
    print(f"{len(events)} demo events; tokens are the scripted server's word counts")
    print(f"{'batch':>5} {'calls/ev':>9} {'prompt tok/ev':>14} {'compl tok/ev':>13} "
          f"{'~real tok/ev':>13} {'fallbacks':>9} {'stale':>5}")
    for b, row in table.items():
        print(f"{b:>5} {row['calls_per_event']:>9.3f} {row['prompt_tokens_per_event']:>14.0f} "
              f"{row['completion_tokens_per_event']:>13.1f} "
              f"{row['prompt_chars_per_event'] / 4:>13.0f} {row['fallbacks']:>9.0f} "
              f"{row['stale_shares']:>5.0f}")


if __name__ == "__main__":
    main()
