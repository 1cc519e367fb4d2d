"""`dpkit rlsvi --run`: the closed form beside one run's exact ε; bad input exits 2 with one error line."""

from __future__ import annotations

import pytest
from cli_runs import run, run_json

from dpkit.accountant.rlsvi import rlsvi_closed_form
from dpkit.algorithms.rlsvi import rlsvi_run


@pytest.mark.parametrize("env", ["riverswim", "riverswim-inhomogeneous", "tabular"])
def test_run_json_has_both_epsilons(capsys: pytest.CaptureFixture[str], env: str) -> None:
    obj = run_json(capsys, "rlsvi", "--run", "--env", env, "-S", "3", "-K", "200", "--seed", "4", "--delta", "1e-5")
    cf = rlsvi_closed_form(states=3, actions=2, horizon=6, episodes=200, delta=1e-5)
    assert (obj["states"], obj["actions"], obj["horizon"], obj["episodes"]) == (3, 2, 6, 200)
    assert obj["env"] == env and obj["seed"] == 4
    assert obj["epsilon_paper"] == cf.epsilon_paper and obj["epsilon_exact_gdp"] == cf.epsilon_exact_gdp
    assert 0.0 < obj["epsilon_run_exact"] <= obj["epsilon_worst_case_exact"] < obj["epsilon_paper"]
    assert obj["mu_run"] <= obj["mu_worst_case"]
    assert 1 <= obj["worst_user"] < 200
    _, privacy = rlsvi_run(env, 3, 2, 200, 4, delta=1e-5)  # the CLI is the API
    assert obj["mu_run"] == privacy.mu and obj["epsilon_run_exact"] == privacy.exact_epsilon(1e-5)
    # the run's figure is labelled ex-post; the worst case beside it is the API's, at the run's noise
    assert obj["run_privacy_kind"] == "ex-post" and obj["epsilon_run_data_dependent"] is True
    assert obj["mu_worst_case"] == pytest.approx(privacy.mu_worst_case, rel=1e-12)


def test_run_table_and_plain_mode_unchanged(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "rlsvi", "--run", "-S", "2", "-K", "50", "--delta", "0.01")
    assert code == 0, err
    assert "ε this run, ex-post (data-dependent)" in out and "ε paper" in out
    assert out.index("ε worst case, exact") < out.index("ε this run, ex-post")  # the guarantee beside it
    assert "not a DP guarantee" in " ".join(out.split())
    code, out, err = run(capsys, "rlsvi", "-S", "2", "-A", "2", "-H", "4", "-K", "50", "--delta", "0.01")
    assert code == 0 and "this run" not in out


@pytest.mark.parametrize(
    "argv",
    [
        ["rlsvi", "--run", "-S", "3", "-A", "3", "-K", "20", "--delta", "0.1"],  # RiverSwim has 2 actions
        ["rlsvi", "--run", "-S", "1", "-K", "20", "--delta", "0.1"],
        ["rlsvi", "--run", "-S", "3", "-K", "0", "--delta", "0.1"],
        ["rlsvi", "--run", "-S", "3", "-K", "1", "--delta", "0.1"],
        ["rlsvi", "--run", "-S", "3", "-K", "20", "--delta", "2"],
        ["rlsvi", "--run", "-S", "3", "-K", "20", "--delta", "0.1", "--seed", "-1"],
        ["rlsvi", "--run", "-S", "3", "-K", "20", "--delta", "0.1", "--env", "lake"],
        ["rlsvi", "--run", "-S", "3", "-K", "20", "--delta", "0.1", "-H", "0"],
        ["rlsvi", "-S", "3", "-K", "20", "--delta", "0.1"],  # without --run, A and H are needed
        ["rlsvi", "-S", "3", "-A", "2", "-H", "6", "-K", "20", "--delta", "0.1", "--env", "tabular"],
    ],
)
def test_bad_input_is_one_error_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, out, err = run(capsys, *argv, "--json")
    assert code == 2
    assert out == ""
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("episodes", ["1e13", "1e15", "1e300", "1e308"])
def test_the_closed_form_answers_every_k_a_double_holds(capsys: pytest.CaptureFixture[str], episodes: str) -> None:
    """Issue 43: ``dpkit rlsvi -K 1e15`` was refused by a cap of 10¹² meant for computations that allocate per
    episode; the closed form ρ = 2AK/(H² ln(2HSA)) needs none. ρ is the formula's value (rounded up, within 1e-14),
    its ε finite, and the worst case over datasets between the integrals that bound its sum (its tail read by mpmath
    where cK is beyond the doubles)."""
    import mpmath

    obj = run_json(capsys, "rlsvi", "-S", "2", "-A", "2", "-H", "4", "-K", episodes, "--delta", "1e-5")
    k = float(episodes)
    rho = 2 * 2 * (k / (16 * mpmath.log(2 * 4 * 2 * 2)))
    assert rho <= obj["rho"] <= rho * (1 + 1e-14)
    assert obj["episodes"] == int(k) and obj["epsilon_paper"] < float("inf") and obj["epsilon_worst_case_exact"] > 0
    # μ² = Σ_{k=2}^{K} 4/(S H² ln(ck)), c = 2HSA: at least ∫_2^{K+1} and at most ∫_1^{K} of the decreasing term
    c, per = mpmath.mpf(32), mpmath.mpf(4) / (2 * 16)
    li = lambda x: mpmath.ei(mpmath.log(c * x)) / c  # noqa: E731  # ∫ dx/ln(cx)
    low, high = per * (li(k + 1) - li(2)), per * (li(k) - li(1))
    assert low <= mpmath.mpf(obj["mu_worst_case"]) ** 2 <= high * (1 + 1e-9)


def test_a_run_keeps_its_limit(capsys: pytest.CaptureFixture[str]) -> None:
    """--run simulates every episode: it keeps the run's limit, and says it."""
    code, out, err = run(capsys, "rlsvi", "--run", "-S", "2", "-K", "1e15", "--delta", "1e-5")
    assert code == 2 and out == "" and "--episodes = 1.000e+15 is above the limit of 1,000,000" in err, err
