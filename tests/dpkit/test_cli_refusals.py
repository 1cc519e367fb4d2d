"""Every option that does not apply to the form of a command given is refused with one ``error:`` line naming it
and exit code 2, before anything is loaded or run; never silently ignored.

The commands of several forms (``audit``, ``ledger``, ``rlsvi``) declare which options apply to which form in
their module's ``FORMS``; the tests check that the table covers every option and try each form-only option in
every other form. The forms chosen by values (``tree``, ``simulate``, ``convert gdp``, the accounting methods)
are listed case by case.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import click
import pytest

from dpkit.cli import COMMANDS, main
from dpkit.commands.refusals import given, refuse_options

#: The commands of several forms; their module's FORMS maps a form to the options of that form only ("both": all).
FORM_COMMANDS = ("audit", "ledger", "rlsvi")

CLOSED_FORM = ["-S", "2", "-A", "2", "-H", "4", "-K", "10", "--delta", "1e-5"]
RLSVI_LEDGER = ["ledger", "rlsvi", "--delta", "1e-5", "-S", "2", "-A", "2", "-H", "3", "-K", "9"]
OFU_LEDGER = ["ledger", "private-ofu-rl", "--epsilon", "1", "--delta", "1e-5", "-K", "9", "-H", "3", "--gamma", "1"]
#: The smallest command line of each form (the options of the other forms are added to it).
BASES: dict[str, dict[str, list[str]]] = {
    "audit": {
        "an ALGORITHM audit": ["audit", "rlsvi"],
        "a --target audit": ["audit", "--target", "m.py:f", "--neighbours", "m.py:P", "--mu", "1"],
        "a --train audit": [
            "audit",
            "--train",
            "m.py:t",
            "--noise-multiplier",
            "1",
            "--sampling-rate",
            "1",
            "--steps",
            "1",
        ],
    },
    "ledger": {
        "an ALGORITHM ledger": ["ledger", "rlsvi", "--delta", "1e-5"],
        "a ledger file (it takes only --delta or --epsilon, and --json)": ["ledger", "ledger.json", "--delta", "1e-5"],
    },
    "rlsvi": {
        "RLSVI's closed form (without --run)": ["rlsvi", *CLOSED_FORM],
        "a --run": ["rlsvi", "-S", "2", "-K", "10", "--delta", "1e-5", "--run"],
    },
}
#: A value of every form-only option, as typed.
SAMPLES: dict[str, dict[str, list[str]]] = {
    "audit": {
        "sigma": ["--sigma", "tight"],
        "observer": ["--observer", "x"],
        "runs": ["--runs", "10"],
        "episodes": ["--episodes", "5"],
        "position": ["--position", "last"],
        "max_time": ["--max-time", "1h"],
        "env": ["--env", "riverswim"],
        "horizon": ["--horizon", "4"],
        "one_run": ["--one-run"],
        "canaries": ["--canaries", "10"],
        "mu": ["--mu", "5"],
        "rho": ["--rho", "1"],
        "rdp_orders": ["--rdp-orders", "2,3"],
        "rdp_values": ["--rdp-values", "1,2"],
        "claim_file": ["--claim", "x.json"],
        "trials": ["--trials", "10"],
        "chunk_size": ["--chunk-size", "10"],
        "sequential": ["--sequential"],
        "canary_records": ["--canary-records", "m.py:C"],
        "dataset": ["--dataset", "m.py:D"],
        "score": ["--score", "m.py:S"],
        "noise_multiplier": ["--noise-multiplier", "1"],
        "sampling_rate": ["--sampling-rate", "0.5"],
        "steps": ["--steps", "5"],
        "parameters": ["--parameters", "10"],
        "loss": ["--loss", "m.py:L"],
        "clip_norm": ["--clip-norm", "1"],
        "threat": ["--threat", "black-box"],
        "examples": ["--examples", "m.py:E"],
    },
    "ledger": {
        "episodes": ["-K", "10"],
        "horizon": ["--horizon", "3"],
        "dim": ["--dim", "4"],
        "states": ["-S", "2"],
        "actions": ["--actions", "2"],
        "gamma": ["--gamma", "1"],
        "beta": ["--beta", "0.5"],
        "reading": ["--reading", "experiment"],
        "schedule": ["--schedule", "after-each"],
        "neighbours": ["--neighbours", "replace-one"],
        "method": ["--method", "rdp"],
        "conversion": ["--conversion", "improved"],
    },
    "rlsvi": {"env_name": ["--env", "tabular"], "seed": ["--seed", "3"]},
}
#: The long flag an error names for a sample typed with a short one.
LONG_FLAGS = {"episodes": "--episodes", "states": "--states"}
#: The options that choose the form (giving one of them is giving that form; see the cases below).
SELECTORS = {"audit": ("target", "neighbours", "agent", "train"), "ledger": (), "rlsvi": ("do_run",)}


def _command(name: str) -> click.Command:
    module, attribute = COMMANDS[name].split(":")
    command = getattr(importlib.import_module(f"dpkit.commands.{module}"), attribute)
    assert isinstance(command, click.Command)
    return command


def _forms(name: str) -> dict[str, tuple[str, ...]]:
    module = importlib.import_module(f"dpkit.commands.{COMMANDS[name].split(':')[0]}")
    forms = module.FORMS
    assert isinstance(forms, dict)
    return forms


def _refused_in_other_forms() -> list[tuple[str, str, str]]:
    cases = []
    for name in FORM_COMMANDS:
        forms = _forms(name)
        for form in BASES[name]:
            for other, options in forms.items():
                if other in (form, "both"):
                    continue
                cases += [(name, form, option) for option in options if option not in SELECTORS[name]]
    return cases


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("error: ") and captured.err.count("\n") == 1, captured.err
    return captured.err


@pytest.mark.parametrize("name", FORM_COMMANDS)
def test_the_forms_table_covers_every_option_once(name: str) -> None:
    forms = _forms(name)
    listed = [option for options in forms.values() for option in options]
    assert sorted(listed) == sorted(p.name for p in _command(name).params if p.name)
    assert len(listed) == len(set(listed))
    assert set(BASES[name]) == set(forms) - {"both"}
    form_only = {o for form, options in forms.items() if form != "both" for o in options} - set(SELECTORS[name])
    assert form_only <= set(SAMPLES[name])


@pytest.mark.parametrize(("name", "form", "option"), _refused_in_other_forms(), ids=lambda v: str(v)[:24])
def test_an_option_of_another_form_is_refused_by_name(
    name: str, form: str, option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = SAMPLES[name][option]
    err = _run(BASES[name][form] + sample, capsys)
    flag = sample[0] if sample[0].startswith("--") else LONG_FLAGS[option]
    assert f"error: {flag} does not apply to {form}" in err


def test_several_options_of_another_form_are_named_together(capsys: pytest.CaptureFixture[str]) -> None:
    # the issue's example: neither option is ignored, both are named (in the order --help lists them)
    err = _run(["audit", "rlsvi", "--trials", "10", "--mu", "5"], capsys)
    assert err == "error: --mu and --trials do not apply to an ALGORITHM audit\n"
    err = _run(["audit", "rlsvi", "--trials", "10"], capsys)
    assert err == "error: --trials does not apply to an ALGORITHM audit\n"


#: The options of forms chosen by values (and the form-choosing options of the tables' commands), case by case.
REFUSED = [
    # typing an option's default value is giving it: refused all the same
    (["audit", "rlsvi", "--trials", "100000"], "--trials does not apply to an ALGORITHM audit"),
    (["audit", "rlsvi", "--chunk-size", "100000"], "--chunk-size does not apply to an ALGORITHM audit"),
    (
        ["audit", "--target", "m.py:f", "--neighbours", "m.py:P", "--mu", "1", "--position", "first"],
        "--position does not apply to a --target audit",
    ),
    (["ledger", "ledger.json", "--delta", "1e-5", "--method", "exact"], "--method does not apply to a ledger file"),
    (["tree", "--steps", "8", "--method", "exact"], "--method does not apply to the counter's structure alone"),
    (["tree", "--steps", "8", "--sensitivity", "1"], "--sensitivity does not apply to the counter's structure alone"),
    (["simulate", "ucrl-vtr", "-K", "5", "--sigma", "paper", "--out", "{tmp}"], "--sigma does not apply to ucrl-vtr"),
    # dpkit audit: the two forms at once, or neither
    (["audit", "rlsvi", "--target", "m.py:f"], "give ALGORITHM, or --target and --neighbours, not both"),
    (["audit", "rlsvi", "--neighbours", "m.py:P"], "give ALGORITHM, or --target and --neighbours, not both"),
    (["audit", "--target", "m.py:f", "--mu", "1"], "give --neighbours with --target (or --one-run with"),
    (["audit", "--mu", "1"], "give ALGORITHM, or --target with --neighbours (or with --one-run)"),
    (["audit", "--target", "m.py:f", "--one-run", "--mu", "1"], "--one-run with --target needs --canary-records"),
    (
        ["audit", "--target", "m.py:f", "--one-run", "--neighbours", "m.py:P", "--mu", "1"],
        "--neighbours does not apply to a --one-run audit of a --target",
    ),
    (
        ["audit", "--target", "m.py:f", "--neighbours", "m.py:P", "--canary-records", "m.py:C", "--mu", "1"],
        "--canary-records does not apply to a many-run audit (add --one-run)",
    ),
    (["audit", "rlsvi", "--attack", "histogram"], "--attack for an ALGORITHM audit must be auto, white-box or learned"),
    # dpkit audit, both forms: the executor's options
    (["audit", "rlsvi", "--executor", "local", "--workers", "2"], "--workers does not apply to --executor local"),
    (["audit", "rlsvi", "--scheduler", "tcp://x:1"], "--scheduler does not apply to --executor auto"),
    (
        ["audit", "rlsvi", "--executor", "processes", "--scheduler", "tcp://x:1"],
        "--scheduler does not apply to --executor processes",
    ),
    (
        ["audit", "rlsvi", "--executor", "dask", "--scheduler", "tcp://x:1", "--workers", "2"],
        "--workers does not apply to a --scheduler's cluster",
    ),
    (
        ["audit", "--target", "m.py:f", "--neighbours", "m.py:P", "--mu", "1", "--executor", "local", "--workers", "2"],
        "--workers does not apply to --executor local",
    ),
    (
        ["audit", "--target", "m.py:f", "--neighbours", "m.py:P", "--mu", "1", "--scheduler", "tcp://x:1"],
        "--scheduler does not apply to --executor auto",
    ),
    (
        ["audit", "--target", "m.py:f", "--one-run", "--canary-records", "m.py:C", "--mu", "1", "--sequential"],
        "--sequential does not apply to a --one-run audit of a --target",
    ),
    # dpkit audit --target: exactly one claim
    (["audit", "--target", "m.py:f", "--neighbours", "m.py:P"], "give exactly one claim"),
    (["audit", "--target", "m.py:f", "--neighbours", "m.py:P", "--mu", "1", "--rho", "1"], "got --mu, --rho"),
    (["audit", "--target", "m.py:f", "--neighbours", "m.py:P", "--rdp-orders", "2"], "go together"),
    # dpkit ledger ALGORITHM: the parameters that algorithm does not use (the registry's list)
    (
        ["ledger", "ldp-ucrl-vtr", "--epsilon", "1", "--delta", "0.1", "--horizon", "3", "--dim", "4"],
        "ldp-ucrl-vtr does not use dim",
    ),
    ([*RLSVI_LEDGER, "--gamma", "1"], "rlsvi does not use gamma"),
    (
        [*OFU_LEDGER, "--states", "3"],
        "private-ofu-rl does not use states",
    ),
    # dpkit tree: accounting options without accounting; the ε(δ) of a σ and a calibration at once
    (["tree", "--steps", "8", "--method", "rdp"], "--method does not apply"),
    (["tree", "--steps", "8", "--conversion", "mironov"], "--conversion does not apply"),
    (["tree", "--steps", "8", "--method", "rdp", "--sensitivity", "2"], "--sensitivity and --method do not apply"),
    (["tree", "--steps", "8", "--sigma", "1", "--epsilon", "1", "--delta", "1e-5"], "--sigma needs --delta (and no"),
    (["tree", "--steps", "8", "--sigma", "1"], "--sigma needs --delta"),
    (["tree", "--steps", "8", "--epsilon", "1"], "calibration needs both --epsilon and --delta"),
    (["tree", "--steps", "8", "--delta", "1e-5"], "calibration needs both --epsilon and --delta"),
    # dpkit rlsvi: two run options at once without --run; the closed form's missing sizes
    (
        ["rlsvi", *CLOSED_FORM, "--env", "tabular", "--seed", "1"],
        "--env and --seed do not apply to RLSVI's closed form",
    ),
    (["rlsvi", "-S", "2", "-K", "10", "--delta", "1e-5"], "Missing option '--actions' and '--horizon' (or give --run)"),
    # dpkit simulate: options of another environment or of private algorithms
    (["simulate", "ucrl-vtr", "-K", "5", "--state-dim", "3", "--out", "{tmp}"], "--state-dim does not apply"),
    (["simulate", "ucrl-vtr", "-K", "5", "--control-dim", "3", "--out", "{tmp}"], "--control-dim does not apply"),
    (
        ["simulate", "ucrl-vtr", "-K", "5", "--actions", "3", "--out", "{tmp}"],
        "--actions does not apply to 'riverswim'",
    ),
    (
        ["simulate", "ucrl-vtr", "-K", "5", "--env", "tabular", "--state-dim", "3", "--out", "{tmp}"],
        "--state-dim does not apply to the tabular environment 'tabular'",
    ),
    (
        ["simulate", "private-ofu-rl", "-K", "5", "--epsilon", "1", "--delta", "0.1", "-S", "3", "--out", "{tmp}"],
        "--states does not apply to an LQ system",
    ),
    (
        ["simulate", "private-ofu-rl", "-K", "5", "--epsilon", "1", "--delta", "0.1", "-A", "3", "--out", "{tmp}"],
        "--actions does not apply to an LQ system",
    ),
    (
        ["simulate", "ucrl-vtr", "-K", "5", "--epsilon", "1", "--delta", "0.1", "--out", "{tmp}"],
        "--epsilon and --delta do not apply to ucrl-vtr, which is not private",
    ),
    (["simulate", "ucrl-vtr", "-K", "5", "--sigma", "tight", "--out", "{tmp}"], "--sigma does not apply to ucrl-vtr"),
    # the accounting methods: a conversion of another method, or of none
    (["calibrate", "--epsilon", "1", "--delta", "1e-5", "--conversion", "mironov"], "takes no conversion"),
    (["epsilon", "--sigma", "1", "--delta", "1e-5", "--method", "pld", "--conversion", "improved"], "takes no conv"),
    (["delta", "--sigma", "1", "--epsilon", "1", "--method", "zcdp", "--conversion", "mironov"], "must be one of"),
    (["tree", "--steps", "8", "--sigma", "1", "--delta", "1e-5", "--conversion", "mironov"], "takes no conversion"),
    (
        [*RLSVI_LEDGER, "--conversion", "improved"],
        "takes no conversion",
    ),
    # dpkit convert gdp: exactly one of δ and ε
    (["convert", "gdp", "--mu", "1", "--delta", "1e-5", "--epsilon", "1"], "exactly one of --delta and --epsilon"),
    (["convert", "gdp", "--mu", "1"], "exactly one of --delta and --epsilon"),
]


@pytest.mark.parametrize(
    ("argv", "message"), REFUSED, ids=[" ".join(a[:4]) + f"[{i}]" for i, (a, _) in enumerate(REFUSED)]
)
def test_an_option_that_does_not_apply_is_refused(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [a.replace("{tmp}", str(tmp_path / "out")) for a in argv]
    err = _run(argv, capsys)
    assert message in err, err
    assert not (tmp_path / "out").exists()


def test_the_issue_example_through_the_console_script() -> None:
    import subprocess
    import sys

    script = Path(sys.executable).with_name("dpkit")
    out = subprocess.run([str(script), "audit", "rlsvi", "--trials", "10"], capture_output=True, text=True)
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == "error: --trials does not apply to an ALGORITHM audit\n"


@click.command()
@click.option("--a", type=int, default=3)
@click.option("--b", "b_name", default=None)
@click.pass_context
def _probe(ctx: click.Context, a: int, b_name: str | None) -> tuple[bool, bool]:
    refuse_options(ctx, ("b_name",), "this probe")
    return given(ctx, "a"), given(ctx, "b_name")


@pytest.mark.parametrize(
    ("argv", "expected"),
    [([], (False, False)), (["--a", "3"], (True, False)), (["--a", "4"], (True, False))],
)
def test_given_tells_a_default_from_a_typed_value(argv: list[str], expected: tuple[bool, bool]) -> None:
    assert _probe.main(argv, standalone_mode=False) == expected


def test_refuse_options_names_the_flag_not_the_parameter() -> None:
    with pytest.raises(click.UsageError, match=r"^--b does not apply to this probe$"):
        _probe.main(["--b", "x"], standalone_mode=False)


# -- dpkit audit ALGORITHM: a time cap, from a first batch of runs timed before the audit starts ------------------


def _no_audit(*args: object, **kwargs: object) -> None:
    pytest.fail("the audit started")


def test_an_rl_audit_expected_to_outlast_the_time_cap_is_refused_naming_the_estimate(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--runs 1000000 is inside the runs cap; at 2.5 ms a run (a first batch of 2 × 32 runs in 0.16 s) it takes about
    1.4 h: one error line with the estimate and how to raise the cap, before the audit starts."""
    import dpkit.audits.rl.fixed as rl
    import dpkit.commands.audit.timing as timing
    from dpkit.audits.rl import default_setting, plan_probe_runs, positions

    monkeypatch.setattr(rl, "audit_positions", _no_audit)
    monkeypatch.setattr(timing, "time_first_batch", lambda setting, runs, seed: (32, 0.16))
    local = ["--executor", "local"]
    err = _run(["audit", "rlsvi", "--runs", "1000000", "--position", "first", *local], capsys)
    assert err == (
        "error: the audit would take about 1.4 h (2 × 1,000,000 runs at 2.5 ms each, timed on a first batch of "
        "2 × 32), above --max-time 10 min: raise it to run it (e.g. --max-time 3h, or inf), or lower --runs\n"
    )
    err = _run(["audit", "rlsvi", "--runs", "1000000", "--position", "first", "--max-time", "1h", *local], capsys)
    assert "about 1.4 h" in err and "above --max-time 1.0 h" in err
    # every position that matters (the default) is an audit each, and so is the plan probe: the estimate counts them
    n = len(positions(default_setting("rlsvi")))
    probe = plan_probe_runs(default_setting("rlsvi"), 1_000_000)
    err = _run(["audit", "rlsvi", "--runs", "1000000", "--max-time", "1h", *local], capsys)
    assert f"({n} positions × 2 × 1,000,000 runs and a plan probe of 2 × {probe:,} at 2.5 ms each" in err
    assert f"about {(n * 1_000_000 + probe) * 2 * 2.5e-3 / 3600:.1f} h" in err
    # the default, auto: slow work goes to a pool, whose workers share it
    err = _run(["audit", "rlsvi", "--runs", "1000000", "--position", "first", "--workers", "2"], capsys)
    assert "about 42 min (2 × 1,000,000 runs at 2.5 ms each over 2 workers" in err


