"""OFU-RL and Private-OFU-RL (seed 003): σ = 0 equals the non-private agent, confidence sets cover,
the optimistic step's guarantee, the released prefixes' noise, regret against u = 0, bad inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpkit.accountant.tree import symmetric_noise_norm_bound
from dpkit.algorithms import ofu_rl
from dpkit.algorithms.envs.lq import LQSystem, LQUsers, random_lq
from dpkit.algorithms.episodes import resolve_sigmas
from dpkit.algorithms.ofu_rl import (
    Ellipsoid,
    OfuRl,
    PrivateOfuRl,
    confidence_radius,
    make_agent,
    optimistic_theta,
    run_lq,
)

FAST = {"candidates": 4, "refine_rounds": 2}


def control_matters() -> LQSystem:
    """n = 2, d = 1, where u = 0 is a poor policy (cheap, effective control) and the optimum stays within γ."""
    a = np.array([[0.3, 0.2], [0.0, 0.35]])
    b = np.array([[0.6], [0.5]])
    gamma = (1 - np.linalg.norm(a, 2) - 0.1) / np.linalg.norm(b, 2)
    return LQSystem(a, b, np.eye(2), 0.05 * np.eye(1), 10, 0.1, gamma, np.array([0.0, 1.0]))


def trajectories(system: LQSystem, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``count`` episodes under random gains (exploring), clipped controls: states and controls."""
    gains = rng.normal(size=(count, system.horizon, system.control_dim, system.state_dim))
    noise = LQUsers.draw(count, system, rng).noise
    states, controls, _ = system.rollout(gains, noise)
    return states, controls


# ------------------------------------------------------------------ σ = 0 is OFU-RL


def test_private_with_zero_sigma_plays_the_controls_of_ofu_rl() -> None:
    system = random_lq(2, 1, 6, 0, r=0.1)
    users = LQUsers.draw(24, system, 1)
    plain = run_lq(make_agent("ofu-rl", system, 24, 7, **FAST), system, users, 0, record=True)
    agent = make_agent("private-ofu-rl", system, 24, 7, epsilon=1.0, delta=1e-5, sigma=0.0, **FAST)
    private = run_lq(agent, system, users, 0, record=True)
    assert agent.sigmas == {"B1": 0.0, "B2": 0.0} and agent.shift == 1.0
    np.testing.assert_array_equal(private.actions, plain.actions)
    np.testing.assert_array_equal(private.states, plain.states)
    np.testing.assert_array_equal(private.regret, plain.regret)
    for name in ("B1", "B2"):
        np.testing.assert_array_equal(private.releases[name], plain.releases[name])
    # and a different seed gives different controls (the equality is not vacuous)
    other = run_lq(make_agent("ofu-rl", system, 24, 8, **FAST), system, users, 0)
    assert not np.array_equal(other.actions, plain.actions)


# ------------------------------------------------------------------ confidence sets


def test_self_normalised_radius_covers_at_the_nominal_rate_with_gaussian_noise() -> None:
    """x′ = Θ*ᵀz + w, w ~ N(0, s²I): ‖V^{1/2}(Θ̂ − Θ*)‖_F <= β(α) in >= 1 − α of 400 seeds (vectorised)."""
    seeds, t_, p, n, s, lam, alpha = 400, 60, 3, 2, 0.5, 1.0, 0.1
    rng = np.random.default_rng(0)
    theta = rng.normal(size=(p, n))
    theta /= np.linalg.norm(theta)  # ‖Θ*‖_F = 1
    z = rng.uniform(-1, 1, size=(seeds, t_, p)) / math.sqrt(p)
    x_next = z @ theta + s * rng.normal(size=(seeds, t_, n))
    gram = np.einsum("kti,ktj->kij", z, z)
    v = gram + lam * np.eye(p)
    centre = np.linalg.solve(v, np.einsum("kti,ktj->kij", z, x_next))
    err = centre - theta
    dist = np.sqrt(np.einsum("kij,kil,klj->k", err, v, err))
    ratio = np.linalg.slogdet(np.eye(p) + gram / lam)[1]
    beta = np.array(
        [confidence_radius(r, state_dim=n, noise_scale=s, alpha=alpha, lambda_max=lam, theta_bound=1.0) for r in ratio]
    )
    coverage = np.mean(dist <= beta)
    assert coverage >= 1 - alpha - 0.03
    # the radius is not vacuous: a third of it already misses most of the time
    assert np.mean(dist <= beta / 3) < 1 - alpha


