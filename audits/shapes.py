"""The shape of a measured trade-off: the family it follows, where it sits against the claim, and the power to see a
violation of that shape (docs/FORMULAS.md §10).

An (ε, δ) claim's curve is loose in its middle and tight in its tail, so an audit that certifies nothing has not
shown much; what the runs *do* show precisely is the shape of the attack's ROC. Three one-parameter families
(``gaussian``, ``laplace``, ``randomized-response``) are fitted to it at its equal-error point (:func:`fit_shapes`),
and the claim is read in each (:func:`allowed_parameter`): whether the data point to a violation, the power to see
one just past the claim, and how many trials would certify it. None of this decides a ``violation``: the shape can
only turn a ``consistent`` into an ``inconclusive``. In full: see docs/explanation/verdicts.md ("The shape of a
trade-off").
"""

from __future__ import annotations

import enum
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special, stats

from dpkit.accountant.closed_forms import epsilon_delta_epsilon_unchecked, laplace_epsilon_unchecked
from dpkit.accountant.gdp import gdp_epsilon_unchecked, gdp_mu_unchecked
from dpkit.accountant.numerics import brent_root
from dpkit.accountant.validation import check_member, enum_values

from .claims import Claim, ClaimKind
from .estimators import rates_at_all_thresholds

__all__ = [
    "FAMILIES",
    "ShapeFamily",
    "KAPPA",
    "POWER_NEEDED",
    "ROC_POINTS",
    "ShapeFit",
    "ShapeReading",
    "allowed_parameter",
    "alternative_parameter",
    "certify_probability",
    "family_curve",
    "family_epsilon",
    "family_parameter",
    "fit_shapes",
    "fits_roc",
    "flag_probability",
    "margin_threshold",
    "read_shape",
    "roc_points",
    "trials_to_certify",
]


class ShapeFamily(enum.StrEnum):
    """The one-parameter families of trade-off curves fitted to a measured ROC (see the module docstring)."""

    GAUSSIAN = "gaussian"
    LAPLACE = "laplace"
    RANDOMIZED_RESPONSE = "randomized-response"


#: The values of :class:`ShapeFamily`.
FAMILIES: tuple[str, ...] = enum_values(ShapeFamily)
#: The violation "just past the claim" whose power ``consistent`` needs: the measured shape at KAPPA × the claim's ε.
KAPPA = 1.25
#: The probability with which a violation must be seen (certified, or pointed to) for the audit to have power.
POWER_NEEDED = 0.8
#: How many thresholds of the evaluation scores (their quantiles) the shape is fitted on.
ROC_POINTS = 64
#: Two families fit "about as well" when their misfits differ by less than this plus twice the number of points.
_TIE = 4.0
#: The largest parameter searched (μ or ε): beyond it every family separates D from D′ with certainty.
_THETA_MAX = 60.0
#: The precision of the parameters found by root-finding (absolute, relative): about the doubles'.
_XTOL, _RTOL = 1e-15, 4 * 2.0**-52
#: The FPR grid on which an ideal attack's thresholds are tried (deep tails included: an (ε, δ) curve is tight there).
_GRID = np.unique(np.concatenate([np.logspace(-12, math.log10(0.5), 700), np.linspace(0.5, 1.0, 41)]))
#: Gauss–Hermite nodes and weights of the standard normal (the measured FPR around its mean).
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(24)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


# -- the families --------------------------------------------------------------------------------------------------


def family_curve(family: ShapeFamily | str, theta: float, fpr: Any) -> np.ndarray:
    """The trade-off curve (the least FNR at each FPR) of ``family``'s member ``theta`` (vectorised over ``fpr``).

    Args:
        family: one of :data:`FAMILIES`.
        theta: the member's parameter (μ for ``gaussian``, the pure ε otherwise), >= 0; ``inf`` separates perfectly.
        fpr: false-positive rates in [0, 1].

    Returns:
        The curve at each rate, in [0, 1].

    Raises:
        ValueError: for an unknown family.

    Examples:
        >>> round(float(family_curve("gaussian", 1.0, 0.5)), 6)
        0.158655
        >>> float(family_curve("randomized-response", math.log(3.0), 0.25))
        0.25
    """
    family = check_member("family", family, ShapeFamily)
    a = np.clip(np.asarray(fpr, dtype=float), 0.0, 1.0)
    t = float(theta)
    if math.isinf(t):
        return np.where(a > 0.0, 0.0, 1.0) * np.ones_like(a)
    if family == ShapeFamily.GAUSSIAN:
        return np.asarray(special.ndtr(-special.ndtri(a) - t))
    if family == ShapeFamily.RANDOMIZED_RESPONSE:
        with np.errstate(over="ignore"):
            return np.maximum(0.0, np.maximum(1.0 - np.exp(t) * a, math.exp(-t) * (1.0 - a)))
    corner = 0.5 * math.exp(-t)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        tail = 1.0 - np.exp(t) * a
        middle = math.exp(-t) / (4.0 * a)
        upper = math.exp(-t) * (1.0 - a)
    return np.clip(np.where(a < corner, tail, np.where(a <= 0.5, middle, upper)), 0.0, 1.0)


