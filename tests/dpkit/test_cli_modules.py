"""The command line in modules: small modules, commands imported on demand, "did you mean", and every option
that does not apply to the form given refused with one ``error:`` line and exit code 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dpkit.cli import COMMANDS, main

ROOT = Path(__file__).resolve().parents[2]


def test_no_module_of_the_command_line_is_over_300_lines() -> None:
    for path in sorted((ROOT / "dpkit").rglob("*.py")):
        lines = path.read_text(encoding="utf-8").count("\n")
        assert lines <= 300, f"{path.relative_to(ROOT)} has {lines} lines"


def test_every_command_resolves_to_its_module() -> None:
    import click

    from dpkit.cli import cli

    ctx = click.Context(cli)
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert command is not None and command.name in (name, "ledger")


def test_calibrate_imports_nothing_of_the_audits_algorithms_or_reports() -> None:
    code = (
        "import sys, io, contextlib\n"
        "from dpkit.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['calibrate', '--epsilon', '1', '--delta', '1e-5', '--compositions', '1000', '--json']) == 0\n"
        "heavy = ('dpkit.audits', 'dpkit.algorithms', 'dpkit.reports', 'dp_accounting', 'matplotlib', 'sklearn',\n"
        "         'scipy.optimize', 'scipy.stats', 'jinja2', 'pydantic')\n"
        "print(','.join(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("calibrat", "did you mean 'calibrate'?"),
        ("ledgr", "did you mean 'ledger'?"),
        ("zzz", "commands: calibrate"),
    ],
)
def test_an_unknown_command_suggests_the_closest(typed: str, expected: str, capsys: pytest.CaptureFixture) -> None:
    assert main([typed]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no such command") and expected in err and err.count("\n") == 1


REFUSED = [
    # dpkit audit ALGORITHM takes none of the release-function form's options, and vice versa
    (["audit", "rlsvi", "--trials", "10"], "--trials does not apply to an ALGORITHM audit"),
    (["audit", "rlsvi", "--trials", "10", "--mu", "5"], "does not apply to an ALGORITHM audit"),
    (["audit", "rlsvi", "--chunk-size", "10"], "--chunk-size does not apply to an ALGORITHM audit"),
    (["audit", "rlsvi", "--rho", "1"], "--rho does not apply to an ALGORITHM audit"),
    (["audit", "rlsvi", "--claim", "x.json"], "--claim does not apply to an ALGORITHM audit"),
    (
        ["audit", "--target", "m.py:f", "--neighbours", "m.py:P", "--mu", "1", "--runs", "10"],
        "--runs does not apply to a --target audit",
    ),
    (
        ["audit", "--target", "m.py:f", "--neighbours", "m.py:P", "--mu", "1", "--observer", "x"],
        "--observer does not apply to a --target audit",
    ),
    (
        ["audit", "--target", "m.py:f", "--neighbours", "m.py:P", "--mu", "1", "--position", "last"],
        "--position does not apply to a --target audit",
    ),
    (["audit", "rlsvi", "--runs", "10", "--workers", "2"], "workers applies only"),
    (["audit", "rlsvi", "--runs", "10", "--scheduler", "tcp://x:1"], "scheduler applies only"),
    # dpkit ledger FILE takes only --delta or --epsilon
    (["ledger", "ledger.json", "--delta", "1e-5", "--horizon", "3"], "a ledger file takes only"),
    (["ledger", "ledger.json", "--delta", "1e-5", "--method", "rdp"], "a ledger file takes only"),
    # dpkit ledger ALGORITHM refuses the parameters the algorithm does not use
    (
        ["ledger", "ldp-ucrl-vtr", "--epsilon", "1", "--delta", "0.1", "--horizon", "3", "--dim", "4"],
        "ldp-ucrl-vtr does not use dim",
    ),
    # dpkit tree: accounting options without accounting
    (["tree", "--steps", "8", "--method", "rdp"], "--method does not apply"),
    (["tree", "--steps", "8", "--sensitivity", "2"], "--sensitivity does not apply"),
    (["tree", "--steps", "8", "--conversion", "mironov"], "--conversion does not apply"),
    (
        ["tree", "--steps", "8", "--sigma", "1", "--epsilon", "1", "--delta", "1e-5"],
        "--sigma needs --delta (and no --epsilon)",
    ),
    # dpkit rlsvi: the run's options without --run
    (
        ["rlsvi", "-S", "2", "-A", "2", "-H", "4", "-K", "10", "--delta", "1e-5", "--env", "tabular"],
        "--env and --seed need --run",
    ),
    (
        ["rlsvi", "-S", "2", "-A", "2", "-H", "4", "-K", "10", "--delta", "1e-5", "--seed", "3"],
        "--env and --seed need --run",
    ),
    # dpkit simulate: options of another environment or of private algorithms
    (["simulate", "ucrl-vtr", "-K", "5", "--state-dim", "3", "--out", "{tmp}"], "--state-dim does not apply"),
    (["simulate", "ucrl-vtr", "-K", "5", "--control-dim", "3", "--out", "{tmp}"], "--control-dim does not apply"),
    (
        ["simulate", "ucrl-vtr", "-K", "5", "--actions", "3", "--out", "{tmp}"],
        "--actions does not apply to 'riverswim'",
    ),
    (
        [
            "simulate",
            "private-ofu-rl",
            "-K",
            "5",
            "--epsilon",
            "1",
            "--delta",
            "0.1",
            "--states",
            "3",
            "--out",
            "{tmp}",
        ],
        "--states does not apply to an LQ system",
    ),
    (["simulate", "ucrl-vtr", "-K", "5", "--epsilon", "1", "--out", "{tmp}"], "--epsilon does not apply to ucrl-vtr"),
    (["simulate", "ucrl-vtr", "-K", "5", "--sigma", "tight", "--out", "{tmp}"], "not private and adds no noise"),
    # method options
    (["calibrate", "--epsilon", "1", "--delta", "1e-5", "--conversion", "mironov"], "takes no conversion"),
    (["convert", "gdp", "--mu", "1", "--delta", "1e-5", "--epsilon", "1"], "exactly one of --delta and --epsilon"),
]


@pytest.mark.parametrize(
    ("argv", "message"), REFUSED, ids=[" ".join(a[:3]) + f"[{i}]" for i, (a, _) in enumerate(REFUSED)]
)
def test_an_option_that_does_not_apply_is_refused(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    argv = [a.replace("{tmp}", str(tmp_path / "out")) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "out").exists()
