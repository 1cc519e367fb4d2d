"""Running the ``dpkit`` command line inside a test: exit code, stdout and stderr, or the one JSON object."""

from __future__ import annotations

import json

import pytest

from dpkit.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``dpkit ARGV``: (exit code, stdout, stderr)."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    """``dpkit ARGV --json``, which must succeed and print exactly one JSON object."""
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    lines = out.strip().splitlines()
    assert len(lines) == 1, f"--json must print exactly one line, got {out!r}"
    obj = json.loads(lines[0])
    assert isinstance(obj, dict)
    return obj
