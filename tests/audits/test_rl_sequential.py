"""Sequential RL audits (issue 31): every position in turns, stopping at the first violation; same verdicts."""

from __future__ import annotations

import math

import pytest
from cli_runs import run, run_json
from rl_mutants import ldp_no_clipping

from dpkit.audits.rl.fixed import position_claim
from dpkit.audits.rl.sequential import audit_positions_sequential
from dpkit.audits.rl.setting import default_setting, positions


@pytest.mark.slow
def test_a_correct_algorithm_is_never_a_violation_and_costs_at_most_its_budget() -> None:
    setting = default_setting("rlsvi")
    result = audit_positions_sequential(setting, runs=300, seed=5)
    assert result.verdict != "violation"
    assert [p.position for p in result.positions] == list(positions(setting))
    assert all(p.result is not None and not p.result.stopped_early for p in result.positions)
    # each position's budget is at most 1.3× the fixed audit's runs, and it used no more than that
    assert result.budget <= math.ceil(1.3 * 300)
    assert all(p.runs_used <= result.budget for p in result.positions)
    assert result.runs_used <= 1.3 * result.fixed_runs


def test_the_allowance_is_fixed_before_any_run() -> None:
    """Each position is judged against the claim's cap (the claim's μ at the worst-placed user × √share), computed
    from the registered declaration alone — never from the runs under test."""
    setting = default_setting("ldp-ucrl-vtr", implementation=ldp_no_clipping)
    result = audit_positions_sequential(setting, runs=200, seed=0, positions_to_probe=["first"])
    correct = position_claim(default_setting("ldp-ucrl-vtr", position="first"))
    assert result.positions[0].mu_allowed == pytest.approx(correct.cap, rel=1e-12)
    assert result.verdict == "violation"


@pytest.mark.slow
def test_a_clear_violation_stops_early_with_far_fewer_runs() -> None:
    setting = default_setting("ldp-ucrl-vtr", implementation=ldp_no_clipping)
    result = audit_positions_sequential(setting, runs=4000, seed=1)
    assert result.verdict == "violation" and result.stopped_early
    assert result.runs_used * 10 <= result.fixed_runs
    stopped = [p for p in result.positions if p.result is None]
    assert all(p.verdict == "stopped" for p in stopped)


@pytest.mark.slow
def test_the_command_line_sequential_json(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(capsys, "audit", "rlsvi", "--runs", "200", "--seed", "2", "--sequential")
    api = audit_positions_sequential(default_setting("rlsvi"), runs=200, seed=2).to_dict()
    assert out == api
    assert out["sequential"] is True and out["runs"] == 200
    assert out["runs_used"] <= 1.3 * out["fixed_runs"]
    assert {"runs_used", "budget", "fixed_runs", "stopped_early", "positions"} <= set(out)


def test_the_command_line_sequential_table_and_refusals(capsys: pytest.CaptureFixture[str]) -> None:
    code, text, _ = run(capsys, "audit", "rlsvi", "--runs", "200", "--seed", "2", "--sequential")
    assert code == 0 and "Sequential audit of rlsvi" in text and "runs used" in text
    code, _, err = run(capsys, "audit", "rlsvi", "--one-run", "--sequential")
    assert code == 2 and "--sequential" in err
