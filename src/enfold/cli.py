"""The ``enfold`` command line: thin commands over the library.

Each command parses its arguments, calls one library function and prints. Conventions:
global ``--db`` (env ENFOLD_DB), ``--namespace`` (env ENFOLD_NAMESPACE),
``--json``; errors print one line to stderr and exit 1 for bad input, 2 for usage.
The environment is read here and nowhere in the library.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import click

from enfold.errors import EnfoldError, InputError, NotFound
from enfold.model import NodeKind
from enfold.payloads import INTENT_CATEGORIES


@dataclass
class Ctx:
    db: str
    namespace: str
    as_json: bool
    embedder: str
    planner: str | None
    llm: dict[str, str | None]
    profile: str | None = None
    create: bool = False
    #: The settings of --set, ENFOLD_<NAME>, the config file and the defaults.
    settings: Any = None
    #: Per setting, where its value came from (cli, env, file, default).
    origin: dict[str, str] = field(default_factory=dict)
    #: Show the model-loading bar: on a terminal, without --json or --no-progress.
    progress: bool = False
    _memory: Any = None

    def planner_name(self) -> str:
        return self.planner or ("llm" if self.llm.get("model") else "local")

    def llm_config(self) -> Any:
        """The LLMConfig of --llm-*/ENFOLD_LLM_* (None unless the llm planner is chosen)."""
        if self.planner_name() != "llm":
            return None
        if not self.llm.get("model"):
            raise click.UsageError("--planner llm needs --llm-model (or ENFOLD_LLM_MODEL)")
        from enfold.llm import LLMConfig

        return LLMConfig(base_url=self.llm.get("base_url"), api_key=self.llm.get("api_key"),
                         model=str(self.llm["model"]))

    def store_target(self, target: str | None = None) -> str:
        """``target`` (default ``--db``), refused when it names a SQLite file that does not
        exist and ``--create`` was not given: a typo must not start an empty memory."""
        url = target or self.db
        path = sqlite_path(url)
        if path is not None and not self.create and not Path(path).exists():
            raise NotFound(f"no store at {path}; pass --create to make a new one "
                           f"(enfold --db {path} --create ...)")
        return url

    def open_memory(self, target: str | None = None, *, need_embedder: bool = True) -> Any:
        """A new Memory over ``target`` (default ``--db``) as the global options say."""
        from enfold.embed import MiniLMEmbedder
        from enfold.memory import Memory

        mem = Memory.open(
            self.store_target(target), namespace=self.namespace,
            embedder=self.embedder if need_embedder else None,
            planner=self.planner_name() if need_embedder else None,
            llm=self.llm_config() if need_embedder else None,
            profile=self.profile, settings=self.settings,
        )
        if isinstance(mem.embedder, MiniLMEmbedder):
            mem.embedder.progress = self.progress
        return mem

    def memory(self, *, need_embedder: bool = True) -> Any:
        if self._memory is None:
            self._memory = self.open_memory(need_embedder=need_embedder)
        return self._memory

    def out(self, data: Any, text: str | None = None) -> None:
        if self.as_json:
            click.echo(json.dumps(data, ensure_ascii=False, indent=None, default=str))
        else:
            click.echo(text if text is not None else json.dumps(data, indent=2, default=str))


def sqlite_path(url: str) -> str | None:
    """The file a store URL names when it is a SQLite file (None: memory:, PostgreSQL)."""
    if url in ("memory:", ":memory:") or ("://" in url and not url.startswith("sqlite://")):
        return None
    return url.removeprefix("sqlite:///") or None


def stderr_is_terminal() -> bool:
    """Whether progress bars have a terminal to draw on."""
    return sys.stderr.isatty()


def fail(message: str, code: int = 1) -> NoReturn:
    click.echo(f"enfold: error: {message}", err=True)
    sys.exit(code)


class _Group(click.Group):
    """Translates enfold's errors into one line on stderr and exit code 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except EnfoldError as exc:
            fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        except (BrokenPipeError, KeyboardInterrupt):
            sys.exit(1)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--db", envvar="ENFOLD_DB", default="enfold.db", show_default=True,
              help="Store path or URL (sqlite:///x.db, memory:, postgresql://…).")
@click.option("--namespace", "-n", envvar="ENFOLD_NAMESPACE", default="default",
              show_default=True, help="Namespace (one user, agent or tenant).")
@click.option("--create", is_flag=True,
              help="Create the --db file if it does not exist (without it a missing file is "
                   "an error).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON output.")