def family_parameter(family: ShapeFamily | str, fpr: float, fnr: float) -> float:
    """The parameter of ``family``'s member whose curve passes through (``fpr``, ``fnr``) (0 on or above the diagonal,
    ``inf`` at a perfect test).

    Args:
        family: one of :data:`FAMILIES`.
        fpr: a false-positive rate in [0, 1].
        fnr: a false-negative rate in [0, 1].

    Returns:
        θ >= 0 with ``family_curve(family, θ, fpr) == fnr`` (to within 1e-12 relative; the curves are symmetric, so
        the point read the other way round gives the same θ).

    Examples:
        >>> round(family_parameter("gaussian", 0.3085375387, 0.5), 6)
        0.5
        >>> round(family_parameter("randomized-response", 0.25, 0.25), 6) == round(math.log(3.0), 6)
        True
    """
    family = check_member("family", family, ShapeFamily)
    x, y = float(fpr), float(fnr)
    if x + y >= 1.0:
        return 0.0
    if x <= 0.0 and y <= 0.0:
        return math.inf
    if family == ShapeFamily.GAUSSIAN:
        return max(0.0, float(-special.ndtri(x) - special.ndtri(y))) if x > 0.0 and y > 0.0 else math.inf
    if family == ShapeFamily.RANDOMIZED_RESPONSE:
        with np.errstate(divide="ignore"):
            one = math.log(1.0 - y) - math.log(x) if x > 0.0 else math.inf
            two = math.log(1.0 - x) - math.log(y) if y > 0.0 else math.inf
        return max(0.0, one, two)
    a, b = min(x, y), max(x, y)  # symmetric: read below the diagonal's mirror
    if float(family_curve(family, _THETA_MAX, a)) > b:
        return math.inf
    # the curve at a falls from 1 − a > b (θ = 0) to <= b (θ = _THETA_MAX)
    return brent_root(
        lambda t: float(family_curve(family, t, a)) - b, 0.0, _THETA_MAX, xtol=_XTOL, rtol=_RTOL, maxiter=4000
    )


def family_epsilon(family: ShapeFamily | str, theta: float, delta: float) -> float:
    """The ε at ``delta`` of ``family``'s member ``theta`` (rounded up; ``inf`` for a Gaussian at δ = 0).

    Args:
        family: ``gaussian``, ``laplace`` or ``randomized-response``.
        theta: The member's parameter (μ, or the pure ε).
        delta: Where ε is read.

    Returns:
        The ε.

    Examples:
        >>> family_epsilon("laplace", 1.0, 0.0)
        1.0
        >>> round(family_epsilon("gaussian", 0.268051123, 1e-5), 4)
        1.0
    """
    family = check_member("family", family, ShapeFamily)
    t, d = float(theta), float(delta)
    if t <= 0.0 or d >= 1.0:
        return 0.0
    if math.isinf(t):
        return math.inf
    if family == ShapeFamily.GAUSSIAN:
        return gdp_epsilon_unchecked(t, d)
    if family == ShapeFamily.LAPLACE:
        return laplace_epsilon_unchecked(t, d)
    return epsilon_delta_epsilon_unchecked(t, 0.0, d)


