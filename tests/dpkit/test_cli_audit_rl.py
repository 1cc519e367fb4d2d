"""`dpkit audit ALGORITHM`: the RL audits from the command line."""

from __future__ import annotations

import pytest
from cli_runs import run, run_json

from dpkit.audits.rl import audit_positions, audit_setting, default_setting, positions


@pytest.mark.slow
def test_json_equals_the_api(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(capsys, "audit", "rlsvi", "--runs", "200", "--seed", "3")
    api = audit_positions(default_setting("rlsvi"), runs=200, seed=3).to_dict()
    assert out == api
    # every position that matters, each a pair of its own at its share of α; the headline is the worst
    # ... and the plan probe's pair after them (RLSVI's plans, in the world its pilot runs chose)
    probed = [p["position"] for p in out["positions"]]
    assert probed[:-1] == list(positions(default_setting("rlsvi"))) and probed[-1].startswith("plans, ")
    assert all(p["reach"] >= 0.95 for p in out["positions"])
    assert out["worst_position"] in [p["position"] for p in out["positions"]]
    # the headline's numbers at the top, the largest bounds of the positions named apart
    head = next(p for p in out["positions"] if p["position"] == out["worst_position"])
    assert (out["mu_lower"], out["mu_allowed"], out["verdict"]) == (
        head["mu_lower"],
        head["mu_allowed"],
        head["verdict"],
    )
    assert out["mu_lower_largest"] == max(p["mu_lower"] for p in out["positions"])
    one = run_json(capsys, "audit", "rlsvi", "--runs", "200", "--seed", "3", "--position", "middle")
    single = audit_setting(default_setting("rlsvi", position="middle"), runs=200, seed=3).to_dict()
    assert one == single | {
        "alpha": 0.05,
        "worst_position": "middle",
        "mu_lower_largest": single["mu_lower"],
        "mu_lower_largest_position": "middle",
        "epsilon_lower_largest": single["epsilon_lower"],
        "epsilon_lower_largest_position": "middle",
        "positions": one["positions"],
        # the reason is the whole audit's (of its one position), worded as for several positions
        "reason": one["reason"],
        "diagnosis": one["diagnosis"],
    }
    for key in (
        "claimed_epsilon",
        "exact_epsilon",
        "exact_mu",
        "pair_mu",
        "epsilon_lower",
        "mu_lower",
        "verdict",
        "claim_verdict",
        "relation",
        "runs",
        "episodes",
        "position",
        "sigmas",
        "audit",
        "roc",
    ):
        assert key in out


def test_options_reach_the_setting(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(
        capsys,
        "audit",
        "private-linopt-vi",
        "--observer",
        "actions",
        "--runs",
        "60",
        "--episodes",
        "3",
        "--sigma",
        "5",
        "--position",
        "middle",
    )
    assert out["observer"] == "actions" and out["episodes"] == 3 and out["position"] == "middle"
    assert set(out["sigmas"].values()) == {5.0}
    assert out["attack"] == "logistic"


@pytest.mark.slow
def test_text_output_names_the_three_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "audit", "ldp-ucrl-vtr", "--runs", "100")
    assert code == 0
    for words in (
        "claimed ε",
        "claim's ε / μ at δ = 1e-05 (informative)",
        "exact ε / μ of the declared releases",
        "their exact ε at δ = 1e-05",
        "ε lower bound here",
        "verdict against the declaration",
    ):
        assert words in out


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["audit", "nope"], "ALGORITHM"),
        (["audit", "rlsvi", "--runs", "0"], "runs"),
        (["audit", "rlsvi", "--runs", "nan"], "runs"),
        (["audit", "rlsvi", "--runs", "1e12"], "--runs = 1,000,000,000,000 is above the limit of 1,000,000"),
        (["audit", "rlsvi", "--episodes", "1e9"], "--episodes = 1,000,000,000 is above the limit of 100,000"),
        (["audit", "rlsvi", "--sigma", "-1"], "sigma"),
        (["audit", "rlsvi", "--sigma", "inf"], "sigma"),
        (["audit", "rlsvi", "--sigma", "0"], "sigma"),
        (["audit", "rlsvi", "--observer", "billboard"], "observer"),
        (["audit", "rlsvi", "--episodes", "1"], "episodes"),
        (["audit", "rlsvi", "--attack", "magic"], "attack"),
        (["audit", "rlsvi", "--target", "x.py:f"], "not both"),
        (["audit"], "ALGORITHM"),
    ],
)
def test_bad_input_is_one_error_line(capsys: pytest.CaptureFixture[str], argv: list[str], needle: str) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and needle in lines[0], err
