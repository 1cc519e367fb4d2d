"""The bug zoo: deliberately wrong implementations that the audit must flag, each beside its correct twin.

Every release function is vectorised over runs: ``release(dataset, rng, n) -> (n, …)``. The attack
is the white-box likelihood-ratio test built from what the claim says (the means under D and D′
and the claimed noise): an auditor's test, not the implementation's. A correct twin must be
``consistent`` (the bound is valid at 1 − α) and a wrong one a ``violation``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

from dpkit.accountant import BinaryCounter, calibrate_sigma, classic_sigma, clip_norm, max_psums_per_item, paper_depth
from dpkit.accountant.tree import prefix_decomposition
from dpkit.audits import Claim, GaussianLikelihoodRatio, audit_pair

SIGMA = 1.0
RUNS = 60_000


@dataclass(frozen=True)
class Case:
    release: Callable[[object, np.random.Generator, int], np.ndarray]
    d0: object
    d1: object
    claim: Claim
    attack: GaussianLikelihoodRatio
    runs: int = RUNS


# ---------------------------------------------------------------- noise missing on one component

U = np.array([0.6, 0.8])  # a user at the bound B = 1


def _sum_vectors(ds: list) -> np.ndarray:
    return np.sum(ds, axis=0) if len(ds) else np.zeros(2)


def vector_sum_correct(ds: list, rng: np.random.Generator, n: int) -> np.ndarray:
    return _sum_vectors(ds) + SIGMA * rng.standard_normal((n, 2))


def vector_sum_missing_noise(ds: list, rng: np.random.Generator, n: int) -> np.ndarray:
    noise = SIGMA * rng.standard_normal((n, 2))
    noise[:, 1] = 0.0  # the bug: the second coordinate is released without noise
    return _sum_vectors(ds) + noise


def missing_noise(correct: bool) -> Case:
    return Case(
        vector_sum_correct if correct else vector_sum_missing_noise,
        [],
        [U],
        Claim.gaussian(SIGMA, 1.0),
        GaussianLikelihoodRatio(np.zeros(2), U, sigma=SIGMA),
    )


# ---------------------------------------------------------------- tree: std divided by √m, depth off by one


def _tree_prefixes(items: np.ndarray, sigma: float, rng: np.random.Generator, n: int) -> np.ndarray:
    counter = BinaryCounter((n,), sigma, rng)
    out = np.empty((n, items.size))
    for t, x in enumerate(items):
        counter.add(np.full(n, x))
        out[:, t] = counter.prefix()
    return out


def _tree_attack(steps: int, sigma: float) -> GaussianLikelihoodRatio:
    a = np.zeros((steps, steps))  # prefix t = Σ of the p-sums created at the ends of its decomposition
    for t in range(1, steps + 1):
        for _, end in prefix_decomposition(t):
            a[t - 1, end - 1] = 1.0
    return GaussianLikelihoodRatio(np.zeros(steps), np.ones(steps), cov=sigma**2 * a @ a.T)


T = 16
M = max_psums_per_item(T)  # 5


def tree_correct(items: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
    return _tree_prefixes(items, SIGMA, rng, n)


def tree_std_over_sqrt_m(items: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
    return _tree_prefixes(items, SIGMA / math.sqrt(M), rng, n)  # the bug: "total noise σ" spread over m p-sums


def std_over_sqrt_m(correct: bool) -> Case:
    d1 = np.zeros(T)
    d1[0] = 1.0  # the worst item (in m = 5 p-sums)
    return Case(
        tree_correct if correct else tree_std_over_sqrt_m,
        np.zeros(T),
        d1,
        Claim.gaussian(SIGMA, 1.0, M),
        _tree_attack(T, SIGMA),
        runs=20_000,
    )


def depth_off_by_one(correct: bool) -> Case:
    # T = 2 after-each: item 1 is in the p-sums [1,1] and [1,2]; ⌈log2 T⌉ = 1 counts one of them.
    m = max_psums_per_item(2) if correct else paper_depth(2)
    return Case(tree_correct, np.zeros(2), np.array([1.0, 0.0]), Claim.gaussian(SIGMA, 1.0, m), _tree_attack(2, SIGMA))


# ---------------------------------------------------------------- symmetric matrices: which entries get noise

X = np.array([1.0, 1.0]) / math.sqrt(2)
Y = np.array([1.0, -1.0]) / math.sqrt(2)  # XXᵀ − YYᵀ is off-diagonal: upper-triangle norm 1, Frobenius √2


def _gram(ds: list) -> np.ndarray:
    return sum(np.outer(v, v) for v in ds)


def gram_symmetric(ds: list, rng: np.random.Generator, n: int) -> np.ndarray:
    upper = SIGMA * rng.standard_normal((n, 3))  # i.i.d. on i <= j, mirrored
    noise = np.empty((n, 2, 2))
    noise[:, 0, 0], noise[:, 0, 1], noise[:, 1, 1] = upper[:, 0], upper[:, 1], upper[:, 2]
    noise[:, 1, 0] = noise[:, 0, 1]
    return _gram(ds) + noise


def gram_full_noise(ds: list, rng: np.random.Generator, n: int) -> np.ndarray:
    return _gram(ds) + SIGMA * rng.standard_normal((n, 2, 2))  # the bug: i.i.d. on all entries (asymmetric)


def gram_averaged_noise(ds: list, rng: np.random.Generator, n: int) -> np.ndarray:
    z = SIGMA * rng.standard_normal((n, 2, 2))
    return _gram(ds) + (z + z.transpose(0, 2, 1)) / 2  # the reverse bug: off-diagonal std σ/√2


def matrix_noise(variant: str) -> Case:
    release = {"correct": gram_symmetric, "full": gram_full_noise, "averaged": gram_averaged_noise}[variant]
    # the claim accounts the upper triangle (Δ = ‖U(XXᵀ − YYᵀ)‖ = 1) with σ on each i <= j entry
    return Case(
        release, [X], [Y], Claim.gaussian(SIGMA, 1.0), GaussianLikelihoodRatio(_gram([X]), _gram([Y]), sigma=SIGMA)
    )


# ---------------------------------------------------------------- one noise draw reused across releases


def two_statistics_correct(ds: list, rng: np.random.Generator, n: int) -> np.ndarray:
    s = float(np.sum(ds))
    return np.array([s, -s]) + SIGMA * rng.standard_normal((n, 2))


def two_statistics_reused_noise(ds: list, rng: np.random.Generator, n: int) -> np.ndarray:
    s = float(np.sum(ds))
    z = SIGMA * rng.standard_normal((n, 1))
    return np.array([s, -s]) + z  # the bug: one draw for both releases


def reused_noise(correct: bool) -> Case:
    return Case(
        two_statistics_correct if correct else two_statistics_reused_noise,
        [],
        [1.0],
        Claim.gaussian(SIGMA, 1.0, 2),
        GaussianLikelihoodRatio(np.zeros(2), np.array([1.0, -1.0]), sigma=SIGMA),
    )


# ---------------------------------------------------------------- features above the bound (no clipping)

BIG = np.array([3.0, 0.0])  # a user outside the assumed bound ‖x‖ <= 1


def clipped_sum(ds: list, rng: np.random.Generator, n: int) -> np.ndarray:
    clipped = [clip_norm(v, 1.0) for v in ds]
    return _sum_vectors(clipped) + SIGMA * rng.standard_normal((n, 2))


def unclipped(correct: bool) -> Case:
    # the attacker assumes the claimed sensitivity and aims at the largest admissible change
    return Case(
        clipped_sum if correct else vector_sum_correct,
        [],
        [BIG],
        Claim.gaussian(SIGMA, 1.0),
        GaussianLikelihoodRatio(np.zeros(2), np.array([1.0, 0.0]), sigma=SIGMA),
    )


# ---------------------------------------------------------------- the classic formula used with ε >= 1

EPS, DELTA = 10.0, 0.1


def scalar_gaussian(ds: tuple, rng: np.random.Generator, n: int) -> np.ndarray:
    value, sigma = ds
    return value + sigma * rng.standard_normal((n, 1))


def classic_large_epsilon(correct: bool) -> Case:
    sigma = calibrate_sigma(EPS, DELTA).sigma if correct else _classic(EPS, DELTA)
    return Case(
        scalar_gaussian,
        (0.0, sigma),
        (1.0, sigma),
        Claim.dp(EPS, DELTA),
        GaussianLikelihoodRatio(np.zeros(1), np.ones(1), sigma=sigma),
        runs=2_000_000,
    )


def _classic(eps: float, delta: float) -> float:
    """Dwork–Roth's σ = Δ sqrt(2 ln(1.25/δ))/ε, applied (wrongly) at ε >= 1."""
    assert eps >= 1  # classic_sigma itself refuses this, which is the point
    with pytest.raises(ValueError, match="epsilon < 1"):
        classic_sigma(eps, delta)
    return math.sqrt(2 * math.log(1.25 / delta)) / eps


