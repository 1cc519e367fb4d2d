"""The episode driver, σ resolution and the regret slope."""

from __future__ import annotations

import numpy as np
import pytest

from dpkit.accountant.algorithm_ledgers import algorithm_ledger
from dpkit.algorithms.envs.tabular import Users, random_tabular, riverswim
from dpkit.algorithms.episodes import MAX_SIGMA, Plan, resolve_sigmas, run_tabular, sample_actions
from dpkit.algorithms.ldp_ucrl_vtr import declare_privacy as ldp_declaration
from dpkit.algorithms.linopt import declare_privacy as linopt_declaration
from dpkit.algorithms.simulation import Experiment, regret_slope


class _Fixed:
    """A fixed stochastic or deterministic policy that releases its episode index."""

    name = "fixed"

    def __init__(self, policy: np.ndarray) -> None:
        self.policy = policy
        self.seen: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def plan(self, k: int) -> Plan:
        return Plan(self.policy, {"k": np.array(k)})

    def update(self, k, states, actions, rewards):  # type: ignore[no-untyped-def]
        self.seen.append((states.copy(), actions.copy(), rewards.copy()))
        return {"sum": np.array(rewards.sum())}


def test_run_records_trajectories_regret_and_releases() -> None:
    env = riverswim(3)
    users = Users.draw(50, env.horizon, 0)
    agent = _Fixed(np.zeros((env.horizon, 3), dtype=int))
    run = run_tabular(agent, env, users, 1, record=True)
    assert run.regret.shape == (50,) and np.allclose(run.regret, env.regret(agent.policy))
    assert run.states.shape == (50, env.horizon + 1) and run.actions.shape == (50, env.horizon)
    assert np.array_equal(run.releases["k"], np.arange(50))
    assert np.allclose(run.releases["sum"], run.returns)
    assert np.all(run.actions == 0) and np.all(run.states[:, 0] == 0)
    assert np.allclose(run.cumulative_regret[-1], 50 * env.regret(agent.policy))
    assert len(agent.seen) == 50


@pytest.mark.slow
def test_stochastic_policy_actions_follow_the_probabilities() -> None:
    env = random_tabular(1, 3, 1, 0)
    probs = np.array([[[0.2, 0.5, 0.3]]])
    run = run_tabular(_Fixed(probs), env, Users.draw(30_000, 1, 2), 3)
    freq = np.bincount(run.actions[:, 0], minlength=3) / 30_000
    assert np.all(np.abs(freq - probs[0, 0]) < 5 * np.sqrt(0.25 / 30_000))
    assert sample_actions(np.array([0.0, 1.0]), 0.0) == 1


def test_same_seed_same_run() -> None:
    env = random_tabular(2, 2, 3, 1)
    probs = np.full((3, 2, 2), 0.5)
    users = Users.draw(40, 3, 5)
    a = run_tabular(_Fixed(probs), env, users, 7)
    b = run_tabular(_Fixed(probs), env, users, 7)
    assert np.array_equal(a.actions, b.actions) and np.array_equal(a.rewards, b.rewards)


def test_resolve_sigmas() -> None:
    decl = ldp_declaration(6, 1.0, 0.1, reading="experiment", states=3)
    paper = resolve_sigmas(decl, "paper")
    assert paper == {r.name: r.sigma_paper for r in decl.releases}
    tight = resolve_sigmas(decl, "tight")
    assert list(tight.values()) == list(algorithm_ledger(decl).sigmas_tight)
    assert resolve_sigmas(decl, 0) == dict.fromkeys(paper, 0.0)
    lin = linopt_declaration("private-linopt-vi", 100, 3, 1.0, 0.1, 4)
    mapping = {r.name: 1.0 + i for i, r in enumerate(lin.releases)}
    assert resolve_sigmas(lin, mapping) == mapping
    with pytest.raises(ValueError, match="loose"):
        resolve_sigmas(decl, "loose")
    with pytest.raises(ValueError, match="missing"):
        resolve_sigmas(lin, {"B_{h,p,1}": 1.0})
    with pytest.raises(ValueError, match="sigma"):
        resolve_sigmas(decl, -1.0)
    assert resolve_sigmas(decl, MAX_SIGMA) == dict.fromkeys(paper, MAX_SIGMA)
    with pytest.raises(ValueError, match="too large"):
        resolve_sigmas(decl, 1e308)
    with pytest.raises(ValueError, match="too large"):
        resolve_sigmas(lin, dict.fromkeys(mapping, 1e101))


def test_regret_slope() -> None:
    k = np.arange(1, 10_001)
    assert regret_slope(3.0 * np.sqrt(k)) == pytest.approx(0.5, abs=1e-9)
    assert regret_slope(0.1 * k) == pytest.approx(1.0, abs=1e-9)
    assert np.isnan(regret_slope(np.zeros(100)))
    with pytest.raises(ValueError, match="cumulative_regret"):
        regret_slope(np.ones(1))


def test_experiment_validates_at_the_boundary() -> None:
    with pytest.raises(ValueError, match="lq"):
        Experiment("ofu-rl", "riverswim", 10)
    with pytest.raises(ValueError, match="epsilon"):
        Experiment("ldp-ucrl-vtr", "riverswim", 10)
    with pytest.raises(ValueError, match="sigma"):
        Experiment("ucrl-vtr", "riverswim", 10, sigma="tight")
    with pytest.raises(ValueError, match="actions"):
        Experiment("ucrl-vtr", "riverswim", 10, actions=3)
    with pytest.raises(ValueError, match="algorithm"):
        Experiment("dqn", "riverswim", 10)
    assert Experiment("rlsvi", "tabular", 10).to_dict()["options"] == {}


@pytest.mark.parametrize("sigma", ["paper", "tight", "optimal"])
def test_sigmas_worked_out_once_are_those_worked_out_afresh(sigma: str) -> None:
    """The caches (declarations, the ledgers' allocations, calibrations) change when σ is computed, never what it
    is: forgotten (clear_sigma_caches), a declaration and its σ come out the same bit for bit."""
    from dpkit.algorithms.episodes import clear_sigma_caches

    cached = [resolve_sigmas(linopt_declaration("private-linopt-vi", 100, 3, 1.0, 0.1, 4), sigma) for _ in range(2)]
    clear_sigma_caches()
    fresh = resolve_sigmas(linopt_declaration("private-linopt-vi", 100, 3, 1.0, 0.1, 4), sigma)
    assert cached[0] == cached[1] == fresh
