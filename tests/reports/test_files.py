"""The user-written file formats as pydantic models: generated schemas (checked-in copies kept equal), one
error naming the key and value for a bad file of any size or depth, and the schema agreeing with the model."""

from __future__ import annotations

import json
import time
import tomllib
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from dpkit.cli import main
from dpkit.data_files import parse_data, shown
from dpkit.reports.config import load_config, parse_config
from dpkit.reports.files import read_ledger_file
from dpkit.reports.schemas import SCHEMA_FILES, checked_in, dumps, schemas

MINIMAL = {"algorithm": [{"name": "ldp-ucrl-vtr", "episodes": 50, "epsilon": 1.0, "delta": 0.1}]}


@pytest.mark.parametrize("name", list(SCHEMA_FILES))
def test_checked_in_schemas_are_the_generated_ones(name: str) -> None:
    assert checked_in(name) == dumps(schemas()[name]), f"reports/{name} is stale: run python -m dpkit.reports.schemas"


def test_the_default_config_validates_against_its_schema() -> None:
    default = tomllib.loads(resources.files("dpkit.reports").joinpath("default.toml").read_text(encoding="utf-8"))
    jsonschema.validate(default, schemas()["config.schema.json"])
    jsonschema.validate(MINIMAL, schemas()["config.schema.json"])


@pytest.mark.parametrize(
    "bad",
    [
        {**MINIMAL, "colour": "red"},
        {"algorithm": [{**MINIMAL["algorithm"][0], "audit": {"runs": 3}}]},
        {"algorithm": [{**MINIMAL["algorithm"][0], "audit": {"mode": "anytime"}}]},
        {"algorithm": [{**MINIMAL["algorithm"][0], "audit": {"mode": "sequential", "runs": 60}}]},
        {"algorithm": [{**MINIMAL["algorithm"][0], "episodes": 2.5}]},
        {"algorithm": []},
        {**MINIMAL, "deltas": [0.5, 1.0]},
    ],
)
def test_schema_and_model_refuse_the_same_bad_configs(bad: dict) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schemas()["config.schema.json"])
    with pytest.raises(ValueError):
        parse_config(bad)


def _ledger(tmp_path: Path, text: str, suffix: str = ".json") -> Path:
    path = tmp_path / f"ledger{suffix}"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_ledger_file_builds_its_ledger(tmp_path: Path) -> None:
    data = {
        "release": [
            {"name": "gram", "sensitivity": 1.5, "sigma": 30, "count": 20},
            {"name": "t", "sensitivity": 1, "sigma": 12},
        ]
    }
    jsonschema.validate(data, schemas()["ledger.schema.json"])
    ledger = read_ledger_file(_ledger(tmp_path, json.dumps(data)))
    assert [(r.name, r.sensitivity, r.sigma, r.count) for r in ledger.releases] == [
        ("gram", 1.5, 30.0, 20),
        ("t", 1.0, 12.0, 1),
    ]
    toml = '[[release]]\nname = "gram"\nsensitivity = 1.5\nsigma = 30.0\ncount = 20\n'
    assert read_ledger_file(_ledger(tmp_path, toml, ".toml")).releases[0].count == 20


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"release": [{"name": "a", "sensitivity": 1, "sigma": -2}]}',
            "release[0].sigma must be a finite number > 0, got -2",
        ),
        (
            '{"release": [{"name": "a", "sensitivity": true, "sigma": 2}]}',
            "release[0].sensitivity must be a finite number > 0, got True",
        ),
        (
            '{"release": [{"name": "a", "sensitivity": 1, "sigma": 2, "count": 0}]}',
            "release[0].count must be >= 1, got 0",
        ),
        ('{"release": [{"name": "a", "sensitivity": 1, "sigma": 2, "extra": 1}]}', "unknown key 'release[0].extra'"),
        ('{"release": [{"sensitivity": 1, "sigma": 2}]}', "release[0].name is required"),
        ('{"release": []}', "release must not be empty"),
        ('{"releases": []}', "unknown key 'releases'"),
        ("[1, 2]", "must hold one table/object"),
        ("[" * 100_000, "nests lists/tables deeper than"),
        ('{"release": ' * 50_000, "nests lists/tables deeper than"),
        ("{", "is not valid JSON"),
    ],
)
def test_a_bad_ledger_file_is_one_error_naming_key_and_value(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ValueError, match="ledger file") as info:
        read_ledger_file(_ledger(tmp_path, text))
    assert message in str(info.value) and "\n" not in str(info.value)


