"""OFU-RL and Private-OFU-RL (seed 003): σ = 0 equals the non-private agent, confidence sets cover,
the optimistic step's guarantee, the released prefixes' noise, regret against u = 0, bad inputs."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from dpkit.accountant.tree import symmetric_noise_norm_bound
from dpkit.algorithms import ofu_rl
from dpkit.algorithms.envs.lq import LQSystem, random_lq
from dpkit.algorithms.envs.lq_users import LQUsers
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
    # the same λ = 1 (the paper's private λ = 0 is singular at σ = 0)
    agent = make_agent("private-ofu-rl", system, 24, 7, epsilon=1.0, delta=1e-5, sigma=0.0, regularizer=1.0, **FAST)
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
        agent = PrivateOfuRl(system, k_, seed, epsilon=1.0, delta=1e-5, sigma=sigma, regularizer=1.0, **FAST)
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
    with pytest.raises(ValueError, match=r"sigma must be 'paper', 'tight', 'optimal', a number >= 0.*'paperz'"):
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


# ------------------------------------------------------------------ the constants: the paper's defaults, a tuned preset

SEEDS_DIR = next(
    (
        p
        for p in (Path(__file__).resolve().parents[2].parent / "shared" / "seeds", Path("/work/shared/seeds"))
        if p.is_dir()
    ),
    None,
)
OFU_SEED = "003_694720e95801ffe3.txt"


@pytest.mark.skipif(SEEDS_DIR is None, reason="the seed files are not beside the repository")
def test_the_constants_quoted_are_the_seeds() -> None:
    assert SEEDS_DIR is not None
    text = (SEEDS_DIR / OFU_SEED).read_text()
    for quote in (
        r"Setting $\eta = 2\Lambda$, we ensure that H_k is p.d.",  # Private-OFU-RL: no base ridge
        r"when $H_k = \lambda I$, we get back the standard estimate of [14]",  # OFU-RL: λ unstated
        r"\|\Theta\|_F \leq 1",  # S = 1
        r"\beta_k(\alpha) := C_w \sqrt{",  # R = C_w
        r"find $\tilde{\Theta}_k \in \arg \min_{\Theta \in \mathcal{C}_k(\alpha) \cap \mathcal{S}} J_1^*",  # exact
    ):
        assert quote in text, quote
    assert r"\lambda = 1" not in text and "λ = 1" not in text  # the paper states no λ for OFU-RL


def test_the_defaults_are_the_papers() -> None:
    system = random_lq(2, 1, 5, 2)
    assert ofu_rl.REGULARIZER == 1.0 and ofu_rl.PRIVATE_REGULARIZER == 0.0
    plain = make_agent("ofu-rl", system, 16, 0)
    assert plain.regularizer == 1.0 and plain.shift == 1.0 and plain.lambda_min == 1.0
    assert plain.theta_bound == 1.0 and plain.noise_scale == system.noise_bound and plain.alpha == 0.05
    assert (plain.candidates, plain.refine_rounds, plain.line_search) == (32, 10, 8)
    private = make_agent("private-ofu-rl", system, 16, 0, epsilon=1.0, delta=1e-5)
    big_lambda = private.noise_norm_bound
    # the paper's η = 2Λ, λ_min = Λ, λ_max = 3Λ, ν = ‖L‖-bound/√Λ (proof of Thm 3)
    assert private.regularizer == 0.0 and big_lambda > 0
    assert (
        private.shift == 2.0 * big_lambda and private.lambda_min == big_lambda and private.lambda_max == 3 * big_lambda
    )
    assert private.nu == private.cross_noise_bound / math.sqrt(big_lambda)
    # at σ = 0 the paper's λ = 0 leaves V singular: refused
    with pytest.raises(ValueError, match=r"regularizer must be > 0 when the Gram counter adds no noise, got 0.0"):
        make_agent("private-ofu-rl", system, 16, 0, epsilon=1.0, delta=1e-5, sigma=0.0)


def test_the_tuned_preset_is_its_options_and_explicit_options_win() -> None:
    system = random_lq(2, 1, 5, 2)
    assert dict(ofu_rl.TUNED) == {"regularizer": 1.0, "candidates": 32, "refine_rounds": 10, "line_search": 8}
    tuned = make_agent("private-ofu-rl", system, 16, 0, epsilon=1.0, delta=1e-5, preset="tuned")
    assert tuned.regularizer == 1.0 and tuned.shift == 1.0 + 2.0 * tuned.noise_norm_bound
    mine = make_agent("private-ofu-rl", system, 16, 0, epsilon=1.0, delta=1e-5, preset="tuned", regularizer=0.5)
    assert mine.regularizer == 0.5 and mine.candidates == 32
    with pytest.raises(ValueError, match="preset"):
        make_agent("ofu-rl", system, 16, 0, preset="best")


# Before the defaults became the paper's (and before the regret was the played policy's), dpkit's
# ``simulate`` gave, at seed 3 of Experiment(name, "lq", 12, horizon=5[, epsilon=2, delta=0.1]): these sums of
# the regret and of the returns (no control was clipped in these runs, so the regret is the same figure).
PREVIOUS_LQ = {
    "ofu-rl": (0.13775497750208032, -14.61551542279513),
    "private-ofu-rl": (0.12812167202896174, -14.608517626653954),
}


@pytest.mark.parametrize("name", sorted(PREVIOUS_LQ))
def test_the_tuned_preset_reproduces_the_previous_runs(name: str) -> None:
    from dpkit.algorithms.simulation import Experiment, simulate

    private = dict(epsilon=2.0, delta=0.1) if name.startswith("private") else {}
    run = simulate(Experiment(name, "lq", 12, horizon=5, options=(("preset", "tuned"),), **private), 3)
    # the same trajectory to the last few bits: BLAS kernels (OPENBLAS_CORETYPE) may differ in the last digit
    assert (float(np.sum(run.regret)), float(np.sum(run.returns))) == pytest.approx(PREVIOUS_LQ[name], rel=1e-12)
    if name.startswith("private"):  # the paper's λ = 0 plays other controls
        paper = simulate(Experiment(name, "lq", 12, horizon=5, **private), 3)
        assert not np.array_equal(paper.actions, run.actions)


# ------------------------------------------------------------------ the regret is the played policy's


def clipping_system() -> LQSystem:
    """γ ≈ 0.25 and cheap controls: the optimal gains sit at γ, so OFU's early gains are clipped."""
    return random_lq(2, 1, 10, np.random.default_rng(0), a_norm=0.5, b_norm=0.9, noise_bound=0.3, r=0.01)