@click.option("--embedder", envvar="ENFOLD_EMBEDDER", default="minilm", show_default=True,
              type=click.Choice(["minilm", "hash", "openai"]), help="Embedding model.")
@click.option("--planner", type=click.Choice(["local", "llm"]), default=None,
              help="Folding planner [default: llm when an LLM is configured, else local].")
@click.option("--llm-base-url", envvar="ENFOLD_LLM_BASE_URL", default=None,
              help="OpenAI-compatible base URL (falls back to OPENAI_BASE_URL).")
@click.option("--llm-model", envvar="ENFOLD_LLM_MODEL", default=None, help="LLM model name.")
@click.option("--llm-api-key", envvar="ENFOLD_LLM_API_KEY", default=None,
              help="LLM API key (falls back to OPENAI_API_KEY).")
@click.option("--profile", envvar="ENFOLD_PROFILE", default=None,
              help="Domain profile of the LLM planner: default, software, health or a YAML "
                   "path.")
@click.option("--set", "assignments", multiple=True, metavar="NAME=VALUE",
              help="Change a setting (repeatable; `enfold settings` lists them). Precedence: "
                   "--set, then ENFOLD_<NAME>, then the config file, then the default.")
@click.option("--config", "config_path", default=None,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="TOML file of settings [default: enfold.toml in the working directory, "
                   "if there is one].")
@click.version_option(package_name="enfold")
@click.pass_context
def cli(ctx: click.Context, db: str, namespace: str, create: bool, as_json: bool,
        embedder: str,
        planner: str | None, llm_base_url: str | None, llm_model: str | None,
        llm_api_key: str | None, profile: str | None, assignments: tuple[str, ...],
        config_path: Path | None) -> None:
    """enfold — an always-on, proactive memory engine for AI assistants and agents."""
    settings, origin = _load_settings(assignments, config_path)
    llm = {
        "base_url": llm_base_url or os.environ.get("OPENAI_BASE_URL"),
        "model": llm_model,
        "api_key": llm_api_key or os.environ.get("OPENAI_API_KEY"),
    }
    ctx.obj = Ctx(db, namespace, as_json, embedder, planner, llm, profile, create=create,
                  progress=not as_json and stderr_is_terminal(), settings=settings,
                  origin=origin)
    ctx.call_on_close(lambda: ctx.obj._memory is not None and ctx.obj._memory.close())


def _load_settings(assignments: tuple[str, ...], config_path: Path | None
                   ) -> tuple[Any, dict[str, str]]:
    """The settings of ``--set``, the environment and the config file; a bad one stops the
    command with one line and exit code 2."""
    from enfold.settings import load_settings, parse_assignment, read_config_file

    try:
        cli_values = dict(parse_assignment(a) for a in assignments)
        path = config_path or (Path("enfold.toml") if Path("enfold.toml").is_file() else None)
        file_values = read_config_file(path) if path is not None else {}
        return load_settings(cli=cli_values, env=os.environ, file=file_values)
    except EnfoldError as exc:
        fail(str(exc).splitlines()[0], code=2)


@cli.command()
@click.argument("text")
@click.option("--ts", default=None, help="When it happened (ISO 8601, epoch, or a date).")
@click.option("--source", default=None, help="Speaker or channel.")
@click.option("--kind", default=None, help="Event kind (chat, note, calendar, …).")
@click.option("--id", "external_id", default=None, help="External id (idempotency key).")
@click.option("--meta", default=None, help="JSON object of metadata.")
@click.pass_obj
def add(obj: Ctx, text: str, ts: str | None, source: str | None, kind: str | None,
        external_id: str | None, meta: str | None) -> None:
    """Append one event (and fold it)."""
    meta_obj = _parse_json_arg(meta, "--meta") if meta else None
    event_id = obj.memory().add(text, ts=ts, source=source, kind=kind, id=external_id,
                                meta=meta_obj)
    obj.out({"id": event_id}, event_id)


def _parse_json_arg(value: str, name: str) -> Any:
    try:
        return json.loads(value)
    except ValueError as exc:
        raise InputError(f"{name} is not valid JSON: {exc}") from exc
    except RecursionError as exc:  # nesting past the parser's stack (issue 25, item 12)
        raise InputError(f"{name} is JSON nested too deeply") from exc


