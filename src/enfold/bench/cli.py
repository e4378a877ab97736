"""``enfold bench …``: the benchmark commands (attached to the main CLI)."""

from __future__ import annotations

import json
from pathlib import Path

import click


@click.group()
def bench() -> None:
    """Reproduce the quality and speed tables (results as JSON + Markdown)."""


def _sizes(ctx: click.Context, param: click.Parameter, value: str | None) -> list[int] | None:
    if value is None:
        return None
    try:
        sizes = [int(v.replace("_", "").strip().lower().replace("k", "000"))
                 for v in value.split(",") if v.strip()]
    except ValueError:
        raise click.BadParameter("a comma-separated list of event counts, e.g. 1000,10000")
    if not sizes or any(n < 1 for n in sizes):
        raise click.BadParameter("event counts must be positive")
    return sizes


@bench.command()
@click.option("--sizes", callback=_sizes, default=None, metavar="N,N,…",
              help="Event counts to ingest, each into a fresh store "
                   "[default: 1000,10000,100000; 1000,10000 for minilm].")
@click.option("--embedder", "embedder", type=click.Choice(["hash", "minilm", "both"]),
              default="hash", show_default=True,
              help="Embedder of the run (both: one system per embedder).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the JSON result here and a Markdown table beside it (.md).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the synthetic event stream.")
@click.option("--budget-s", type=click.FloatRange(min=1), default=None, metavar="SECONDS",
              help="Stop a size's ingest after this many seconds and report what was "
                   "measured (marked incomplete) [default: no limit].")
@click.pass_context
def perf(ctx: click.Context, sizes: list[int] | None, embedder: str, out: Path | None,
         seed: int, budget_s: float | None) -> None:
    """Ingest speed, folding cost as the graph grows, embedder share and memory."""
    from enfold.bench.perf import render_summary, run_perf

    embedders = ["hash", "minilm"] if embedder == "both" else [embedder]
    run = run_perf(sizes, embedders, seed=seed, out=out, budget_s=budget_s,
                   progress=lambda msg: click.echo(msg, err=True))
    if getattr(ctx.obj, "as_json", False):
        click.echo(json.dumps(run.result, ensure_ascii=False))
    else:
        click.echo(render_summary(run))
        if out is not None:
            click.echo(f"wrote {out} and {out.with_suffix('.md')}")