def test_deep_toml_and_config_are_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    deep_toml = _ledger(tmp_path, "release = " + "[" * 100_000, ".toml")
    assert main(["ledger", str(deep_toml), "--delta", "1e-5"]) == 2
    config = tmp_path / "deep.toml"
    config.write_text("title = " + "[" * 100_000, encoding="utf-8")
    assert main(["report", "--config", str(config), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(line.startswith("error: ") and "deeper than" in line for line in err)
    assert not (tmp_path / "out").exists()


DEEP_TOML = {
    "dotted key": "x" + ".x" * 100_000 + " = 1\n",
    "dotted, quoted, spaced": "x" + ' . "x"' * 100_000 + " = 1\n",
    "table header": "[x" + ".x" * 100_000 + "]\n",
    "inline tables": "release = " + "{a = " * 1_000 + "1" + "}" * 1_000 + "\n",
    "header and key, each shallow": "[a" + ".a" * 40 + "]\nb" + ".b" * 40 + " = 1\n",
}


@pytest.mark.parametrize("text", list(DEEP_TOML.values()), ids=list(DEEP_TOML))
def test_deep_toml_of_every_kind_is_refused_quickly(tmp_path: Path, text: str) -> None:
    """tomllib takes quadratic time over a long dotted key (100 000 parts: minutes): refused before parsing."""
    start = time.perf_counter()
    with pytest.raises(ValueError, match="ledger file .* nests lists/tables deeper than 64 levels"):
        read_ledger_file(_ledger(tmp_path, text, ".toml"))
    config = tmp_path / "deep.toml"
    config.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match="config file .* nests lists/tables deeper than 64 levels"):
        load_config(config)
    assert time.perf_counter() - start < 10


def _depth_of(data: object) -> int:
    return 1 + _depth_of(data[0]) if isinstance(data, list) and data else int(isinstance(data, list))


def test_nesting_up_to_the_limit_is_read() -> None:
    assert parse_data("x" + ".x" * 63 + " = 1\n", toml=True, what="f")  # 64 tables
    assert _depth_of(parse_data("[" * 64 + "]" * 64, toml=False, what="f")) == 64
    many_dots = 'title = "' + "a." * 10_000 + '"\ndeltas = [' + ", ".join(["0.5"] * 1_000) + "]\n"
    assert parse_data(many_dots, toml=True, what="f")["deltas"] == [0.5] * 1_000  # dots in strings and numbers


def test_a_huge_bad_value_is_shown_cut(tmp_path: Path) -> None:
    config = tmp_path / "huge.toml"
    algorithm = '[[algorithm]]\nname = "rlsvi"\nepisodes = 10\ndelta = 1e-5\n'
    config.write_text("title = [" + "1, " * 100_000 + "]\n" + algorithm, encoding="utf-8")
    with pytest.raises(ValueError) as info:
        load_config(config)
    message = str(info.value)
    assert message.startswith(f"config {str(config)!r}: title must be a string, got [1, 1, ")
    assert message.endswith("…") and len(message) < 300 and "\n" not in message
    release = {"name": "x" * 100_000, "sensitivity": 1, "sigma": "s" * 10**5}
    ledger = _ledger(tmp_path, json.dumps({"release": [release]}))
    with pytest.raises(ValueError, match=r"release\[0\]\.sigma must be a finite number > 0, got 'sss") as info:
        read_ledger_file(ledger)
    assert len(str(info.value)) < 300


def test_shown_cuts_a_repr() -> None:
    assert shown("abc") == "'abc'" and shown([1, 2]) == "[1, 2]"
    assert shown("x" * 500) == "'" + "x" * 118 + "…" and len(shown(list(range(10**5)), 50)) == 50
