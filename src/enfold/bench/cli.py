"""``enfold bench …``: the benchmark commands (attached to the main CLI)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from enfold.recall.rank import FEATURES, model_json


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
              help="Seed of the synthetic event stream (with --data: of the recall "
                   "queries' sampling).")
@click.option("--budget-s", type=click.FloatRange(min=1), default=None, metavar="SECONDS",
              help="Stop a size's ingest after this many seconds and report what was "
                   "measured (marked incomplete) [default: no limit].")
@click.option("--data", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None,
              help="A LoCoMo file (locomo10.json format): its conversation turns are the "
                   "stream and its questions the recall queries, instead of the synthetic "
                   "stream; sizes stop at the turns it holds.")
@click.option("--history", type=click.IntRange(min=0), default=0, show_default=True,
              metavar="N",
              help="With --data: ingest N synthetic events first, unmeasured, and the "
                   "file's turns a day after them (real turns in a memory with a past).")
@click.option("--scale", is_flag=True, default=False,
              help="Measure recall at scale instead: one memory grown through the sizes "
                   "[default: 1000,10000,100000,1000000; above 100k built without the "
                   "planner], recall p50/p95/p99 beside an exact numpy scan, the HNSW "
                   "index's recall@10, a stream of other wording, and add()/recall() "
                   "with a competing CPU-bound process. --budget-s bounds each direct "
                   "build.")
@click.option("--other-size", type=click.IntRange(min=0), default=100_000,
              show_default=True, metavar="N",
              help="With --scale: events of the other-wording stream (0 = skip it).")
@click.option("--contention/--no-contention", default=True, show_default=True,
              help="With --scale: time add()/recall() with a competing CPU-bound process.")
@click.option("--queries", type=click.IntRange(min=1), default=200, show_default=True,
              metavar="N", help="With --scale: recall queries timed per size.")
@click.pass_context
def perf(ctx: click.Context, sizes: list[int] | None, embedder: str, out: Path | None,
         seed: int, budget_s: float | None, data: Path | None, history: int, scale: bool,
         other_size: int, contention: bool, queries: int) -> None:
    """Ingest speed, folding cost as the graph grows, embedder share and memory; with
    --scale, recall latency from 1k to 1M events."""
    from enfold.bench.perf import render_summary, run_perf

    if scale:
        from enfold.bench.scale import render_scale, run_scale

        if data is not None or embedder != "hash":
            raise click.UsageError("--scale runs the hash embedder on the synthetic stream "
                                   "(no --data or --embedder)")
        srun = run_scale(sizes, seed=seed, budget_s=budget_s, other_size=other_size,
                         contention=contention, queries=queries, out=out,
                         progress=lambda msg: click.echo(msg, err=True))
        if getattr(ctx.obj, "as_json", False):
            click.echo(json.dumps(srun.result, ensure_ascii=False))
        else:
            click.echo(render_scale(srun))
            if out is not None:
                click.echo(f"wrote {out} and {out.with_suffix('.md')}")
        return
    embedders = ["hash", "minilm"] if embedder == "both" else [embedder]
    run = run_perf(sizes, embedders, seed=seed, out=out, budget_s=budget_s,
                   progress=lambda msg: click.echo(msg, err=True), data=data,
                   history=history)
    if getattr(ctx.obj, "as_json", False):
        click.echo(json.dumps(run.result, ensure_ascii=False))
    else:
        click.echo(render_summary(run))
        if out is not None:
            click.echo(f"wrote {out} and {out.with_suffix('.md')}")


@bench.command()
@click.option("--data", type=click.Path(exists=True, path_type=Path), required=True,
              help="A LoCoMo JSON file (locomo10.json format).")
@click.option("--embedder", "embedder_name", type=click.Choice(["hash", "minilm"]),
              default="minilm", show_default=True, help="Embedder (shared by the baselines).")
@click.option("--conversations", type=click.IntRange(min=1), default=None,
              help="Only the first N conversations.")
@click.option("--questions", type=click.IntRange(min=1), default=None,
              help="Only the first N questions of each conversation (smoke runs).")
@click.option("--only", default=None, metavar="ID,ID,…",
              help="Only these conversations (sample ids, e.g. conv-42,conv-43).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the JSON result here and a Markdown table beside it (.md).")
@click.pass_context
def locomo(ctx: click.Context, data: Path, embedder_name: str, conversations: int | None,
           questions: int | None, only: str | None, out: Path | None) -> None:
    """Evidence recall@5/10/20 on LoCoMo, enfold against BM25, dense, hybrid RRF and hybrid
    RRF with the ±2 neighbouring turns of each hit."""
    import time

    from enfold.bench import locomo as lb
    from enfold.bench.report import write_result
    from enfold.embed import make_embedder

    as_json = bool(getattr(ctx.find_root().obj, "as_json", False))
    t0 = time.perf_counter()
    embedder = make_embedder(embedder_name)
    chosen = [c.strip() for c in only.split(",") if c.strip()] if only else None
    systems, details = lb.run(data, embedder=embedder, conversations=conversations,
                              questions=questions, only=chosen,
                              progress=None if as_json else
                              (lambda m: click.echo(m, err=True)))
    config = {"embedder": embedder.name, "planner": "local", "k": list(lb.KS),
              "data": str(data), "conversations": conversations, "questions": questions,
              "only": chosen}
    result = write_result("locomo", config, systems, time.perf_counter() - t0, out,
                          extra=details)
    if as_json:
        click.echo(json.dumps(result))
        return
    for k in lb.KS:
        click.echo(f"recall@{k}")
        for name, metrics in systems.items():
            row = metrics[f"recall@{k}"]
            click.echo(f"  {name:<10} " + "  ".join(
                f"{c}={row[c] if row[c] is not None else '-'}" for c in
                ("overall", *lb.CATEGORIES.values())))
    click.echo(f"enfold recall latency ms: {systems['enfold'].get('latency_ms')}")
    click.echo(f"{details}; elapsed {result['elapsed_s']:.1f} s")


@bench.command()
@click.option("--only", default="people,time,supersede,questions,views",
              show_default=True, metavar="SET,SET,…", help="The sets to run.")
@click.option("--part", type=click.Choice(["tune", "measure", "both"]), default="both",
              show_default=True, help="The tune part, the measure part, or both.")
@click.option("--embedder", "embedder_name", type=click.Choice(["hash", "minilm"]),
              default="minilm", show_default=True, help="Embedder for the supersede and views sets.")
@click.option("--errors", is_flag=True, help="Also list the tune parts' errors.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the JSON result here and a Markdown table beside it (.md).")
@click.pass_context
def understand(ctx: click.Context, only: str, part: str, embedder_name: str, errors: bool,
               out: Path | None) -> None:
    """How the write path reads text it was not tuned on: people, time expressions, view
    questions and changes of mind, on the bundled sets (see enfold.bench.understand)."""
    import time

    from enfold.bench import understand as ub
    from enfold.bench.report import write_result
    from enfold.embed import make_embedder

    t0 = time.perf_counter()
    kinds = [k.strip() for k in only.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in ub.SETS]
    if unknown:
        raise click.UsageError(f"unknown set(s): {', '.join(unknown)}")
    embedder = make_embedder(embedder_name) if {"supersede", "views", "intents"} & set(kinds) \
        else None
    systems: dict[str, dict[str, Any]] = {}
    listed: list[dict[str, Any]] = []
    for kind in kinds:
        for p in ub.SETS[kind]:
            if part != "both" and p.split("-")[0] != part:  # "measure-e": a measure part
                continue
            scores = ub.run(kind, ub.bundled(kind, p), embedder=embedder,
                            settings=getattr(ctx.find_root().obj, "settings", None))
            wrong = scores.pop("errors")
            if p.split("-")[0] == "tune":
                listed += [{"set": f"{kind}/{p}", **e} for e in wrong]
            systems[f"{kind}/{p}"] = scores
    config = {"embedder": embedder.name if embedder else None, "planner": "local",
              "sets": kinds, "part": part}
    result = write_result("understand", config, systems, time.perf_counter() - t0, out)
    if getattr(ctx.find_root().obj, "as_json", False):
        click.echo(json.dumps(result))
        return
    for name, m in systems.items():
        click.echo(f"{name:<20}" + "  ".join(f"{k}={v}" for k, v in m.items()
                                             if not isinstance(v, dict)))
    if errors:
        for e in listed:
            click.echo(json.dumps(e, ensure_ascii=False))
    click.echo(f"elapsed {result['elapsed_s']:.1f} s")


@bench.command("people-graph")
@click.argument("gold", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--streams", type=click.Path(exists=True, file_okay=False, path_type=Path),
              required=True, help="The directory of the streams the gold files name "
                                  "(<stream>.json; e.g. tests/data/recall).")
@click.option("--embedder", "embedder_name", type=click.Choice(["hash", "minilm"]),
              default="minilm", show_default=True)
@click.option("--errors", is_flag=True, help="Also list each stream's wrong and missed people.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the JSON result here and a Markdown table beside it (.md).")
@click.pass_context
def people_graph(ctx: click.Context, gold: tuple[Path, ...], streams: Path, embedder_name: str,
                 errors: bool, out: Path | None) -> None:
    """The Person nodes whole streams fold into, against gold lists of their people (see
    enfold.bench.people_graph)."""
    import time

    from enfold.bench import people_graph as pg
    from enfold.bench.report import write_result
    from enfold.embed import make_embedder

    t0 = time.perf_counter()
    embedder = make_embedder(embedder_name)
    systems: dict[str, dict[str, Any]] = {}
    wrong: dict[str, Any] = {}
    for path in gold:
        g = pg.load_gold(path)
        scores = pg.score_stream(streams / f"{g.stream}.json", g, embedder)
        wrong[g.stream] = scores.pop("errors")
        systems[g.stream] = scores
    if len(systems) > 1:
        keys = ("nodes", "people_nodes", "gold_people", "found", "duplicates", "not_people",
                "unlisted")
        summed = {k: sum(m[k] for m in systems.values()) for k in keys}
        systems["pooled"] = {**pg.rates(summed), **summed}
    config = {"embedder": embedder.name, "planner": "local",
              "gold": [str(p) for p in gold]}
    result = write_result("people-graph", config, systems, time.perf_counter() - t0, out,
                          extra={"errors": wrong})
    if getattr(ctx.find_root().obj, "as_json", False):
        click.echo(json.dumps(result))
        return
    for name, m in systems.items():
        click.echo(f"{name:<12}" + "  ".join(f"{k}={v}" for k, v in m.items()))
    if errors:
        for name, e in wrong.items():
            click.echo(json.dumps({"stream": name, **e}, ensure_ascii=False))
    click.echo(f"elapsed {result['elapsed_s']:.1f} s")


@bench.command("train-subjectivity")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the model here (default: print its summary). The packaged model is "
                   "src/enfold/data/subjectivity_model.json.")
def train_subjectivity(out: Path | None) -> None:
    """Fit the view/account classifier over MiniLM sentence vectors (see
    enfold.bench.train_subjectivity)."""
    from enfold.bench import train_subjectivity as ts
    from enfold.embed import make_embedder

    model = ts.train(make_embedder("minilm"))
    stats = model["statements"]
    click.echo(f"examples {stats['examples']}  threshold {stats['threshold']}  "
               f"cross-validated {stats['cross_validated']}")
    if out is not None:
        ts.save(model, out)
        click.echo(f"wrote {out}")


@bench.command("train-polarity")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the model here (default: print its summary). The packaged model is "
                   "src/enfold/data/polarity_model.json.")
def train_polarity(out: Path | None) -> None:
    """Fit the stance-polarity classifier over MiniLM sentence vectors (see
    enfold.bench.train_polarity)."""
    from enfold.bench import train_polarity as tp
    from enfold.embed import make_embedder

    model = tp.train(make_embedder("minilm"))
    click.echo(f"examples {model['examples']}  threshold {model['threshold']}  "
               f"cross-validated {model['cross_validated']}")
    if out is not None:
        tp.save(model, out)
        click.echo(f"wrote {out}")


@bench.command("train-people")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the model here (default: print its summary). The packaged model is "
                   "src/enfold/data/person_screen.json.")
@click.option("--stream-gold", "stream_gold", multiple=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A gold people list of a personal stream (see `bench people-graph`) to fit "
                   "on as well; its stream is <--streams>/<stream>.json. Repeatable.")
@click.option("--streams", type=click.Path(exists=True, file_okay=False, path_type=Path),
              default=None, help="The directory of the streams the gold lists name.")
def train_people(out: Path | None, stream_gold: tuple[Path, ...], streams: Path | None
                 ) -> None:
    """Fit the person screen over the parse of each mention the people rules find (see
    enfold.bench.train_people); prints each tune set's numbers when left out."""
    from enfold.bench import train_people as tp
    from enfold.bench.people_graph import load_gold

    if stream_gold and streams is None:
        raise click.UsageError("--stream-gold needs --streams")
    fitted = {}
    for path in stream_gold:
        name = load_gold(path).stream
        fitted[name] = (Path(streams or ".") / f"{name}.json", path)
    model = tp.train(fitted)
    click.echo(f"examples {model['examples']}  threshold {model['threshold']}")
    for part, row in model["left_out"].items():
        click.echo(f"  {part} left out: rules {row['rules']}  screened {row['screened']}")
    if out is not None:
        tp.save(model, out)
        click.echo(f"wrote {out}")