def _dp_allowed(family: ShapeFamily, epsilon: float, delta: float) -> float:
    """The leakiest member of ``family`` that is (ε, δ)-DP: δ_F(ε) <= δ, closed form (rounded down)."""
    if math.isinf(epsilon) or delta >= 1.0:
        return math.inf
    if family == ShapeFamily.GAUSSIAN:
        return gdp_mu_unchecked(epsilon, delta)
    if family == ShapeFamily.LAPLACE:  # δ(ε) = 1 − e^{(ε − ε_L)/2} <= δ  ⟺  ε_L <= ε − 2 log(1 − δ)
        value = epsilon - 2.0 * math.log1p(-delta)
    else:  # (e^{ε_R} − e^ε)/(1 + e^{ε_R}) <= δ  ⟺  e^{ε_R}(1 − δ) <= e^ε + δ
        value = epsilon + math.log1p(delta * math.exp(-epsilon)) - math.log1p(-delta) if epsilon < 700 else epsilon
    return math.nextafter(value, -math.inf) if value > 0 else 0.0


@functools.lru_cache(maxsize=1)
def _fine_grid() -> np.ndarray:
    """FPRs fine enough that a family's curve and a claim's cannot cross between two of them unseen (10⁵ evenly
    spaced and 10⁴ log-spaced down to 10⁻¹⁴; read-only)."""
    grid = np.unique(np.concatenate([np.logspace(-14, -1e-12, 10_000), np.linspace(0.0, 1.0, 100_001)]))
    grid.setflags(write=False)
    return grid


@functools.lru_cache(maxsize=256)
def allowed_parameter(family: ShapeFamily | str, claim: Claim) -> float:
    """The leakiest member of ``family`` the claim allows: the largest θ whose curve lies nowhere below the claim's.

    Exact for (ε, δ) claims (the member's δ at the claim's ε); for the other claims, the largest θ (bisection) whose
    curve is at least the claim's on a fine grid of FPRs reaching 10⁻¹⁴, rounded down by 10⁻⁴ relative (the
    Gaussian family against a claim that implies GDP: its μ). Rounding down is the careful side: a smaller allowance
    points to a violation sooner, so it can only turn a ``consistent`` into an ``inconclusive``.

    Args:
        family: one of :data:`FAMILIES`.
        claim: the claim.

    Returns:
        θ_allowed >= 0 (``inf`` when the claim allows every member: ε = ∞ or δ = 1).

    Examples:
        >>> round(allowed_parameter("gaussian", Claim.dp(1.0, 1e-5)), 4)
        0.2681
        >>> allowed_parameter("gaussian", Claim.gdp(0.5))
        0.5
    """
    family = check_member("family", family, ShapeFamily)
    if claim.kind == ClaimKind.DP:
        return _dp_allowed(family, float(claim.epsilon), float(claim.delta))  # type: ignore[arg-type]
    if family == ShapeFamily.GAUSSIAN and claim.mu is not None:
        return float(claim.mu)
    grid = _fine_grid()
    floor = claim.trade_off(grid)

    def allowed(theta: float) -> bool:
        return bool(np.all(family_curve(family, theta, grid) >= floor - 1e-12))

    if not allowed(0.0):
        return 0.0
    lo, hi = 0.0, 1.0
    while allowed(hi):
        lo, hi = hi, 2.0 * hi
        if hi > _THETA_MAX:
            return math.inf
    while hi - lo > 1e-9 * max(1.0, hi):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if allowed(mid) else (lo, mid)
    return lo * (1.0 - 1e-4)  # rounded down: a kink of the claim's curve between two grid points is missed by less


def alternative_parameter(family: ShapeFamily | str, claim: Claim, delta: float) -> float | None:
    """The member of ``family`` just past the claim: its ε at ``delta`` is :data:`KAPPA` × the claim's.

    Args:
        family: The family.
        claim: The claim.
        delta: Where ε is read.

    Returns:
        Its parameter, or None when the claim's ε there is 0 or infinite (nothing finite lies just past it).
    """
    claimed = claim.epsilon_at(delta)
    if not 0.0 < claimed < math.inf:
        return None
    value = _dp_allowed(check_member("family", family, ShapeFamily), KAPPA * claimed, delta)
    return value if 0.0 < value < math.inf else None


# -- the ROC of the evaluation scores and the fit --------------------------------------------------------------------


