"""Benchmark result files: one JSON object per run, plus a Markdown table beside it.

Every ``enfold bench NAME ... --out FILE`` writes one result shape (:func:`build`'s), so
that results can be compared across versions by a script::

    {"benchmark": "perf", "version": "0.1.0", "config": {...},
     "systems": {"enfold": {metric: value, ...}, "bm25": {...}}, "elapsed_s": 12.3}

:func:`write_result` builds that object and, given a path, writes it and ``FILE.md`` (a
table of the systems' scalar metrics, one row per system; metrics keyed by size or
category are flattened to ``metric[key]`` columns). :func:`markdown_table` is the plain
renderer the benchmarks also use for their own summaries.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

_STANDARD = ("benchmark", "version", "config", "systems", "elapsed_s")

__all__ = ["flatten_metrics", "format_cell", "markdown_table", "render_result", "write_result"]


def write_result(
    benchmark: str,
    config: dict[str, Any],
    systems: dict[str, dict[str, Any]],
    elapsed_s: float,
    out: Path | None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Build the result object; with ``out``, write it there and a table to ``.md``.

    ``extra`` adds top-level keys (e.g. collapse's ``mean_fact_claim_cosine``); it may not
    replace the standard ones. Parent directories of ``out`` are created. Returns the object.
    """
    from enfold import __version__

    result: dict[str, Any] = {  # the keys of _STANDARD, in that order
        "benchmark": benchmark,
        "version": __version__,
        "config": config,
        "systems": systems,
        "elapsed_s": round(float(elapsed_s), 3),
    }
    for key, value in (extra or {}).items():
        if key in result:
            raise ValueError(f"extra key {key!r} would replace a standard result field")
        result[key] = value
    if out is not None:
        out = Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", "utf-8")
        out.with_suffix(".md").write_text(render_result(result), "utf-8")
    return result


def flatten_metrics(metrics: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Scalar metrics of one system; nested mappings become ``name[key]`` (lists are dropped).

    ``{"ms_per_event": {"1000": 1.2}}`` → ``{"ms_per_event[1000]": 1.2}``.
    """
    flat: dict[str, Any] = {}
    for key, value in metrics.items():
        name = f"{prefix}[{key}]" if prefix else str(key)
        if isinstance(value, Mapping):
            flat.update(flatten_metrics(value, name))
        elif value is None or isinstance(value, (str, int, float, bool)):
            flat[name] = value
    return flat


def render_result(result: Mapping[str, Any]) -> str:
    """The Markdown companion of a result: a heading, the config and a systems table."""
    systems: Mapping[str, Mapping[str, Any]] = result.get("systems", {})
    rows = [{"system": name, **flatten_metrics(m)} for name, m in systems.items()]
    columns = ["system"]
    for row in rows:
        columns += [c for c in row if c not in columns]
    config = ", ".join(f"{k}={_config_value(v)}" for k, v in result.get("config", {}).items())
    lines = [
        f"# {result.get('benchmark')} (enfold {result.get('version')})",
        "",
        f"Config: {config}" if config else "",
        "",
        f"Elapsed: {format_cell(result.get('elapsed_s'))} s",
        "",
    ]
    # Wide results (one column per metric and size) read better transposed.
    if len(columns) > 8:
        lines.append(markdown_table(
            [{"metric": c, **{str(r["system"]): r.get(c) for r in rows}} for c in columns[1:]],
            ["metric", *[str(r["system"]) for r in rows]],
        ))
    else:
        lines.append(markdown_table(rows, columns))
    extra = {k: v for k, v in result.items() if k not in _STANDARD}
    for key, value in extra.items():
        if isinstance(value, list):
            lines += ["", f"{key.capitalize()}:", *(f"- {v}" for v in value)]
        else:
            lines += ["", f"{key}: {format_cell(value)}"]
    return "\n".join(lines) + "\n"


def markdown_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """A GitHub-flavoured Markdown table of ``rows`` (mappings) over ``columns``.

    Numbers are right-aligned and shown with a sensible precision; a missing value is an
    empty cell; ``|`` inside a value is escaped.
    """
    if not columns:
        raise ValueError("a table needs at least one column")
    numeric = [
        all(isinstance(r.get(c), (int, float)) and not isinstance(r.get(c), bool)
            for r in rows if r.get(c) is not None) and any(r.get(c) is not None for r in rows)
        for c in columns
    ]
    header = "| " + " | ".join(_escape(str(c)) for c in columns) + " |"
    rule = "|" + "|".join("---:" if num else "---" for num in numeric) + "|"
    body = [
        "| " + " | ".join(_escape(format_cell(r.get(c))) for c in columns) + " |" for r in rows
    ]
    return "\n".join([header, rule, *body])


def format_cell(value: Any) -> str:
    """A value as table text: floats to 3 significant decimals (large ones to integers)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        if abs(value) >= 100:
            return f"{value:.1f}"
        if abs(value) >= 1:
            return f"{value:.2f}"
        return f"{value:.3f}"
    return str(value)


def _config_value(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    if isinstance(value, Mapping):
        return json.dumps(value, sort_keys=True)
    return str(value)


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