def _riccati_gains(system: LQSystem) -> tuple[np.ndarray, float]:
    """K*_h and J*(x0) from a Riccati recursion written here (P_H = 0)."""
    a, b, q, r, w = system.A, system.B, system.Q, system.R, system.noise_covariance
    p = np.zeros_like(q)
    gains, trace = [], 0.0
    for _ in range(system.horizon):
        trace += float(np.trace(p @ w))
        k = -np.linalg.solve(r + b.T @ p @ b, b.T @ p @ a)
        p = q + a.T @ p @ a + a.T @ p @ b @ k
        gains.append(k)
    return np.array(gains[::-1]), float(system.x0 @ p @ system.x0) + trace


def _linear_cost(system: LQSystem, gains: np.ndarray) -> float:
    """E[Σ_h xᵀQx + uᵀRu] under u = K_h x (unclipped), by propagating the mean and second moment."""
    x, m = system.x0.copy(), np.outer(system.x0, system.x0)
    total = 0.0
    for k in gains:
        f = system.A + system.B @ k
        total += float(np.trace((system.Q + k.T @ system.R @ k) @ m))
        x, m = f @ x, f @ m @ f.T + system.noise_covariance
    return total


def _rollout_cost(system: LQSystem, gains: np.ndarray, noise: np.ndarray, clip: bool) -> tuple[np.ndarray, float]:
    """Controls and cost of one episode, u = K_h x, scaled onto the ball of radius γ when ``clip``."""
    x, cost, controls = system.x0.copy(), 0.0, []
    for k, w in zip(gains, noise):
        u = k @ x
        if clip and np.linalg.norm(u) > system.gamma:
            u = u * (system.gamma / np.linalg.norm(u))
        cost += float(x @ system.Q @ x + u @ system.R @ u)
        controls.append(u)
        x = system.A @ x + system.B @ u + w
    return np.array(controls), cost


