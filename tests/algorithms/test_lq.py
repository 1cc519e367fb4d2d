"""LQ systems (seed 003): Riccati gains and exact costs against closed forms, brute force and Monte Carlo;
Assumption 1 enforced; users reproducible, neighbours and canaries."""

from __future__ import annotations

import numpy as np
import pytest

from dpkit.algorithms.envs.lq import (
    LQSystem,
    clip_norm,
    optimal_cost,
    policy_cost,
    random_lq,
    riccati,
)
from dpkit.algorithms.envs.lq_users import LQUser, LQUsers


def generic_system(seed: int, n: int = 3, d: int = 2) -> tuple[np.ndarray, ...]:
    """A, B, Q, R, x0, W of a generic (not necessarily Assumption-1) system."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, n)) * 0.5
    b = rng.normal(size=(n, d)) * 0.5
    m = rng.normal(size=(n, n))
    q = m @ m.T + 0.5 * np.eye(n)
    m = rng.normal(size=(d, d))
    r = m @ m.T + 0.5 * np.eye(d)
    x0 = rng.normal(size=n)
    m = rng.normal(size=(n, n)) * 0.3
    return a, b, q, r, x0, m @ m.T


# ------------------------------------------------------------------ Riccati and exact costs


def test_riccati_scalar_closed_form() -> None:
    a, b, q, r, h_ = 0.7, 0.4, 1.3, 0.3, 6
    p, k = riccati([[a]], [[b]], [[q]], [[r]], h_)
    want_p, want_k = [0.0], []
    for _ in range(h_):  # p_h = q + a²r p/(r + b²p), k_h = −abp/(r + b²p), backwards from p_H = 0
        nxt = want_p[0]
        want_k.insert(0, -a * b * nxt / (r + b * b * nxt))
        want_p.insert(0, q + a * a * r * nxt / (r + b * b * nxt))
    assert p.shape == (h_ + 1, 1, 1) and k.shape == (h_, 1, 1)
    np.testing.assert_allclose(p[:, 0, 0], want_p, rtol=1e-13)
    np.testing.assert_allclose(k[:, 0, 0], want_k, rtol=1e-13, atol=1e-15)
    assert p[h_, 0, 0] == 0.0


def test_scalar_optimal_cost_by_brute_force_over_gains() -> None:
    """n = d = 1, H = 2: the exact cost on a dense grid of (k0, k1) never beats J*, and its minimum reaches it."""
    a, b, q, r, x0, w = 0.8, 0.5, 1.0, 0.2, 0.9, 0.04
    j_star = optimal_cost([[a]], [[b]], [[q]], [[r]], 2, [x0], [[w]])
    grid = np.linspace(-3.0, 1.0, 801)
    k0, k1 = np.meshgrid(grid, grid, indexing="ij")
    gains = np.stack([k0, k1], axis=-1)[..., None, None]  # (801, 801, H=2, 1, 1)
    costs = policy_cost([[a]], [[b]], [[q]], [[r]], gains, [x0], [[w]])
    assert costs.min() >= j_star - 1e-12
    assert costs.min() == pytest.approx(j_star, abs=1e-4)
    _, k = riccati([[a]], [[b]], [[q]], [[r]], 2)
    i, j = np.unravel_index(np.argmin(costs), costs.shape)
    assert grid[i] == pytest.approx(k[0, 0, 0], abs=0.01) and grid[j] == pytest.approx(k[1, 0, 0], abs=0.01)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_riccati_policy_is_optimal_among_linear_policies(seed: int) -> None:
    a, b, q, r, x0, w = generic_system(seed)
    h_ = 5
    p, k = riccati(a, b, q, r, h_)
    j_star = optimal_cost(a, b, q, r, h_, x0, w)
    # the paper's (5) and the exact cost of the Riccati policy agree
    assert policy_cost(a, b, q, r, k, x0, w) == pytest.approx(j_star, rel=1e-12)
    assert j_star == pytest.approx(x0 @ p[0] @ x0 + sum(np.trace(p[i] @ w) for i in range(1, h_ + 1)), rel=1e-13)
    # random linear policies never do better
    rng = np.random.default_rng(seed + 10)
    others = k + rng.normal(size=(300,) + k.shape) * rng.choice([0.01, 0.1, 1.0], size=(300, 1, 1, 1))
    assert np.all(policy_cost(a, b, q, r, others, x0, w) >= j_star * (1 - 1e-12))
    # and the Riccati gains are a stationary point of the exact cost (finite differences)
    eps = 1e-6
    for idx in [(0, 0, 0), (2, 1, 2), (h_ - 1, 0, 1)]:
        e = np.zeros_like(k)
        e[idx] = eps
        grad = (policy_cost(a, b, q, r, k + e, x0, w) - policy_cost(a, b, q, r, k - e, x0, w)) / (2 * eps)
        assert abs(grad) < 1e-6


def test_batched_riccati_equals_one_by_one() -> None:
    systems = [generic_system(s) for s in range(4)]
    a = np.stack([s[0] for s in systems])
    b = np.stack([s[1] for s in systems])
    q, r = systems[0][2], systems[0][3]
    p, k = riccati(a, b, q, r, 4)
    for i in range(4):
        p1, k1 = riccati(a[i], b[i], q, r, 4)
        np.testing.assert_allclose(p[i], p1, rtol=1e-14)
        np.testing.assert_allclose(k[i], k1, rtol=1e-14)


def test_expected_cost_formula_matches_monte_carlo() -> None:
    system = random_lq(2, 1, 5, 3, r=0.2)
    gains = 0.5 * system.optimal_gains() + 0.1  # some linear policy, small enough never to be clipped
    users = LQUsers.draw(8000, system, 4)
    states, controls, costs = system.rollout(gains, users.noise, clip=False)
    assert np.linalg.norm(controls, axis=-1).max() <= system.gamma  # so the clipped policy is the same
    total = costs.sum(axis=1)
    se = total.std() / np.sqrt(total.size)
    assert abs(total.mean() - system.policy_cost(gains)) < 4 * se
    # the documented noise law: uniform in the ball, covariance C_w²/(n + 2) I
    w = users.noise.reshape(-1, 2)
    assert np.linalg.norm(w, axis=1).max() <= system.noise_bound
    np.testing.assert_allclose(np.cov(w.T), system.noise_covariance, atol=4e-4)
    assert system.noise_covariance[0, 0] == pytest.approx(system.noise_bound**2 / 4)


def test_regret_is_zero_for_the_optimal_policy_and_positive_otherwise() -> None:
    system = random_lq(2, 1, 8, 5, r=0.1)
    k = system.optimal_gains()
    assert abs(system.regret(k)) < 1e-12
    assert system.regret(np.zeros_like(k)) > 0
    regrets = system.regret(np.stack([k, np.zeros_like(k), 2 * k]))
    assert regrets.shape == (3,) and regrets[0] < 1e-12 and np.all(regrets[1:] > 0)


# ------------------------------------------------------------------ the system and Assumption 1


def test_random_lq_satisfies_assumption_1() -> None:
    for seed in range(5):
        s = random_lq(3, 2, 4, seed)
        c_a, c_b = np.linalg.norm(s.A, 2), np.linalg.norm(s.B, 2)
        assert c_a < 1 and c_b < 1 and np.linalg.norm(s.theta) <= 1 + 1e-12
        assert c_a + s.gamma * c_b + s.noise_bound == pytest.approx(1.0)  # default γ: the largest allowed
        assert np.linalg.norm(s.x0) == pytest.approx(1.0)
        assert s.theta.shape == (5, 3)
    a, b = random_lq(2, 1, 3, 7), random_lq(2, 1, 3, 7)
    np.testing.assert_array_equal(a.A, b.A)
    np.testing.assert_array_equal(a.x0, b.x0)


def test_clipped_rollout_keeps_states_in_the_unit_ball() -> None:
    """Assumption 1 ⇒ ‖x‖ <= 1 when ‖u‖ <= γ, even for wild gains and canary noise on the bound."""
    system = random_lq(2, 1, 20, 1)
    wild = np.random.default_rng(0).normal(size=(50, 20, 1, 2)) * 50
    canary = LQUser.canary(np.tile(system.x0, (20, 1)), system.noise_bound)
    states, controls, costs = system.rollout(wild, canary.noise)
    assert np.linalg.norm(states, axis=-1).max() <= 1 + 1e-12
    assert np.linalg.norm(controls, axis=-1).max() <= system.gamma * (1 + 1e-12)
    assert states.shape == (50, 21, 2) and controls.shape == (50, 20, 1) and costs.shape == (50, 20)
    np.testing.assert_allclose(clip_norm(np.array([3.0, 4.0]), 1.0), [0.6, 0.8])


def system_kwargs(**changes: object) -> dict[str, object]:
    kw: dict[str, object] = dict(
        A=np.diag([0.5, 0.3]),
        B=np.array([[0.4], [0.3]]),
        Q=np.eye(2),
        R=np.eye(1),
        horizon=5,
        noise_bound=0.1,
        gamma=0.5,
        x0=np.array([0.6, 0.8]),
    )
    kw.update(changes)
    return kw


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"A": np.diag([1.0, 0.2])}, r"‖A‖ must be < 1.*1\.0"),
        ({"B": np.array([[1.0], [0.0]])}, r"‖B‖ must be < 1"),
        ({"gamma": 2.0}, r"Assumption 1\(e\).*2\.0"),
        ({"noise_bound": 1.0}, r"noise_bound C_w must be < 1.*1\.0"),
        ({"noise_bound": -0.1}, r"noise_bound must be > 0.*-0\.1"),
        (
            {"A": np.array([[0.3, 0.5], [0.5, 0.3]]), "B": np.array([[0.5], [0.3]]), "gamma": 0.1},
            r"‖Θ‖_F.*must be <= 1",
        ),
        ({"A": np.diag([0.5, 0.3]), "B": np.array([[0.4], [0.0]])}, r"controllable"),
        ({"A": np.eye(3) * 0.1}, r"B must have n = 3 rows"),
        ({"A": np.ones((2, 3)) * 0.1}, r"A must be square"),
        ({"Q": np.eye(3)}, r"Q must have shape \(2, 2\)"),
        ({"R": -np.eye(1)}, r"R must be positive definite"),
        ({"Q": np.array([[1.0, 0.5], [0.0, 1.0]])}, r"Q must be symmetric"),
        ({"x0": np.array([1.0, 1.0])}, r"x0 must have norm <= 1"),
        ({"x0": np.array([1.0])}, r"x0 must have shape \(2,\)"),
        ({"horizon": 0}, r"horizon must be an integer >= 1, got 0"),
        ({"A": np.array([[np.nan, 0], [0, 0.1]])}, r"A must be finite"),
    ],
)
def test_bad_systems_raise_naming_the_value(changes: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        LQSystem(**system_kwargs(**changes))


def test_bad_arguments_to_the_cost_functions_raise() -> None:
    a, b, q, r, x0, w = generic_system(0)
    with pytest.raises(ValueError, match=r"R must have shape \(2, 2\)"):
        riccati(a, b, q, np.eye(3), 3)
    with pytest.raises(ValueError, match=r"gains must have shape \(\.\.\., H, 2, 3\)"):
        policy_cost(a, b, q, r, np.zeros((3, 3, 3)), x0, w)
    with pytest.raises(ValueError, match=r"noise_covariance must be symmetric positive semidefinite"):
        optimal_cost(a, b, q, r, 3, x0, -np.eye(3))
    with pytest.raises(ValueError, match=r"horizon must be an integer >= 1, got -1"):
        riccati(a, b, q, r, -1)
    system = LQSystem(**system_kwargs())
    with pytest.raises(ValueError, match=r"gains must have shape \(\.\.\., 5, 1, 2\)"):
        system.regret(np.zeros((4, 1, 2)))
    with pytest.raises(ValueError, match=r"a_norm \+ noise_bound must be < 1"):
        random_lq(2, 1, 3, 0, a_norm=0.95)


# ------------------------------------------------------------------ users


def test_users_are_reproducible_from_their_seeds_and_neighbours_differ_in_one() -> None:
    system = LQSystem(**system_kwargs())
    users = LQUsers.draw(6, system, 11)
    again = LQUsers.from_seeds(list(users.seeds), system)
    np.testing.assert_array_equal(users.noise, again.noise)
    assert len(users) == 6 and users.horizon == 5 and users.state_dim == 2
    one = LQUser.from_seed(users.seeds[2], 5, 2, system.noise_bound)
    np.testing.assert_array_equal(one.noise, users[2].noise)
    assert np.linalg.norm(users.noise, axis=-1).max() <= system.noise_bound

    canary = LQUser.canary(np.tile([1.0, -1.0], (5, 1)), system.noise_bound)
    np.testing.assert_allclose(np.linalg.norm(canary.noise, axis=1), system.noise_bound)
    swapped = users.replace(3, canary)
    differs = np.any(swapped.noise != users.noise, axis=(1, 2))
    assert differs.tolist() == [False, False, False, True, False, False]
    assert swapped.seeds[3] is None and swapped.seeds[2] == users.seeds[2]
    removed = users.remove(0)
    np.testing.assert_array_equal(removed.noise, users.noise[1:])


def test_bad_users_raise() -> None:
    system = LQSystem(**system_kwargs())
    users = LQUsers.draw(3, system, 0)
    with pytest.raises(ValueError, match=r"norm <= C_w = 0\.1, got 0\.2"):
        users.replace(0, LQUser(np.tile([0.2, 0.0], (5, 1))))
    with pytest.raises(ValueError, match=r"shape \(4, 2\), the others \(5, 2\)"):
        users.replace(0, LQUser(np.zeros((4, 2))))
    with pytest.raises(ValueError, match=r"user index 3 out of range for 3 users"):
        users[3]
    with pytest.raises(ValueError, match=r"every direction must be non-zero, got zero rows \[1\]"):
        LQUser.canary([[1.0, 0.0], [0.0, 0.0]], 0.1)
    with pytest.raises(ValueError, match=r"count must be an integer >= 1, got 0"):
        LQUsers.draw(0, system, 0)
