"""`dpkit report --config FILE.toml` with ``plugins``: a user's own algorithm, from a file beside the config,
reported like the seeds — in the worker processes too, where it is loaded again from its file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
from cli_runs import run
from user_files import LEDGER_TOML, TOY_ENTRY, TOY_NAME, dp_accounting_json, dp_sgd, write_toy

from dpkit.algorithms import registry
from dpkit.reports.schemas import schemas

NAME = TOY_NAME
CONFIG = (
    """
seeds = 2
workers = 2
plugins = ["algorithms/toy.py:SPEC"]
"""
    + TOY_ENTRY
)


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "algorithms").mkdir()
    write_toy(tmp_path / "algorithms" / "toy.py")
    yield tmp_path
    if NAME in registry.names():
        registry.unregister(NAME)


@pytest.mark.slow
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
        ('["algorithms/toy.py:NAME"]', "must name an AlgorithmSpec, a non-empty sequence of them, or an agent factory"),
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


# -- the acceptance case: a user's own algorithm module, a ledger file and a DpEvent file in one report --------

USER_CONFIG = (
    'title = "my agent and my DP-SGD"\n'
    + CONFIG
    + """
[[ledger]]
name = "my ledger"
file = "ledger.toml"
delta = 1e-5
epsilon = 0.5

[[ledger]]
name = "dp-sgd"
file = "events/sgd.json"
delta = 1e-5
epsilon = 8.0
users = 60000
"""
)


@pytest.mark.slow
def test_a_user_algorithm_a_ledger_file_and_a_dp_event_render_every_section(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from dpkit.accountant.assessment import assess_ledger
    from dpkit.accountant.interop import load_event
    from dpkit.reports.files import read_ledger_file

    (folder / "ledger.toml").write_text(LEDGER_TOML, encoding="utf-8")
    (folder / "events").mkdir()
    (folder / "events" / "sgd.json").write_text(dp_accounting_json(dp_sgd(200)), encoding="utf-8")
    (folder / "report.toml").write_text(USER_CONFIG, encoding="utf-8")
    code, out, err = run(capsys, "report", "--config", str(folder / "report.toml"), "--out", str(folder / "out"))
    assert code == 0, err
    data = json.loads((folder / "out" / "report.json").read_text(encoding="utf-8"))
    jsonschema.validate(data, schemas()["report.schema.json"])
    (section,) = data["algorithms"]
    assert section["name"] == NAME and section["audit"]["available"] and section["regret"]["paper"]
    mine, sgd = data["ledgers"]
    assert (mine["kind"], sgd["kind"]) == ("ledger file", "event file")
    # the numbers are the accountant's own
    expected = assess_ledger(read_ledger_file(folder / "ledger.toml"), delta=1e-5, epsilon=0.5)
    assert mine["assessment"]["certified_epsilon"] == expected.certified_epsilon
    assert mine["assessment"]["certified_method"] == "exact" and mine["assessment"]["claim_met"] is False
    event = load_event((folder / "events" / "sgd.json").read_text(encoding="utf-8"))
    expected = assess_ledger(event, delta=1e-5, epsilon=8.0, users=60000)
    assert sgd["assessment"]["certified_epsilon"] == expected.certified_epsilon
    assert sgd["assessment"]["delta_informative"] == pytest.approx(1e-5) and sgd["assessment"]["claim_met"] is True
    assert mine["worst_flag"]["code"] == "claim-not-met" and mine["worst_flag"]["severity"] == "error"
    # every section renders, in both files, with its figure; the verdict page lists the algorithm and both files
    html = (folder / "out" / "report.html").read_text(encoding="utf-8")
    md = (folder / "out" / "report.md").read_text(encoding="utf-8")
    for name, anchor in ((NAME, NAME), ("my ledger", "my-ledger"), ("dp-sgd", "dp-sgd")):
        assert f'<h2 id="{anchor}">{name}</h2>' in html and f'href="#{anchor}"' in html
        assert f"## {name}" in md
    for figure in ("figures/my-ledger-epsilon-delta.png", "figures/dp-sgd-epsilon-delta.png"):
        assert (folder / "out" / figure).is_file() and f"]({figure})" in md
    # each file's claim: on the first screen's line, then in the files' table (and the algorithm's paper claim there)
    assert data["summary"][0]["paper_claim"] == "met"
    assert html.count('class="badge violation">not met') == 2 and html.count('class="badge consistent">met') == 3
    assert "Ledger and event files" in html and "Ledger and event files" in md
    assert "my ledger" in out and "dp-sgd" in out  # the terminal summary lists the files too
