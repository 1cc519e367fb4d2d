"""Attacks of a membership-style audit: functions that turn one output of a mechanism into a score.

An audit runs a mechanism n times on a dataset D (label 0) and n times on a neighbour D′
(label 1). An :class:`Attack` maps each output to a real **score**, larger meaning "more
likely D′"; an estimator then thresholds the scores (FPR = P_D[score > t],
FNR = P_D′[score <= t]) and turns the error rates into a lower bound on the privacy loss.
Every attack treats an output array of shape (n, …) as n samples of k = prod(…) real values
(``outputs.reshape(n, -1)``) and returns a float array of shape (n,).

**White-box** attacks know the output distributions and need no training
(:attr:`Attack.needs_fit` is ``False``; :meth:`Attack.fit` returns the attack unchanged):

* :class:`GaussianLikelihoodRatio` — the log-likelihood ratio of two Gaussians with the same
  known covariance, the most powerful test of a Gaussian release (Neyman–Pearson); its scores
  are N(∓μ²/2, μ²) under D / D′ with μ = :attr:`GaussianLikelihoodRatio.mu`;
* :class:`ScoreFunction` — any user-supplied function of the outputs.

**Black-box** attacks are learned from a *training* split of outputs of D and D′, which must
be disjoint from the outputs the bound is computed from (else the bound is not valid):

* :class:`LogisticRegressionAttack` — L2-regularised logistic regression on standardised
  (optionally also squared) coordinates;
* :class:`HistogramLikelihoodRatio` — a smoothed histogram estimate of the likelihood ratio of
  1-d or 2-d outputs;
* :class:`FittedGaussianLikelihoodRatio` — the Gaussian likelihood ratio with plug-in means and
  covariance (a linear discriminant);
* :class:`DensityRatioAttack` — a non-parametric (quantile-histogram) log density ratio of a learned
  one-dimensional score: Laplace shapes, heavy tails, mixtures, discrete outputs;
* :class:`AtomAttack` — outputs, rows or fractional parts on a detected lattice that occur under
  one dataset and (almost) never under the other: point masses, lattices, exact copies;
* :class:`BoostingAttack` — scikit-learn's histogram gradient boosting, for nonlinear leaks of
  multi-dimensional outputs.

:func:`make_attack` builds an attack from its name (:data:`ATTACKS`, :data:`ATTACK_NAMES`);
:data:`AUTO_ATTACKS` are the candidates of the engine's ``attack="auto"``. All attacks are
deterministic: the same training and scored outputs always give the same scores. A fitted attack
pickles (to score in worker processes) and scores row by row: a row's score does not depend on the
other rows scored with it, so scoring chunk by chunk gives the scores of scoring all at once.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from scipy import linalg, optimize, special

from dpkit.accountant.validation import check_choice, check_count, check_nonnegative, check_positive

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

#: Noise models of :class:`GaussianLikelihoodRatio`: i.i.d. on every entry, or i.i.d. on the
#: entries i <= j of (the last two axes of) a symmetric matrix and mirrored.
NOISES: tuple[str, ...] = ("iid", "symmetric")

#: Feature maps of :class:`LogisticRegressionAttack`.
FEATURES: tuple[str, ...] = ("linear", "quadratic")

#: Bin-edge rules of :class:`HistogramLikelihoodRatio`.
BINNINGS: tuple[str, ...] = ("quantile", "range")


# --------------------------------------------------------------------------- validation


def _as_outputs(name: str, outputs: object) -> np.ndarray:
    """Return ``outputs`` as a float array of n >= 1 samples of k >= 1 finite values each."""
    try:
        arr = np.asarray(outputs, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of real numbers, got {type(outputs).__name__}") from None
    if arr.ndim == 0:
        raise ValueError(f"{name} must have a leading sample axis, got a scalar {arr.item()!r}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} must contain at least one sample, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must have at least one value per sample, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name} must be finite, got {arr[index]} at index {index}")
    return arr


def _flatten(name: str, outputs: object, k: int | None = None) -> np.ndarray:
    """Return ``outputs`` as an (n, k) float array; if ``k`` is given, check the width."""
    arr = _as_outputs(name, outputs)
    x = arr.reshape(arr.shape[0], -1)
    if k is not None and x.shape[1] != k:
        raise ValueError(
            f"{name} must have {k} values per sample, got shape {arr.shape} ({x.shape[1]} values per sample)"
        )
    return x


def _flatten_pair(outputs0: object, outputs1: object) -> tuple[np.ndarray, np.ndarray]:
    """Return the training outputs of D and D′ as (n0, k) and (n1, k) arrays of the same k."""
    x0 = _flatten("outputs0", outputs0)
    x1 = _flatten("outputs1", outputs1)
    if x0.shape[1] != x1.shape[1]:
        raise ValueError(
            f"outputs0 and outputs1 must have the same number of values per sample, got {x0.shape[1]} and {x1.shape[1]}"
        )
    return x0, x1


def _as_mean(name: str, mean: object) -> np.ndarray:
    """Return a mean output as a float array of finite values (any shape, at least one value)."""
    try:
        arr = np.asarray(mean, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of real numbers, got {type(mean).__name__}") from None
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name} must be finite, got {arr[index]} at index {index}")
    return arr


def _row_dot(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """x @ w row by row, without BLAS: each row's score is the same whether it is scored alone or in
    any chunk (a matrix product's summation order, hence its last bits, depends on the chunk)."""
    return np.einsum("ij,j->i", x, w)


def _check_scores(name: str, scores: np.ndarray, n: int) -> np.ndarray:
    """Return ``scores`` if it is a finite float array of shape (n,)."""
    if scores.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},) for {n} outputs, got shape {scores.shape}")
    bad = ~np.isfinite(scores)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} must be finite, got {scores[i]} at index {i}")
    return scores