@dataclass(frozen=True)
class Roc:
    """An empirical ROC: error counts at thresholds of the scores (``fp`` of ``n0`` on D, ``fn`` of ``n1`` on D′)."""

    fp: np.ndarray
    fn: np.ndarray
    n0: int
    n1: int

    @property
    def fpr(self) -> np.ndarray:
        return self.fp / self.n0

    @property
    def fnr(self) -> np.ndarray:
        return self.fn / self.n1


def roc_points(scores0: np.ndarray, scores1: np.ndarray, *, points: int = ROC_POINTS) -> Roc:
    """The error counts of "reject D when the score exceeds t" at ``points`` quantiles of both score sets.

    Args:
        scores0: The scores on D.
        scores1: The scores on D′.
        points: The thresholds (every distinct score when there are fewer).

    Returns:
        The thresholds and the false positives and negatives at each.

    Examples:
        >>> roc = roc_points(np.array([0.0, 0.0, 1.0]), np.array([1.0, 1.0, 2.0]))
        >>> roc.fp.tolist(), roc.fn.tolist()
        ([1, 0, 0], [0, 2, 3])
    """
    s0, s1 = np.sort(np.asarray(scores0, dtype=float)), np.sort(np.asarray(scores1, dtype=float))
    pool = np.unique(np.concatenate([s0, s1]))
    cuts = pool if pool.size <= points else np.unique(np.quantile(pool, np.linspace(0.0, 1.0, points)))
    fp = s0.size - np.searchsorted(s0, cuts, side="right")
    fn = np.searchsorted(s1, cuts, side="right")
    return Roc(fp.astype(np.int64), fn.astype(np.int64), int(s0.size), int(s1.size))


def _smoothed(k: Any, n: int) -> np.ndarray:
    return (np.asarray(k, dtype=float) + 0.5) / (n + 1.0)


