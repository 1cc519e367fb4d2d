"""A release function audited in one run: a noisy sum of vectors, and the canary records it is audited with.

    dpkit audit --target examples/gaussian_sum.py:release --one-run \\
        --canary-records examples/gaussian_sum.py:canaries --mu 0.92493

``release`` clips each record to the unit ball (so adding or removing one moves the sum by at most Δ = 1) and adds
N(0, σ²I) with the σ that makes it exactly (4, 10⁻⁵)-DP; ``release_half_sigma`` adds half that σ (a bug the
one-run audit catches). The claim is the Gaussian mechanism's own: μ = Δ/σ = 0.92493, its whole trade-off curve
(equivalently its (ε, δ(ε)) at every ε; ``--epsilon 4 --delta 1e-5`` would claim only one point of it, which one run
of a thousand canaries cannot refute at half the σ). The canaries are the standard basis of R^DIM: each its
own direction, so the audit scores canary j by the j-th coordinate of the output (the inner product, dpkit's
default score).
"""

from __future__ import annotations

import numpy as np

#: The dimension of the released sum (and the number of canary records).
DIM = 1000
#: σ of the Gaussian mechanism that is exactly (4, 1e-5)-DP at Δ = 1 (``dpkit.accountant.calibrate_sigma(4, 1e-5)``).
SIGMA = 1.0811618495787363


def _clipped_sum(dataset: list) -> np.ndarray:
    total = np.zeros(DIM)
    for x in dataset:
        x = np.asarray(x, dtype=float)
        total += x / max(1.0, float(np.linalg.norm(x)))
    return total


def release(dataset: list, rng: np.random.Generator, n: int) -> np.ndarray:
    """Σ of the clipped records + N(0, σ²I), ``n`` runs: shape (n, DIM)."""
    return _clipped_sum(dataset) + SIGMA * rng.standard_normal((n, DIM))


def release_half_sigma(dataset: list, rng: np.random.Generator, n: int) -> np.ndarray:
    """The same with half the σ: (4, 10⁻⁵) no longer holds."""
    return _clipped_sum(dataset) + 0.5 * SIGMA * rng.standard_normal((n, DIM))


def canaries(m: int) -> list[np.ndarray]:
    """``m`` canary records: the first m vectors of the standard basis of R^DIM."""
    if not 1 <= m <= DIM:
        raise ValueError(f"at most {DIM} canaries, got {m}")
    return list(np.eye(DIM)[:m])