# --------------------------------------------------------------------------- the interface


class Attack(ABC):
    """A rule that scores outputs of a mechanism: larger scores mean "more likely D′".

    Subclasses set :attr:`name` and :attr:`needs_fit`. A black-box attack (``needs_fit``)
    must be :meth:`fit` on training outputs before :meth:`score`; a white-box attack's
    :meth:`fit` does nothing and returns the attack.
    """

    #: Short name of the attack (the key of :data:`ATTACKS` for the built-in attacks).
    name: str = "attack"
    #: Whether :meth:`fit` must be called before :meth:`score`.
    needs_fit: ClassVar[bool] = False

    def fit(self, outputs0: np.ndarray, outputs1: np.ndarray) -> Attack:
        """Learn the attack from training outputs of D (``outputs0``) and D′ (``outputs1``).

        The default (white-box attacks) does nothing. Returns ``self``.
        """
        return self

    @property
    def fitted(self) -> bool:
        """Whether :meth:`score` can be called (always ``True`` for white-box attacks)."""
        return True

    @abstractmethod
    def score(self, outputs: np.ndarray) -> np.ndarray:
        """Score n outputs (an array of shape (n, …)): a finite float array of shape (n,)."""

    def _require_fitted(self) -> None:
        if not self.fitted:
            raise ValueError(f"{type(self).__name__} must be fitted before score: call fit(outputs0, outputs1)")


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
        noise: str = "iid",
    ) -> None:
        self.noise = check_choice("noise", noise, NOISES)
        m0 = _as_mean("mean0", mean0)
        m1 = _as_mean("mean1", mean1)
        if m0.shape != m1.shape:
            raise ValueError(f"mean0 and mean1 must have the same shape, got {m0.shape} and {m1.shape}")
        self.shape: tuple[int, ...] = m0.shape
        self._size = m0.size
        if noise == "symmetric":
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
        """The log-likelihood ratio log p_D′(x) − log p_D(x) of each output x."""
        if self._index is not None:
            arr = _as_outputs("outputs", outputs)
            if arr.shape[1:] != self.shape:
                raise ValueError(
                    f"outputs must have shape (n, {', '.join(map(str, self.shape))}) like the means, got {arr.shape}"
                )
            x = arr.reshape(arr.shape[0], -1)
        else:
            x = _flatten("outputs", outputs, self._size)
        return _row_dot(self._select(x) - self._midpoint, self._weights)

    def __repr__(self) -> str:
        noise = "" if self.noise == "iid" else f", noise={self.noise!r}"
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
        """``fn(outputs)``, checked to be finite and of shape (n,)."""
        arr = _as_outputs("outputs", outputs).view()
        arr.flags.writeable = False
        result = self.fn(arr)
        try:
            scores = np.array(result, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(
                f"fn ({self.name!r}) must return an array of real numbers, got {type(result).__name__}"
            ) from None
        return _check_scores(f"the scores of fn ({self.name!r})", scores, arr.shape[0])

    def __repr__(self) -> str:
        return f"ScoreFunction({self.fn!r}, name={self.name!r})"


# --------------------------------------------------------------------------- black-box


class LogisticRegressionAttack(Attack):
    """A learned linear (or quadratic) attack: L2-regularised logistic regression.

    :meth:`fit` standardises each coordinate with the mean and standard deviation of the
    pooled training outputs (a constant coordinate is only centred); with
    ``features="quadratic"`` the squares of the standardised coordinates are appended (and
    standardised in turn), which lets the attack detect a change of variance, not only of
    the mean. It then minimises the class-balanced logistic loss

        ½ mean_D log(1 + e^{f(x)}) + ½ mean_D′ log(1 + e^{−f(x)}) + (l2/2)‖w‖²,
        f(x) = wᵀφ(x) + b  (the intercept b is not penalised),

    with L-BFGS-B from w = 0, b = 0, using the analytic gradient and ``np.logaddexp`` for a
    loss that cannot overflow. The score is the linear predictor f(x). The fit is
    deterministic. :attr:`converged_` records whether L-BFGS-B reported convergence within
    ``max_iter`` iterations (the scores are usable either way: any scoring rule gives a valid
    bound when fitted on separate data, an unconverged one only a weaker one).
    """

    name = "logistic"
    needs_fit = True

    def __init__(self, l2: float = 1e-4, max_iter: int = 500, *, features: str = "linear") -> None:
        self.l2 = check_nonnegative("l2", l2)
        self.max_iter = check_count("max_iter", max_iter)
        self.features = check_choice("features", features, FEATURES)
        self.coef_: np.ndarray | None = None
        self.intercept_: float | None = None
        self.converged_: bool | None = None
        self.n_iter_: int | None = None
        self._k: int | None = None
        self._center = self._scale = self._sq_center = self._sq_scale = np.empty(0)

    @property
    def fitted(self) -> bool:
        return self.coef_ is not None

    def _phi(self, x: np.ndarray) -> np.ndarray:
        """The standardised features of (n, k) outputs, with the stored training statistics."""
        z = (x - self._center) / self._scale
        if self.features == "linear":
            return z
        return np.hstack([z, (z * z - self._sq_center) / self._sq_scale])

    def fit(self, outputs0: np.ndarray, outputs1: np.ndarray) -> LogisticRegressionAttack:
        """Fit on training outputs of D (label 0) and D′ (label 1); returns ``self``."""
        x0, x1 = _flatten_pair(outputs0, outputs1)
        x = np.concatenate([x0, x1])
        self._center, self._scale = _standardisation(x)
        if self.features == "quadratic":
            z = (x - self._center) / self._scale
            self._sq_center, self._sq_scale = _standardisation(z * z)
        phi = self._phi(x)
        n0, n1 = x0.shape[0], x1.shape[0]
        y = np.concatenate([np.zeros(n0), np.ones(n1)])
        weight = np.concatenate([np.full(n0, 0.5 / n0), np.full(n1, 0.5 / n1)])
        l2 = self.l2

        def loss_and_grad(theta: np.ndarray) -> tuple[float, np.ndarray]:
            w, b = theta[:-1], theta[-1]
            f = phi @ w + b
            loss = weight @ (np.logaddexp(0.0, f) - y * f) + 0.5 * l2 * (w @ w)
            residual = weight * (special.expit(f) - y)
            grad = np.empty_like(theta)
            grad[:-1] = phi.T @ residual + l2 * w
            grad[-1] = residual.sum()
            return float(loss), grad

        result = optimize.minimize(
            loss_and_grad,
            np.zeros(phi.shape[1] + 1),
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": self.max_iter, "ftol": 1e-12, "gtol": 1e-9},
        )
        self.coef_ = np.asarray(result.x[:-1], dtype=float)
        self.intercept_ = float(result.x[-1])
        self.converged_ = bool(result.success)
        self.n_iter_ = int(result.nit)
        self._k = x0.shape[1]
        return self

    def score(self, outputs: np.ndarray) -> np.ndarray:
        """The fitted linear predictor wᵀφ(x) + b of each output (the log-odds of D′)."""
        self._require_fitted()
        x = _flatten("outputs", outputs, self._k)
        assert self.coef_ is not None and self.intercept_ is not None
        with np.errstate(over="ignore", invalid="ignore"):
            scores = _row_dot(self._phi(x), self.coef_) + self.intercept_
        return _check_scores("the logistic scores (outputs too large?)", scores, x.shape[0])

    def __repr__(self) -> str:
        return f"LogisticRegressionAttack(l2={self.l2!r}, max_iter={self.max_iter!r}, features={self.features!r})"


def _standardisation(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column means and standard deviations of ``x``; a zero deviation is replaced by 1."""
    center = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[~(scale > 0.0)] = 1.0
    return center, scale


class FittedGaussianLikelihoodRatio(Attack):
    """The likelihood-ratio test of two Gaussians with plug-in parameters (linear discriminant).

    For a black-box release that is (close to) Gaussian with the same covariance under D and
    D′: :meth:`fit` estimates the two means and the pooled covariance (plus ``ridge`` times its
    mean diagonal, so that a degenerate coordinate cannot make it singular) from the training
    split, and the score is (x − (m̂0 + m̂1)/2)ᵀ Σ̂⁻¹ (m̂1 − m̂0). With exact parameters this is
    :class:`GaussianLikelihoodRatio`, the most powerful test; with estimated ones it is a learned
    attack like any other (valid when fitted on data the bound does not use).
    """

    name = "gaussian-lr-fitted"
    needs_fit = True

    def __init__(self, ridge: float = 1e-9) -> None:
        self.ridge = check_nonnegative("ridge", ridge)
        self._direction: np.ndarray | None = None
        self._midpoint = np.empty(0)
        self._k: int | None = None

    @property
    def fitted(self) -> bool:
        return self._direction is not None

    def fit(self, outputs0: np.ndarray, outputs1: np.ndarray) -> FittedGaussianLikelihoodRatio:
        """Estimate the means and the pooled covariance from training outputs; returns ``self``."""
        x0, x1 = _flatten_pair(outputs0, outputs1)
        if x0.shape[0] < 2 or x1.shape[0] < 2:
            raise ValueError(f"fitting needs at least 2 outputs of each dataset, got {x0.shape[0]} and {x1.shape[0]}")
        m0, m1 = x0.mean(axis=0), x1.mean(axis=0)
        centred = np.concatenate([x0 - m0, x1 - m1])
        cov = centred.T @ centred / (centred.shape[0] - 2)
        scale = float(np.mean(np.diag(cov))) if cov.size else 0.0
        cov = cov + (self.ridge * scale if scale > 0 else 1.0) * np.eye(cov.shape[0])
        try:
            factor = linalg.cho_factor(cov, lower=True, check_finite=False)
            self._direction = linalg.cho_solve(factor, m1 - m0, check_finite=False)
        except linalg.LinAlgError:
            self._direction = np.linalg.lstsq(cov, m1 - m0, rcond=None)[0]
        self._midpoint = (m0 + m1) / 2.0
        self._k = x0.shape[1]
        return self

    def score(self, outputs: np.ndarray) -> np.ndarray:
        self._require_fitted()
        x = _flatten("outputs", outputs, self._k)
        assert self._direction is not None
        return _check_scores("the Gaussian scores", _row_dot(x - self._midpoint, self._direction), x.shape[0])

    def __repr__(self) -> str:
        return f"FittedGaussianLikelihoodRatio(ridge={self.ridge!r})"


class HistogramLikelihoodRatio(Attack):
    """A learned likelihood ratio of 1-d or 2-d outputs: smoothed histograms of D and D′.

    :meth:`fit` cuts each coordinate into up to ``bins`` bins with common edges from the
    pooled training outputs: at the interior quantiles j/bins (``binning="quantile"``, equal
    mass; repeated values are merged, so each atom of a discrete output gets its own bin), or
    evenly over the training range (``binning="range"``). For 2-d outputs the cells are the
    products of the per-coordinate bins (up to ``bins``² cells). The outermost bins extend to
    ±∞, so outputs outside the training range go to the edge bins. With add-one (Laplace)
    smoothing over the B cells, p_c(cell) = (count_c + 1)/(n_c + B), and the score of an
    output is log p1(cell) − log p0(cell).
    """

    name = "histogram"
    needs_fit = True

    def __init__(self, bins: int = 50, *, binning: str = "quantile") -> None:
        self.bins = check_count("bins", bins)
        self.binning = check_choice("binning", binning, BINNINGS)
        self.cuts_: list[np.ndarray] | None = None
        self.log_ratio_: np.ndarray | None = None

    @property
    def fitted(self) -> bool:
        return self.log_ratio_ is not None

    def _cuts(self, column: np.ndarray) -> np.ndarray:
        if self.binning == "quantile":
            return np.unique(np.quantile(column, np.arange(1, self.bins) / self.bins))
        lo, hi = float(column.min()), float(column.max())
        if not hi > lo:
            return np.empty(0)
        return np.linspace(lo, hi, self.bins + 1)[1:-1]

    def _cells(self, x: np.ndarray) -> np.ndarray:
        assert self.cuts_ is not None
        index = [np.searchsorted(cuts, x[:, j], side="right") for j, cuts in enumerate(self.cuts_)]
        return np.ravel_multi_index(index, tuple(c.size + 1 for c in self.cuts_))

    def fit(self, outputs0: np.ndarray, outputs1: np.ndarray) -> HistogramLikelihoodRatio:
        """Fit on training outputs of D (label 0) and D′ (label 1); returns ``self``."""
        x0, x1 = _flatten_pair(outputs0, outputs1)
        k = x0.shape[1]
        if k > 2:
            raise ValueError(f"HistogramLikelihoodRatio supports outputs of 1 or 2 values, got k={k}")
        pooled = np.concatenate([x0, x1])
        self.cuts_ = [self._cuts(pooled[:, j]) for j in range(k)]
        cells = int(np.prod([c.size + 1 for c in self.cuts_]))
        counts0 = np.bincount(self._cells(x0), minlength=cells)
        counts1 = np.bincount(self._cells(x1), minlength=cells)
        log_p0 = np.log(counts0 + 1.0) - np.log(x0.shape[0] + cells)
        log_p1 = np.log(counts1 + 1.0) - np.log(x1.shape[0] + cells)
        self.log_ratio_ = log_p1 - log_p0
        return self

    def score(self, outputs: np.ndarray) -> np.ndarray:
        """The estimated log-likelihood ratio log p1(cell) − log p0(cell) of each output's cell."""
        self._require_fitted()
        assert self.cuts_ is not None and self.log_ratio_ is not None
        x = _flatten("outputs", outputs, len(self.cuts_))
        return self.log_ratio_[self._cells(x)]

    def __repr__(self) -> str:
        return f"HistogramLikelihoodRatio(bins={self.bins!r}, binning={self.binning!r})"


def _subsample(x: np.ndarray, limit: int, rng: np.random.Generator) -> np.ndarray:
    """At most ``limit`` rows of ``x``, chosen uniformly without replacement (in their original order)."""
    if x.shape[0] <= limit:
        return x
    return x[np.sort(rng.choice(x.shape[0], size=limit, replace=False))]


def _lookup(keys: np.ndarray, values: np.ndarray, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``values`` at the positions of ``query`` in the sorted ``keys``, and where ``query`` was found."""
    if keys.size == 0:
        return np.zeros(query.shape), np.zeros(query.shape, dtype=bool)
    index = np.minimum(np.searchsorted(keys, query), keys.size - 1)
    found = keys[index] == query
    return np.where(found, values[index], 0.0), found


def _count_table(
    keys0: np.ndarray, keys1: np.ndarray, min_count: int, smoothing: float
) -> tuple[np.ndarray, np.ndarray]:
    """The keys seen at least ``min_count`` times in the pooled training data, sorted, and the smoothed
    log ratio log((c1 + a)/n1) − log((c0 + a)/n0) of their counts under D′ and D."""
    pooled, counts = np.unique(np.concatenate([keys0, keys1]), return_counts=True)
    keys = pooled[counts >= min_count]
    if keys.size == 0:
        return keys, np.empty(0)
    c0 = np.bincount(np.searchsorted(keys, keys0[np.isin(keys0, keys)]), minlength=keys.size)
    c1 = np.bincount(np.searchsorted(keys, keys1[np.isin(keys1, keys)]), minlength=keys.size)
    log_ratio = (np.log(c1 + smoothing) - math.log(keys1.size)) - (np.log(c0 + smoothing) - math.log(keys0.size))
    return keys, log_ratio


def _float_gcd(a: float, b: float, floor: float, relative: float = 1e-4) -> float | None:
    """Euclid's algorithm on two positive floats that carry rounding errors.

    A remainder within ``relative`` of the divisor from 0 (or from the divisor) counts as 0; the
    result is ``None`` when the divisor sinks below ``floor`` (the values' rounding error): no
    common step can be resolved.
    """
    a, b = max(a, b), min(a, b)
    while b > floor:
        r = math.fmod(a, b)
        if r <= relative * b or b - r <= relative * b:
            return b
        a, b = b, r
    return None


def _lattice_step(column: np.ndarray, *, min_values: int = 20, share: float = 0.999, sample: int = 256) -> float | None:
    """The step γ of a lattice a + γℤ that (almost) all values of ``column`` lie on, or ``None``.

    γ is the floating-point gcd (:func:`_float_gcd`) of the smallest gap between distinct values
    and up to ``sample`` other gaps, refined by least squares (Σ gaps / Σ their multiples). It
    is accepted when at least ``share`` of *all* gaps are integer multiples of it (within 10⁻⁴
    of a step, or their floating-point error if larger, which must stay below 10⁻² of a step)
    and there are at least ``min_values`` distinct values. The gaps of continuous values have no
    common step, so they fail; so do a handful of values (the exact-value table handles those).
    """
    values = np.unique(column)
    if values.size < min_values:
        return None
    gaps = np.diff(values)
    error = 4.0 * np.finfo(float).eps * float(np.max(np.abs(values)))  # of one value, absolute
    # the smallest gaps first, so that Euclid's quotients (which multiply rounding errors) stay small
    picked = np.sort(
        np.concatenate([[gaps.min()], gaps[np.linspace(0, gaps.size - 1, min(sample, gaps.size)).astype(int)]])
    )
    step = float(picked[0])
    for i in range(1, picked.size):
        ratio = picked[i] / step
        if abs(ratio - round(ratio)) > 1e-4 * max(1.0, ratio):
            common = _float_gcd(step, float(picked[i]), 1e3 * error)
            if common is None:
                return None
            step = common
        # least squares over the gaps so far: the step's error shrinks as the gaps add up
        step = float(picked[: i + 1].sum() / np.round(picked[: i + 1] / step).sum())
    multiples = float(np.round(picked / step).sum())
    step = float(picked.sum()) / multiples  # errs by about error / multiples
    ratio = gaps / step
    slack = np.maximum(1e-4, 4.0 * error * (1.0 + ratio / multiples) / step)
    on_grid = (np.abs(ratio - np.round(ratio)) <= slack) & (slack <= 1e-2)
    return step if on_grid.mean() >= share else None


def _row_keys(x: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row's exact bits (−0.0 counted as 0.0): equal rows, equal keys."""
    bits = np.ascontiguousarray(x + 0.0).view(np.uint64)
    h = np.full(x.shape[0], 0xCBF29CE484222325, dtype=np.uint64)
    prime, shift = np.uint64(0x100000001B3), np.uint64(29)
    for j in range(bits.shape[1]):
        h = (h ^ bits[:, j]) * prime
        h ^= h >> shift
    return h


class AtomAttack(Attack):
    """A support/atom attack: outputs (or their positions on a lattice) seen under one dataset only.

    It catches leaks where the two output distributions put mass on different points: noise
    skipped with small probability (a point mass at the un-noised statistic), noise on a grid
    added to a statistic off that grid (disjoint lattices), exact copies, discrete outputs.
    :meth:`fit` builds, from the training outputs (at most ``max_train`` per dataset, subsampled
    with ``seed``), tables of *keys* that occur at least ``min_count`` times in the pooled
    training outputs, each with the smoothed log ratio log((c1 + a)/n1) − log((c0 + a)/n0) of its
    counts c0, c1 under D, D′ (a = ``smoothing``). The keys are, per coordinate:

    * the exact value;
    * if the coordinate's training values of D or D′ lie on a lattice a + γℤ (γ detected as the
      smallest gap between distinct values, accepted when the other gaps are multiples of it;
      the smaller γ if both do), the fractional part of x/γ, rounded to ``resolution``;

    and, for outputs of more than one value, the exact row (a 64-bit hash of its bits). A key seen
    under D′ only gets a large positive score, under D only a large negative one, so the
    thresholded test isolates the event: FPR⁺ ≈ 3/n on the side where it never happens.

    The score of an output is its row's log ratio if the row is a key, else the sum over
    coordinates of the exact value's log ratio or, if that value is not a key, its fractional
    part's. Anything not in a table scores 0: continuous outputs (no repeated values, no lattice)
    score 0 everywhere — an uninformative test, never a false alarm. The tables hold at most
    2·``max_train`` keys each (one per coordinate, two with a lattice, one for rows): the pickled
    attack is small for continuous outputs and up to a few MB per coordinate for discrete ones.
    """

    name = "atoms"
    needs_fit = True

    def __init__(
        self,
        *,
        min_count: int = 2,
        smoothing: float = 0.5,
        resolution: float = 1e-6,
        max_train: int = 200_000,
        seed: int = 0,
    ) -> None:
        self.min_count = check_count("min_count", min_count)
        self.smoothing = check_positive("smoothing", smoothing)
        self.resolution = check_positive("resolution", resolution)
        if not self.resolution < 1.0:
            raise ValueError(f"resolution must be < 1, got {resolution!r}")
        self.max_train = check_count("max_train", max_train)
        self.seed = int(seed)
        self._k: int | None = None
        self.values_: list[tuple[np.ndarray, np.ndarray]] = []
        self.steps_: list[float | None] = []
        self.fractions_: list[tuple[np.ndarray, np.ndarray]] = []
        self.rows_: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def fitted(self) -> bool:
        return self._k is not None

    def _fraction_keys(self, column: np.ndarray, step: float) -> np.ndarray:
        cells = round(1.0 / self.resolution)
        u = column / step
        return np.mod(np.round((u - np.floor(u)) * cells), cells)

    def fit(self, outputs0: np.ndarray, outputs1: np.ndarray) -> AtomAttack:
        """Build the tables from training outputs of D (label 0) and D′ (label 1); returns ``self``."""
        x0, x1 = _flatten_pair(outputs0, outputs1)
        rng = np.random.default_rng(self.seed)
        x0, x1 = _subsample(x0, self.max_train, rng) + 0.0, _subsample(x1, self.max_train, rng) + 0.0
        k = x0.shape[1]
        self.values_, self.steps_, self.fractions_ = [], [], []
        for j in range(k):
            self.values_.append(_count_table(x0[:, j], x1[:, j], self.min_count, self.smoothing))
            steps = [s for s in (_lattice_step(x0[:, j]), _lattice_step(x1[:, j])) if s is not None]
            step = min(steps) if steps else None
            self.steps_.append(step)
            if step is None:
                self.fractions_.append((np.empty(0), np.empty(0)))
            else:
                self.fractions_.append(
                    _count_table(
                        self._fraction_keys(x0[:, j], step),
                        self._fraction_keys(x1[:, j], step),
                        self.min_count,
                        self.smoothing,
                    )
                )
        self.rows_ = _count_table(_row_keys(x0), _row_keys(x1), self.min_count, self.smoothing) if k > 1 else None
        self._k = k
        return self

    def score(self, outputs: np.ndarray) -> np.ndarray:
        """The log count ratio of each output's row, or the sum of its coordinates' (0 if unseen)."""
        self._require_fitted()
        x = _flatten("outputs", outputs, self._k) + 0.0
        total = np.zeros(x.shape[0])
        for j in range(x.shape[1]):
            exact, found = _lookup(*self.values_[j], x[:, j])
            step = self.steps_[j]
            if step is not None:
                fraction, _ = _lookup(*self.fractions_[j], self._fraction_keys(x[:, j], step))
                exact = np.where(found, exact, fraction)
            total += exact
        if self.rows_ is not None:
            row, found = _lookup(*self.rows_, _row_keys(x))
            total = np.where(found, row, total)
        return total

    def __repr__(self) -> str:
        return (
            f"AtomAttack(min_count={self.min_count!r}, smoothing={self.smoothing!r}, "
            f"resolution={self.resolution!r}, max_train={self.max_train!r}, seed={self.seed!r})"
        )


class DensityRatioAttack(Attack):
    """A non-parametric likelihood ratio of a learned one-dimensional score (not a Gaussian fit).

    :meth:`fit` (at most ``max_train`` training outputs per dataset, subsampled with ``seed``)
    first reduces each output to one number: a 1-value output is its own score; otherwise a
    quadratic logistic regression (:class:`LogisticRegressionAttack` with
    ``features="quadratic"``, so mean and variance changes both count) is fitted on the first
    half of the training outputs (all of them if there are fewer than 4 per dataset) and its linear
    predictor is the score. On the (other half of the) training outputs it then estimates the two
    densities of that score by histograms with common quantile bins (``bins`` of them, by default
    one per ``min_per_bin`` pooled outputs, between 8 and ``max_bins``; repeated values merge
    cuts, so each atom of a discrete score gets its own bin; the outer bins extend to ±∞) and
    add-``smoothing`` counts. The attack's score is
    the estimated log density ratio log p̂_D′(bin) − log p̂_D(bin).

    Unlike a linear or Gaussian attack it follows any shape of the ratio: the kink of a Laplace
    density, heavy tails, mixtures, variance changes, discrete outputs (k-ary randomized response).
    """

    name = "density-ratio"
    needs_fit = True

    def __init__(
        self,
        bins: int | None = None,
        *,
        min_per_bin: int = 200,
        max_bins: int = 256,
        smoothing: float = 0.5,
        max_train: int = 200_000,
        seed: int = 0,
    ) -> None:
        self.bins = None if bins is None else check_count("bins", bins)
        self.min_per_bin = check_count("min_per_bin", min_per_bin)
        self.max_bins = check_count("max_bins", max_bins)
        self.smoothing = check_positive("smoothing", smoothing)
        self.max_train = check_count("max_train", max_train)
        self.seed = int(seed)
        self.projection_: LogisticRegressionAttack | None = None
        self.cuts_: np.ndarray | None = None
        self.log_ratio_: np.ndarray | None = None
        self._k: int | None = None

    @property
    def fitted(self) -> bool:
        return self.log_ratio_ is not None

    def _project(self, x: np.ndarray) -> np.ndarray:
        return x[:, 0] if self.projection_ is None else self.projection_.score(x)

    def fit(self, outputs0: np.ndarray, outputs1: np.ndarray) -> DensityRatioAttack:
        """Fit the projection and the two histograms on training outputs; returns ``self``."""
        x0, x1 = _flatten_pair(outputs0, outputs1)
        rng = np.random.default_rng(self.seed)
        x0, x1 = _subsample(x0, self.max_train, rng), _subsample(x1, self.max_train, rng)
        k = x0.shape[1]
        self.projection_ = None
        if k > 1:
            if min(x0.shape[0], x1.shape[0]) >= 4:
                h0, h1 = x0.shape[0] // 2, x1.shape[0] // 2
                self.projection_ = LogisticRegressionAttack(features="quadratic", max_iter=200).fit(x0[:h0], x1[:h1])
                x0, x1 = x0[h0:], x1[h1:]
            else:  # too few to split: both steps on the same outputs (still valid: the bound uses others)
                self.projection_ = LogisticRegressionAttack(features="quadratic", max_iter=200).fit(x0, x1)
        s0, s1 = self._project(x0), self._project(x1)
        pooled = np.concatenate([s0, s1])
        bins = self.bins or int(np.clip(pooled.size // self.min_per_bin, 8, self.max_bins))
        self.cuts_ = np.unique(np.quantile(pooled, np.arange(1, bins) / bins))
        cells = self.cuts_.size + 1
        c0 = np.bincount(np.searchsorted(self.cuts_, s0, side="right"), minlength=cells)
        c1 = np.bincount(np.searchsorted(self.cuts_, s1, side="right"), minlength=cells)
        a = self.smoothing
        self.log_ratio_ = (np.log(c1 + a) - math.log(s1.size + a * cells)) - (
            np.log(c0 + a) - math.log(s0.size + a * cells)
        )
        self._k = k
        return self

    def score(self, outputs: np.ndarray) -> np.ndarray:
        """The estimated log density ratio of each output's projected score."""
        self._require_fitted()
        assert self.cuts_ is not None and self.log_ratio_ is not None
        x = _flatten("outputs", outputs, self._k)
        return self.log_ratio_[np.searchsorted(self.cuts_, self._project(x), side="right")]

    def __repr__(self) -> str:
        return (
            f"DensityRatioAttack(bins={self.bins!r}, min_per_bin={self.min_per_bin!r}, max_bins={self.max_bins!r}, "
            f"smoothing={self.smoothing!r}, max_train={self.max_train!r}, seed={self.seed!r})"
        )


#: Below this many training rows, :class:`BoostingAttack` fits on one thread.
_THREADED_ROWS = 100_000


class BoostingAttack(Attack):
    """A nonlinear learned attack: scikit-learn's histogram gradient boosting, scored by its log-odds.

    :meth:`fit` trains ``HistGradientBoostingClassifier`` (early stopping on a 10% validation part
    of the training outputs, ``random_state=seed``) on as many training outputs of each dataset —
    at most ``max_train``, subsampled with ``seed`` — so the classes are balanced (about 1 s for
    10⁵ rows of 10 values per dataset).
    The score is the classifier's decision function, the log-odds of D′. Row by row, so scores do
    not depend on how the outputs are chunked; the fitted attack pickles with the model.
    """

    name = "boosting"
    needs_fit = True

    def __init__(
        self,
        *,
        max_iter: int = 100,
        learning_rate: float = 0.1,
        max_leaf_nodes: int = 31,
        max_train: int = 100_000,
        seed: int = 0,
    ) -> None:
        self.max_iter = check_count("max_iter", max_iter)
        self.learning_rate = check_positive("learning_rate", learning_rate)
        self.max_leaf_nodes = check_count("max_leaf_nodes", max_leaf_nodes)
        if self.max_leaf_nodes < 2:
            raise ValueError(f"max_leaf_nodes must be >= 2, got {max_leaf_nodes!r}")
        self.max_train = check_count("max_train", max_train)
        self.seed = int(seed)
        self.model_: Any = None
        self._k: int | None = None

    @property
    def fitted(self) -> bool:
        return self.model_ is not None

    def fit(self, outputs0: np.ndarray, outputs1: np.ndarray) -> BoostingAttack:
        """Train the classifier on training outputs of D (label 0) and D′ (label 1); returns ``self``."""
        from sklearn.ensemble import HistGradientBoostingClassifier

        x0, x1 = _flatten_pair(outputs0, outputs1)
        rng = np.random.default_rng(self.seed)
        size = min(x0.shape[0], x1.shape[0], self.max_train)  # balanced by subsampling (weights are slow)
        x0, x1 = _subsample(x0, size, rng), _subsample(x1, size, rng)
        x = np.concatenate([x0, x1])
        y = np.concatenate([np.zeros(size, dtype=int), np.ones(size, dtype=int)])
        model = HistGradientBoostingClassifier(
            max_iter=self.max_iter,
            learning_rate=self.learning_rate,
            max_leaf_nodes=self.max_leaf_nodes,
            early_stopping=x.shape[0] >= 100,
            validation_fraction=0.1,
            n_iter_no_change=10,
            random_state=self.seed,
        )
        if x.shape[0] < _THREADED_ROWS:  # OpenMP's start-up dominates small fits (seconds on a loaded machine)
            from threadpoolctl import threadpool_limits

            with threadpool_limits(1):
                self.model_ = model.fit(x, y)
        else:
            self.model_ = model.fit(x, y)
        self._k = x0.shape[1]
        return self

    def score(self, outputs: np.ndarray) -> np.ndarray:
        """The classifier's log-odds of D′ for each output."""
        self._require_fitted()
        x = _flatten("outputs", outputs, self._k)
        scores = np.asarray(self.model_.decision_function(x), dtype=float).reshape(-1)
        return _check_scores("the boosting scores", scores, x.shape[0])

    def __repr__(self) -> str:
        return (
            f"BoostingAttack(max_iter={self.max_iter!r}, learning_rate={self.learning_rate!r}, "
            f"max_leaf_nodes={self.max_leaf_nodes!r}, max_train={self.max_train!r}, seed={self.seed!r})"
        )


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
    """Build the attack called ``name`` (a key of :data:`ATTACKS`) with keyword arguments ``kwargs``.

    ``name`` is positional-only, so ``make_attack("score", fn=f, name="mine")`` names the
    :class:`ScoreFunction`.

    >>> make_attack("histogram", bins=20)
    HistogramLikelihoodRatio(bins=20, binning='quantile')
    """
    check_choice("name", name, tuple(ATTACKS))
    return ATTACKS[name](**kwargs)