def _slope(curve: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    """The derivative of a trade-off curve at ``x`` (central differences, one-sided at the ends)."""
    h = np.maximum(1e-9, 1e-4 * np.minimum(x, 1.0 - x))
    lo, hi = np.clip(x - h, 0.0, 1.0), np.clip(x + h, 0.0, 1.0)
    return (curve(hi) - curve(lo)) / np.where(hi > lo, hi - lo, 1.0)


def _cp_up(k: Any, n: Any, level: float) -> np.ndarray:
    """The Clopper–Pearson upper bound at confidence 1 − ``level`` of real-valued counts ``k`` of ``n`` (1 at k = n)."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    inner = k < n
    out = np.ones(np.broadcast(k, n).shape)
    kk, nn = np.broadcast_to(k, out.shape)[inner], np.broadcast_to(n, out.shape)[inner]
    out[inner] = stats.beta.ppf(1.0 - level, kk + 1.0, nn - kk)
    return out


def _cp_low(k: Any, n: Any, level: float) -> np.ndarray:
    k = np.asarray(k, dtype=float)
    return 1.0 - _cp_up(np.asarray(n, dtype=float) - k, n, level)


@dataclass(frozen=True)
class ShapeFit:
    """One family fitted to an ROC at its equal-error point: θ̂, its interval and how well the curve fits the ROC."""

    family: str
    parameter: float
    interval: tuple[float, float]
    misfit: float

    def to_dict(self) -> dict[str, Any]:
        """The fit as plain data (JSON-ready).

        Returns:
            The family, its parameter and interval, and the misfit.
        """
        return {
            "family": self.family,
            "parameter": self.parameter,
            "interval": list(self.interval),
            "misfit": self.misfit,
        }


def fits_roc(fit: ShapeFit, points: int) -> bool:
    """Whether a family fits an ROC of ``points`` points: its misfit is at most 4 per point (with :data:`_TIE`).

    Args:
        fit: The family's fit (:func:`fit_shapes`).
        points: The ROC's points.

    Returns:
        True when the curve through θ̂ follows the ROC (and θ̂ is finite): its parameter is then an estimate.
    """
    return fit.misfit <= 4.0 * points + _TIE and math.isfinite(fit.parameter)


def _equal_error(roc: Roc) -> int:
    return int(np.argmin(np.abs(roc.fpr - roc.fnr)))


def fit_shapes(roc: Roc, *, level: float) -> tuple[ShapeFit, ...]:
    """Every family fitted to ``roc``, best fit first: θ̂ through the equal-error point's smoothed rates, its interval
    through the rates' two-sided Clopper–Pearson bounds (``level`` in each tail of each rate: the upper bounds give
    the low end), and the misfit Σ r_k² of the curve through θ̂ at every point of the ROC, r_k the point's FNR minus
    the curve at its FPR over their standard error.

    Args:
        roc: the evaluation scores' ROC (:func:`roc_points`).
        level: the error probability of each one-sided rate bound.

    Returns:
        One :class:`ShapeFit` per family of :data:`FAMILIES`, sorted by misfit.
    """
    i = _equal_error(roc)
    fp, fn = roc.fp[i], roc.fn[i]
    x, y = float(_smoothed(fp, roc.n0)), float(_smoothed(fn, roc.n1))
    x_up, y_up = float(_cp_up(fp, roc.n0, level)), float(_cp_up(fn, roc.n1, level))
    x_lo, y_lo = float(_cp_low(fp, roc.n0, level)), float(_cp_low(fn, roc.n1, level))
    p, q = _smoothed(roc.fp, roc.n0), _smoothed(roc.fn, roc.n1)
    fits = []
    for family in FAMILIES:
        theta = family_parameter(family, x, y)
        curve = functools.partial(family_curve, family, theta)
        var = q * (1.0 - q) / roc.n1 + _slope(curve, p) ** 2 * p * (1.0 - p) / roc.n0
        residual = (q - curve(p)) / np.sqrt(np.maximum(var, 0.25 / (roc.n0 * roc.n1)))
        fits.append(
            ShapeFit(
                family,
                theta,
                (family_parameter(family, x_up, y_up), family_parameter(family, x_lo, y_lo)),
                float(residual @ residual),
            )
        )
    return tuple(sorted(fits, key=lambda f: f.misfit))


# -- power ---------------------------------------------------------------------------------------------------------


def certify_probability(
    claim: Claim, family: ShapeFamily | str, theta: float, *, n0: float, n1: float, share: float
) -> tuple[float, tuple[float, float]]:
    """The probability that a test at one threshold refutes ``claim`` when the mechanism is member ``theta``.

    The attack is ideal and the threshold the best one. At rates (x, y) the test refutes when ŷ + w_y < f(x̂ + w_x)
    (f the claim's curve, w the Clopper–Pearson widths at the expected counts); its probability is integrated over
    x̂ by Gauss–Hermite quadrature (exact through the kinks of an (ε, δ) curve), either orientation, on a grid of
    FPRs down to 10⁻¹².

    Args:
        claim: The claim.
        family: The mechanism's family.
        theta: The mechanism's parameter.
        n0: The evaluation runs on D.
        n1: The evaluation runs on D′.
        share: The test's share of α (each rate's Clopper–Pearson bound at ``share``/2).

    Returns:
        The probability, and the best test's (FPR, FNR).

    Examples:
        >>> p, _ = certify_probability(Claim.dp(1.0, 1e-5), "gaussian", 0.5, n0=50_000, n1=50_000, share=0.0375)
        >>> p > 0.95
        True
    """
    a = _GRID
    q = family_curve(family, theta, a)
    best_p, best_point = 0.0, (0.5, 0.5)
    for x, y, nx, ny in ((a, q, n0, n1), (q, a, n0, n1)):
        wx = _cp_up(x * nx, nx, share / 2.0) - x
        wy = _cp_up(y * ny, ny, share / 2.0) - y
        sx, sy = np.sqrt(x * (1.0 - x) / nx), np.sqrt(y * (1.0 - y) / ny)
        xs = np.clip(x[:, None] + sx[:, None] * _NODES[None, :] + wx[:, None], 0.0, 1.0)
        gap = claim.trade_off(xs) - (y + wy)[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            inner = np.where(sy[:, None] > 0.0, special.ndtr(gap / sy[:, None]), (gap > 0.0).astype(float))
        prob = inner @ _WEIGHTS
        j = int(np.argmax(prob))
        if prob[j] > best_p:
            best_p, best_point = float(prob[j]), (float(x[j]), float(y[j]))
    return min(1.0, best_p), best_point


def flag_probability(
    family: ShapeFamily | str, theta: float, allowed: float, *, n0: float, n1: float, level: float
) -> float:
    """The probability that an audit of ``family``'s member ``theta`` finds its data pointing past ``allowed``.

    That is, that the low end of θ's interval at the equal-error point exceeds ``allowed`` (normal approximation of
    the two rates, the interval's end linearised).

    Args:
        family: The mechanism's family.
        theta: The mechanism's parameter.
        allowed: The leakiest member the claim allows.
        n0: The evaluation runs on D.
        n1: The evaluation runs on D′.
        level: The interval's level (the rates' upper bounds).

    Returns:
        The probability.
    """
    if not math.isfinite(allowed):
        return 0.0
    if math.isinf(theta):
        return 1.0
    eer = _eer_rate(check_member("family", family, ShapeFamily), theta)
    up0, up1 = float(_cp_up(eer * n0, n0, level)), float(_cp_up(eer * n1, n1, level))
    centre = family_parameter(family, up0, up1)
    h = 1e-4 * max(eer, 1e-9)
    gx = (family_parameter(family, up0 + h, up1) - family_parameter(family, up0 - h, up1)) / (2 * h)
    gy = (family_parameter(family, up0, up1 + h) - family_parameter(family, up0, up1 - h)) / (2 * h)
    sd = math.sqrt(gx**2 * eer * (1 - eer) / n0 + gy**2 * eer * (1 - eer) / n1)
    if not math.isfinite(centre) or sd == 0.0 or not math.isfinite(sd):
        return 1.0 if centre > allowed else 0.0
    return float(special.ndtr((centre - allowed) / sd))


def _eer_rate(family: ShapeFamily, theta: float) -> float:
    """The equal-error rate of ``family``'s member ``theta``: a with f(a) = a (f(0) >= 0, f(½) <= ½)."""
    # absolute precision down to the subnormals: a leaky member's rate is far below 1e-15 (Φ(−15) at μ = 30)
    # a member far out (μ = 1e18) puts the root at 0 itself: Brent's method then halves its way down to the
    # subnormals, about 1,000 steps
    curve = lambda a: float(family_curve(family, theta, a)) - a  # noqa: E731
    return brent_root(curve, 0.0, 0.5, xtol=1e-300, rtol=_RTOL, maxiter=4000)


