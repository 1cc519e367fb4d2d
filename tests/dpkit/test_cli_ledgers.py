"""`dpkit tree`, `dpkit rlsvi` and `dpkit ledger ALGORITHM`: JSON equals the API, bad input exits 2."""

from __future__ import annotations

import json

import pytest
from cli_runs import run, run_json

from dpkit.accountant import tree as counter_tree
from dpkit.accountant.algorithm_ledgers import algorithm_ledger
from dpkit.accountant.rlsvi import rlsvi_closed_form, rlsvi_worst_case_mu
from dpkit.algorithms.registry import declare


@pytest.mark.parametrize(
    ("steps", "schedule", "m", "per_prefix"),
    [
        (1024, "after-each", 11, 10),
        (1024, "before-episode", 10, 10),
        (1000, "after-each", 10, 9),
        (1, "before-episode", 0, 0),
    ],
)
def test_tree_counts(capsys: pytest.CaptureFixture[str], steps: int, schedule: str, m: int, per_prefix: int) -> None:
    obj = run_json(capsys, "tree", "--steps", str(steps), "--schedule", schedule)
    assert obj["max_psums_per_item"] == m == counter_tree.max_psums_per_item(steps, schedule=schedule)
    assert obj["max_psums_per_prefix"] == per_prefix
    assert "epsilon" not in obj


def test_tree_epsilon_and_calibration_match_api(capsys: pytest.CaptureFixture[str]) -> None:
    obj = run_json(capsys, "tree", "--steps", "1000", "--sigma", "3", "--sensitivity", "2", "--delta", "1e-5")
    g = counter_tree.tree_epsilon(1000, sigma=3.0, delta=1e-5, sensitivity=2.0)
    assert obj["epsilon"] == g.epsilon and obj["mu"] == counter_tree.tree_mu(1000, sigma=3.0, sensitivity=2.0)
    obj = run_json(capsys, "tree", "--steps", "1000", "--epsilon", "1", "--delta", "1e-5", "--method", "zcdp")
    cal = counter_tree.calibrate_tree_sigma(1000, epsilon=1.0, delta=1e-5, method="zcdp")
    assert obj["sigma"] == cal.sigma and obj["epsilon"] <= 1.0


def test_rlsvi_matches_api(capsys: pytest.CaptureFixture[str]) -> None:
    obj = run_json(
        capsys, "rlsvi", "--states", "5", "--actions", "2", "--horizon", "10", "--episodes", "10000", "--delta", "1e-5"
    )
    cf = rlsvi_closed_form(states=5, actions=2, horizon=10, episodes=10_000, delta=1e-5)
    assert obj["rho"] == cf.rho and obj["epsilon_paper"] == cf.epsilon_paper
    assert obj["epsilon_exact_gdp"] == cf.epsilon_exact_gdp
    assert obj["mu_worst_case"] == rlsvi_worst_case_mu(states=5, actions=2, horizon=10, episodes=10_000)
    assert obj["epsilon_worst_case_exact"] < obj["epsilon_exact_gdp"] < obj["epsilon_paper"]


@pytest.mark.parametrize(
    ("argv", "params"),
    [
        (["ldp-ucrl-vtr", "--horizon", "10"], {"horizon": 10}),
        (["private-linopt-vi", "-K", "10000", "-H", "10", "-d", "10"], {"episodes": 10000, "horizon": 10, "dim": 10}),
        (
            ["private-linopt-po", "-K", "100", "-H", "3", "-d", "4", "--reading", "theorem-6.5"],
            {"episodes": 100, "horizon": 3, "dim": 4, "reading": "theorem-6.5"},
        ),
        (
            ["private-ofu-rl", "-K", "1024", "-H", "5", "--gamma", "0.5", "--schedule", "after-each"],
            {"episodes": 1024, "horizon": 5, "gamma": 0.5, "schedule": "after-each"},
        ),
        (
            ["rlsvi", "-S", "5", "-A", "2", "-H", "10", "-K", "1000"],
            {"states": 5, "actions": 2, "horizon": 10, "episodes": 1000},
        ),
    ],
)
def test_algorithm_ledger_json_matches_api(capsys: pytest.CaptureFixture[str], argv: list[str], params: dict) -> None:
    obj = run_json(capsys, "ledger", *argv, "--epsilon", "1", "--delta", "0.01")
    want = algorithm_ledger(declare(argv[0], 1.0, 0.01, **params)).to_dict()
    assert obj == json.loads(json.dumps(want))
    for key in ("releases", "sigma_paper", "sigma_tight", "noise_ratio", "epsilon_achieved_by_paper_sigma", "flags"):
        assert key in obj
    for key in ("delta_informative", "epsilon_at_informative_delta_by_paper_sigma", "mu_at_tight_sigma"):
        assert key in obj


