"""The command line in modules: small modules (a long one is reported as a warning), commands imported on demand
(and their heavy dependencies when they run), and "did you mean" for an unknown command. The refusal of options
that do not apply is in test_cli_refusals.py."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from dpkit.cli import COMMANDS, main

ROOT = Path(__file__).resolve().parents[2]


#: The length past which a module of the command line is worth a second look (a warning, not a failure).
CLI_MAX_LINES = 300


def test_a_module_of_the_command_line_over_300_lines_is_reported() -> None:
    """Long CLI modules are listed in pytest's warnings summary: split by concern, not by count."""
    lengths = {
        str(path.relative_to(ROOT)): path.read_text(encoding="utf-8").count("\n")
        for path in sorted((ROOT / "dpkit").rglob("*.py"))
    }
    assert lengths, "no module of the command line found"
    too_long = {name: n for name, n in lengths.items() if n > CLI_MAX_LINES}
    if too_long:
        warnings.warn(f"CLI modules over {CLI_MAX_LINES} lines (look for a seam): {too_long}", stacklevel=1)


def test_every_command_resolves_to_its_module() -> None:
    import click

    from dpkit.cli import cli

    ctx = click.Context(cli)
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert command is not None and command.name in (name, "ledger")


#: What ``dpkit calibrate … --json`` must not import: the other jobs, the libraries calibration does not use,
#: and rich (a JSON result draws nothing).
HEAVY = (
    "dpkit.audits",
    "dpkit.algorithms",
    "dpkit.data_files",
    "dpkit.loading",
    "dp_accounting",
    "matplotlib",
    "sklearn",
    "scipy.optimize",
    "scipy.stats",
    "jinja2",
    "pydantic",
    "rich",
)


def _imported_by(argv: list[str]) -> list[str]:
    code = (
        "import sys, io, contextlib\n"
        "from dpkit.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main({argv!r}) == 0\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_calibrate_imports_nothing_of_the_audits_algorithms_or_reports() -> None:
    modules = _imported_by(["calibrate", "--epsilon", "1", "--delta", "1e-5", "--compositions", "1000", "--json"])
    heavy = [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]
    assert heavy == []
    # of the reports, only the one JSON encoder (numpy and json); of the commands, only calibrate's own
    assert [m for m in modules if m.startswith("dpkit.reports.")] == ["dpkit.reports.encoding"]
    commands = [m for m in modules if m.startswith("dpkit.commands.")]
    assert commands == [
        "dpkit.commands.accounting",
        "dpkit.commands.calibrate_events",
        "dpkit.commands.dp_sgd_options",
        "dpkit.commands.mechanisms",
        "dpkit.commands.option_types",
        "dpkit.commands.options",
        "dpkit.commands.refusals",
    ]


def test_help_imports_no_job_and_no_heavy_library() -> None:
    modules = _imported_by(["--help"])
    assert [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY if h != "dpkit.algorithms")] == []


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