def trials_to_certify(
    claim: Claim, family: ShapeFamily | str, theta: float, *, n0: int, n1: int, share: float, runs: int
) -> int | None:
    """The runs per dataset at which an audit like this one would certify a violation by ``family``'s member ``theta``.

    Args:
        claim: The claim.
        family: The mechanism's family.
        theta: The mechanism's parameter.
        n0: This audit's evaluation runs on D.
        n1: This audit's evaluation runs on D′.
        share: The test's share of α.
        runs: This audit's runs per dataset (the evaluation split keeps its share of them).

    Returns:
        The runs, with probability :data:`POWER_NEEDED`; None when no budget up to 10¹⁵ runs would.
    """

    def enough(scale: float) -> bool:
        return certify_probability(claim, family, theta, n0=n0 * scale, n1=n1 * scale, share=share)[0] >= POWER_NEEDED

    if enough(1.0):
        lo, hi = 0.0, 1.0
    else:
        lo, hi = 1.0, 2.0
        while not enough(hi):
            lo, hi = hi, hi * 2.0
            if hi * runs > 1e15:
                return None
    while hi - lo > 0.02 * hi:  # two per cent: an estimate of a budget, rounded up
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return max(1, math.ceil(hi * runs))


# -- the reading -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ShapeReading:
    """What the shape of the measured ROC says about the claim (see the module docstring).

    ``fit`` is the best-fitting family, ``allowed`` the leakiest member the claim allows, ``epsilon`` (and its
    interval) the fitted member's ε at ``delta``; ``points_to_violation`` whether the interval's low end lies past
    ``allowed`` for every family that fits about as well; ``alternative`` the member just past the claim
    (:data:`KAPPA` × its ε at δ) and the probabilities of certifying it or being pointed to it — ``power`` the
    larger; ``trials`` the runs per dataset at which the audit would certify the violation the data point to (or,
    when they point to none, the one just past the claim) with probability :data:`POWER_NEEDED`; ``fitted`` whether
    the best family fits the ROC at all (:func:`fits_roc`; if not, its ε is no estimate)."""

    fit: ShapeFit
    fits: tuple[ShapeFit, ...]
    delta: float
    allowed: float
    epsilon: float
    epsilon_interval: tuple[float, float]
    claimed_epsilon: float
    points_to_violation: bool
    alternative: float | None
    certify_power: float
    flag_power: float
    trials: int | None
    fitted: bool = True

    @property
    def family(self) -> str:
        return self.fit.family

    @property
    def kappa(self) -> float:
        """How far past the claim (in ε at δ) the violation lies whose power is read: :data:`KAPPA`."""
        return KAPPA

    @property
    def power(self) -> float:
        """The probability that a violation of this shape just past the claim is seen (certified or pointed to)."""
        return max(self.certify_power, self.flag_power)

    @property
    def ratio(self) -> float | None:
        """The fitted ε at δ over the claim's (``None`` when the claim's is 0 or infinite)."""
        if not 0.0 < self.claimed_epsilon < math.inf:
            return None
        return self.epsilon / self.claimed_epsilon

    def describe(self) -> str:
        """One line: the shape, its parameter and interval, its ε at δ against the claim's.

        Returns:
            The line.
        """
        name = {"gaussian": "μ", "laplace": "ε", "randomized-response": "ε"}[self.family]
        lo, hi = self.fit.interval
        text = (
            f"{self.family} ({name} ≈ {self.fit.parameter:.4g} [{lo:.4g}, {hi:.4g}]), "
            f"ε ≈ {self.epsilon:.4g} at δ = {self.delta:g}"
        )
        if self.ratio is not None:
            text += f" ({self.ratio:.3g}× the claim's {self.claimed_epsilon:.4g})"
        return text

    def to_dict(self) -> dict[str, Any]:
        """The reading as plain data (JSON-ready).

        Returns:
            The shape's parameter and interval, the claim's allowance, ε against the claimed ε, whether it points to a
            violation, the powers, the trials and every family's fit.
        """
        return {
            "family": self.family,
            "parameter": self.fit.parameter,
            "interval": list(self.fit.interval),
            "allowed": self.allowed,
            "delta": self.delta,
            "epsilon": self.epsilon,
            "epsilon_interval": list(self.epsilon_interval),
            "claimed_epsilon": self.claimed_epsilon,
            "ratio": self.ratio,
            "points_to_violation": self.points_to_violation,
            "kappa": KAPPA,
            "alternative": self.alternative,
            "certify_power": self.certify_power,
            "flag_power": self.flag_power,
            "power": self.power,
            "power_needed": POWER_NEEDED,
            "trials": self.trials,
            "fitted": self.fitted,
            "fits": [f.to_dict() for f in self.fits],
        }


