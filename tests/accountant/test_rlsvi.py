"""RLSVI's inherent-noise accounting: the seed's closed form, its tighter conversions, the per-run μ."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.accountant import gaussian_epsilon
from dpkit.accountant.gdp import gdp_epsilon
from dpkit.accountant.rlsvi import (
    rlsvi_closed_form,
    rlsvi_paper_epsilon,
    rlsvi_rho,
    rlsvi_run_privacy,
    rlsvi_worst_case_mu,
    russo_beta,
)

mpmath.mp.dps = 50

sizes = st.tuples(st.integers(1, 50), st.integers(1, 10), st.integers(1, 50), st.integers(1, 100_000))
delta_st = st.floats(-200.0, math.log(0.5)).map(math.exp)


def _mp_rho(s: int, a: int, h: int, k: int) -> mpmath.mpf:
    return mpmath.mpf(2 * a * k) / (mpmath.mpf(h) ** 2 * mpmath.log(2 * h * s * a))


@settings(max_examples=examples(200))
@given(sizes=sizes, delta=delta_st)
def test_closed_form_equals_mpmath(sizes: tuple[int, int, int, int], delta: float) -> None:
    s, a, h, k = sizes
    rho = _mp_rho(s, a, h, k)
    eps = rho + 2 * mpmath.sqrt(rho * mpmath.log(1 / mpmath.mpf(delta)))
    got_rho = rlsvi_rho(states=s, actions=a, horizon=h, episodes=k)
    got_eps = rlsvi_paper_epsilon(states=s, actions=a, horizon=h, episodes=k, delta=delta)
    assert got_rho >= rho and got_rho <= rho * (1 + 1e-14)
    assert got_eps >= eps and got_eps <= eps * (1 + 1e-12)


@settings(max_examples=examples(80))
@given(sizes=sizes, delta=delta_st)
def test_tighter_conversions_are_ordered_and_exact_is_gdp(sizes: tuple[int, int, int, int], delta: float) -> None:
    s, a, h, k = sizes
    cf = rlsvi_closed_form(states=s, actions=a, horizon=h, episodes=k, delta=delta)
    assert cf.epsilon_exact_gdp <= cf.epsilon_rdp_optimal <= cf.epsilon_paper
    assert cf.epsilon_exact_gdp == pytest.approx(gdp_epsilon(math.sqrt(2 * cf.rho), delta), rel=1e-12)
    assert cf.mu >= math.sqrt(2 * cf.rho)
    d = cf.to_dict()
    assert d["rho"] == cf.rho and d["epsilon_paper"] == cf.epsilon_paper


def test_russo_beta_reference() -> None:
    # ½ S H³ ln(2HSAk) for S=5, A=2, H=10, k=3
    assert russo_beta(states=5, actions=2, horizon=10, episode=3) == pytest.approx(
        0.5 * 5 * 1000 * math.log(600), rel=1e-15
    )


def test_paper_rho_is_kh_sa_over_beta1() -> None:
    # Corollary 14's ρ is KHSA/β_1 with Russo's β_1: every cell of every episode at n = 1.
    for s, a, h, k in [(5, 2, 10, 10_000), (3, 2, 6, 100), (1, 1, 1, 1)]:
        assert rlsvi_rho(states=s, actions=a, horizon=h, episodes=k) == pytest.approx(
            k * h * s * a / russo_beta(states=s, actions=a, horizon=h, episode=1), rel=1e-13
        )


def test_worst_case_mu_brute_force() -> None:
    s, a, h, k = 3, 2, 4, 30
    total = sum(h * 2.0 / (0.5 * s * h**3 * math.log(2 * h * s * a * kk)) for kk in range(2, k + 1))
    assert rlsvi_worst_case_mu(states=s, actions=a, horizon=h, episodes=k) == pytest.approx(math.sqrt(total), rel=1e-13)
    assert rlsvi_worst_case_mu(states=s, actions=a, horizon=h, episodes=k) >= math.sqrt(total)
    assert rlsvi_worst_case_mu(states=s, actions=a, horizon=h, episodes=1) == 0.0
    assert rlsvi_worst_case_mu(states=s, actions=a, horizon=h, episodes=k, beta=2.0) == pytest.approx(
        math.sqrt((k - 1) * h * 2.0 / 2.0)
    )
    # never above the paper's μ = sqrt(2ρ)
    assert rlsvi_worst_case_mu(states=s, actions=a, horizon=h, episodes=k) <= math.sqrt(
        2 * rlsvi_rho(states=s, actions=a, horizon=h, episodes=k)
    )


# ---------------------------------------------------------------- per-run accounting


def _random_run(rng: np.random.Generator, k: int, h: int, s: int, a: int, beta: float) -> tuple[np.ndarray, np.ndarray]:
    states = rng.integers(0, s, size=(k, h))
    actions = rng.integers(0, a, size=(k, h))
    counts = np.zeros((k, h, s, a), dtype=np.int64)
    for e in range(1, k):
        counts[e] = counts[e - 1]
        for step in range(h):
            counts[e, step, states[e - 1, step], actions[e - 1, step]] += 1
    variances = beta / (counts + 1.0) * (1.0 + rng.random((k, 1, 1, 1)))  # β_k varying over episodes
    return counts, variances, states, actions  # type: ignore[return-value]


def _brute_force_mu(counts, variances, states, actions, reward_range=1.0):  # noqa: ANN001, ANN202
    k, h = states.shape
    out = []
    for j in range(k):
        total = 0.0
        for e in range(j + 1, k):
            for step in range(h):
                n = counts[e, step, states[j, step], actions[j, step]]
                assert n >= 1
                total += (reward_range / n) ** 2 / variances[e, step, states[j, step], actions[j, step]]
        out.append(math.sqrt(total))
    return np.array(out)


@pytest.mark.parametrize("seed", range(5))
def test_run_mu_matches_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    counts, variances, states, actions = _random_run(rng, 12, 3, 3, 2, beta=2.5)
    run = rlsvi_run_privacy(counts, variances, reward_range=0.7)
    want = _brute_force_mu(counts, variances, states, actions, reward_range=0.7)
    np.testing.assert_allclose(run.mu_per_user, want, rtol=1e-12)
    assert np.all(run.mu_per_user >= want)
    assert run.mu == pytest.approx(want.max(), rel=1e-12)
    assert run.worst_user == int(np.argmax(want)) + 1
    assert run.mu_per_user[-1] == 0.0
    assert run.exact_epsilon(1e-5) == pytest.approx(gdp_epsilon(run.mu, 1e-5), rel=1e-12)
    g = run.epsilon(1e-5, method="rdp")
    assert g.epsilon >= run.exact_epsilon(1e-5)
    assert run.epsilon(1e-5).epsilon == pytest.approx(gaussian_epsilon(1.0 / run.mu, 1e-5).epsilon, rel=1e-12)


def test_run_mu_never_exceeds_worst_case_bound() -> None:
    s, a, h, k = 3, 2, 4, 40
    rng = np.random.default_rng(7)
    counts, _, _, _ = _random_run(rng, k, h, s, a, beta=1.0)
    betas = np.array([russo_beta(states=s, actions=a, horizon=h, episode=e + 1) for e in range(k)])
    variances = betas[:, None, None, None] / (counts + 1.0)
    run = rlsvi_run_privacy(counts, variances)
    assert run.mu <= rlsvi_worst_case_mu(states=s, actions=a, horizon=h, episodes=k)
    # a run where one user's cells are never revisited attains the worst case
    counts = np.zeros((k, h, s, a), dtype=np.int64)
    for e in range(1, k):
        counts[e] = counts[e - 1]
        counts[e, :, 0 if e == 1 else 1, 0] += 1  # user 1 alone in state 0
    variances = betas[:, None, None, None] / (counts + 1.0)
    run = rlsvi_run_privacy(counts, variances)
    assert run.worst_user == 1
    assert run.mu == pytest.approx(rlsvi_worst_case_mu(states=s, actions=a, horizon=h, episodes=k), rel=1e-12)


def test_single_episode_run_has_no_privacy_loss() -> None:
    run = rlsvi_run_privacy(np.zeros((1, 2, 2, 2)), np.ones((1, 2, 2, 2)))
    assert run.mu == 0.0 and run.exact_epsilon(1e-5) == 0.0 and run.delta(1.0) == 0.0
    assert run.epsilon(1e-5).epsilon == 0.0


@pytest.mark.parametrize(
    ("counts", "variances", "match"),
    [
        (np.zeros((2, 2, 2)), np.ones((2, 2, 2)), "4-d"),
        (np.zeros((2, 1, 2, 2)), np.ones((3, 1, 2, 2)), "same shape"),
        (np.full((2, 1, 2, 2), np.nan), np.ones((2, 1, 2, 2)), "finite"),
        (np.array([[[[1, 0], [0, 0]]], [[[1, 1], [0, 0]]]]), np.ones((2, 1, 2, 2)), "counts\\[0\\]"),
        (np.array([[[[0, 0], [0, 0]]], [[[1, 1], [0, 0]]]]), np.ones((2, 1, 2, 2)), "exactly one visit"),
        (np.array([[[[0, 0], [0, 0]]], [[[1, 0], [0, 0]]]]), np.zeros((2, 1, 2, 2)), "variances must be > 0"),
        (np.array([[[[0, 0], [0, 0]]], [[[0.5, 0], [0, 0]]]]), np.ones((2, 1, 2, 2)), "integers"),
    ],
)
def test_run_bad_input(counts: np.ndarray, variances: np.ndarray, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        rlsvi_run_privacy(counts, variances)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: rlsvi_rho(states=0, actions=2, horizon=2, episodes=2), "states"),
        (lambda: rlsvi_rho(states=2, actions=0, horizon=2, episodes=2), "actions"),
        (lambda: rlsvi_rho(states=2, actions=2, horizon=0, episodes=2), "horizon"),
        (lambda: rlsvi_rho(states=2, actions=2, horizon=2, episodes=0), "episodes"),
        (lambda: rlsvi_paper_epsilon(states=2, actions=2, horizon=2, episodes=2, delta=1.5), "delta"),
        (lambda: rlsvi_worst_case_mu(states=2, actions=2, horizon=2, episodes=2, beta=-1.0), "beta"),
        (
            lambda: rlsvi_run_privacy(np.zeros((1, 1, 1, 1)), np.ones((1, 1, 1, 1))).epsilon(1e-5, method="classic"),
            "method",
        ),
    ],
)
def test_bad_input_names_the_value(call, match: str) -> None:  # noqa: ANN001
    with pytest.raises(ValueError, match=match):
        call()


def test_worst_case_mu_for_huge_k_is_an_upper_bound_and_close() -> None:
    import dpkit.accountant.rlsvi as mod

    s, a, h = 3, 2, 4
    k = 5_000
    exact = rlsvi_worst_case_mu(states=s, actions=a, horizon=h, episodes=k)
    old = mod._EXACT_TERMS
    try:
        mod._EXACT_TERMS = 1_000  # force the integral tail from k = 1000 on
        bounded = rlsvi_worst_case_mu(states=s, actions=a, horizon=h, episodes=k)
    finally:
        mod._EXACT_TERMS = old
    assert exact <= bounded <= exact * (1 + 1e-4)
    # and it runs for astronomically many episodes (no array of K terms)
    assert rlsvi_worst_case_mu(states=s, actions=a, horizon=h, episodes=10**15) > rlsvi_worst_case_mu(
        states=s, actions=a, horizon=h, episodes=10**12
    )
    assert math.isfinite(rlsvi_worst_case_mu(states=s, actions=a, horizon=h, episodes=10**300))