@pytest.mark.parametrize("sigma", [0.0, 1.0])
def test_agent_ellipsoid_contains_the_true_theta(sigma: float) -> None:
    """The agent's own V, Θ̂, β (with counter noise, η = λ + 2Λ) cover Θ* over 200 seeds."""
    system = random_lq(2, 1, 5, 2)
    k_, covered, seeds = 12, 0, 200
    rng = np.random.default_rng(1)
    for seed in range(seeds):
        agent = PrivateOfuRl(system, k_, seed, epsilon=1.0, delta=1e-5, sigma=sigma, **FAST)
        states, controls = trajectories(system, k_ - 1, rng)
        for k in range(k_ - 1):
            agent.update(k, states[k], controls[k], np.zeros(system.horizon))
        covered += bool(agent.ellipsoid().contains(system.theta))
    assert covered / seeds >= 0.95 - 0.03
    if sigma > 0:
        m = agent.psums_per_prefix
        assert agent.noise_norm_bound == symmetric_noise_norm_bound(
            sigma, psums=m, dim=3, failure_probability=0.05 / 2 / 2 / k_
        )
        assert agent.shift == pytest.approx(1.0 + 2 * agent.noise_norm_bound)
        assert agent.alpha_self_normalised == 0.025


# ------------------------------------------------------------------ the optimistic step


def random_ellipsoid(rng: np.random.Generator, theta: np.ndarray, spread: float) -> Ellipsoid:
    p = theta.shape[0]
    z = rng.normal(size=(rng.integers(2, 40), p)) * 0.5
    centre = theta + spread * rng.normal(size=theta.shape)
    return Ellipsoid(centre, z.T @ z + rng.uniform(0.2, 2.0) * np.eye(p), rng.uniform(0.05, 2.0))


def test_optimistic_choice_is_feasible_and_no_worse_than_the_centre() -> None:
    system = random_lq(2, 1, 6, 3, r=0.2)
    agent = OfuRl(system, 10, 0)
    rng = np.random.default_rng(4)
    outside = 0
    for i in range(40):
        ell = random_ellipsoid(rng, system.theta, 0.05 if i % 2 else 0.5)
        choice = optimistic_theta(ell, agent.optimal_costs_and_gradients, i, gradient=True, theta_bound=1.0)
        assert choice.cost == pytest.approx(float(agent.optimal_costs(choice.theta[None])[0]), rel=1e-12)
        assert choice.cost <= choice.anchor_cost
        if choice.constrained:
            assert ell.contains(choice.theta) and ell.contains(choice.anchor)
            assert np.linalg.norm(choice.theta) <= 1 + 1e-9 and np.linalg.norm(choice.anchor) <= 1 + 1e-9
        else:
            assert ell.contains(choice.theta)
            assert np.linalg.norm(ell.min_norm_point()) > 1  # F really is empty
        if np.linalg.norm(ell.centre) <= 1:
            np.testing.assert_array_equal(choice.anchor, ell.centre)
            assert choice.cost <= float(agent.optimal_costs(ell.centre[None])[0])
        else:
            outside += 1
    assert outside > 0  # the anchor construction was exercised
    # without the gradient (random local search) the same guarantee holds
    ell = random_ellipsoid(rng, system.theta, 0.05)
    choice = optimistic_theta(ell, agent.optimal_costs, 0, refine_rounds=5)
    assert ell.contains(choice.theta) and choice.cost <= choice.anchor_cost


def test_optimistic_choice_nearly_reaches_the_brute_force_minimum_in_two_dimensions() -> None:
    """n = d = 1: Θ = (a, b) ∈ R², so the feasible set can be gridded densely."""
    system = LQSystem(np.array([[0.5]]), np.array([[0.4]]), np.eye(1), 0.2 * np.eye(1), 6, 0.1, 1.0, np.array([1.0]))
    agent = OfuRl(system, 10, 0)
    rng = np.random.default_rng(5)
    radius, angle = np.meshgrid(np.sqrt(np.linspace(0, 1, 300)), np.linspace(0, 2 * np.pi, 600))
    disc = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=-1).reshape(-1, 2, 1)
    for i in range(6):
        ell = random_ellipsoid(rng, system.theta, 0.2)
        grid = ell.point(ell.radius * disc)
        grid = grid[np.linalg.norm(grid, axis=(1, 2)) <= 1.0]
        if grid.shape[0] < 100:
            continue
        brute = float(agent.optimal_costs(grid).min())
        choice = optimistic_theta(ell, agent.optimal_costs_and_gradients, i, gradient=True)
        assert choice.cost <= brute + 1e-5 * abs(brute)


