"""The command line: JSON equals the API, bad input is one `error:` line with exit code 2."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runs import run, run_json

from dpkit import accountant


def test_calibrate_json_matches_api(capsys: pytest.CaptureFixture[str]) -> None:
    obj = run_json(capsys, "calibrate", "--epsilon", "1", "--delta", "1e-5", "--compositions", "1000")
    cal = accountant.calibrate_sigma(1.0, 1e-5, compositions=1000)
    assert obj["sigma"] == cal.sigma and obj["epsilon"] == cal.epsilon
    assert obj["delta"] == 1e-5 and obj["method"] == "exact"
    assert obj["epsilon"] <= 1.0


def test_calibrate_reference_point(capsys: pytest.CaptureFixture[str]) -> None:
    obj = run_json(capsys, "calibrate", "--epsilon", "1", "--delta", "1e-5")
    assert round(obj["sigma"], 4) == 3.7306


@pytest.mark.parametrize(
    "method,conversion",
    [
        ("exact", None),
        ("rdp", None),
        ("rdp", "mironov"),
        ("zcdp", None),
        ("zcdp", "rdp-optimal"),
        ("zcdp", "gaussian-exact"),
        ("classic", None),
    ],
)
def test_epsilon_and_delta_json_match_api(
    capsys: pytest.CaptureFixture[str], method: str, conversion: str | None
) -> None:
    extra = ["--method", method] + (["--conversion", conversion] if conversion else [])
    obj = run_json(capsys, "epsilon", "--sigma", "40", "--delta", "1e-5", "--sensitivity", "2", "-k", "7", *extra)
    g = accountant.gaussian_epsilon(40.0, 1e-5, sensitivity=2.0, compositions=7, method=method, conversion=conversion)
    assert obj["epsilon"] == g.epsilon
    obj = run_json(capsys, "delta", "--sigma", "40", "--epsilon", "0.9", "--sensitivity", "2", "-k", "7", *extra)
    assert (
        obj["delta"]
        == accountant.gaussian_delta(
            40.0, 0.9, sensitivity=2.0, compositions=7, method=method, conversion=conversion
        ).delta
    )


def test_methods_json_lists_every_variant_in_order(capsys: pytest.CaptureFixture[str]) -> None:
    obj = run_json(capsys, "methods", "--sigma", "118", "--delta", "1e-5", "-k", "1000")
    eps = obj["methods"]
    assert set(eps) == {k for k, _, _ in accountant.VARIANTS}
    assert eps["exact"] <= eps["pld"] <= eps["rdp"] <= eps["rdp-mironov"] <= eps["zcdp"]
    assert eps["exact"] <= eps["zcdp-rdp-optimal"] <= eps["zcdp"]
    ref = accountant.compare_methods(accountant.Ledger.homogeneous(1.0, 118.0, compositions=1000), 1e-5)
    assert eps == ref.epsilons


def test_methods_reports_classic_refusal_as_null(capsys: pytest.CaptureFixture[str]) -> None:
    obj = run_json(capsys, "methods", "--sigma", "2", "--delta", "1e-5")
    assert obj["methods"]["classic"] is None
    assert "epsilon < 1" in obj["refusals"]["classic"]


def test_convert_commands_match_api(capsys: pytest.CaptureFixture[str]) -> None:
    for conv in accountant.ZCDP_CONVERSIONS:
        obj = run_json(capsys, "convert", "zcdp", "--rho", "0.5", "--delta", "1e-6", "--method", conv)
        assert obj["epsilon"] == accountant.zcdp_epsilon(0.5, 1e-6, conversion=conv)
    obj = run_json(
        capsys,
        "convert",
        "rdp",
        "--orders",
        "1.5,2,4,8,16",
        "--values",
        "0.1,0.2,0.4,0.8,1.6",
        "--delta",
        "1e-5",
        "--method",
        "mironov",
    )
    ref = accountant.rdp_epsilon([1.5, 2, 4, 8, 16], [0.1, 0.2, 0.4, 0.8, 1.6], 1e-5, conversion="mironov")
    assert (obj["epsilon"], obj["order"]) == (ref.epsilon, ref.order)
    obj = run_json(capsys, "convert", "gdp", "--mu", "0.7", "--delta", "1e-5")
    assert obj["epsilon"] == accountant.gdp_epsilon(0.7, 1e-5)
    obj = run_json(capsys, "convert", "gdp", "--mu", "0.7", "--epsilon", "1.5")
    assert obj["delta"] == accountant.gdp_delta(0.7, 1.5)
    obj = run_json(capsys, "convert", "budget", "--epsilon", "1", "--delta", "1e-5")
    assert obj["mu"] == accountant.gdp_mu(1.0, 1e-5)
    assert obj["rho"]["bun-steinke"] <= obj["rho"]["rdp-optimal"] <= obj["rho"]["gaussian-exact"]


def test_ledger_file_toml_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    toml = tmp_path / "l.toml"
    toml.write_text(
        '[[release]]\nname = "gram"\nsensitivity = 1.5\nsigma = 30.0\ncount = 20\n'
        '[[release]]\nname = "target"\nsensitivity = 1.0\nsigma = 12.0\n'
    )
    obj = run_json(capsys, "ledger", str(toml), "--delta", "1e-6")
    ledger = accountant.Ledger.from_dicts(
        [
            {"name": "gram", "sensitivity": 1.5, "sigma": 30.0, "count": 20},
            {"name": "target", "sensitivity": 1.0, "sigma": 12.0},
        ]
    )
    assert obj["methods"] == accountant.compare_methods(ledger, 1e-6).epsilons
    assert obj["dp_event"]["class_name"] == "ComposedDpEvent"
    dobj = run_json(capsys, "ledger", str(toml), "--epsilon", "0.8")
    assert dobj["deltas"] == accountant.compare_deltas(ledger, 0.8).deltas
    d = dobj["deltas"]
    assert d["exact"] <= d["pld"] <= d["rdp"] <= d["rdp-mironov"] <= d["zcdp"]
    # Below PLD's resolution (~1e-15 of truncated tail mass) its δ stays at that floor: sound, loose.
    d = run_json(capsys, "ledger", str(toml), "--epsilon", "2")["deltas"]
    assert d["exact"] < 1e-17 and 1e-16 < d["pld"] < 1e-14 and d["exact"] <= d["rdp"] <= d["zcdp"]
    code, out, err = run(capsys, "ledger", str(toml))
    assert code == 2 and out == "" and "exactly one" in err
    js = tmp_path / "l.json"
    js.write_text(json.dumps({"release": ledger.to_dicts()}))
    assert run_json(capsys, "ledger", str(js), "--delta", "1e-6")["methods"] == obj["methods"]


def test_budgets_json(capsys: pytest.CaptureFixture[str]) -> None:
    obj = run_json(capsys, "budgets", "--epsilons", "0.5,2", "--compositions", "1,100", "--no-pld")
    assert len(obj["rows"]) == 4
    for row in obj["rows"]:
        ref = accountant.calibrate_sigma(row["epsilon"], 1e-5, compositions=row["compositions"]).sigma
        assert row["sigma"]["exact"] == ref
        assert row["sigma"]["exact"] <= row["sigma"]["rdp"] <= row["sigma"]["zcdp"]
    assert obj["rows"][1]["sigma"]["classic"] is None  # ε = 2 > 1 at K = 1: refused


def test_human_output_is_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "methods", "--sigma", "5", "--delta", "1e-5")
    assert code == 0 and "rdp (mironov)" in out and "exact" in out


BAD = [
    (["calibrate", "--epsilon", "-1", "--delta", "1e-5"], "epsilon"),
    (["calibrate", "--epsilon", "0", "--delta", "1e-5", "--method", "rdp"], "epsilon"),
    (["calibrate", "--epsilon", "1", "--delta", "1.5"], "delta"),
    (["budgets", "--epsilons", "1,-1"], "epsilons[1]"),
    (["calibrate", "--epsilon", "nan", "--delta", "1e-5"], "epsilon"),
    (["calibrate", "--epsilon", "1", "--delta", "1e-5", "--sensitivity", "0"], "sensitivity"),
    (["calibrate", "--epsilon", "1", "--delta", "1e-5", "-k", "0"], "compositions"),
    (["calibrate", "--epsilon", "1", "--delta", "1e-5", "-k", "2.5"], "compositions"),
    (["calibrate", "--epsilon", "1", "--delta", "1e-5", "--method", "classic"], "epsilon < 1"),
    (["calibrate", "--epsilon", "abc", "--delta", "1e-5"], "--epsilon"),
    (["calibrate", "--delta", "1e-5"], "--epsilon"),
    (["epsilon", "--sigma", "0", "--delta", "1e-5"], "sigma"),
    (["epsilon", "--sigma", "-inf", "--delta", "1e-5"], "sigma"),
    (["epsilon", "--sigma", "1", "--delta", "nan"], "delta"),
    (["epsilon", "--sigma", "1", "--delta", "1e-5", "--method", "bogus"], "--method"),
    (["epsilon", "--sigma", "1", "--delta", "1e-5", "--conversion", "mironov"], "conversion"),
    (["epsilon", "--sigma", "1", "--delta", "1e-5", "--method", "zcdp", "--conversion", "improved"], "conversion"),
    (["delta", "--sigma", "1", "--epsilon", "nan"], "epsilon"),  # ε = 0 has an answer: δ(0) = 2Φ(μ/2) − 1
    (["methods", "--sigma", "1", "--delta", "2"], "delta"),
    (["convert", "zcdp", "--rho", "-1", "--delta", "1e-5"], "rho"),
    (["convert", "rdp", "--orders", "1,2", "--values", "0.1,0.2", "--delta", "1e-5"], "orders"),
    (["convert", "rdp", "--orders", "2,3", "--values", "0.1", "--delta", "1e-5"], "same length"),
    (["convert", "rdp", "--orders", "2,,3", "--values", "0.1,0.2", "--delta", "1e-5"], "--orders"),
    (["convert", "rdp", "--orders", "2,3", "--values", "0.1,-0.2", "--delta", "1e-5"], "values"),
    (["convert", "gdp", "--mu", "1"], "exactly one"),
    (["convert", "gdp", "--mu", "0", "--delta", "1e-5"], "mu"),
    (["convert", "budget", "--epsilon", "1", "--delta", "1.5"], "delta"),
    (["ledger", "/nonexistent/ledger.toml", "--delta", "1e-5"], "cannot read"),
    (["nosuchcommand"], "nosuchcommand"),
]


@pytest.mark.parametrize("argv,needle", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_is_one_error_line_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], needle: str) -> None:
    code, out, err = run(capsys, *argv, *(["--json"] if argv[0] not in ("nosuchcommand",) else []))
    assert code == 2
    assert out == "", "nothing may be written to stdout on error"
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert needle in lines[0]
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "content,needle",
    [
        ('[[release]]\nname = "a"\nsensitivity = 1\nsigma = "x"\n', "release[0].sigma"),
        ('[[release]]\nname = "a"\nsensitivity = 1\nsigma = 2\nsigmaa = 3\n', "unknown key"),
        ('[[release]]\nname = "a"\nsigma = 2\n', "release[0] needs sensitivity and sigma"),
        ('[[release]]\nname = "a"\nsensitivity = 1\nsigma = 2\ncount = 1.5\n', "release[0].count"),
        ("[[release\n", "not valid TOML"),
        ("releases = []\n", "unknown key 'releases'"),
    ],
)
def test_bad_ledger_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, needle: str) -> None:
    p = tmp_path / "bad.toml"
    p.write_text(content)
    code, out, err = run(capsys, "ledger", str(p), "--delta", "1e-5")
    assert code == 2 and out == "" and err.startswith("error: ") and needle in err, err


def test_console_script_is_installed_and_wired() -> None:
    exe = Path(sys.executable).with_name("dpkit")
    res = subprocess.run(
        [str(exe), "calibrate", "--epsilon", "1", "--delta", "1e-5", "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    assert math.isclose(json.loads(res.stdout)["sigma"], 3.7306316, rel_tol=1e-7)
    res = subprocess.run(
        [str(exe), "epsilon", "--sigma", "-1", "--delta", "1e-5"], capture_output=True, text=True, check=False
    )
    assert res.returncode == 2 and res.stderr.startswith("error: ") and "Traceback" not in res.stderr


def test_pld_refuses_delta_below_its_resolution(capsys: pytest.CaptureFixture[str]) -> None:
    obj = run_json(capsys, "methods", "--sigma", "1", "--delta", "1e-20")
    assert obj["methods"]["pld"] is None and "cannot resolve" in obj["refusals"]["pld"]
    assert obj["methods"]["exact"] is not None  # exact still answers, down to 1e-300
    code, out, err = run(capsys, "calibrate", "--epsilon", "1", "--delta", "1e-300", "--method", "pld")
    assert code == 2 and out == "" and "use method 'exact'" in err
