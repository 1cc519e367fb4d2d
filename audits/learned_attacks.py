"""The black-box attacks: learned from training outputs alone, no means or σ from the user (the candidates of
``attack="auto"``, :data:`~dpkit.audits.attacks.AUTO_ATTACKS`): logistic regression, a fitted Gaussian likelihood ratio,
histogram and density-ratio estimates of the likelihood ratio, atoms on a lattice, gradient boosting. Described in
:mod:`dpkit.audits.attacks`, which registers them by name."""

from __future__ import annotations

import enum
import math
from abc import abstractmethod
from typing import Any, Self

import numpy as np
from scipy import linalg, optimize, special

from dpkit.accountant.validation import (
    check_count,
    check_member,
    check_nonnegative,
    check_positive,
)

from .attack_interface import Attack, check_attack_scores, flatten_outputs, flatten_pair, row_dot

__all__ = [
    "AttackFeatures",
    "Binning",
    "LearnedAttack",
    "AtomAttack",
    "BoostingAttack",
    "DensityRatioAttack",
    "FittedGaussianLikelihoodRatio",
    "HistogramLikelihoodRatio",
    "LogisticRegressionAttack",
]


class AttackFeatures(enum.StrEnum):
    """The feature maps of :class:`LogisticRegressionAttack` (not a linear MDP's features)."""

    LINEAR = "linear"
    QUADRATIC = "quadratic"


class Binning(enum.StrEnum):
    """The bin-edge rules of :class:`HistogramLikelihoodRatio`."""

    QUANTILE = "quantile"
    RANGE = "range"


class LearnedAttack(Attack):
    """An attack learned from training outputs alone: what every black-box attack here shares.

    :meth:`fit` flattens and checks the two training sets (finite samples of one width), hands them to the
    subclass's :meth:`_fit` and records the width; :meth:`score` refuses an unfitted attack, flattens and checks
    the outputs against that width and hands them to :meth:`_score`. A subclass sets :attr:`name` and implements
    the two steps on (n, k) arrays.
    """

    needs_fit = True

    def __init__(self) -> None:
        self._k: int | None = None

    @property
    def fitted(self) -> bool:
        """Whether :meth:`fit` has run (then :meth:`score` can be called)."""
        return self._k is not None

    def fit(self, outputs0: np.ndarray, outputs1: np.ndarray) -> Self:
        """Fit on training outputs of D (label 0) and D′ (label 1).

        Args:
            outputs0: Training outputs of D (label 0), shape (n0, …).
            outputs1: Training outputs of D′ (label 1), shape (n1, …) with as many values per sample.

        Returns:
            ``self``, fitted.

        Raises:
            ValueError: If the outputs are not finite arrays of samples of the same width, or the attack cannot
                learn from them (too few, or too wide; the subclass says which).
        """
        x0, x1 = flatten_pair(outputs0, outputs1)
        self._fit(x0, x1)
        self._k = x0.shape[1]
        return self

    def score(self, outputs: np.ndarray) -> np.ndarray:
        """Score outputs with the fitted attack: larger means "more likely D′".

        Args:
            outputs: The outputs, shape (n, …) with the training outputs' width.

        Returns:
            One finite score per output, shape (n,).

        Raises:
            ValueError: If the attack is not fitted, or the outputs are not finite or not of the fitted width.
        """
        self._require_fitted()
        return self._score(flatten_outputs("outputs", outputs, self._k))

    @abstractmethod
    def _fit(self, x0: np.ndarray, x1: np.ndarray) -> None:
        """Learn from checked training outputs of D and D′, shapes (n0, k) and (n1, k)."""

    @abstractmethod
    def _score(self, x: np.ndarray) -> np.ndarray:
        """The scores of checked outputs of the fitted width, shape (n, k) → (n,)."""


class LogisticRegressionAttack(LearnedAttack):
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

    def __init__(self, l2: float = 1e-4, max_iter: int = 500, *, features: AttackFeatures | str = "linear") -> None:
        self.l2 = check_nonnegative("l2", l2)
        self.max_iter = check_count("max_iter", max_iter)
        super().__init__()
        self.features = check_member("features", features, AttackFeatures)
        self.coef_: np.ndarray | None = None
        self.intercept_: float | None = None
        self.converged_: bool | None = None
        self.n_iter_: int | None = None
        self._center = self._scale = self._sq_center = self._sq_scale = np.empty(0)

    def _phi(self, x: np.ndarray) -> np.ndarray:
        """The standardised features of (n, k) outputs, with the stored training statistics."""
        z = (x - self._center) / self._scale
        if self.features == AttackFeatures.LINEAR:
            return z
        return np.hstack([z, (z * z - self._sq_center) / self._sq_scale])

    def _fit(self, x0: np.ndarray, x1: np.ndarray) -> None:
        """Standardise (and square) the features, then minimise the balanced logistic loss with L-BFGS-B."""
        x = np.concatenate([x0, x1])
        self._center, self._scale = _standardisation(x)
        if self.features == AttackFeatures.QUADRATIC:
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

    def _score(self, x: np.ndarray) -> np.ndarray:
        """The fitted linear predictor wᵀφ(x) + b of each output (the log-odds of D′)."""
        assert self.coef_ is not None and self.intercept_ is not None
        with np.errstate(over="ignore", invalid="ignore"):
            scores = row_dot(self._phi(x), self.coef_) + self.intercept_
        return check_attack_scores("the logistic scores (outputs too large?)", scores, x.shape[0])

    def __repr__(self) -> str:
        return f"LogisticRegressionAttack(l2={self.l2!r}, max_iter={self.max_iter!r}, features='{self.features}')"


