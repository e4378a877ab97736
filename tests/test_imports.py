"""The packages of enfold depend one way: no import cycle between them, and each imports
only from its own layer or the layers below (:data:`LAYERS`).

A unit is a subpackage (``enfold.write``, ``enfold.store``) or a top-level module
(``enfold.graph``, ``enfold.memory``). Every import counts, at module level or inside a
function (a deferred import is still a dependency), except those under ``if TYPE_CHECKING:``,
which never run.
"""

from __future__ import annotations

import ast
import itertools
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "enfold"


def _unit(module: str) -> str | None:
    """The unit a dotted ``enfold.…`` name belongs to (None: not enfold's)."""
    parts = module.split(".")
    if parts[0] != "enfold" or len(parts) < 2:
        return None
    unit = ".".join(parts[:2])
    path = SRC / unit.replace(".", "/")
    return unit if path.is_dir() or path.with_suffix(".py").is_file() else None


def _type_checking_only(tree: ast.Module) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            ids.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return ids


def import_graph() -> dict[str, dict[str, set[str]]]:
    """unit → {unit it imports → the modules that import it}."""
    graph: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(SRC).with_suffix("").parts).removesuffix(
            ".__init__")
        src = _unit(module)
        if src is None:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_only(tree)
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for name in names:
                dst = _unit(name)
                if dst is not None and dst != src:
                    graph[src][dst].add(module)
    return graph


def find_cycle(graph: dict[str, dict[str, set[str]]]) -> list[str] | None:
    """One cycle of units (its first unit repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(unit: str) -> list[str] | None:
        state[unit] = 1
        stack.append(unit)
        for nxt in sorted(graph.get(unit, {})):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        stack.pop()
        state[unit] = 2
        return None

    for unit in sorted(graph):
        if unit not in state and (found := visit(unit)) is not None:
            return found
    return None


#: enfold's units from the bottom up, as issue 24 lists them: model → graph → store; text
#: annotation; planners; consolidation; intents; recall; io (export/import); interfaces on
#: top. A unit imports from its own layer or a lower one, never a higher one, and every unit
#: is placed (a new module says here what it holds).
LAYERS: list[tuple[str, frozenset[str]]] = [
    ("model and what only describes", frozenset({
        "model", "errors", "settings", "extras", "ann", "heap", "plan", "payloads", "changeset",
        "notify", "embed", "llm"})),
    ("graph", frozenset({"vectors", "graph", "pagerank"})),
    ("store", frozenset({"store", "lease", "timeline", "session"})),
    ("text annotation and the event log's input", frozenset({"text", "events", "ingest"})),
    ("planners", frozenset({"write"})),
    ("consolidation", frozenset({"consolidate"})),
    ("intents", frozenset({"intents"})),
    ("recall", frozenset({"recall"})),
    ("forgetting", frozenset({"forget"})),
    ("io", frozenset({"export"})),
    ("memory", frozenset({"usage", "memory", "aio"})),
    ("interfaces", frozenset({"cli", "server", "mcp_server", "__main__", "bench", "demo",
                              "testing"})),
]


def test_units_import_only_from_their_layer_or_below() -> None:
    level = {f"enfold.{unit}": i for i, (_, units) in enumerate(LAYERS) for unit in units}
    graph = import_graph()
    units = set(graph) | {dst for deps in graph.values() for dst in deps}
    units |= {f"enfold.{p.stem}" for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    units |= {f"enfold.{p.name}" for p in PACKAGE.iterdir()
              if (p / "__init__.py").is_file()}
    assert not units - set(level), f"place these in LAYERS: {sorted(units - set(level))}"
    upward = [f"{src} ({LAYERS[level[src]][0]}) -> {dst} ({LAYERS[level[dst]][0]}) in "
              f"{', '.join(sorted(graph[src][dst]))}"
              for src in sorted(graph) for dst in sorted(graph[src]) if level[dst] > level[src]]
    assert not upward, "imports up the layers:\n  " + "\n  ".join(upward)


def test_no_import_cycle_between_packages() -> None:
    graph = import_graph()
    cycle = find_cycle(graph)
    if cycle is not None:
        steps = [f"{a} -> {b} (in {', '.join(sorted(graph[a][b]))})"
                 for a, b in itertools.pairwise(cycle)]
        raise AssertionError("import cycle:\n  " + "\n  ".join(steps))


def test_the_checker_finds_a_cycle() -> None:
    graph = {"enfold.a": {"enfold.b": {"enfold.a.x"}}, "enfold.b": {"enfold.c": {"y"}},
             "enfold.c": {"enfold.a": {"z"}}}
    cycle = find_cycle(graph)  # type: ignore[arg-type]
    assert cycle == ["enfold.a", "enfold.b", "enfold.c", "enfold.a"]
    assert find_cycle({"enfold.a": {"enfold.b": {"x"}}}) is None  # type: ignore[arg-type]


def test_the_stores_do_not_import_the_graph_or_each_others_privates() -> None:
    graph = import_graph()
    assert "enfold.graph" not in graph["enfold.store"]
    postgres = (PACKAGE / "store" / "postgres.py").read_text(encoding="utf-8")
    assert "enfold.store.sqlite" not in postgres
