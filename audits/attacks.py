"""Attacks of a membership-style audit: functions that turn one output of a mechanism into a score.

An :class:`Attack` maps each output (an array of shape (n, …), read as n samples of k real values) to a real
score, larger meaning "more likely D′"; an estimator thresholds the scores into error rates and a privacy bound.
White-box attacks (:class:`GaussianLikelihoodRatio`, :class:`ScoreFunction`) need no training; black-box ones are
learned from a training split disjoint from the scored outputs. :func:`make_attack` builds one by name
(:data:`ATTACKS`); :data:`AUTO_ATTACKS` are the engine's ``attack="auto"`` candidates. Every attack is
deterministic, pickles and scores row by row. The list of attacks and what each sees: see
docs/explanation/verdicts.md ("The attacks").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import linalg

from dpkit.accountant.sensitivity import ReleaseNoise
from dpkit.accountant.validation import check_choice, check_member, check_positive

from .attack_interface import Attack, as_mean, as_outputs, check_attack_scores, flatten_outputs, row_dot
from .learned_attacks import (
    AtomAttack,
    BoostingAttack,
    DensityRatioAttack,
    FittedGaussianLikelihoodRatio,
    HistogramLikelihoodRatio,
    LogisticRegressionAttack,
)

__all__ = [
    "ATTACKS",
    "ATTACK_NAMES",
    "AUTO_ATTACKS",
    "Attack",
    "AtomAttack",
    "BoostingAttack",
    "DensityRatioAttack",
    "FittedGaussianLikelihoodRatio",
    "GaussianLikelihoodRatio",
    "HistogramLikelihoodRatio",
    "LogisticRegressionAttack",
    "ScoreFunction",
    "make_attack",
]


# --------------------------------------------------------------------------- white-box


class GaussianLikelihoodRatio(Attack):
    """The log-likelihood ratio of N(m1, Σ) against N(m0, Σ): the optimal attack on a Gaussian release.

    score(x) = (x − (m0 + m1)/2)ᵀ Σ⁻¹ (m1 − m0) = log N(x; m1, Σ) − log N(x; m0, Σ),

    on the flattened output x. The covariance is ``sigma``² I (``sigma`` > 0) or ``cov`` (a
    k × k symmetric positive definite matrix, solved by Cholesky); exactly one is given.
    Under D the score is N(−μ²/2, μ²) and under D′ N(+μ²/2, μ²), where
    μ = ‖Σ^{-1/2}(m1 − m0)‖ (:attr:`mu`) is the GDP parameter of the pair, so by
    Neyman–Pearson no attack has a better trade-off between FPR and FNR.

    With ``noise="symmetric"`` (see :meth:`symmetric_matrix`) the means are matrices (or
    stacks of matrices: the last two axes are square) released with i.i.d. noise on the entries
    i <= j, mirrored below the diagonal. Only those upper-triangle entries carry information,
    so the attack uses only them: k is their number, ``cov`` is k × k over them (in the order
    of ``numpy.triu_indices``, per matrix), and scored outputs must have the means' shape.

    Examples:
        >>> attack = GaussianLikelihoodRatio([0.0, 0.0], [3.0, 4.0], sigma=5.0)
        >>> attack.mu
        1.0
        >>> attack.score(np.array([[0.0, 0.0], [3.0, 4.0]])).tolist()
        [-0.5, 0.5]
    """

    name = "gaussian-lr"
    needs_fit = False

    def __init__(
        self,
        mean0: np.ndarray,
        mean1: np.ndarray,
        *,
        sigma: float | None = None,
        cov: np.ndarray | None = None,
        noise: ReleaseNoise | str = "iid",
    ) -> None:
        self.noise = check_member("noise", noise, ReleaseNoise)
        m0 = as_mean("mean0", mean0)
        m1 = as_mean("mean1", mean1)
        if m0.shape != m1.shape:
            raise ValueError(f"mean0 and mean1 must have the same shape, got {m0.shape} and {m1.shape}")
        self.shape: tuple[int, ...] = m0.shape
        self._size = m0.size
        if noise == ReleaseNoise.SYMMETRIC:
            if m0.ndim < 2 or m0.shape[-1] != m0.shape[-2]:
                raise ValueError(
                    f"with noise='symmetric', mean0 and mean1 must have square last two axes, got shape {m0.shape}"
                )
            rows, cols = np.triu_indices(m0.shape[-1])
            self._index: np.ndarray | None = np.arange(m0.size).reshape(m0.shape)[..., rows, cols].ravel()
        else:
            self._index = None
        m0 = self._select(m0.reshape(1, -1))[0]
        m1 = self._select(m1.reshape(1, -1))[0]
        k = m0.size
        if (sigma is None) == (cov is None):
            raise ValueError(
                f"exactly one of sigma and cov must be given, got sigma={sigma!r} and "
                f"cov={'None' if cov is None else 'an array'}"
            )
        delta = m1 - m0
        if sigma is not None:
            s = check_positive("sigma", sigma)
            self.sigma: float | None = s
            whitened = delta / s  # Σ^{-1/2} (m1 − m0)
            weights = delta / (s * s)  # Σ⁻¹ (m1 − m0)
        else:
            self.sigma = None
            chol = _cholesky(cov, k)
            whitened = linalg.solve_triangular(chol, delta, lower=True)
            weights = linalg.solve_triangular(chol.T, whitened, lower=False)
        self._midpoint = 0.5 * (m0 + m1)
        self._weights = weights
        self._mu = float(np.linalg.norm(whitened))

    @classmethod
    def symmetric_matrix(cls, mean0: np.ndarray, mean1: np.ndarray, sigma: float) -> GaussianLikelihoodRatio:
        """The attack on symmetric matrices released with i.i.d. N(0, σ²) noise on i <= j, mirrored.

        Uses only the entries i <= j of the last two axes, so μ = ‖upper(M1 − M0)‖/σ.

        Args:
            mean0: The release's mean on D (a matrix, or a stack of them).
            mean1: The release's mean on D′, of the same shape.
            sigma: The noise's standard deviation on each entry i <= j.

        Returns:
            The likelihood-ratio attack on the upper triangles.

        Examples:
            >>> m1 = np.array([[1.0, 2.0], [2.0, 0.0]])
            >>> GaussianLikelihoodRatio.symmetric_matrix(np.zeros((2, 2)), m1, sigma=1.0).mu  # √(1 + 4)
            2.23606797749979
        """
        return cls(mean0, mean1, sigma=sigma, noise="symmetric")

    @property
    def mu(self) -> float:
        """μ = ‖Σ^{-1/2}(m1 − m0)‖: the release of one output is μ-GDP, and this attack attains it."""
        return self._mu

    @property
    def k(self) -> int:
        """The number of values the attack uses per output (upper-triangle entries if symmetric)."""
        return int(self._weights.size)

    def _select(self, x: np.ndarray) -> np.ndarray:
        return x if self._index is None else x[:, self._index]

    def score(self, outputs: np.ndarray) -> np.ndarray:
        """The log-likelihood ratio log p_D′(x) − log p_D(x) of each output x.

        Args:
            outputs: The outputs, shape (n, …) like the means.

        Returns:
            One score per output, shape (n,).

        Raises:
            ValueError: If the outputs do not have the means' shape.
        """
        if self._index is not None:
            arr = as_outputs("outputs", outputs)
            if arr.shape[1:] != self.shape:
                raise ValueError(
                    f"outputs must have shape (n, {', '.join(map(str, self.shape))}) like the means, got {arr.shape}"
                )
            x = arr.reshape(arr.shape[0], -1)
        else:
            x = flatten_outputs("outputs", outputs, self._size)
        return row_dot(self._select(x) - self._midpoint, self._weights)

    def __repr__(self) -> str:
        noise = "" if self.noise == ReleaseNoise.IID else f", noise='{self.noise}'"
        cov = f"sigma={self.sigma!r}" if self.sigma is not None else "cov=..."
        return f"GaussianLikelihoodRatio(shape={self.shape}, {cov}{noise}, mu={self._mu!r})"


def _cholesky(cov: object, k: int) -> np.ndarray:
    """The lower Cholesky factor of ``cov``, or ``ValueError`` unless it is k × k symmetric positive definite."""
    try:
        c = np.asarray(cov, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"cov must be a {k} x {k} array of real numbers, got {type(cov).__name__}") from None
    if c.shape != (k, k):
        raise ValueError(f"cov must have shape ({k}, {k}) to match the means, got {c.shape}")
    if not np.all(np.isfinite(c)):
        raise ValueError("cov must be finite, got a non-finite entry")
    scale = float(np.max(np.abs(c)))
    if not np.allclose(c, c.T, rtol=1e-10, atol=1e-12 * scale):
        asym = float(np.max(np.abs(c - c.T)))
        raise ValueError(f"cov must be symmetric, got max |cov - cov.T| = {asym!r}")
    try:
        return np.linalg.cholesky(c)
    except np.linalg.LinAlgError:
        smallest = float(np.linalg.eigvalsh(c)[0])
        raise ValueError(f"cov must be positive definite, got smallest eigenvalue {smallest!r}") from None


class ScoreFunction(Attack):
    """A user-supplied attack: ``fn(outputs)`` must return a finite float array of shape (n,).

    ``fn`` receives the outputs as a read-only float array of their original shape (n, …)
    (validated: at least one sample, all values finite). Its result is validated too.

    Examples:
        >>> ScoreFunction(lambda x: x.sum(axis=1), name="sum").score(np.ones((3, 2))).tolist()
        [2.0, 2.0, 2.0]
    """

    name = "score"
    needs_fit = False

    def __init__(self, fn: Callable[[np.ndarray], np.ndarray], name: str = "user") -> None:
        if not callable(fn):
            raise ValueError(f"fn must be callable, got {fn!r}")
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        self.fn = fn
        self.name = name

    def score(self, outputs: np.ndarray) -> np.ndarray:
        """``fn(outputs)``, checked to be finite and of shape (n,).

        Args:
            outputs: The outputs, shape (n, …) (passed read-only).

        Returns:
            One score per output, shape (n,).

        Raises:
            ValueError: If ``fn`` does not return n finite real numbers.
        """
        arr = as_outputs("outputs", outputs).view()
        arr.flags.writeable = False
        result = self.fn(arr)
        try:
            scores = np.array(result, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(
                f"fn ({self.name!r}) must return an array of real numbers, got {type(result).__name__}"
            ) from None
        return check_attack_scores(f"the scores of fn ({self.name!r})", scores, arr.shape[0])

    def __repr__(self) -> str:
        return f"ScoreFunction({self.fn!r}, name={self.name!r})"


# --------------------------------------------------------------------------- registry

#: The built-in attacks by name, for :func:`make_attack`.
ATTACKS: dict[str, type[Attack]] = {
    "gaussian-lr": GaussianLikelihoodRatio,
    "gaussian-lr-fitted": FittedGaussianLikelihoodRatio,
    "logistic": LogisticRegressionAttack,
    "histogram": HistogramLikelihoodRatio,
    "density-ratio": DensityRatioAttack,
    "atoms": AtomAttack,
    "boosting": BoostingAttack,
    "score": ScoreFunction,
}

#: Every name :func:`make_attack` accepts.
ATTACK_NAMES: tuple[str, ...] = tuple(ATTACKS)

#: The learned attacks ``attack="auto"`` fits and chooses from, cheapest first: each needs only
#: training outputs (no means or σ from the user) and fits in seconds on 2·10⁵ rows of 10 values.
AUTO_ATTACKS: tuple[str, ...] = ("gaussian-lr-fitted", "logistic", "atoms", "density-ratio", "boosting")


def make_attack(name: str, /, **kwargs: Any) -> Attack:
    """Build the attack called ``name`` (a key of :data:`ATTACKS`).

    Args:
        name: The attack's name; positional-only, so ``make_attack("score", fn=f, name="mine")`` names the
            :class:`ScoreFunction`.
        **kwargs: The attack class's keyword arguments.

    Returns:
        A new attack.

    Raises:
        ValueError: If ``name`` is not a key of :data:`ATTACKS`.

    Examples:
        >>> make_attack("histogram", bins=20)
        HistogramLikelihoodRatio(bins=20, binning='quantile')
    """
    check_choice("name", name, tuple(ATTACKS))
    return ATTACKS[name](**kwargs)
