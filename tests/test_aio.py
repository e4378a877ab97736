"""AsyncMemory: Memory's methods, awaited, each run in a worker thread."""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from enfold import AsyncMemory, Memory, NodeKind
from enfold.aio import SPECIAL
from enfold.embed import HashingEmbedder

_R = TypeVar("_R")


def test_every_public_method_of_memory_has_an_async_twin_with_its_signature() -> None:
    public = {name for name, value in vars(Memory).items()
              if not name.startswith("_") and callable(value)} | {"open"}
    for name in sorted(public - SPECIAL):
        twin = getattr(AsyncMemory, name)
        if name in ("subscribe", "notifications"):  # no I/O: called directly
            assert not inspect.iscoroutinefunction(twin), name
            continue
        assert inspect.iscoroutinefunction(twin), name
        assert inspect.signature(twin) == inspect.signature(getattr(Memory, name)), name
    assert inspect.iscoroutinefunction(AsyncMemory.open)
    assert inspect.iscoroutinefunction(AsyncMemory.read)


def test_calls_run_in_worker_threads_and_answer_as_memory_does(tmp_path: Path) -> None:
    loop_threads: set[int] = set()
    worker_threads: set[int] = set()

    async def to_thread(func: Callable[[], _R]) -> _R:
        def recorded() -> _R:
            worker_threads.add(threading.get_ident())
            return func()
        return await asyncio.to_thread(recorded)

    async def main() -> dict[str, Any]:
        loop_threads.add(threading.get_ident())
        async with await AsyncMemory.open(tmp_path / "m.db", embedder=HashingEmbedder(),
                                          to_thread=to_thread) as m:
            ids = await m.add_many([{"text": "Maya ran 10k by the river", "source": "Maya",
                                     "id": "run-1"},
                                    {"text": "Ben baked sourdough bread", "source": "Ben"}])
            first = await m.add("Maya ran 10k by the river", source="Maya", id="run-1")
            pack = await m.recall("Who ran by the river?", k=5, touch=False)
            node = await m.get(ids[0])
            events = await m.read(lambda g: sorted(g.of_kind(NodeKind.EVENT)))
            stats = await m.stats()
            page = await m.events(limit=10)
            return {"ids": ids, "first": first, "pack": pack, "node": node, "events": events,
                    "stats": stats, "page": page}

    got = asyncio.run(main())
    assert got["first"] == got["ids"][0]  # idempotent, as Memory.add is
    assert got["pack"].evidence[0].id == got["ids"][0]
    assert got["node"].text == "Maya ran 10k by the river"
    assert got["events"] == sorted(got["ids"])
    assert got["stats"]["events"] == 2 and len(got["page"].events) == 2
    assert worker_threads and not worker_threads & loop_threads
    with Memory.open(tmp_path / "m.db", embedder=HashingEmbedder()) as sync:
        pack = sync.recall("Who ran by the river?", k=5, touch=False)
        assert [i.id for i in pack.evidence] == [i.id for i in got["pack"].evidence]


def test_errors_reach_the_awaiting_caller(tmp_path: Path) -> None:
    from enfold import NotFound

    async def main() -> str:
        m = AsyncMemory(Memory.open(tmp_path / "m.db", embedder=HashingEmbedder()))
        try:
            await m.get("nope")
        except NotFound as exc:
            return str(exc)
        finally:
            await m.close()
        return ""

    assert "nope" in asyncio.run(main())