def read_shape(claim: Claim, roc: Roc, *, delta: float, share: float, level: float, runs: int) -> ShapeReading:
    """Read the shape of ``roc`` (the evaluation scores of the test at ``share`` of α) against ``claim``.

    Args:
        claim: the claim.
        roc: the evaluation split's ROC (:func:`roc_points`).
        delta: where ε is read.
        share: the share of α of the test whose power is asked (its rates' bounds at ``share``/2).
        level: the error probability of each one-sided rate bound of the parameter's interval.
        runs: the audit's runs per dataset (its evaluation split is ``roc.n0`` of them): the scale of ``trials``.

    Returns:
        The :class:`ShapeReading`.
    """
    fits = fit_shapes(roc, level=level)
    interior = int(np.count_nonzero((roc.fp > 0) & (roc.fp < roc.n0) & (roc.fn > 0) & (roc.fn < roc.n1)))
    if interior <= 2:  # discrete outputs (at most three values): the ROC is a polygon, randomized response's shape
        fits = tuple(sorted(fits, key=lambda f: f.family != ShapeFamily.RANDOMIZED_RESPONSE))
        tied = [fits[0]]
    else:  # every family that fits about as well as the best: the data cannot tell them apart
        tied = [f for f in fits if f.misfit <= fits[0].misfit + _TIE + 2.0 * roc.fp.size]
    best = fits[0]
    points = all(f.interval[0] > allowed_parameter(f.family, claim) for f in tied)
    allowed = allowed_parameter(best.family, claim)
    claimed = claim.epsilon_at(delta)
    alternative = alternative_parameter(best.family, claim, delta)
    sizes = {"n0": roc.n0, "n1": roc.n1}
    certify = flag = 0.0
    if alternative is not None:
        certify = min(
            certify_probability(claim, f.family, _alt(f, claim, delta), **sizes, share=share)[0] for f in tied
        )
        flag = min(
            flag_probability(f.family, _alt(f, claim, delta), allowed_parameter(f.family, claim), **sizes, level=level)
            for f in tied
        )
    trials = _trials(claim, tied, points, delta, sizes=sizes, share=share, runs=runs)
    lo, hi = best.interval
    return ShapeReading(
        fit=best,
        fits=fits,
        delta=delta,
        allowed=allowed,
        epsilon=family_epsilon(best.family, best.parameter, delta),
        epsilon_interval=(family_epsilon(best.family, lo, delta), family_epsilon(best.family, hi, delta)),
        claimed_epsilon=claimed,
        points_to_violation=points,
        alternative=alternative,
        certify_power=certify,
        flag_power=flag,
        trials=trials,
        fitted=fits_roc(best, int(roc.fp.size)),
    )


