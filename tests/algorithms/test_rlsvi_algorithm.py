"""Tabular RLSVI (seed 002): its noise, its recorded counts and variances, and the run's exact privacy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpkit.accountant.gdp import gdp_epsilon
from dpkit.accountant.rlsvi import rlsvi_run_privacy, rlsvi_worst_case_mu, russo_beta
from dpkit.algorithms.envs.tabular import TabularMDP, Users, make_tabular, random_tabular, riverswim
from dpkit.algorithms.episodes import Run, resolve_sigmas, run_tabular
from dpkit.algorithms.rlsvi import RELEASE, Rlsvi, declare_privacy, make_agent, rlsvi_run


def _run(env: TabularMDP, episodes: int, seed: int, **kwargs: object) -> tuple[Rlsvi, Run]:
    agent = make_agent("rlsvi", env, episodes, seed, **kwargs)  # type: ignore[arg-type]
    users = Users.draw(episodes, env.horizon, seed + 1000)
    return agent, run_tabular(agent, env, users, seed, record=True, sigmas=agent.sigmas)


def _brute_counts(run: Run, states: int, actions: int) -> np.ndarray:
    """n_k(h, s, a) = #{i < k : (s_ih, a_ih) = (s, a)}, by explicit loops over the trajectories."""
    k_, h_ = run.actions.shape
    n = np.zeros((k_, h_, states, actions), dtype=np.int64)
    for k in range(1, k_):
        n[k] = n[k - 1]
        for h in range(h_):
            n[k, h, run.states[k - 1, h], run.actions[k - 1, h]] += 1
    return n


# 1. The variances are β_k/(n_k + 1) with the run's own visit counts.


@pytest.mark.parametrize("beta", [None, 0.7])
def test_variances_are_beta_over_counts_plus_one(beta: float | None) -> None:
    env = make_tabular("tabular", 3, 5, actions=2, horizon=4)
    s_, a_, h_, k_ = env.states, env.actions, env.horizon, 40
    agent, run = _run(env, k_, 3, beta=beta)
    counts = _brute_counts(run, s_, a_)
    np.testing.assert_array_equal(agent.counts, counts)
    assert agent.counts.shape == agent.variances.shape == (k_, h_, s_, a_)
    betas = np.array(
        [russo_beta(states=s_, actions=a_, horizon=h_, episode=k + 1) if beta is None else beta for k in range(k_)]
    )
    expected = betas[:, None, None, None] / (counts + 1.0)
    np.testing.assert_allclose(agent.variances, expected, rtol=1e-13, atol=0)
    assert agent.noise_scale == 1.0 and run.sigmas == agent.sigmas
    direct = rlsvi_run_privacy(agent.counts, agent.variances)  # accepts them as a run's counts
    np.testing.assert_array_equal(direct.mu_per_user, agent.run_privacy().mu_per_user)


def test_sigma_number_and_tight_scale_beta_by_the_square() -> None:
    env = riverswim(3)
    base = make_agent("rlsvi", env, 30, 0)
    sigma_paper = base.declaration.releases[0].sigma_paper
    assert base.sigmas == {RELEASE: sigma_paper}
    doubled = make_agent("rlsvi", env, 30, 0, sigma=2 * sigma_paper)
    np.testing.assert_allclose(doubled.betas, 4 * base.betas, rtol=1e-12)
    # tight: β scaled so the worst case over runs just meets the target ε
    tight = make_agent("rlsvi", env, 30, 0, sigma="tight", epsilon=1.0, delta=1e-5)
    sig = resolve_sigmas(declare_privacy(3, 2, 6, 30, 1.0, 1e-5), "tight")[RELEASE]
    assert tight.noise_scale == pytest.approx((sig / sigma_paper) ** 2, rel=1e-12)
    mu_wc = rlsvi_worst_case_mu(states=3, actions=2, horizon=6, episodes=30) / math.sqrt(tight.noise_scale)
    assert gdp_epsilon(mu_wc, 1e-5) == pytest.approx(1.0, rel=1e-3)
    users = Users.draw(30, env.horizon, 1)
    run_tabular(tight, env, users, 0)
    assert tight.run_privacy().exact_epsilon(1e-5) <= 1.0 + 1e-9