def test_gradient_of_the_optimal_cost_matches_finite_differences() -> None:
    agent = OfuRl(random_lq(2, 1, 6, 0), 10, 0)
    thetas = np.random.default_rng(5).normal(size=(3, 3, 2)) * 0.4
    costs, grads = agent.optimal_costs_and_gradients(thetas)
    np.testing.assert_allclose(costs, agent.optimal_costs(thetas), rtol=1e-14)
    eps = 1e-6
    for idx in [(0, 0), (1, 1), (2, 0), (2, 1)]:
        e = np.zeros((3, 2))
        e[idx] = eps
        fd = (agent.optimal_costs(thetas + e) - agent.optimal_costs(thetas - e)) / (2 * eps)
        np.testing.assert_allclose(grads[:, idx[0], idx[1]], fd, rtol=1e-6, atol=1e-9)


def test_min_norm_point_of_an_ellipsoid() -> None:
    rng = np.random.default_rng(6)
    for _ in range(5):
        ell = random_ellipsoid(rng, np.full((3, 2), 1.0), 0.3)
        low = ell.min_norm_point()
        assert ell.distance(low) == pytest.approx(ell.radius, rel=1e-9)
        inside = ell.point(
            ell.radius
            * rng.uniform(0, 1, size=(20000, 1, 1)) ** 0.5
            * (g := rng.normal(size=(20000, 3, 2)))
            / np.linalg.norm(g, axis=(1, 2))[:, None, None]
        )
        assert np.linalg.norm(inside, axis=(1, 2)).min() >= np.linalg.norm(low) - 1e-12


# ------------------------------------------------------------------ what is released


def test_released_prefixes_carry_the_declared_noise() -> None:
    """B1 symmetric; prefix noise (released − exact sums) has std sqrt(popcount(k))·σ per entry."""
    system = random_lq(2, 1, 3, 4)
    sigma, k_ = 0.7, 32
    b1_noise, b2_noise, diag = [], [], []
    iu = np.triu_indices(3)
    for seed in range(20):
        users = LQUsers.draw(k_, system, seed)
        agent = make_agent("private-ofu-rl", system, k_, seed, epsilon=1.0, delta=1e-5, sigma=sigma, **FAST)
        run = run_lq(agent, system, users, 0, record=True)
        b1, b2 = run.releases["B1"], run.releases["B2"]
        assert b1.shape == (k_, 3, 3) and b2.shape == (k_, 3, 2)
        np.testing.assert_array_equal(b1, np.swapaxes(b1, 1, 2))
        assert not b1[0].any() and not b2[0].any()  # episode 1: the empty prefix, nothing released
        z = np.concatenate([run.states[:, :-1], run.actions], axis=2)
        exact1 = np.concatenate([np.zeros((1, 3, 3)), np.cumsum(np.einsum("khi,khj->kij", z, z), axis=0)[:-1]])
        exact2 = np.concatenate(
            [np.zeros((1, 3, 2)), np.cumsum(np.einsum("khi,khj->kij", z, run.states[:, 1:]), axis=0)[:-1]]
        )
        scale = np.sqrt([bin(k).count("1") for k in range(1, k_)])[:, None, None]  # p-sums in prefix 1..k
        n1 = (b1 - exact1)[1:] / scale
        b1_noise.append(n1[:, iu[0], iu[1]].ravel())
        diag.append(np.diagonal(n1, axis1=1, axis2=2).ravel())
        b2_noise.append(((b2 - exact2)[1:] / scale).ravel())
    for values in (np.concatenate(b1_noise), np.concatenate(b2_noise)):
        # prefixes share p-sums: allow for the correlation (<= 3 p-sums in common on average) in the mean's error
        assert abs(values.mean()) < 4 * sigma * math.sqrt(3 / values.size)
        assert values.std() == pytest.approx(sigma, rel=0.1)
    assert np.concatenate(diag).std() == pytest.approx(sigma, rel=0.2)  # N(0, σ²) on the diagonal, not 2σ²


def test_sigmas_come_from_the_declaration() -> None:
    system = random_lq(2, 1, 5, 0)
    decl = ofu_rl.declare_privacy(100, 5, 1.0, 1e-5, system.gamma)
    for sigma in ("paper", "tight", 2.5, {"B1": 3.0, "B2": 1.0}):
        agent = make_agent("private-ofu-rl", system, 100, 0, epsilon=1.0, delta=1e-5, sigma=sigma)
        want = resolve_sigmas(decl, sigma)
        assert agent.sigmas == want and agent.declaration == decl
        assert agent._b1.sigma == want["B1"] and agent._b2.sigma == want["B2"] and agent._b1.symmetric
        assert agent.name == "private-ofu-rl"
    assert (
        make_agent("private-ofu-rl", system, 100, 0, epsilon=1.0, delta=1e-5).sigmas["B1"]
        == decl.releases[0].sigma_paper
    )
    plain = make_agent("ofu-rl", system, 100, 0, epsilon=1.0, delta=1e-5)
    assert plain.sigmas == {} and plain.declaration is None and plain.name == "ofu-rl"


