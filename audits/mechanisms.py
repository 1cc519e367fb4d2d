"""Reference mechanisms for the audits' tests, benches and docs: correct ones and ones that leak.

Every release function has the engine's signature ``release(dataset, rng, n) -> (n, 1)`` (vectorised over runs,
module-level so that process and Dask executors can pickle it). The *leak zoo* (:func:`leak_zoo`) pairs each with a
neighbouring pair of datasets, a claim and the verdict an audit must give; :func:`tail_cases` and
:func:`at_the_claim` give counts loose in their middle and mechanisms exactly at a claim. The zoo's table and why
each violation violates: see docs/explanation/verdicts.md ("The leak zoo").
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .claims import Claim, ClaimKind

__all__ = [
    "GAUSSIAN_SIGMA",
    "LATTICE_STEP",
    "SKIP_PROBABILITY",
    "ZooCase",
    "at_the_claim",
    "binary_randomized_response",
    "gaussian_mechanism",
    "kary_randomized_response",
    "laplace_mechanism",
    "lattice_aligned",
    "lattice_gaussian",
    "leak_zoo",
    "skipped_noise_gaussian",
    "TailCase",
    "noisy_count",
    "tail_cases",
]

#: σ of the Gaussian mechanism that is exactly (1, 1e-5)-DP at Δ = 1 (``calibrate_sigma(1.0, 1e-5)``).
GAUSSIAN_SIGMA = 3.7306316350746362
#: Probability with which :func:`skipped_noise_gaussian` releases its statistic without noise.
SKIP_PROBABILITY = 5e-4
#: Grid step of the noise of :func:`lattice_gaussian` and :func:`lattice_aligned`.
LATTICE_STEP = 2.0**-20
#: Keep probability of :func:`kary_randomized_response` and its number of values.
KARY_K = 4
KARY_KEEP = 4.0 / 7.0


def _total(dataset: Any) -> float:
    """Σx of a dataset of real records (a sequence of floats; the empty dataset sums to 0)."""
    return float(np.sum(np.asarray(dataset, dtype=float)))


def gaussian_mechanism(dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
    """Σx + N(0, σ²) with σ = :data:`GAUSSIAN_SIGMA`: exactly (1, 1e-5)-DP for records in [0, 1].

    Args:
        dataset: The records, each in [0, 1].
        rng: The runs' generator.
        n: The number of runs.

    Returns:
        The n outputs, shape (n, 1).
    """
    return _total(dataset) + GAUSSIAN_SIGMA * rng.standard_normal((n, 1))


def laplace_mechanism(dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
    """Σx + Lap(1): pure 1-DP for records in [0, 1]; its noise has variance 2.

    Args:
        dataset: The records, each in [0, 1].
        rng: The runs' generator.
        n: The number of runs.

    Returns:
        The n outputs, shape (n, 1).
    """
    return _total(dataset) + rng.laplace(0.0, 1.0, (n, 1))


def skipped_noise_gaussian(dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
    """The Gaussian mechanism that forgets its noise with probability :data:`SKIP_PROBABILITY` (a bug).

    Args:
        dataset: The records, each in [0, 1].
        rng: The runs' generator.
        n: The number of runs.

    Returns:
        The n outputs, shape (n, 1).
    """
    noise = GAUSSIAN_SIGMA * rng.standard_normal((n, 1))
    noise[rng.random(n) < SKIP_PROBABILITY] = 0.0
    return _total(dataset) + noise


def _grid_noise(rng: np.random.Generator, n: int) -> np.ndarray:
    return LATTICE_STEP * np.round(GAUSSIAN_SIGMA * rng.standard_normal((n, 1)) / LATTICE_STEP)


def lattice_gaussian(dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
    """Σx + Gaussian noise on a grid of step γ = 2⁻²⁰, the statistic itself not on the grid (a bug).

    Args:
        dataset: The records, each in [0, 1].
        rng: The runs' generator.
        n: The number of runs.

    Returns:
        The n outputs, shape (n, 1).
    """
    return _total(dataset) + _grid_noise(rng, n)


def lattice_aligned(dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
    """The fixed :func:`lattice_gaussian`: the statistic is rounded to the noise's grid first.

    Args:
        dataset: The records, each in [0, 1].
        rng: The runs' generator.
        n: The number of runs.

    Returns:
        The n outputs, shape (n, 1).
    """
    return LATTICE_STEP * np.round(_total(dataset) / LATTICE_STEP) + _grid_noise(rng, n)


def binary_randomized_response(bit: int, rng: np.random.Generator, n: int) -> np.ndarray:
    """The bit (0 or 1), kept with probability e/(1 + e) and flipped otherwise: pure 1-DP.

    Args:
        bit: The bit, 0 or 1.
        rng: The runs' generator.
        n: The number of runs.

    Returns:
        The n outputs, shape (n, 1).
    """
    keep = rng.random((n, 1)) < math.e / (1.0 + math.e)
    return np.where(keep, float(bit), 1.0 - float(bit))


def kary_randomized_response(value: int, rng: np.random.Generator, n: int) -> np.ndarray:
    """A value in {0, …, k − 1} (k = 4) kept w.p. 4/7, else one of the others uniformly: ε = ln 4.

    Args:
        value: The value, in {0, …, 3}.
        rng: The runs' generator.
        n: The number of runs.

    Returns:
        The n outputs, shape (n, 1).
    """
    keep = rng.random((n, 1)) < KARY_KEEP
    other = (value + rng.integers(1, KARY_K, (n, 1))) % KARY_K
    return np.where(keep, float(value), other.astype(float))


@dataclass(frozen=True)
class ZooCase:
    """A reference mechanism, a neighbouring pair, a claim, and whether the mechanism violates it."""

    name: str
    release: Callable[[Any, np.random.Generator, int], np.ndarray]
    dataset0: Any
    dataset1: Any
    claim: Claim
    violates: bool
    why: str


def leak_zoo() -> tuple[ZooCase, ...]:
    """The reference cases of the zoo's table (docs/explanation/verdicts.md), in its order.

    Returns:
        Each case: its name, release function, neighbouring datasets, claim and whether it violates the claim.
    """
    dp = Claim.dp(1.0, 1e-5)
    pure = Claim.dp(1.0, 0.0)
    return (
        ZooCase(
            "gaussian",
            gaussian_mechanism,
            (),
            (1.0,),
            Claim.gaussian(GAUSSIAN_SIGMA, 1.0),
            False,
            "the Gaussian mechanism at its own σ",
        ),
        ZooCase("laplace", laplace_mechanism, (), (1.0,), pure, False, "Lap(1) at Δ = 1 is pure 1-DP"),
        ZooCase(
            "laplace-as-gdp",
            laplace_mechanism,
            (),
            (1.0,),
            Claim.gdp(1.0 / math.sqrt(2.0)),
            True,
            "Laplace's equal-error μ is 1.03 > 1/√2: its density's peak leaks",
        ),
        ZooCase(
            "skipped-noise",
            skipped_noise_gaussian,
            (),
            (1.0,),
            dp,
            True,
            "P_D′[output = 1] = 5e-4 > e·P_D[output = 1] + 1e-5 = 1e-5",
        ),
        ZooCase(
            "lattice", lattice_gaussian, (), (0.7,), dp, True, "the supports 0 + γℤ and 0.7 + γℤ are disjoint: ε = ∞"
        ),
        ZooCase(
            "lattice-aligned",
            lattice_aligned,
            (),
            (0.7,),
            dp,
            False,
            "the statistic rounded to the noise's grid: a discrete Gaussian",
        ),
        ZooCase("binary-rr", binary_randomized_response, 0, 1, pure, False, "keep-probability e/(1 + e) is pure 1-DP"),
        ZooCase("kary-rr", kary_randomized_response, 0, 1, pure, True, "4-ary RR keeping w.p. 4/7 has ε = ln 4"),
    )


# -- counts whose (ε, δ) claim breaks in the tail (issue 41: judged where the claim breaks) -------------------------


def _noisy_count(kind: str, scale: float, dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
    draw = rng.standard_normal((n, 1)) if kind == "gauss" else rng.laplace(0.0, 1.0, (n, 1))
    return _total(dataset) + scale * draw


def noisy_count(kind: str, scale: float) -> Callable[[Any, np.random.Generator, int], np.ndarray]:
    """Σx + ``scale`` × noise: a picklable release.

    Args:
        kind: ``"gauss"`` (standard normal) or ``"laplace"`` (unit Laplace).
        scale: The noise's scale.

    Returns:
        The release function.

    Raises:
        ValueError: If ``kind`` is neither.
    """
    if kind not in ("gauss", "laplace"):
        raise ValueError(f"kind must be 'gauss' or 'laplace', got {kind!r}")
    return functools.partial(_noisy_count, kind, float(scale))


@dataclass(frozen=True)
class TailCase:
    """A count against (1, 10⁻⁵)-DP on ([0], [0, 1]) and what an audit of the default budget must say of it:
    ``violation``, ``not consistent`` (a violation, or inconclusive saying how many runs would certify one) or
    ``not violation`` (the claim holds)."""

    name: str
    release: Callable[[Any, np.random.Generator, int], np.ndarray]
    expected: str
    why: str


def tail_cases() -> tuple[TailCase, ...]:
    """The counts whose (1, 10⁻⁵) claim is loose in its middle and breaks only in its tail.

    Returns:
        Gaussian noise at σ = 2 (true ε ≈ 1.99 at 10⁻⁵: its curve dips below the claim's only where FPR < 0.035),
        at σ/1.5 (ε ≈ 1.56) and at the claim's σ; Laplace noise of pure ε = 2, 1.5 and 1.
    """
    return (
        TailCase("gauss-2", noisy_count("gauss", 2.0), "violation", "σ = 2 where the claim needs 3.7306: ε ≈ 1.99"),
        TailCase("gauss-1.5x", noisy_count("gauss", GAUSSIAN_SIGMA / 1.5), "not consistent", "σ/1.5: ε ≈ 1.56"),
        TailCase("gauss-right", noisy_count("gauss", GAUSSIAN_SIGMA), "not violation", "exactly (1, 1e-5)-DP"),
        TailCase("laplace-2x", noisy_count("laplace", 0.5), "violation", "pure ε = 2: twice the claim"),
        TailCase("laplace-1.5x", noisy_count("laplace", 1 / 1.5), "not consistent", "pure ε = 1.5"),
        TailCase("laplace-right", noisy_count("laplace", 1.0), "not violation", "pure ε = 1"),
    )


# -- mechanisms exactly at a claim (the worst case a false-alarm test can face) ---------------------------------


def _shifted_gaussian(mu: float, bit: float, rng: np.random.Generator, n: int) -> np.ndarray:
    return float(bit) * mu + rng.standard_normal((n, 1))


def _shifted_laplace(epsilon: float, bit: float, rng: np.random.Generator, n: int) -> np.ndarray:
    return float(bit) * epsilon + rng.laplace(0.0, 1.0, (n, 1))


def _revealing_response(epsilon: float, delta: float, bit: float, rng: np.random.Generator, n: int) -> np.ndarray:
    """With probability δ the bit itself (±2), else randomized response keeping it w.p. e^ε/(1 + e^ε) (±1)."""
    sign = 2.0 * float(bit) - 1.0
    keep = rng.random((n, 1)) < math.exp(epsilon) / (1.0 + math.exp(epsilon))
    out = np.where(keep, sign, -sign)
    return np.where(rng.random((n, 1)) < delta, 2.0 * sign, out)


def at_the_claim(claim: Claim) -> tuple[Callable[[Any, np.random.Generator, int], np.ndarray], float, float]:
    """A release function and its neighbouring datasets (0.0 and 1.0) that meet ``claim`` with equality.

    As leaky as the claim allows, the hardest case for an audit's false-alarm rate. Claims that imply GDP and
    ρ-zCDP: the shift μ (μ = sqrt(2ρ)) of a unit Gaussian; pure ε-DP: a Laplace(1) shifted by ε; (ε, δ)-DP with
    δ > 0: the bit revealed w.p. δ, else ε-randomized response, whose trade-off curve is the claim's own.

    Args:
        claim: The claim (gdp, gaussian, ledger, zcdp or dp).

    Returns:
        The picklable release function, and the datasets D and D′.

    Raises:
        TypeError: If ``claim`` is not a :class:`~dpkit.audits.claims.Claim`.
        ValueError: If no mechanism exactly at the claim is provided (an RDP curve).
    """
    if not isinstance(claim, Claim):
        raise TypeError(f"claim must be an audits.Claim, got {type(claim).__name__}")
    if claim.mu is not None:
        release = functools.partial(_shifted_gaussian, float(claim.mu))
    elif claim.kind == ClaimKind.ZCDP:
        release = functools.partial(_shifted_gaussian, math.sqrt(2.0 * float(claim.rho)))  # type: ignore[arg-type]
    elif claim.kind == ClaimKind.DP and math.isfinite(claim.epsilon) and claim.delta == 0.0:  # type: ignore[arg-type]
        release = functools.partial(_shifted_laplace, float(claim.epsilon))  # type: ignore[arg-type]
    elif claim.kind == ClaimKind.DP and math.isfinite(claim.epsilon):  # type: ignore[arg-type]
        release = functools.partial(_revealing_response, float(claim.epsilon), float(claim.delta))  # type: ignore[arg-type]
    else:
        raise ValueError(f"no mechanism exactly at {claim.describe()} is provided (gdp, gaussian, ledger, zcdp, dp)")
    return release, 0.0, 1.0
