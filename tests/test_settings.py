"""One settings source: ``--set``, ``ENFOLD_<NAME>``, a TOML file and the defaults, in that
order; values parsed and range-checked by the table; ``enfold settings`` says where each
value came from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from enfold.cli import cli
from enfold.embed import MiniLMEmbedder, OpenAIEmbedder, make_embedder
from enfold.errors import ConfigError
from enfold.settings import Settings, load_settings, parse_setting, read_config_file


def test_precedence_is_cli_then_env_then_file_then_default() -> None:
    s, origin = load_settings(
        cli={"recall_k": "20"},
        env={"ENFOLD_RECALL_K": "15", "ENFOLD_ALPHA": "0.3", "ENFOLD_DB": "x.db"},
        file={"recall_k": 12, "alpha": 0.1, "knn_k": 4})
    assert (s.recall_k, s.alpha, s.knn_k, s.beta) == (20, 0.3, 4, Settings().beta)
    assert (origin["recall_k"], origin["alpha"], origin["knn_k"], origin["beta"]) == (
        "cli", "env", "file", "default")


@pytest.mark.parametrize(("name", "value", "message"), [
    ("alpha", "1.5", "above its maximum"),
    ("recall_k", "0", "below its minimum"),
    ("recall_k", "ten", "not an integer"),
    ("recall_k", 2.5, "not an integer"),
    ("group_events", "perhaps", "not a boolean"),
    ("decay_delta", "nan", "not a number"),
    ("embedding_dtype", "int8", "not one of"),
    ("no_such_setting", "1", "unknown setting"),
])
def test_bad_values_are_one_line_config_errors(name: str, value: object, message: str
                                               ) -> None:
    with pytest.raises(ConfigError, match=message) as err:
        parse_setting(name, value)
    assert "\n" not in str(err.value)


def test_values_parse_by_type() -> None:
    assert parse_setting("group_events", "yes") is True
    assert parse_setting("group_events", False) is False
    assert parse_setting("decay_delta", 1) == 1.0
    assert parse_setting("embed_model", "text-embedding-3-small") == "text-embedding-3-small"
    assert parse_setting("embed_base_url", "") is None


def test_a_config_file_and_its_settings_table(tmp_path: Path) -> None:
    path = tmp_path / "enfold.toml"
    path.write_text("recall_k = 7\n[settings]\nknn_k = 5\n", encoding="utf-8")
    assert read_config_file(path) == {"recall_k": 7, "knn_k": 5}
    path.write_text("recall_k = \n", encoding="utf-8")
    with pytest.raises(ConfigError, match="config file"):
        read_config_file(path)


def test_the_cli_reports_each_value_and_its_source(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "enfold.toml").write_text("knn_k = 4\nrecall_k = 3\n", encoding="utf-8")
    monkeypatch.setenv("ENFOLD_ALPHA", "0.25")
    r = CliRunner().invoke(cli, ["--json", "--set", "recall_k=9", "--set", "embed_api_key=sk",
                                 "settings"])
    assert r.exit_code == 0, r.output
    rows = {row["name"]: row for row in json.loads(r.output)}
    assert (rows["recall_k"]["value"], rows["recall_k"]["source"]) == (9, "cli")
    assert (rows["alpha"]["value"], rows["alpha"]["source"]) == (0.25, "env")
    assert (rows["knn_k"]["value"], rows["knn_k"]["source"]) == (4, "file")
    assert rows["beta"]["source"] == "default"
    assert rows["embed_api_key"]["value"] == "***"  # a secret is never printed


@pytest.mark.parametrize("args", [["--set", "alpha=2"], ["--set", "alpha"],
                                  ["--set", "nope=1"]])
def test_a_bad_setting_stops_the_cli_with_exit_2(args: list[str]) -> None:
    r = CliRunner().invoke(cli, [*args, "settings"])
    assert r.exit_code == 2
    assert r.output.count("\n") == 1 and r.output.startswith("enfold: error: ")


def test_a_setting_reaches_the_memory(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    r = CliRunner().invoke(cli, ["--db", str(db), "--create", "--embedder", "hash", "--set",
                                 "recall_k=1", "--json", "add", "Maya ran 5 miles."])
    assert r.exit_code == 0, r.output
    CliRunner().invoke(cli, ["--db", str(db), "--embedder", "hash", "add", "Maya swam."])
    r = CliRunner().invoke(cli, ["--db", str(db), "--embedder", "hash", "--set", "recall_k=1",
                                 "--json", "recall", "Maya"])
    assert r.exit_code == 0, r.output
    assert len(json.loads(r.output)["evidence"]) == 1


def test_embed_batch_is_the_embedders_batch_size() -> None:
    emb = make_embedder("minilm", settings=Settings().with_(embed_batch=8))
    assert isinstance(emb, MiniLMEmbedder) and emb.batch_size == 8


def test_the_openai_embedder_takes_its_connection_from_the_settings() -> None:
    s = Settings().with_(embed_base_url="http://127.0.0.1:9/v1", embed_api_key="k",
                         embed_model="m", embed_batch=16)
    emb = make_embedder("openai", settings=s)
    assert isinstance(emb, OpenAIEmbedder)
    assert (emb.base_url, emb.model, emb.batch_size) == ("http://127.0.0.1:9/v1", "m", 16)
    with pytest.raises(ConfigError, match="embed_model"):
        make_embedder("openai", settings=Settings().with_(embed_base_url="http://x/v1"))