# ------------------------------------------------------------------ regret


def test_ofu_rl_regret_beats_the_zero_policy_and_flattens() -> None:
    system = control_matters()
    zero_regret = system.regret(np.zeros((system.horizon, 1, 2)))
    k_ = 150
    run = run_lq(make_agent("ofu-rl", system, k_, 0), system, LQUsers.draw(k_, system, 0), 0)
    assert run.regret.shape == (k_,) and np.all(run.regret >= 0)
    assert run.states.shape == (k_, 11, 2) and run.actions.shape == (k_, 10, 1) and run.rewards.shape == (k_, 10)
    np.testing.assert_allclose(run.returns, run.rewards.sum(axis=1))
    assert run.cumulative_regret[-1] < 0.5 * k_ * zero_regret
    assert run.regret[-50:].mean() < 0.1 * zero_regret  # sublinear: the last third costs almost nothing
    assert run.regret[-50:].mean() < 0.1 * run.regret[:50].mean()


# ------------------------------------------------------------------ bad inputs


def test_bad_inputs_raise_naming_the_value() -> None:
    system = random_lq(2, 1, 5, 0)
    with pytest.raises(ValueError, match=r"name must be one of ofu-rl, private-ofu-rl; got 'ofu'"):
        make_agent("ofu", system, 10, 0)
    with pytest.raises(ValueError, match=r"sigma must be 'paper', 'tight', a number >= 0.*'paperz'"):
        make_agent("private-ofu-rl", system, 10, 0, epsilon=1.0, delta=1e-5, sigma="paperz")
    with pytest.raises(ValueError, match=r"sigma must be >= 0, got -1\.0"):
        make_agent("private-ofu-rl", system, 10, 0, epsilon=1.0, delta=1e-5, sigma=-1.0)
    with pytest.raises(ValueError, match=r"give epsilon and delta, got epsilon = None"):
        make_agent("private-ofu-rl", system, 10, 0, delta=1e-5)
    with pytest.raises(ValueError, match=r"not private.*sigma must be left at 'paper', got 1\.0"):
        make_agent("ofu-rl", system, 10, 0, sigma=1.0)
    with pytest.raises(ValueError, match=r"does not take option\(s\) beta"):
        make_agent("ofu-rl", system, 10, 0, beta=1.0)
    with pytest.raises(ValueError, match=r"regularizer must be > 0 when the Gram counter adds no noise, got 0"):
        make_agent("ofu-rl", system, 10, 0, regularizer=0)
    with pytest.raises(ValueError, match=r"alpha must lie in the open interval \(0, 1\), got 1\.5"):
        make_agent("ofu-rl", system, 10, 0, alpha=1.5)
    with pytest.raises(ValueError, match=r"epsilon must be > 0, got -1\.0"):
        make_agent("private-ofu-rl", system, 10, 0, epsilon=-1.0, delta=1e-5)
    with pytest.raises(ValueError, match=r"system must be an LQSystem, got str"):
        OfuRl("lq", 10, 0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"rng must be a numpy Generator or an integer seed >= 0, got -3"):
        OfuRl(system, 10, -3)
    other = random_lq(2, 1, 6, 0)
    with pytest.raises(ValueError, match=r"users have \(horizon, state_dim\) = \(6, 2\) but the system has \(5, 2\)"):
        run_lq(OfuRl(system, 3, 0), system, LQUsers.draw(3, other, 0), 0)
    agent = OfuRl(system, 3, 0)
    with pytest.raises(ValueError, match=r"plan\(1\) called after 0 episodes"):
        agent.plan(1)
    with pytest.raises(ValueError, match=r"states must have shape \(6, 2\) and actions \(5, 1\)"):
        agent.update(0, np.zeros((5, 2)), np.zeros((5, 1)), np.zeros(5))
    with pytest.raises(ValueError, match=r"radius must be >= 0, got -1\.0"):
        Ellipsoid(np.zeros((3, 2)), np.eye(3), -1.0)
    with pytest.raises(ValueError, match=r"gram must be positive definite"):
        Ellipsoid(np.zeros((3, 2)), -np.eye(3), 1.0)