@cli.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@click.pass_obj
def ingest(obj: Ctx, file: Path, no_progress: bool) -> None:
    """Ingest a JSON Lines file of events, folding as it goes.

    Every line is validated first; if any is bad, nothing is ingested and the error names
    the line. Re-running is safe (after an interruption too): events already stored are
    recognised by their id, else by text, source and ts, and a line with neither id nor ts
    by its content, the file and its place among the file's identical lines.
    """
    from tqdm import tqdm

    from enfold.ingest import append_new, read_jsonl, validate

    obj.progress = obj.progress and not no_progress
    mem = obj.memory()
    events = validate(read_jsonl(file), mem.settings, origin=str(file.resolve()),
                      name=str(file))
    with tqdm(total=len(events), unit="ev", disable=not obj.progress, file=sys.stderr) as bar:
        report = append_new(mem, events, progress=bar.update)
    stats = mem.stats()
    obj.out({**report.to_dict(), "stats": stats},
            "\n".join([(f"{report.line()} (namespace {stats['namespace']}: "
                        f"{stats['events']} events, {stats['folded']} folded)"),
                       *_llm_lines(stats)]))


@cli.command()
@click.pass_obj
def stats(obj: Ctx) -> None:
    """Counts of events, nodes by kind and edges by type."""
    s = obj.memory(need_embedder=False).stats()
    lines = [f"namespace {s['namespace']}: {s['events']} events, {s['folded']} folded"]
    lines += [f"  {k:<8} {v}" for k, v in sorted(s["nodes"].items())]
    lines += [f"  {k:<14} {v}" for k, v in sorted(s["edges"].items())]
    lines += _llm_lines(s)
    obj.out(s, "\n".join(lines))


def _llm_lines(stats: dict[str, Any]) -> list[str]:
    u = stats.get("llm")
    if not u:
        return []
    return [(f"  llm: {u['calls']} calls, {u['prompt_tokens']} prompt + "
             f"{u['completion_tokens']} completion tokens, {u['failures']} failures, "
             f"{u['fallbacks']} fallbacks to the local planner")]


@cli.command()
@click.option("--incremental", is_flag=True,
              help="Only the region changed since the last pass (default: the whole graph).")
@click.pass_obj
def consolidate(obj: Ctx, incremental: bool) -> None:
    """Run a consolidation pass: merge duplicate concepts, decay edges, link orphans,
    form facts, reconcile claims."""
    report = obj.memory().consolidate(full=not incremental)
    data = report.to_dict()
    done = {k: v for k, v in data.items() if isinstance(v, int) and not isinstance(v, bool)
            and v and k not in ("changed", "region")}
    obj.out(data, f"{'full' if report.full else 'incremental'} pass of {obj.namespace} in "
                  f"{report.duration_s:.2f}s: "
                  + (", ".join(f"{k.replace('_', ' ')} {v}" for k, v in done.items())
                     or "nothing to change"))


@cli.command()
@click.argument("node_id")
@click.pass_obj
def show(obj: Ctx, node_id: str) -> None:
    """A node with its edges and history."""
    mem = obj.memory(need_embedder=False)
    node = mem.get(node_id)
    edges = mem.edges(node.id)
    history = mem.history(node_id)
    data = {"node": node.to_dict(), "edges": [e.to_dict() for e in edges],
            "history": [h.to_dict() for h in history],
            "grounding": [e.to_dict() for e in _grounding(mem, node)]}
    lines = [f"{node.kind.value} {node.id}: {node.text}"]
    for k, v in sorted(node.attrs.items()):
        lines.append(f"  {k}: {v}")
    grounding = _grounding(mem, node)
    if grounding:
        lines.append("  grounded in:")
        lines += [f"    [{_when(e.attrs.get('ts'))}] {e.attrs.get('source') or 'unknown'}: "
                  f"{e.text}  ({e.id})" for e in grounding]
    elif node.grounded_in:  # forgotten since
        lines.append(f"  grounded in: {', '.join(node.grounded_in)}")
    for e in edges:
        lines.append(f"  {e.src} -{e.type.value}({e.weight:.2f})-> {e.dst}")
    for h in history:
        lines.append(f"  [{h.seq}] {h.op} by {h.plan_id}: {h.reasoning}")
    obj.out(data, "\n".join(lines))


def _grounding(mem: Any, node: Any) -> list[Any]:
    """The events a node rests on, oldest first (those forgotten since are left out)."""
    out = []
    for event_id in node.grounded_in:
        try:
            out.append(mem.get(event_id))
        except NotFound:
            continue
    return sorted(out, key=lambda e: e.attrs.get("ts") or 0)


