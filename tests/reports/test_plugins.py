"""`dpkit report --config FILE.toml` with ``plugins``: a user's own algorithm, from a file beside the config,
reported like the seeds — in the worker processes too, where it is loaded again from its file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
from cli_runs import run

from dpkit.algorithms import registry
from dpkit.reports.files import schemas

TOY = Path(__file__).resolve().parents[1] / "support" / "toy_algorithm.py"
NAME = "toy-ldp-rewards"
CONFIG = """
seeds = 2
workers = 2
plugins = ["algorithms/toy.py:SPEC"]

[[algorithm]]
name = "toy-ldp-rewards"
env = "riverswim"
states = 2
episodes = 40
epsilon = 1.0
delta = 1e-5
[algorithm.audit]
runs = 300
"""


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "algorithms").mkdir()
    # the toy as a user's file: its entry point the function itself (the original names its test-support module)
    text = TOY.read_text(encoding="utf-8").replace('entry_point="toy_algorithm:make_agent"', "entry_point=make_agent")
    (tmp_path / "algorithms" / "toy.py").write_text(text, encoding="utf-8")
    yield tmp_path
    if NAME in registry.names():
        registry.unregister(NAME)


def test_a_plugin_from_a_file_is_reported_with_worker_processes(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "report.toml").write_text(CONFIG, encoding="utf-8")
    code, _, err = run(capsys, "report", "--config", str(folder / "report.toml"), "--out", str(folder / "out"))
    assert code == 0, err
    data = json.loads((folder / "out" / "report.json").read_text(encoding="utf-8"))
    (section,) = data["algorithms"]
    assert section["name"] == NAME and section["privacy_model"] == "LDP"
    assert section["audit"]["result"]["verdict"] in ("consistent", "inconclusive")
    assert data["provenance"]["config"]["plugins"] == [f"{(folder / 'algorithms' / 'toy.py').resolve()}:SPEC"]
    assert f"## {NAME}" in (folder / "out" / "report.md").read_text(encoding="utf-8")
    jsonschema.validate(data, schemas()["report.schema.json"])


@pytest.mark.parametrize(
    ("plugins", "message"),
    [
        ('["algorithms/missing.py:SPEC"]', "plugins[0]: no such file"),
        ('["algorithms/toy.py:NOTHING"]', "has no name 'NOTHING'"),
        ('["algorithms/toy.py:NAME"]', "must name an AlgorithmSpec or a non-empty sequence of them"),
        ('"algorithms/toy.py:SPEC"', "plugins must be a list of strings"),
        ('["toy"]', "plugins[0] must be FILE.py:NAME or module:NAME"),
        ('["dpkit.algorithms.rlsvi:REGISTRATIONS"]', "'rlsvi' is already registered by dpkit"),
    ],
)
def test_bad_plugins_are_one_error_line_and_nothing_is_written(
    folder: Path, plugins: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    text = CONFIG.replace('plugins = ["algorithms/toy.py:SPEC"]', f"plugins = {plugins}")
    (folder / "report.toml").write_text(text, encoding="utf-8")
    code, out, err = run(capsys, "report", "--config", str(folder / "report.toml"), "--out", str(folder / "out"))
    assert code == 2 and not (folder / "out").exists()
    assert err.startswith("error: ") and message in err and err.count("\n") == 1, err