def test_ledger_add_remove_drops_the_relation_flags(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["ledger", "private-ofu-rl", "-K", "100", "-H", "5", "--gamma", "1", "--epsilon", "1", "--delta", "0.01"]
    ro = run_json(capsys, *base)
    ar = run_json(capsys, *base, "--neighbours", "add-remove")
    assert ro["relation"] == "replace_one" and ar["relation"] == "add_remove"
    assert any(f["code"] == "paper-sensitivity-too-small" for f in ro["flags"])
    assert not any(f["code"] == "paper-sensitivity-too-small" for f in ar["flags"])
    assert ar["noise_ratio"] > ro["noise_ratio"]


def test_ledger_table_renders(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys, "ledger", "private-linopt-vi", "-K", "1000", "-H", "4", "-d", "3", "--epsilon", "1", "--delta", "0.01"
    )
    assert code == 0 and err == ""
    assert "σ tight" in out and "paper-sensitivity-too-small" in out and "B_{h,p,1}" in out
    for words in ("ε of the paper's σ at δ = 1e-05", "ε of σ_tight at δ = 1e-05", "μ at σ_tight", "K = 1,000"):
        assert words in out


@pytest.mark.parametrize(
    "argv",
    [
        ["ledger", "dp-sgd", "--epsilon", "1", "--delta", "0.1"],
        ["ledger", "rlsvi", "-S", "0", "-A", "2", "-H", "2", "-K", "3", "--delta", "0.1"],
        ["ledger", "rlsvi", "-S", "2", "-A", "0", "-H", "2", "-K", "3", "--delta", "0.1"],
        ["ledger", "rlsvi", "-S", "2", "-A", "2", "-H", "0", "-K", "3", "--delta", "0.1"],
        ["ledger", "rlsvi", "-S", "2", "-A", "2", "-H", "2", "-K", "0", "--delta", "0.1"],
        ["ledger", "rlsvi", "-S", "2", "-A", "2", "-H", "2", "-K", "3"],
        ["ledger", "private-ofu-rl", "-K", "10", "-H", "2", "--epsilon", "1", "--delta", "0.1"],
        ["ledger", "private-ofu-rl", "-K", "10", "-H", "2", "--gamma", "1", "--delta", "0.1"],
        ["ledger", "ldp-ucrl-vtr", "-H", "2", "--epsilon", "1", "--delta", "0.1", "--dim", "3"],
        ["ledger", "ldp-ucrl-vtr", "-H", "2", "--epsilon", "1", "--delta", "0.1", "--neighbours", "add-remove"],
        ["ledger", "ldp-ucrl-vtr", "-H", "2.5", "--epsilon", "1", "--delta", "0.1"],
        ["ledger", "ldp-ucrl-vtr", "-H", "2", "--epsilon", "1", "--delta", "0.1", "--neighbours", "swap"],
        ["ledger", "missing.toml", "--delta", "0.1", "--horizon", "3"],
        ["tree", "--steps", "0"],
        ["tree", "--steps", "10", "--sigma", "1"],
        ["tree", "--steps", "10", "--sigma", "-1", "--delta", "0.1"],
        ["tree", "--steps", "10", "--epsilon", "1"],
        ["tree", "--steps", "1", "--schedule", "before-episode", "--epsilon", "1", "--delta", "0.1"],
        ["rlsvi", "-S", "2", "-A", "2", "-H", "2", "-K", "2", "--delta", "1"],
        ["rlsvi", "-S", "2", "-A", "2", "-H", "-2", "-K", "2", "--delta", "0.1"],
    ],
)
def test_bad_input_is_one_error_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, out, err = run(capsys, *argv, "--json")
    assert code == 2
    assert out == ""
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1