def _when(ts: Any) -> str:
    from enfold.model import format_time

    return "?" if ts is None else format_time(ts, "%Y-%m-%d %H:%M")


@cli.command()
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="File to write (default: stdout).")
@click.pass_obj
def export(obj: Ctx, out: Path | None) -> None:
    """Export a namespace as JSON Lines (round-trips through import)."""
    mem = obj.memory(need_embedder=False)
    if out is None:
        mem.export(sys.stdout)
        return
    with open(out, "w", encoding="utf-8") as fh:
        n = mem.export(fh)
    click.echo(f"wrote {n} records to {out}", err=True)


@cli.command(name="import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.pass_obj
def import_cmd(obj: Ctx, file: Path) -> None:
    """Import an export into an empty namespace."""
    try:
        text = file.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{file}: invalid UTF-8 ({exc.reason})") from exc
    counts = obj.memory(need_embedder=False).import_(text.splitlines())
    obj.out(counts, ", ".join(f"{v} {k}" for k, v in counts.items()))


@cli.command()
@click.argument("event_id", required=False)
@click.option("--all", "wipe_all", is_flag=True, help="Wipe the whole namespace.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation of --all.")
@click.pass_obj
def forget(obj: Ctx, event_id: str | None, wipe_all: bool, yes: bool) -> None:
    """Forget an event and what derives from it, or wipe the namespace with --all."""
    mem = obj.memory(need_embedder=False)
    if wipe_all:
        if event_id:
            raise click.UsageError("give an EVENT_ID or --all, not both")
        if not yes and not click.confirm(f"wipe namespace {obj.namespace!r}?", err=True):
            sys.exit(1)
        mem.wipe()
        obj.out({"wiped": obj.namespace}, f"wiped namespace {obj.namespace}")
        return
    if not event_id:
        raise click.UsageError("give an EVENT_ID (or --all)")
    report = mem.forget(event_id)
    obj.out(report, f"forgot {event_id}: removed {len(report['removed'])}, "
                    f"updated {len(report['updated'])}")


@cli.command()
@click.option("--store", "store", default="memory:", show_default=True,
              help="Where to build the demo memory (a fresh store).")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@click.pass_obj
def demo(obj: Ctx, store: str, no_progress: bool) -> None:
    """Stream the bundled scenario (6 weeks of a founder's life) into a fresh memory and
    show what it folded: concepts, hierarchy, claims, time anchors and intents."""
    from tqdm import tqdm

    from enfold.demo import demo_events, render_summary, summarize

    obj.create = True  # the demo builds a fresh store
    obj.progress = obj.progress and not no_progress
    with obj.open_memory(store) as mem:
        if mem.stats()["events"]:
            raise InputError(f"{store} already holds events; the demo needs a fresh store")
        events = demo_events()
        for ev in tqdm(events, unit="ev", disable=not obj.progress, file=sys.stderr,
                       desc="folding"):
            mem.add_many([ev])
        summary = summarize(mem)
    obj.out(summary, render_summary(summary))


def _render_pack(pack: Any) -> str:
    lines: list[str] = []
    if pack.answer:
        lines += [f"Answer: {pack.answer}", ""]
    if pack.evidence:
        lines.append("Evidence:")
        for e in pack.evidence:
            from enfold.recall.pack import _iso

            when = _iso(e.ts) if e.ts else "?"
            lines.append(f"  [{when}] {e.source or 'unknown'}: {e.text}")
            lines.append(f"      {e.id}  via {' > '.join(e.path)}")
    if pack.claims:
        lines.append("Opinions (someone's view, not fact):")
        for c in pack.claims:
            sup = " (superseded)" if c.attrs.get("superseded_by") else ""
            lines.append(f"  {c.holder} {c.attrs.get('predicate', 'holds')}s: {c.text}{sup}")
    for title, items in (("Facts", pack.facts), ("Concepts", pack.concepts),
                         ("Intents", pack.intents)):
        if items:
            lines.append(f"{title}:")
            lines += [f"  {i.text}  ({i.id})" for i in items]
    if pack.note:
        lines += ["", f"Note: {pack.note}"]
    return "\n".join(lines) if lines else "nothing recalled"


@cli.command()
@click.argument("query")
@click.option("-k", type=click.IntRange(min=1), default=None, help="Items to return [10].")
@click.option("--at", default=None, help="When the question is asked (for 'last week').")
@click.pass_obj
def recall(obj: Ctx, query: str, k: int | None, at: str | None) -> None:
    """Evidence, claims, facts and concepts for a query, with their provenance."""
    pack = obj.memory().recall(query, k=k, at=at)
    obj.out(pack.to_dict(), _render_pack(pack))


@cli.command()
@click.argument("question")
@click.option("-k", type=click.IntRange(min=1), default=None, help="Evidence items [10].")
@click.option("--at", default=None, help="When the question is asked.")
@click.pass_obj
def ask(obj: Ctx, question: str, k: int | None, at: str | None) -> None:
    """Answer from memory with the configured LLM (without one: the evidence, no answer)."""
    pack = obj.memory().answer(question, k=k, at=at)
    obj.out(pack.to_dict(), _render_pack(pack))


def _intent_line(node: Any) -> str:
    from enfold.model import format_time

    a = node.attrs
    due = a.get("due")
    when = f" due {format_time(due)}" if due is not None else ""
    mark = " ✓" if a.get("confirmed") else ""
    return (f"[{a.get('category', '?')}] {node.text}{when}  ({a.get('status', 'pending')}"
            f"{mark}, score {float(a.get('score') or 0):.2f})  {node.id}")


@cli.command()
@click.option("--status", "-s", default="pending", show_default=True,
              type=click.Choice(["pending", "suppressed", "deferred", "resolved", "rejected",
                                 "expired", "open", "all"]),
              help="Which intents to list.")
@click.option("--category", "-c", default=None,
              help=f"Only this category ({', '.join(INTENT_CATEGORIES)}, ...).")
@click.pass_obj
def intents(obj: Ctx, status: str, category: str | None) -> None:
    """Intents that emerged from the memory: deadlines, habits, follow-ups and goals."""
    found = obj.memory().intents(status=status, category=category)
    obj.out([n.to_dict() for n in found],
            "\n".join(_intent_line(n) for n in found) or f"no {status} intents")


@cli.command()
@click.argument("intent_id")
@click.argument("kind", type=click.Choice(["accept", "modify", "defer", "reject"]))
@click.option("--label", default=None, help="The corrected label (with 'modify').")
@click.pass_obj
def feedback(obj: Ctx, intent_id: str, kind: str, label: str | None) -> None:
    """Tell enfold what you think of an intent; it calibrates that category (the
    feedback moves the category's emergence threshold).
    'modify' needs the corrected --label."""
    if kind == "modify" and not (label and label.strip()):
        raise click.UsageError("'modify' needs the corrected label: --label TEXT")
    node = obj.memory().feedback(intent_id, kind, label=label)
    obj.out(node.to_dict(), _intent_line(node))


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--from-end", is_flag=True, help="Skip the lines already in the file.")
@click.option("--interval", type=click.FloatRange(min=0.05), default=1.0, show_default=True,
              help="Seconds between polls of the file.")
@click.option("--once", is_flag=True, help="Fold what the file holds now, then exit.")
@click.pass_obj
def watch(obj: Ctx, file: Path, from_end: bool, interval: float, once: bool) -> None:
    """Tail a JSON Lines file of events, fold each as it arrives and print notifications
    (an intent emerged, a deadline nears, a dormant concept woke up) as they arise."""
    import time

    from enfold.events import event_from_mapping

    mem = obj.memory()

    def show(note: Any) -> None:
        obj.out(note.to_dict(), f"{note.type}: {note.label}"
                + (f" [{note.category}]" if note.category else "") + f"  {note.node_id}")

    mem.subscribe(show)
    pos = file.stat().st_size if from_end and file.exists() else 0
    lineno, buf = 0, b""
    try:
        while True:
            size = file.stat().st_size if file.exists() else 0
            if size < pos:  # truncated or replaced: start over (adds are idempotent)
                pos, buf, lineno = 0, b"", 0
            if size > pos:
                with open(file, "rb") as fh:
                    fh.seek(pos)
                    buf += fh.read(size - pos)
                pos = size
            if once and buf and not buf.endswith(b"\n"):
                buf += b"\n"  # the last line of a finished file needs no newline
            *lines, buf = buf.split(b"\n")
            for raw in lines:
                lineno += 1
                if not raw.strip():
                    continue
                try:
                    data = json.loads(raw.decode("utf-8"))
                    mem.add_many([event_from_mapping(data, mem.settings)])
                except RecursionError:  # nesting past the parser's stack
                    click.echo(f"enfold: {file}: line {lineno}: skipped (JSON nested too "
                               "deeply)", err=True)
                except (ValueError, EnfoldError) as exc:
                    click.echo(f"enfold: {file}: line {lineno}: skipped ({exc})", err=True)
            if once:
                return
            time.sleep(interval)
    except KeyboardInterrupt:
        pass


@cli.command(name="settings")
@click.option("--markdown", is_flag=True, help="Print docs/settings.md (the table of every "
              "setting with its type, default and bounds).")
@click.pass_obj
def settings_cmd(obj: Ctx, markdown: bool) -> None:
    """Every setting: its value and where it came from (--set, env ENFOLD_<NAME>, the
    config file, or the default)."""
    from enfold.settings import settings_markdown, settings_table

    if markdown:
        click.echo(settings_markdown(), nl=False)
        return
    rows = settings_table(obj.settings, obj.origin)
    obj.out(rows, "\n".join(f"{r['name']:<24} {r['value']!s:<10} {r['source']:<8} {r['help']}"
                            for r in rows))


@cli.command(name="schema")
@click.option("--kind", type=click.Choice([k.value for k in NodeKind]), default=None,
              help="Only this node kind's attributes.")
@click.option("--markdown", is_flag=True, help="Print docs/attrs.md (a table of each kind's "
              "attributes with its type and meaning).")
def schema_cmd(kind: str | None, markdown: bool) -> None:
    """The JSON Schema of the node attributes of each kind, generated from the models in
    enfold.payloads."""
    from enfold.payloads import PAYLOADS, payloads_json_schema, payloads_markdown

    if markdown:
        click.echo(payloads_markdown(), nl=False)
        return
    schema = (PAYLOADS[NodeKind(kind)].model_json_schema() if kind is not None
              else payloads_json_schema())
    click.echo(json.dumps(schema, indent=2, ensure_ascii=False))


def _attach_bench() -> None:
    from enfold.bench.cli import bench

    cli.add_command(bench)


_attach_bench()


def _attach_mcp() -> None:
    @cli.command(name="mcp")
    @click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio",
                  show_default=True, help="stdio for a local agent; http for streamable HTTP.")
    @click.option("--host", default="127.0.0.1", show_default=True, help="HTTP bind address.")
    @click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True,
                  help="HTTP port.")
    @click.option("--path", default="/mcp", show_default=True, help="HTTP endpoint path.")
    @click.pass_obj
    def mcp_cmd(obj: Ctx, transport: str, host: str, port: int, path: str) -> None:
        """Serve this memory to agents over MCP: tools remember, recall, list_intents,
        feedback and forget on --namespace (the model loads before it serves)."""
        from enfold import extras

        extras.require("mcp")
        from enfold.mcp_server import run_server

        run_server(obj.memory(), transport=transport, host=host, port=port, path=path)