# 2. The per-run accountant against a brute-force sum.


def test_run_mu_matches_brute_force_sum() -> None:
    env = make_tabular("tabular", 2, 11, actions=2, horizon=3)
    s_, a_, h_, k_ = 2, 2, 3, 20
    agent, run = _run(env, k_, 4)
    counts = _brute_counts(run, s_, a_)
    mu_sq = []
    for j in range(k_):  # user j's rewards enter R̂ at her cells in every later episode
        total = 0.0
        for k in range(j + 1, k_):
            beta_k = russo_beta(states=s_, actions=a_, horizon=h_, episode=k + 1)
            for h in range(h_):
                n = counts[k, h, run.states[j, h], run.actions[j, h]]
                total += (1.0 / n) ** 2 / (beta_k / (n + 1))
        mu_sq.append(total)
    got = agent.run_privacy()
    np.testing.assert_allclose(got.mu_per_user, np.sqrt(mu_sq), rtol=1e-12)
    assert got.mu <= rlsvi_worst_case_mu(states=s_, actions=a_, horizon=h_, episodes=k_)
    assert got.worst_user == int(np.argmax(mu_sq)) + 1


# 3. The released Q-values carry noise of the recorded variances.


def test_released_noise_has_recorded_variances() -> None:
    env = random_tabular(3, 2, 4, 2, reward_model="bernoulli")
    s_, a_, h_, k_ = 3, 2, 4, 300
    agent, run = _run(env, k_, 8, beta=0.5)
    q = run.releases[RELEASE]
    assert q.shape == (k_, h_, s_, a_)
    greedy = q.argmax(axis=3)[np.arange(k_)[:, None], np.arange(h_), run.states[:, :-1]]
    np.testing.assert_array_equal(run.actions, greedy)  # the policy played is greedy in the released Q
    reward_sum = np.zeros((h_, s_, a_))
    nexts = np.zeros((h_, s_, a_, s_))
    n = np.zeros((h_, s_, a_))
    z = []
    for k in range(k_):
        r_hat = np.divide(reward_sum, n, out=np.zeros_like(reward_sum), where=n > 0)
        p_hat = np.divide(nexts, n[..., None], out=np.zeros_like(nexts), where=n[..., None] > 0)
        for h in range(h_):
            v_next = q[k, h + 1].max(axis=1) if h + 1 < h_ else np.zeros(s_)
            noiseless = r_hat[h] + p_hat[h] @ v_next
            z.append((q[k, h] - noiseless) / np.sqrt(agent.variances[k, h]))
        for h in range(h_):
            s, a = run.states[k, h], run.actions[k, h]
            n[h, s, a] += 1
            reward_sum[h, s, a] += run.rewards[k, h]
            nexts[h, s, a, run.states[k, h + 1]] += 1
    z = np.concatenate([x.ravel() for x in z])
    m = z.size
    assert abs(z.mean()) < 4 / math.sqrt(m)
    assert abs(z.var() - 1.0) < 4 * math.sqrt(2.0 / m)
    assert stats.kstest(z, "norm").pvalue > 1e-3


# 4. It learns: below the uniformly random policy's regret on a 2-state MDP.


def test_regret_below_uniform_policy() -> None:
    env = riverswim(2)
    h_, s_, a_ = env.horizon, env.states, env.actions
    uniform = env.regret(np.full((h_, s_, a_), 1.0 / a_))
    for seed in range(3):
        _, run = _run(env, 300, seed, beta=0.1)
        assert run.regret[-100:].mean() < 0.5 * uniform
        assert run.cumulative_regret[-1] < 300 * uniform