def _recording(agent: OfuRl) -> list[np.ndarray]:
    gains: list[np.ndarray] = []
    plan = agent.plan

    def recorded(k: int):  # type: ignore[no-untyped-def]
        out = plan(k)
        gains.append(np.array(out.policy))
        return out

    agent.plan = recorded  # type: ignore[method-assign]
    return gains


@pytest.mark.parametrize("name", ["ofu-rl", "private-ofu-rl"])
def test_the_regret_reported_is_that_of_the_controls_played(name: str) -> None:
    """regret[k] = [J^K − J*] + [C_k(played) − C_k(K x)], each term recomputed here from the run."""
    system = clipping_system()
    k_ = 30
    users = LQUsers.draw(k_, system, 3)
    private = dict(epsilon=1.0, delta=0.1, sigma=1.0) if name.startswith("private") else {}
    agent = make_agent(name, system, k_, 0, **FAST, **private)
    gains = _recording(agent)
    run = run_lq(agent, system, users, 0)
    optimal_gains, optimal_cost = _riccati_gains(system)
    np.testing.assert_allclose(optimal_cost, system.optimal_cost(), rtol=1e-12)
    linear = system.regret(np.stack(gains))  # batched, as run_lq computes it
    clipped = 0
    for k in range(k_):
        controls, played = _rollout_cost(system, gains[k], users.noise[k], clip=True)
        np.testing.assert_allclose(run.actions[k], controls, rtol=1e-12, atol=1e-15)  # what was played
        np.testing.assert_allclose(-run.returns[k], played, rtol=1e-12)
        linear_controls, unclipped = _rollout_cost(system, gains[k], users.noise[k], clip=False)
        was_clipped = not np.allclose(linear_controls, controls, rtol=0, atol=1e-15)
        clipped += was_clipped
        want = max(_linear_cost(system, gains[k]) - optimal_cost, 0.0) + (played - unclipped)
        np.testing.assert_allclose(run.regret[k], want, rtol=1e-9, atol=1e-12)
        if not was_clipped:  # nothing clipped: the exact regret of the linear policy, as before
            assert run.regret[k] == max(linear[k], 0.0)
    assert clipped >= (5 if name == "ofu-rl" else 2)  # not vacuous: the clip changed some episodes' controls


class _Fixed:
    """An agent that plays the same gains every episode (for :func:`run_lq`)."""

    name = "fixed"
    sigmas: dict[str, float] = {}

    def __init__(self, gains: np.ndarray) -> None:
        self.gains = gains

    def plan(self, k: int):  # type: ignore[no-untyped-def]
        from dpkit.algorithms.episodes import Plan

        return Plan(self.gains, {})

    def update(self, k: int, *trajectory: object) -> dict:
        return {}


@pytest.mark.slow
def test_the_mean_regret_is_the_played_cost_minus_the_optimal_cost() -> None:
    """Over 4000 users, the mean reported regret of a policy clipped in every episode is the mean cost of the
    controls played minus J* (up to the Monte Carlo error of the unclipped cost), far from the linear figure."""
    system = clipping_system()
    gains = 3.0 * _riccati_gains(system)[0]
    users = LQUsers.draw(4000, system, 5)
    run = run_lq(_Fixed(gains), system, users, 0)
    _, optimal_cost = _riccati_gains(system)
    played = np.array([_rollout_cost(system, gains, w, clip=True)[1] for w in users.noise])
    unclipped = np.array([_rollout_cost(system, gains, w, clip=False)[1] for w in users.noise])
    np.testing.assert_allclose(-run.returns, played, rtol=1e-12)
    se = unclipped.std() / math.sqrt(len(unclipped))
    assert abs(run.regret.mean() - (played.mean() - optimal_cost)) < 4 * se
    linear = _linear_cost(system, gains) - optimal_cost
    assert abs(unclipped.mean() - _linear_cost(system, gains)) < 4 * se  # the linear cost, checked by simulation
    assert linear - run.regret.mean() > 20 * se  # the old figure (the unclipped policy's) is far off