@bench.command("train-recall")
@click.option("--locomo", "locomo_file", type=click.Path(exists=True, dir_okay=False,
                                                         path_type=Path), default=None,
              help="A LoCoMo JSON file (locomo10.json format).")
@click.option("--fit-conversations", default="conv-26,conv-30,conv-41", show_default=True,
              metavar="ID,ID,…", help="LoCoMo conversations the weights are fitted on.")
@click.option("--measure-conversations", default="conv-42,conv-43", show_default=True,
              metavar="ID,ID,…", help="LoCoMo conversations only measured.")
@click.option("--fit-personal", "fit_personal", multiple=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A personal stream (JSON) to fit on; repeatable.")
@click.option("--measure-personal", "measure_personal", multiple=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A personal stream (JSON) only measured; repeatable.")
@click.option("--embedder", "embedder_name", type=click.Choice(["hash", "minilm"]),
              default="minilm", show_default=True)
@click.option("--fit-collapse", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              multiple=True, help="A collapse probe file (bench collapse format) fitted on; "
                                  "repeatable.")
@click.option("--measure-collapse", type=click.Path(exists=True, dir_okay=False,
                                                   path_type=Path),
              multiple=True, help="A collapse probe file only measured; repeatable.")
@click.option("--method", type=click.Choice(["trees", "linear"]), default="trees",
              show_default=True, help="LambdaMART trees (needs LightGBM) or linear weights.")
@click.option("--l2", type=click.FloatRange(min=0.0), default=1.0, show_default=True,
              help="L2 regularization of the linear weights.")
@click.option("--ablate", multiple=True, metavar="FEATURE",
              type=click.Choice(list(FEATURES)),
              help="Also fit without this feature (repeatable) and print both.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the model here (default: print it). The packaged model is "
                   "src/enfold/data/recall_model.json.")
@click.pass_context
def train_recall(ctx: click.Context, locomo_file: Path | None, fit_conversations: str,
                 measure_conversations: str, fit_personal: tuple[Path, ...],
                 measure_personal: tuple[Path, ...], fit_collapse: tuple[Path, ...],
                 measure_collapse: tuple[Path, ...], embedder_name: str, method: str,
                 l2: float,
                 ablate: tuple[str, ...], out: Path | None) -> None:
    """Fit recall's ranking weights on labelled questions and measure them on held-out ones
    (see enfold.bench.train_recall)."""
    from enfold.bench import train_recall as tr
    from enfold.embed import make_embedder

    def ids(text: str) -> list[str]:
        return [c.strip() for c in text.split(",") if c.strip()]

    fit = [*(tr.locomo_streams(locomo_file, ids(fit_conversations)) if locomo_file else []),
           *(tr.personal_stream(p) for p in fit_personal),
           *(s for p in fit_collapse for s in tr.collapse_streams(p))]
    measure = [*(tr.locomo_streams(locomo_file, ids(measure_conversations))
                 if locomo_file else []), *(tr.personal_stream(p) for p in measure_personal),
               *(s for p in measure_collapse for s in tr.collapse_streams(p))]
    if not fit:
        raise click.UsageError("nothing to fit on: give --locomo, --fit-personal and/or "
                               "--fit-collapse")
    model, report = tr.train(fit, measure, embedder=make_embedder(embedder_name), l2=l2,
                             progress=lambda m: click.echo(m, err=True), ablate=ablate,
                             method=method)
    text = model_json(model)
    if out is None:
        click.echo(text)
    else:
        out.write_text(text, encoding="utf-8")
    # The numbers by data set and category (on stderr when the model goes to stdout).
    reports = [("", report)]
    if ablate:
        reports.append((f"without {','.join(ablate)}: ", report["without"]))
    for label, rows in reports:
        for part in ("fit", "measure"):
            for key, row in rows[part].items():
                click.echo(f"{label}{part:<8}{key:<28}" + " ".join(
                    f"{k}={v}" for k, v in row.items()), err=out is None)
    if out is not None:
        click.echo(f"wrote {out}")


@bench.command()
@click.option("--batch", "batches", default="1,2,4,8", show_default=True,
              help="Micro-batch sizes to compare (events folded per LLM call).")
@click.option("--data", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Events as JSON Lines [default: the bundled demo scenario].")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the JSON result here and a Markdown table beside it (.md).")
@click.pass_context
def llm(ctx: click.Context, batches: str, data: Path | None, out: Path | None) -> None:
    """LLM calls and prompt/completion tokens per event, micro-batching off and on, against
    the scripted OpenAI-compatible server (real HTTP, no model: the prompt's cost)."""
    import time

    from enfold.bench.llm_cost import measure
    from enfold.bench.report import write_result
    from enfold.demo import demo_events
    from enfold.errors import EnfoldError
    from enfold.events import event_from_mapping
    from enfold.settings import Settings

    try:
        sizes = [int(b) for b in batches.split(",") if b.strip()]
    except ValueError:
        raise click.BadParameter(f"not a list of integers: {batches!r}",
                                 param_hint="--batch") from None
    if not sizes or min(sizes) < 1:
        raise click.BadParameter("batch sizes must be ≥ 1", param_hint="--batch")
    if data is None:
        events = demo_events()
    else:
        from enfold.ingest import read_jsonl

        events = []
        for lineno, obj in read_jsonl(data):
            try:
                event_from_mapping(obj, Settings())  # refuse a bad line before any folding
            except EnfoldError as exc:
                raise click.ClickException(f"{data}: line {lineno}: {exc}") from None
            events.append(obj)
    t0 = time.perf_counter()
    table = measure(events, sizes)
    systems = {f"batch {b}": {k: round(v, 3) for k, v in row.items()} for b, row in table.items()}
    config = {"planner": "llm", "server": "scripted (enfold.testing.fake_llm)",
              "embedder": "hash", "events": len(events),
              "data": str(data) if data else "bundled demo",
              "tokens": "the scripted server's word counts; prompt_chars_per_event / 4 "
                        "estimates real tokenizer tokens"}
    result = write_result("llm", config, systems, time.perf_counter() - t0, out)
    if getattr(ctx.find_root().obj, "as_json", False):
        click.echo(json.dumps(result))
        return
    click.echo(f"{len(events)} events; tokens are the scripted server's word counts")
    for name, row in systems.items():
        click.echo(f"{name:<8} calls/event {row['calls_per_event']:.3f}  prompt tokens/event "
                   f"{row['prompt_tokens_per_event']:.0f} (~{row['prompt_chars_per_event'] / 4:.0f}"
                   f" real)  completion tokens/event {row['completion_tokens_per_event']:.1f}  "
                   f"fallbacks {row['fallbacks']:.0f}")


@bench.command()
@click.option("--data", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Collapse-probe JSON Lines [default: the bundled 42 items].")
@click.option("--embedder", "embedder_name", type=click.Choice(["hash", "minilm"]),
              default="minilm", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the JSON result here and a Markdown table beside it (.md).")
@click.pass_context
def collapse(ctx: click.Context, data: Path | None, embedder_name: str, out: Path | None
             ) -> None:
    """Semantic-collapse probe: misattribution rate of enfold against flat dense retrieval."""
    import time

    from enfold.bench import collapse as cb
    from enfold.bench.report import write_result
    from enfold.embed import make_embedder

    t0 = time.perf_counter()
    embedder = make_embedder(embedder_name)
    systems, details = cb.run(data, embedder=embedder)
    config = {"embedder": embedder.name, "planner": "local",
              "data": str(data) if data else "bundled"}
    result = write_result("collapse", config, systems, time.perf_counter() - t0, out,
                          extra=details)
    if getattr(ctx.find_root().obj, "as_json", False):
        click.echo(json.dumps(result))
        return
    for name, m in systems.items():
        click.echo(f"{name:<7} misattributed {m['misattributed']}/{m['queries']} "
                   f"({m['misattribution_rate']:.1%})")
    click.echo(f"mean fact-claim cosine {details['mean_fact_claim_cosine']}; "
               f"elapsed {result['elapsed_s']:.1f} s")


@bench.command("calibrate")
@click.option("--embedder", "embedder_names", multiple=True, type=click.Choice(["hash", "minilm"]),
              default=("hash", "minilm"), show_default=True, help="Embedders to calibrate.")
@click.option("--write/--no-write", default=False, show_default=True,
              help="Record the result in the package's calibration.json.")
def calibrate_cmd(embedder_names: tuple[str, ...], write: bool) -> None:
    """Calibrate the local planner's thresholds per embedder on the labelled scenarios."""
    from importlib import resources

    from enfold.bench import calibrate as cal
    from enfold.embed import make_embedder

    results = {}
    for name in embedder_names:
        embedder = make_embedder(name)
        results[embedder.name] = cal.calibrate(embedder)
        click.echo(f"{embedder.name}: {json.dumps(results[embedder.name]['thresholds'])}")
    if write:
        path = Path(str(resources.files("enfold") / "data" / "calibration.json"))
        cal.record(results, path)
        click.echo(f"wrote {path}")


@bench.command()
@click.option("--scenarios", type=click.Path(exists=True, path_type=Path), default=None,
              help="A CogEval scenario .json or a directory of them [default: --set].")
@click.option("--set", "part", type=click.Choice(["bundled", "tune", "measure", "train"]),
              default="bundled", show_default=True,
              help="Packaged scenarios: the bundled six, issue 20's tuning or measuring part, "
              "or the eight written to fit models on.")
@click.option("--embedder", "embedder_name", type=click.Choice(["hash", "minilm"]),
              default="minilm", show_default=True,
              help="Embedder of the ingest and of the Gold F1 matching.")
@click.option("--threshold", type=click.FloatRange(0.0, 1.0), default=0.5, show_default=True,
              help="Cosine a system concept's label needs to match a gold concept's label "
              "(Gold F1, the reference protocol: MiniLM, label against label).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the JSON result here and a Markdown table beside it (.md).")
@click.pass_context
def cogeval(ctx: click.Context, scenarios: Path | None, part: str, embedder_name: str,
            threshold: float, out: Path | None) -> None:
    """CogEval-Bench: concept emergence, topology and compression against the gold graphs."""
    import time

    from enfold.bench import cogeval as cb
    from enfold.bench.report import write_result
    from enfold.embed import make_embedder

    as_json = bool(getattr(ctx.find_root().obj, "as_json", False))
    t0 = time.perf_counter()
    embedder = make_embedder(embedder_name)
    settings = getattr(ctx.find_root().obj, "settings", None)
    systems, details = cb.run(scenarios, embedder=embedder, threshold=threshold, part=part,
                              progress=None if as_json else
                              (lambda m: click.echo(m, err=True)), settings=settings)
    config = {"embedder": embedder.name, "planner": "local", "threshold": threshold,
              "scenarios": str(scenarios) if scenarios else part}
    result = write_result("cogeval", config, systems, time.perf_counter() - t0, out,
                          extra=details)
    if as_json:
        click.echo(json.dumps(result))
        return
    click.echo(cb.render_summary(result, threshold))
    if out is not None:
        click.echo(f"wrote {out} and {out.with_suffix('.md')}")


@bench.command()
@click.option("--data", type=click.Path(exists=True, path_type=Path), required=True,
              help="A ToMi .txt file (its .trace beside it), a directory of *.txt splits, or "
              "a Hi-ToM .json file (detected by its content).")
@click.option("--embedder", "embedder_name", type=click.Choice(["hash", "minilm"]),
              default="hash", show_default=True,
              help="Embedder of the ingest (the answers do not depend on it).")
@click.option("--stories", type=click.IntRange(min=1), default=None,
              help="Only the first N stories of each split.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the JSON result here and a Markdown table beside it (.md).")
@click.pass_context
def tomi(ctx: click.Context, data: Path, embedder_name: str, stories: int | None,
         out: Path | None) -> None:
    """ToMi (or Hi-ToM) belief tracking answered from the graph's participation records."""
    import time

    from enfold.bench import tomi_graph as tg
    from enfold.bench.hitom import is_hitom
    from enfold.bench.report import write_result
    from enfold.embed import make_embedder

    as_json = bool(getattr(ctx.find_root().obj, "as_json", False))
    t0 = time.perf_counter()
    embedder = make_embedder(embedder_name)
    if is_hitom(data):
        from enfold.bench import hitom_graph as hg

        systems, details = hg.run(data, embedder=embedder, progress=None if as_json else
                                  (lambda m: click.echo(m, err=True)))
        hitom_config: dict[str, Any] = {
            "embedder": embedder.name, "planner": "local", "data": str(data),
            "format": "hitom",
            "semantics": {"enfold": "strict", "enfold_generator": "generator"}}
        result = write_result("hitom", hitom_config, systems, time.perf_counter() - t0, out,
                              extra=details)
        if as_json:
            click.echo(json.dumps(result))
            return
        click.echo(hg.render_summary(systems, details))
        click.echo(f"elapsed {result['elapsed_s']:.1f} s")
        if out is not None:
            click.echo(f"wrote {out} and {out.with_suffix('.md')}")
        return
    systems, details = tg.run(data, embedder=embedder, stories=stories,
                              progress=None if as_json else
                              (lambda m: click.echo(m, err=True)))
    config = {"embedder": embedder.name, "planner": "local", "data": str(data),
              "stories": stories, "semantics": {"enfold": "tomi", "enfold_strict": "strict"}}
    result = write_result("tomi", config, systems, time.perf_counter() - t0, out,
                          extra=details)
    if as_json:
        click.echo(json.dumps(result))
        return
    for name, m in systems.items():
        click.echo(f"{name:<14} accuracy {m['accuracy']}  ({m['n']} questions)")
        click.echo("  " + "  ".join(f"{k}={v}" for k, v in m["by_kind"].items()))
    click.echo(f"CogniFold (paper): {details['published']['CogniFold ToMi accuracy']}")
    click.echo(f"graph records differing from the story's: {details['records_mismatched']} "
               f"of {details['stories']} stories")
    click.echo(f"note: {details['note']}")
    click.echo(f"elapsed {result['elapsed_s']:.1f} s")
    if out is not None:
        click.echo(f"wrote {out} and {out.with_suffix('.md')}")


@bench.command()
@click.option("--pg-url", default=None, help="A PostgreSQL server to create the bench "
              "databases on [default: start a throwaway cluster].")
@click.option("--workers", "counts", default="1,2,3", show_default=True,
              help="Numbers of server processes to run, each against a fresh database.")
@click.option("--namespaces", type=click.IntRange(min=1), default=6, show_default=True)
@click.option("--per-namespace", type=click.IntRange(min=1), default=100, show_default=True)
@click.option("--batch", type=click.IntRange(min=1), default=10, show_default=True,
              help="Events per POST.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the JSON result here.")
@click.pass_context
def workers(ctx: click.Context, pg_url: str | None, counts: str, namespaces: int,
            per_namespace: int, batch: int, out: Path | None) -> None:
    """Accepted and folded events/s with 1, 2, 3 server processes on one PostgreSQL
    database, beside one server on a SQLite file."""
    import tempfile
    from contextlib import ExitStack

    from enfold.bench.multiworker import throughput
    from enfold.testing.pgcluster import PGCluster, create_database

    ns = [int(c) for c in counts.split(",") if c.strip()]
    rows = []
    with ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        if pg_url is None:
            pg_url = stack.enter_context(PGCluster()).url()
        kw = {"namespaces": namespaces, "per_namespace": per_namespace, "batch": batch}
        rows.append(throughput(str(Path(tmp) / "bench.db"), 1, **kw))  # type: ignore[arg-type]
        click.echo(f"sqlite      1 worker : {rows[-1]}", err=True)
        for n in ns:
            rows.append(throughput(create_database(pg_url, f"enfold_bench_{n}"), n,
                                   **kw))  # type: ignore[arg-type]
            click.echo(f"postgresql  {n} workers: {rows[-1]}", err=True)
    if out is not None:
        out.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    lines = ["store       workers  accepted/s  folded/s"] + [
        f"{r['store']:<11} {r['workers']:>7}  {r['accepted_per_s']:>10}  {r['folded_per_s']:>8}"
        for r in rows]
    if getattr(ctx.obj, "as_json", False):
        click.echo(json.dumps(rows))
    else:
        click.echo("\n".join(lines))


@bench.command()
@click.option("--namespaces", "namespaces", type=click.IntRange(min=1), default=1_000,
              show_default=True, metavar="N", help="Namespaces, folded one after the other.")
@click.option("--events", type=click.IntRange(min=1), default=200, show_default=True,
              metavar="M", help="Events per namespace.")
@click.option("--budget-mb", type=click.FloatRange(min=0), default=256.0, show_default=True,
              help="The memory's session_budget_mb (0 = no limit).")
@click.option("--max-sessions", type=click.IntRange(min=0), default=0, show_default=True,
              help="The memory's session_max (0 = no limit).")
@click.option("--check", type=click.IntRange(min=0), default=20, show_default=True,
              metavar="N", help="Namespaces whose recall is compared before eviction and "
                                "after reopening.")
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The SQLite file to fill [default: a temporary one].")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the JSON result here and a Markdown table beside it (.md).")
@click.pass_context
def namespaces(ctx: click.Context, namespaces: int, events: int, budget_mb: float,
               max_sessions: int, check: int, db: Path | None, out: Path | None) -> None:
    """N namespaces × M events in one process on one SQLite file: RSS against the session
    budget, sessions resident, evictions, ingest and recall latency, and the same recall
    from a namespace evicted and reopened."""
    import time

    from enfold.bench.namespaces import render_namespaces, run_namespaces
    from enfold.bench.report import write_result

    as_json = bool(getattr(ctx.find_root().obj, "as_json", False))
    t0 = time.perf_counter()
    metrics = run_namespaces(namespaces, events, budget_mb=budget_mb,
                             max_sessions=max_sessions, check=check, db=db,
                             progress=None if as_json else (lambda m: click.echo(m, err=True)))
    config = {"namespaces": namespaces, "events": events, "budget_mb": budget_mb,
              "max_sessions": max_sessions, "check": check, "embedder": "hash",
              "planner": "local", "store": "sqlite"}
    result = write_result("namespaces", config, {"enfold": metrics},
                          time.perf_counter() - t0, out)
    if as_json:
        click.echo(json.dumps(result))
        return
    click.echo(render_namespaces(metrics))
    click.echo(json.dumps(metrics, indent=2))
    if out is not None:
        click.echo(f"wrote {out} and {out.with_suffix('.md')}")