def _trials(
    claim: Claim, tied: list[ShapeFit], points: bool, delta: float, *, sizes: dict[str, int], share: float, runs: int
) -> int | None:
    """The runs that would certify, for every shape the data cannot tell apart, the violation it points to (``points``)
    or the one just past the claim: the most any of them needs (``None`` when one needs more than any budget, or
    nothing finite lies past the claim)."""
    needed = []
    for f in tied:
        target = f.parameter if points else alternative_parameter(f.family, claim, delta)
        if target is None or not 0.0 < target < math.inf:
            return None
        trials = trials_to_certify(claim, f.family, target, **sizes, share=share, runs=runs)
        if trials is None:
            return None
        needed.append(trials)
    return max(needed) if needed else None


def _alt(fit: ShapeFit, claim: Claim, delta: float) -> float:
    value = alternative_parameter(fit.family, claim, delta)
    return math.inf if value is None else value


# -- choosing a threshold where the claim breaks ----------------------------------------------------------------------


def margin_threshold(
    scores0: np.ndarray, scores1: np.ndarray, claim: Claim, *, share: float, n0: int, n1: int
) -> tuple[float, float]:
    """The threshold at which a test on the evaluation runs is likeliest to refute ``claim`` (on selection scores).

    The ROC is read through its best-fitting family (:func:`fit_shapes`): the ideal attack's best FPR a on that curve
    becomes the selection scores' (1 − a)-quantile on D — a smooth curve chooses the tail threshold far better than
    the noisy empirical tail. When no family fits (misfit above 4 per point) the empirical ROC is searched, each
    threshold's projected margin over its standard error.

    Args:
        scores0: The selection scores on D.
        scores1: The selection scores on D′.
        claim: The claim.
        share: The test's share of α.
        n0: The evaluation runs on D.
        n1: The evaluation runs on D′.

    Returns:
        The threshold, and the projected probability of refuting the claim with it (the key attacks are compared by).
    """
    s0, s1 = np.asarray(scores0, dtype=float), np.asarray(scores1, dtype=float)
    roc = roc_points(s0, s1)
    best = fit_shapes(roc, level=share / 2.0)[0]
    if fits_roc(best, int(roc.fp.size)):
        p, (fpr, fnr) = certify_probability(claim, best.family, best.parameter, n0=n0, n1=n1, share=share)
        if fpr <= fnr:  # a tail of D's scores: the threshold leaves a share fpr of them above it
            return float(np.quantile(s0, 1.0 - fpr, method="higher")), p
        return float(np.quantile(s1, fnr, method="lower")), p  # a tail of D′'s: a share fnr of them at or below
    t, fp, fn = rates_at_all_thresholds(s0, s1)
    x, y = _smoothed(fp, s0.size), _smoothed(fn, s1.size)
    best_z, best_t = -math.inf, float(t[0])
    for u, v, nu, nv in ((x, y, n0, n1), (y, x, n1, n0)):
        margin = claim.trade_off(_cp_up(u * nu, nu, share / 2.0)) - _cp_up(v * nv, nv, share / 2.0)
        sd = np.sqrt(_slope(claim.trade_off, u) ** 2 * u * (1.0 - u) / nu + v * (1.0 - v) / nv)
        z = margin / np.maximum(sd, 1e-300)
        j = int(np.argmax(z))
        if z[j] > best_z:
            best_z, best_t = float(z[j]), float(t[j])
    return best_t, float(special.ndtr(best_z))
