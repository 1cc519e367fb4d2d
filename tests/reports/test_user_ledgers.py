"""A [[ledger]] entry's report section: the accountant's own numbers, and a command that prints them again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runs import run_json

from dpkit.accountant import VARIANTS, compare_methods
from dpkit.accountant.assessment import assess_ledger
from dpkit.accountant.events import GaussianEvent, PoissonSampledEvent, SelfComposedEvent, describe
from dpkit.accountant.interop import to_dp_event_json
from dpkit.reports.config import LedgerConfig, parse_config
from dpkit.reports.encoding import to_jsonable
from dpkit.reports.files import read_ledger_file
from dpkit.reports.texts import METHOD_LABELS
from dpkit.reports.user_ledgers import ledger_file_command, ledger_section, method_curves

LEDGER_TOML = (
    '[[release]]\nname = "gram"\nsensitivity = 1.5\nsigma = 30.0\ncount = 20\n'
    '[[release]]\nname = "target"\nsensitivity = 2.0\nsigma = 12.0\ncount = 5\n'
)
#: DP-SGD-like, small enough to be quick: q = 0.01, noise multiplier 1.1, 200 steps.
DPSGD = SelfComposedEvent(PoissonSampledEvent(0.01, GaussianEvent(1.1)), 200)
GRID = (1e-8, 1e-5, 1e-3)


def _entry(folder: Path, **fields: object) -> LedgerConfig:
    config = parse_config({"ledger": [{"name": "x", **fields}]}, str(folder / "report.toml"))
    return config.ledgers[0]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "ledger.toml").write_text(LEDGER_TOML, encoding="utf-8")
    (tmp_path / "sgd.json").write_text(to_dp_event_json(DPSGD), encoding="utf-8")  # a DpEvent: no relation stated
    return tmp_path


def test_a_ledger_files_section_is_the_accountants(folder: Path) -> None:
    entry = _entry(folder, file="ledger.toml", delta=0.01, epsilon=1.0, users=1000)
    section = ledger_section(entry, GRID)
    ledger = read_ledger_file(folder / "ledger.toml")
    assert (section["name"], section["file"], section["kind"], section["relation"]) == (
        "x",
        "ledger.toml",
        "ledger file",
        "add_remove",
    )
    assert section["releases"] == ledger.to_dicts() and section["event"] is None
    assert section["description"] == describe(ledger.event)
    assert section["assessment"] == assess_ledger(ledger, delta=0.01, epsilon=1.0, users=1000).to_dict()
    assert section["assessment"]["certified_method"] == "exact"
    assert [f["code"] for f in section["assessment"]["flags"]] == ["delta-not-informative"]  # 0.01 > 1/1000
    curves = section["epsilon_curves"]
    assert curves["deltas"] == [1e-8, 1e-5, 1e-3, 0.01]  # the grid and the entry's δ, sorted
    assert (curves["sigma"], curves["mu"], curves["rho"]) == ("file", ledger.mu, ledger.rho)
    for i, delta in enumerate(curves["deltas"]):
        cmp = compare_methods(ledger, delta)
        assert {key: curves["methods"][key][i] for key, _, _ in VARIANTS} == cmp.epsilons
        assert {key: r[i] for key, r in curves["refusals"].items() if r[i] is not None} == cmp.refusals
    assert curves["labels"] == {key: METHOD_LABELS[key] for key, _, _ in VARIANTS}
    assert section["command"] == ["ledger", "ledger.toml", "--delta", "0.01"]
    assert json.loads(json.dumps(to_jsonable(section))) == to_jsonable(section)


def test_an_event_files_section_is_the_accountants(folder: Path) -> None:
    entry = _entry(folder, file="sgd.json", delta=1e-5, relation="replace_one")
    event = SelfComposedEvent(PoissonSampledEvent(0.01, GaussianEvent(1.1, relation="replace_one")), 200)
    assert entry.target() == event
    section = ledger_section(entry, GRID)
    assert (section["kind"], section["relation"], section["releases"]) == ("event file", "replace_one", None)
    assert section["event"] == event.to_dict() and section["description"] == describe(event)
    a = section["assessment"]
    assert a == assess_ledger(event, delta=1e-5).to_dict()
    assert a["certified_method"] in ("pld", "rdp") and not a["definitive"] and a["mu"] is None
    curves = section["epsilon_curves"]
    assert curves["mu"] is None and curves["rho"] is None and curves["deltas"] == [1e-8, 1e-5, 1e-3]
    i = curves["deltas"].index(1e-5)
    assert {key: curves["methods"][key][i] for key, _, _ in VARIANTS} == a["epsilons"]
    assert section["command"] == ["methods", "--event", "sgd.json", "--delta", "1e-05", "--relation", "replace_one"]


@pytest.mark.parametrize(
    ("fields", "key"),
    [
        ({"file": "ledger.toml", "delta": 1e-5}, "methods"),
        ({"file": "sgd.json", "delta": 1e-5, "relation": "replace_one"}, "methods"),
    ],
)
def test_the_command_prints_the_same_numbers(
    folder: Path, fields: dict, key: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = _entry(folder, **fields)
    monkeypatch.chdir(folder)  # the command names the file as the config does: relative to its folder
    printed = run_json(capsys, *ledger_file_command(entry))
    assert printed[key] == ledger_section(entry, GRID)["assessment"]["epsilons"]


def test_method_curves_of_a_gaussian_ledger_and_of_an_event() -> None:
    curves = method_curves(DPSGD, [1e-3, 1e-6, 1e-3], relation="add_remove", sigma="file")
    assert curves["deltas"] == [1e-6, 1e-3]
    assert all(len(v) == 2 for v in curves["methods"].values())
    pld, rdp = curves["methods"]["pld"], curves["methods"]["rdp"]
    assert pld[0] >= pld[1] and rdp[0] >= rdp[1]  # ε falls as δ grows
    assert curves["methods"]["exact"] == [None, None] and all(curves["refusals"]["exact"])


def test_a_section_needs_a_ledger_entry() -> None:
    with pytest.raises(TypeError, match="LedgerConfig"):
        ledger_section({"name": "x"}, GRID)  # type: ignore[arg-type]