def _standardisation(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column means and standard deviations of ``x``; a zero deviation is replaced by 1."""
    center = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[~(scale > 0.0)] = 1.0
    return center, scale


class FittedGaussianLikelihoodRatio(LearnedAttack):
    """The likelihood-ratio test of two Gaussians with plug-in parameters (linear discriminant).

    For a black-box release that is (close to) Gaussian with the same covariance under D and
    D′: :meth:`fit` estimates the two means and the pooled covariance (plus ``ridge`` times its
    mean diagonal, so that a degenerate coordinate cannot make it singular) from the training
    split, and the score is (x − (m̂0 + m̂1)/2)ᵀ Σ̂⁻¹ (m̂1 − m̂0). With exact parameters this is
    :class:`GaussianLikelihoodRatio`, the most powerful test; with estimated ones it is a learned
    attack like any other (valid when fitted on data the bound does not use).
    """

    name = "gaussian-lr-fitted"

    def __init__(self, ridge: float = 1e-9) -> None:
        super().__init__()
        self.ridge = check_nonnegative("ridge", ridge)
        self._direction: np.ndarray | None = None
        self._midpoint = np.empty(0)

    def _fit(self, x0: np.ndarray, x1: np.ndarray) -> None:
        """Estimate the means and the pooled covariance (ValueError with fewer than 2 outputs of either)."""
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

    def _score(self, x: np.ndarray) -> np.ndarray:
        """The log-likelihood ratio of each output under the fitted Gaussians (a linear discriminant)."""
        assert self._direction is not None
        return check_attack_scores("the Gaussian scores", row_dot(x - self._midpoint, self._direction), x.shape[0])

    def __repr__(self) -> str:
        return f"FittedGaussianLikelihoodRatio(ridge={self.ridge!r})"


class HistogramLikelihoodRatio(LearnedAttack):
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

    def __init__(self, bins: int = 50, *, binning: Binning | str = "quantile") -> None:
        super().__init__()
        self.bins = check_count("bins", bins)
        self.binning = check_member("binning", binning, Binning)
        self.cuts_: list[np.ndarray] | None = None
        self.log_ratio_: np.ndarray | None = None

    def _cuts(self, column: np.ndarray) -> np.ndarray:
        if self.binning == Binning.QUANTILE:
            return np.unique(np.quantile(column, np.arange(1, self.bins) / self.bins))
        lo, hi = float(column.min()), float(column.max())
        if not hi > lo:
            return np.empty(0)
        return np.linspace(lo, hi, self.bins + 1)[1:-1]

    def _cells(self, x: np.ndarray) -> np.ndarray:
        assert self.cuts_ is not None
        index = [np.searchsorted(cuts, x[:, j], side="right") for j, cuts in enumerate(self.cuts_)]
        return np.ravel_multi_index(index, tuple(c.size + 1 for c in self.cuts_))

    def _fit(self, x0: np.ndarray, x1: np.ndarray) -> None:
        """Cut the pooled outputs into bins and smooth both counts (ValueError for more than 2 values each)."""
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

    def _score(self, x: np.ndarray) -> np.ndarray:
        """The estimated log-likelihood ratio log p1(cell) − log p0(cell) of each output's cell."""
        assert self.cuts_ is not None and self.log_ratio_ is not None
        return self.log_ratio_[self._cells(x)]

    def __repr__(self) -> str:
        return f"HistogramLikelihoodRatio(bins={self.bins!r}, binning='{self.binning}')"


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


class AtomAttack(LearnedAttack):
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

    def __init__(
        self,
        *,
        min_count: int = 2,
        smoothing: float = 0.5,
        resolution: float = 1e-6,
        max_train: int = 200_000,
        seed: int = 0,
    ) -> None:
        super().__init__()
        self.min_count = check_count("min_count", min_count)
        self.smoothing = check_positive("smoothing", smoothing)
        self.resolution = check_positive("resolution", resolution)
        if not self.resolution < 1.0:
            raise ValueError(f"resolution must be < 1, got {resolution!r}")
        self.max_train = check_count("max_train", max_train)
        self.seed = int(seed)
        self.values_: list[tuple[np.ndarray, np.ndarray]] = []
        self.steps_: list[float | None] = []
        self.fractions_: list[tuple[np.ndarray, np.ndarray]] = []
        self.rows_: tuple[np.ndarray, np.ndarray] | None = None

    def _fraction_keys(self, column: np.ndarray, step: float) -> np.ndarray:
        cells = round(1.0 / self.resolution)
        u = column / step
        return np.mod(np.round((u - np.floor(u)) * cells), cells)

    def _fit(self, x0: np.ndarray, x1: np.ndarray) -> None:
        """Build the tables of exact values, lattice fractions and rows (−0.0 counted as 0.0)."""
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

    def _score(self, x: np.ndarray) -> np.ndarray:
        """The log count ratio of each output's row, or the sum of its coordinates' (0 if unseen)."""
        x = x + 0.0
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


class DensityRatioAttack(LearnedAttack):
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
        super().__init__()
        self.bins = None if bins is None else check_count("bins", bins)
        self.min_per_bin = check_count("min_per_bin", min_per_bin)
        self.max_bins = check_count("max_bins", max_bins)
        self.smoothing = check_positive("smoothing", smoothing)
        self.max_train = check_count("max_train", max_train)
        self.seed = int(seed)
        self.projection_: LogisticRegressionAttack | None = None
        self.cuts_: np.ndarray | None = None
        self.log_ratio_: np.ndarray | None = None

    def _project(self, x: np.ndarray) -> np.ndarray:
        return x[:, 0] if self.projection_ is None else self.projection_.score(x)

    def _fit(self, x0: np.ndarray, x1: np.ndarray) -> None:
        """Fit the projection to one number, then the two histograms of that number."""
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

    def _score(self, x: np.ndarray) -> np.ndarray:
        """The estimated log density ratio of each output's projected score."""
        assert self.cuts_ is not None and self.log_ratio_ is not None
        return self.log_ratio_[np.searchsorted(self.cuts_, self._project(x), side="right")]

    def __repr__(self) -> str:
        return (
            f"DensityRatioAttack(bins={self.bins!r}, min_per_bin={self.min_per_bin!r}, max_bins={self.max_bins!r}, "
            f"smoothing={self.smoothing!r}, max_train={self.max_train!r}, seed={self.seed!r})"
        )


#: Below this many training rows, :class:`BoostingAttack` fits on one thread.
_THREADED_ROWS = 100_000


class BoostingAttack(LearnedAttack):
    """A nonlinear learned attack: scikit-learn's histogram gradient boosting, scored by its log-odds.

    :meth:`fit` trains ``HistGradientBoostingClassifier`` (early stopping on a 10% validation part
    of the training outputs, ``random_state=seed``) on as many training outputs of each dataset —
    at most ``max_train``, subsampled with ``seed`` — so the classes are balanced (about 1 s for
    10⁵ rows of 10 values per dataset).
    The score is the classifier's decision function, the log-odds of D′. Row by row, so scores do
    not depend on how the outputs are chunked; the fitted attack pickles with the model.
    """

    name = "boosting"

    def __init__(
        self,
        *,
        max_iter: int = 100,
        learning_rate: float = 0.1,
        max_leaf_nodes: int = 31,
        max_train: int = 100_000,
        seed: int = 0,
    ) -> None:
        super().__init__()
        self.max_iter = check_count("max_iter", max_iter)
        self.learning_rate = check_positive("learning_rate", learning_rate)
        self.max_leaf_nodes = check_count("max_leaf_nodes", max_leaf_nodes)
        if self.max_leaf_nodes < 2:
            raise ValueError(f"max_leaf_nodes must be >= 2, got {max_leaf_nodes!r}")
        self.max_train = check_count("max_train", max_train)
        self.seed = int(seed)
        self.model_: Any = None

    def _fit(self, x0: np.ndarray, x1: np.ndarray) -> None:
        """Train the classifier on balanced subsamples of the two training sets."""
        from sklearn.ensemble import HistGradientBoostingClassifier

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

    def _score(self, x: np.ndarray) -> np.ndarray:
        """The classifier's log-odds of D′ for each output."""
        scores = np.asarray(self.model_.decision_function(x), dtype=float).reshape(-1)
        return check_attack_scores("the boosting scores", scores, x.shape[0])

    def __repr__(self) -> str:
        return (
            f"BoostingAttack(max_iter={self.max_iter!r}, learning_rate={self.learning_rate!r}, "
            f"max_leaf_nodes={self.max_leaf_nodes!r}, max_train={self.max_train!r}, seed={self.seed!r})"
        )
