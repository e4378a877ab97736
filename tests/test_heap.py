"""A large working graph kept out of the collector's full passes (enfold.heap), and given
back to it when the graph goes: no graph may outlive its memory in the permanent generation."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from enfold import Memory, heap
from enfold.settings import Settings


@pytest.fixture(autouse=True)
def _nothing_frozen() -> Iterator[None]:
    heap.release()
    gc.unfreeze()
    yield
    heap.release()
    gc.unfreeze()


def _memory(path: Path, freeze_nodes: int, **settings: object) -> Memory:
    mem = Memory.open(path, embedder="hash", planner="local",
                      settings=Settings().with_(gc_freeze_nodes=freeze_nodes, **settings))
    for i in range(12):
        mem.add(f"Call {i} with Dana about the roof repair and the scaffold hire.",
                ts=f"2026-03-{i + 1:02d}T09:00:00", source="me")
    return mem


def test_a_large_graph_is_frozen_and_given_back_on_close(tmp_path: Path) -> None:
    mem = _memory(tmp_path / "m.db", freeze_nodes=10)
    try:
        mem.recall("roof repair")
        assert heap.frozen() > 0
        graph = weakref.ref(mem.graph())
    finally:
        mem.close()
    assert heap.frozen() == 0
    del mem
    gc.collect()
    assert graph() is None  # its reference cycles were collected, not kept frozen


def test_a_small_graph_or_the_setting_off_freezes_nothing(tmp_path: Path) -> None:
    assert Settings().gc_freeze_nodes == 0  # off unless asked for
    for i, freeze in enumerate((0, 10_000)):
        mem = _memory(tmp_path / f"m{i}.db", freeze_nodes=freeze)
        try:
            mem.recall("roof repair")
            assert heap.frozen() == 0
        finally:
            mem.close()


def test_an_evicted_graph_is_given_back_and_the_other_settles_again(tmp_path: Path) -> None:
    mem = _memory(tmp_path / "m.db", freeze_nodes=10, session_max=1)
    try:
        mem.recall("roof repair")
        first = weakref.ref(mem.graph())
        assert heap.frozen() > 0
        mem.add("Dana booked the scaffold for Friday.", namespace="other",
                ts="2026-03-20T09:00:00", source="me")
        mem.recall("scaffold", namespace="other")  # loads "other", evicts the first graph
        gc.collect()
        assert first() is None
        mem.recall("roof repair")  # back again: a new graph, settled anew
        assert heap.frozen() > 0
    finally:
        mem.close()
    assert heap.frozen() == 0


@pytest.mark.parametrize(("nodes", "watching"), [(0, False), (1, True)])
def test_the_collector_is_watched_only_where_the_setting_is_on(nodes: int,
                                                                 watching: bool) -> None:
    """Importing enfold, or a memory with the setting off, puts no callback of ours on the
    process's collections; a memory that may settle does (in a fresh process: the test
    process's other memories may have turned it on)."""
    code = ("import gc\nfrom enfold import Memory, heap\nfrom enfold.settings import Settings\n"
            "m = Memory.open('memory:', embedder='hash', "
            f"settings=Settings(gc_freeze_nodes={nodes}))\n"
            "m.add('a note')\nprint(heap._watch in gc.callbacks)\nm.close()\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert out.stdout.strip().splitlines()[-1] == str(watching)