# 5. Reproducibility and bad inputs.


def test_same_seed_same_run() -> None:
    a, pa = rlsvi_run("riverswim-inhomogeneous", 3, 2, 60, 5, record=True)
    b, pb = rlsvi_run("riverswim-inhomogeneous", 3, 2, 60, 5, record=True)
    for field in ("regret", "returns", "states", "actions", "rewards"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    np.testing.assert_array_equal(a.releases[RELEASE], b.releases[RELEASE])
    np.testing.assert_array_equal(pa.mu_per_user, pb.mu_per_user)
    assert a.sigmas == b.sigmas and a.algorithm == "rlsvi" and a.env == "riverswim-inhomogeneous"
    c, _ = rlsvi_run("riverswim-inhomogeneous", 3, 2, 60, 6, record=True)
    assert not np.array_equal(a.releases[RELEASE], c.releases[RELEASE])


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda: make_agent("ucbvi", riverswim(2), 10, 0), "ucbvi"),
        (lambda: make_agent("rlsvi", riverswim(2), 10, 0, beta=-1.0), "beta"),
        (lambda: make_agent("rlsvi", riverswim(2), 10, 0, gamma=1.0), "gamma"),
        (lambda: make_agent("rlsvi", riverswim(2), 0, 0), "episodes"),
        (lambda: make_agent("rlsvi", riverswim(2), 1, 0), "episodes"),
        (lambda: make_agent("rlsvi", riverswim(2), 10, -3), "rng"),
        (lambda: make_agent("rlsvi", riverswim(2), 10, 0, sigma="loose"), "loose"),
        (lambda: make_agent("rlsvi", riverswim(2), 10, 0, sigma=-1.0), "sigma"),
        (lambda: make_agent("rlsvi", riverswim(2), 10, 0, delta=1.5), "delta"),
        (lambda: make_agent("rlsvi", "riverswim", 10, 0), "env"),
        (lambda: rlsvi_run("riverswim", 3, 3, 10, 0), "actions=3"),
        (lambda: rlsvi_run("lake", 3, 2, 10, 0), "lake"),
        (lambda: rlsvi_run("riverswim", 3, 2, 10, -1), "seed"),
        (lambda: Rlsvi(2, 2, 2, 5, 0).plan(1), "k=1"),
        (lambda: Rlsvi(2, 2, 2, 5, 0).update(0, np.zeros(3, int), np.zeros(2, int), np.zeros(2)), "k=0"),
        (lambda: Rlsvi(2, 2, 2, 5, 0).run_privacy(), "planned"),
    ],
)
def test_bad_inputs_name_the_value(call, needle: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=needle):
        call()


def test_bad_trajectories_are_refused() -> None:
    agent = Rlsvi(2, 2, 2, 5, 0)
    agent.plan(0)
    with pytest.raises(ValueError, match="states"):
        agent.update(0, np.array([0, 2, 1]), np.zeros(2, int), np.zeros(2))
    with pytest.raises(ValueError, match="actions"):
        agent.update(0, np.zeros(3, int), np.array([0, 5]), np.zeros(2))
    with pytest.raises(ValueError, match="shape|needs"):
        agent.update(0, np.zeros(4, int), np.zeros(2, int), np.zeros(2))
    with pytest.raises(ValueError, match="finite"):
        agent.update(0, np.zeros(3, int), np.zeros(2, int), np.array([0.0, np.nan]))
    agent.update(0, np.zeros(3, int), np.zeros(2, int), np.array([7.0, -2.0]))  # clipped to [0, 1]
    r_hat, p_hat = agent.estimates()
    assert r_hat[0, 0, 0] == 1.0 and r_hat[1, 0, 0] == 0.0 and p_hat[0, 0, 0, 0] == 1.0
    assert p_hat[0, 1].sum() == 0.0  # unvisited: P̂ = 0, so Q = w there