_attach_mcp()


def _attach_server() -> None:
    """``enfold serve`` and ``enfold keys`` (their imports of FastAPI wait until they run)."""
    from enfold.server.cli import keys, serve

    cli.add_command(serve)
    cli.add_command(keys)


_attach_server()


def _attach_migrate() -> None:
    """``enfold migrate --to URL``: copy the --db store into another, verified."""

    @cli.command("migrate")
    @click.option("--to", "target", required=True,
                  help="The store to copy into (postgresql://…, a SQLite path or URL).")
    @click.option("--only", "only", multiple=True, help="Copy only this namespace (repeat).")
    @click.pass_obj
    def migrate_cmd(obj: Ctx, target: str, only: tuple[str, ...]) -> None:
        """Copy every namespace of the store into another, then verify each table's row
        count and checksum (the target namespaces must be empty)."""
        from enfold.store import open_store
        from enfold.store.migrate import migrate

        src, dst = open_store(obj.store_target()), open_store(target)
        try:
            report = migrate(src, dst, namespaces=only or None)  # type: ignore[arg-type]
        finally:
            src.close()
            dst.close()
        lines = [f"{t.namespace:<20} {t.table:<12} {t.rows:>9}  {t.checksum[:16]}"
                 for t in report.tables]
        lines.append(f"copied and verified {report.rows} rows: {report.source} -> "
                     f"{report.target}")
        obj.out(report.to_dict(), "\n".join(lines))


_attach_migrate()


def main() -> None:
    cli(prog_name="enfold")


if __name__ == "__main__":
    main()
