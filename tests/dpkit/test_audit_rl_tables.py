"""The tables of ``dpkit audit ALGORITHM``: no cell wraps into three lines at 80 or 100 columns, the caption says why
(and the diagnosis where the evidence points), and ``--json`` carries the same why and diagnosis."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import rich.table

from dpkit.audits.rl import audit_positions, default_setting, register_agent
from dpkit.cli import main
from dpkit.commands.audit.rl_tables import print_rl_audit, step_values

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))
import jdp_agent  # noqa: E402


@pytest.fixture(scope="module")
def short_sigma() -> Any:
    """A small audit of the billboard agent whose σ comes from a wrong formula (every position and the plan probe)."""
    setting = default_setting(register_agent(jdp_agent.WrongFormula, name="tables-wrong-formula"), sigma="paper")
    return setting, audit_positions(setting, runs=60, seed=0)


class _RuledTable(rich.table.Table):
    """rich's table with a rule between rows (the same widths), so that each cell's lines can be counted."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, show_lines=True, **kwargs)


def _row_heights(text: str) -> list[int]:
    """The lines of every row (the header's included) of the tables in ``text``."""
    heights, count = [], 0
    for line in text.splitlines():
        if line[:1] in ("┃", "│"):
            count += 1
        elif line[:1] in ("┡", "├", "└", "┗") and count:
            heights.append(count)
            count = 0
    return heights


@pytest.mark.parametrize("columns", [80, 100])
def test_no_cell_spans_three_lines(
    columns: int, short_sigma: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.setattr(rich.table, "Table", _RuledTable)
    setting, result = short_sigma
    print_rl_audit(result, setting=setting, runs=60, title="Audit of wrong-formula")
    out = capsys.readouterr().out
    heights = _row_heights(out)
    assert len(heights) >= 2 + len(result.results) + 20, out  # both headers, every row of both tables
    assert max(heights) <= 2, out
    assert max(len(line) for line in out.splitlines()) <= columns
    # each release's σ on rows of its own; "power" names no number above 1 (the allowance's share is named so)
    assert "σ of visits, used" in out and "σ of rewards, the claim needs (tight)" in out
    assert not any("power" in line for line in out.splitlines() if line[:1] in ("┃", "│"))
    assert "μ an ideal attack certifies (÷ allowed)" in out


def test_the_caption_says_why_the_diagnosis_and_what_each_verdict_means(
    short_sigma: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    setting, result = short_sigma
    print_rl_audit(result, setting=setting, runs=60, title="Audit")
    caption = " ".join(line.strip() for line in capsys.readouterr().out.split("└")[-1].splitlines()[1:])
    assert caption.startswith(f"why: {result.reason} diagnosis: {result.diagnosis} verdict against the declaration: ")
    assert result.diagnosis is not None and result.diagnosis.startswith("σ below what the target needs")
    assert " verdict against the paper's claim: " in caption


def test_json_carries_the_same_why_and_diagnosis(capsys: pytest.CaptureFixture[str]) -> None:
    agent = f"{EXAMPLES / 'jdp_agent.py'}:WrongFormula"
    code = main(["audit", "--agent", agent, "--sigma", "paper", "--runs", "60", "--position", "first", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code in (0, 1) and out["verdict"] in ("violation", "inconclusive")
    assert out["reason"].startswith(("at first: ", "1 of 1 position(s) violate"))
    assert out["diagnosis"].startswith("σ below what the target needs (visits 2.079 (0.707×), rewards 2.079 (0.707×)")


def test_a_sigma_per_step_is_said_once_when_every_step_has_it() -> None:
    assert step_values([2.0, 2.0, 2.0]) == "2 at each of 3 steps"
    assert step_values([1.23456, 2.0]) == "1.235, 2" and step_values(2.5) == "2.5"