def test_the_first_batch_is_timed_for_real_and_the_cap_holds(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import dpkit.audits.rl.fixed as rl

    monkeypatch.setattr(rl, "audit_positions", _no_audit)
    err = _run(["audit", "rlsvi", "--runs", "1000000", "--max-time", "1s"], capsys)
    assert err.startswith("error: the audit would take about ") and "timed on a first batch of 2 × " in err


def test_an_audit_under_the_cap_prints_its_expected_time_and_runs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    import dpkit.commands.audit.timing as timing

    monkeypatch.setattr(timing, "time_first_batch", lambda setting, runs, seed: (8, 0.5))  # 31 ms a run
    argv = ["audit", "rlsvi", "--runs", "20", "--position", "first"]
    code = main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert code in (0, 1) and json.loads(out)["runs"] == 20
    assert err == "expected time: about 1.2 s (2 × 20 runs at 31.2 ms each, timed on a first batch of 2 × 8)\n"
    # the cap raised: the same audit that is refused at the default cap runs
    monkeypatch.setattr(timing, "time_first_batch", lambda setting, runs, seed: (8, 1000.0))
    assert main(argv) == 2
    assert "above --max-time 10 min" in capsys.readouterr().err
    assert main([*argv, "--max-time", "inf", "--json", "--executor", "local"]) in (0, 1)
    assert "expected time: about 42 min" in capsys.readouterr().err


def test_an_audit_its_own_checks_refuse_prints_their_error_alone(capsys: pytest.CaptureFixture[str]) -> None:
    """The first batch is timed before the audit's checks run (σ = 0): the expected time is printed only once the
    audit has started, so a refusal is still one error line."""
    err = _run(["audit", "rlsvi", "--sigma", "0", "--runs", "20"], capsys)
    assert err.startswith("error: sigma") and "must be > 0" in err


@pytest.mark.parametrize("value", ["10x", "0", "-1m", "nan", "h", ""])
def test_a_bad_max_time_is_refused(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    err = _run(["audit", "rlsvi", "--max-time", value], capsys)
    assert err.startswith("error: Invalid value for '--max-time'")


@pytest.mark.parametrize(
    ("value", "seconds"), [("90", 90.0), ("90s", 90.0), ("10m", 600.0), ("1.5h", 5400.0), ("inf", float("inf"))]
)
def test_max_time_reads_seconds_minutes_and_hours(value: str, seconds: float) -> None:
    from dpkit.commands.option_types import Duration

    assert Duration().convert(value, None, None) == seconds


def test_the_expected_time_counts_the_plan_probe(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import dpkit.audits.rl.fixed as rl
    import dpkit.commands.audit.timing as timing
    from dpkit.audits.rl import default_setting, plan_probe_runs

    monkeypatch.setattr(rl, "audit_positions", _no_audit)
    monkeypatch.setattr(timing, "time_first_batch", lambda setting, runs, seed: (32, 0.16))  # 2.5 ms a run
    # LinOpt names a plan probe: 3 worlds of 2 × 50,000 pilot runs and its own 2 × 500,000 runs, beside 3 positions
    probe = plan_probe_runs(default_setting("private-linopt-vi"), 1_000_000)
    assert probe == 3 * 50_000 + 500_000
    err = _run(["audit", "private-linopt-vi", "--runs", "1000000"], capsys)
    assert "(3 positions × 2 × 1,000,000 runs and a plan probe of 2 × 650,000 at 2.5 ms each" in err
    # a pinned position has no probe
    err = _run(["audit", "private-linopt-vi", "--runs", "1000000", "--position", "first"], capsys)
    assert "plan probe" not in err