ZOO = {
    "noise missing on one component": (missing_noise(True), missing_noise(False)),
    "noise std divided by sqrt(m)": (std_over_sqrt_m(True), std_over_sqrt_m(False)),
    "full asymmetric noise, claim on i <= j": (matrix_noise("correct"), matrix_noise("full")),
    "averaged symmetric noise, claim on i <= j": (matrix_noise("correct"), matrix_noise("averaged")),
    "one noise draw reused across releases": (reused_noise(True), reused_noise(False)),
    "features above the bound (no clipping)": (unclipped(True), unclipped(False)),
    "classic formula at epsilon >= 1": (classic_large_epsilon(True), classic_large_epsilon(False)),
    "tree depth off by one": (depth_off_by_one(True), depth_off_by_one(False)),
}


def _run(case: Case, seed: int) -> object:
    return audit_pair(
        case.release,
        case.d0,
        case.d1,
        case.claim,
        attack=case.attack,
        runs=case.runs,
        seed=seed,
        alpha=0.05,
        chunk_size=100_000,
    )


@pytest.mark.parametrize("name", list(ZOO))
def test_correct_twin_passes(name: str) -> None:
    result = _run(ZOO[name][0], seed=1)
    assert result.verdict == "consistent", result.to_dict()


@pytest.mark.parametrize("name", list(ZOO))
def test_wrong_implementation_is_flagged(name: str) -> None:
    result = _run(ZOO[name][1], seed=2)
    assert result.verdict == "violation", result.to_dict()
