"""dp-accounting's connect-the-dots PLD of the (Poisson-subsampled) Gaussian mechanism, built with array operations.

``dp_accounting.pld.privacy_loss_distribution.from_gaussian_mechanism`` computes the mechanism's δ(ε) at every
grid point of the discretisation (connect-the-dots needs them all) through a Python loop over the points, one
scalar inverse of the privacy loss each: at a small sampling probability the grid of one step spans the
losses up to ~8 at interval 1e-4, 80,000 points, and building it costs seconds — more than composing it
10,000 times. :func:`subsampled_gaussian_pld` computes the same δ(ε) values with array operations (the same
formulas: the inverse of the subsampled loss in closed form, then dp-accounting's own vectorised CDFs) and
hands them to dp-accounting's connect-the-dots construction, so the PLD is dp-accounting's, to rounding
(tests/accountant/test_pld_bounds.py compares the two mass functions).
"""

from __future__ import annotations

import enum
import functools
import math
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from dp_accounting.pld import privacy_loss_distribution
from .validation import enum_values

__all__ = [
    "ADJACENCIES",
    "Adjacency",
    "TAIL_MASS",
    "step_pmf",
    "composed_pmf",
    "subsampled_gaussian_pld",
    "self_composed",
]

#: The tail mass dp-accounting's self-composition truncates (its default ``tail_mass_truncation``).
TAIL_MASS = 1e-15


def _log_one_plus_expm1_over(b: np.ndarray, q: float) -> np.ndarray:
    """log(1 + (e^b − 1)/q), elementwise, without overflow (dp-accounting's ``log_a_times_exp_b_plus_c(1/q, b,
    1 − 1/q)``)."""
    out = np.empty_like(b)
    big = b > 1.0
    out[~big] = np.log1p(np.expm1(b[~big]) / q)
    out[big] = b[big] - math.log(q) + np.log1p((q - 1.0) * np.exp(-b[big]))
    return out


def _deltas(loss: Any, epsilons: np.ndarray) -> np.ndarray:
    """``loss.get_delta_for_epsilon(epsilons)`` (a dp-accounting ``GaussianPrivacyLoss`` under add or remove),
    with the inverse of the privacy loss taken over the array at once."""
    from dp_accounting.pld.privacy_loss_mechanism import AdjacencyType

    q = loss.sampling_prob
    deltas = np.zeros_like(epsilons, dtype=float)
    if q == 1.0:
        inverse = np.ones_like(epsilons, dtype=bool)
    elif loss.adjacency_type == AdjacencyType.ADD:
        inverse = epsilons < -math.log1p(-q)  # δ = 0 beyond
    else:
        inverse = epsilons > math.log1p(-q)
        deltas[~inverse] = -np.expm1(epsilons[~inverse])
    eps = epsilons[inverse]
    if q == 1.0:
        loss_free = eps
    elif loss.adjacency_type == AdjacencyType.ADD:
        with np.errstate(divide="ignore"):
            loss_free = -np.log1p(np.expm1(-eps) / q)
        loss_free[np.isclose(eps, -math.log1p(-q), rtol=1e-9, atol=0.0)] = math.inf
    else:
        loss_free = _log_one_plus_expm1_over(eps, q)
        loss_free[np.isclose(eps, math.log1p(-q), rtol=1e-9, atol=0.0)] = -math.inf
    sd2 = loss._standard_deviation**2  # noqa: SLF001
    s = loss.sensitivity
    x = -0.5 * s - loss_free * sd2 / s  # the remove inverse without subsampling (dp-accounting's formula)
    if loss.adjacency_type == AdjacencyType.ADD:
        x = x + s
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        deltas[inverse] = _upper_cdf(loss, x) - np.exp(eps + _lower_log_cdf(loss, x))
    out: np.ndarray = np.clip(np.nan_to_num(deltas, nan=0.0), 0.0, 1.0)
    return out


def _upper_cdf(loss: Any, x: np.ndarray) -> np.ndarray:
    """``loss.mu_upper_cdf(x)`` with scipy.special's Φ (scipy.stats' ``norm.cdf`` checks its arguments per call)."""
    from dp_accounting.pld.privacy_loss_mechanism import AdjacencyType
    from scipy.special import ndtr

    sd, q, s = loss._standard_deviation, loss.sampling_prob, loss.sensitivity  # noqa: SLF001
    if loss.adjacency_type == AdjacencyType.ADD:
        out = ndtr(x / sd)
    elif q == 1.0:
        out = ndtr((x + s) / sd)
    else:
        out = (1.0 - q) * ndtr(x / sd) + q * ndtr((x + s) / sd)
    return np.asarray(out, dtype=float)


def _lower_log_cdf(loss: Any, x: np.ndarray) -> np.ndarray:
    """``loss.mu_lower_log_cdf(x)`` with scipy.special's log Φ."""
    from dp_accounting.pld.privacy_loss_mechanism import AdjacencyType
    from scipy.special import log_ndtr

    sd, q, s = loss._standard_deviation, loss.sampling_prob, loss.sensitivity  # noqa: SLF001
    if loss.adjacency_type == AdjacencyType.REMOVE:
        out = log_ndtr(x / sd)
    elif q == 1.0:
        out = log_ndtr((x - s) / sd)
    else:
        out = np.logaddexp(np.log1p(-q) + log_ndtr(x / sd), np.log(q) + log_ndtr((x - s) / sd))
    return np.asarray(out, dtype=float)


def _connect_dots_pmf(loss: Any, interval: float) -> Any:
    """dp-accounting's connect-the-dots mass function of one adjacency (its continuous-noise branch,
    ``create_pmf_pessimistic_connect_dots_fixed_gap``), its masses computed by the same formulas as arrays."""
    from dp_accounting.pld import pld_pmf

    bounds = loss.connect_dots_bounds()
    upper = math.ceil(bounds.epsilon_upper / interval)
    lower = math.floor(bounds.epsilon_lower / interval)
    deltas = _deltas(loss, np.arange(lower, upper + 1) * interval)
    if deltas.size <= pld_pmf._MAX_PMF_SPARSE_SIZE:  # noqa: SLF001 - dp-accounting's sparse form: its own code
        return pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap(interval, lower, upper, deltas)
    deltas = np.minimum.accumulate(deltas)
    diffs = np.diff(deltas)
    probs = np.zeros_like(deltas)
    probs[0] = 1.0 - deltas[0] + diffs[0] / math.expm1(interval)
    probs[1:-1] = (diffs[1:] - diffs[:-1] * math.exp(interval)) / math.expm1(interval)
    probs[-1] = diffs[-1] / math.expm1(-interval)
    probs = np.maximum(0.0, probs)
    return pld_pmf.DensePLDPmf(interval, lower, probs, float(deltas[-1]), True)


class Adjacency(enum.StrEnum):
    """The adjacencies of add/remove: ``remove`` (the record is in the first dataset) and ``add``."""

    REMOVE = "remove"
    ADD = "add"


#: The values of :class:`Adjacency`.
ADJACENCIES: tuple[str, ...] = enum_values(Adjacency)


@functools.lru_cache(maxsize=16)
def step_pmf(noise_multiplier: float, sampling_probability: float, interval: float, adjacency: Adjacency) -> Any:
    """One step's connect-the-dots mass function under ``adjacency`` (``"remove"`` or ``"add"``).

    Args:
        noise_multiplier: σ/Δ of the Gaussian.
        sampling_probability: q, the Poisson sampling probability.
        interval: the PLD grid's value discretisation interval.
        adjacency: "remove" or "add".

    Returns:
        dp-accounting's mass function of one step.
    """
    from dp_accounting.pld.privacy_loss_mechanism import AdjacencyType, GaussianPrivacyLoss

    kind = AdjacencyType.REMOVE if adjacency == Adjacency.REMOVE else AdjacencyType.ADD
    loss = GaussianPrivacyLoss(
        noise_multiplier, sensitivity=1.0, sampling_prob=sampling_probability, adjacency_type=kind
    )
    return _connect_dots_pmf(loss, interval)


@functools.lru_cache(maxsize=8)
def composed_pmf(
    noise_multiplier: float, sampling_probability: float, interval: float, adjacency: Adjacency, count: int
) -> Any:
    """``count`` steps' mass function under ``adjacency``: :func:`step_pmf` self-composed (:func:`self_composed`).

    Args:
        noise_multiplier: σ/Δ of the Gaussian.
        sampling_probability: q, the Poisson sampling probability.
        interval: the PLD grid's value discretisation interval.
        adjacency: "remove" or "add".
        count: how many steps.

    Returns:
        dp-accounting's mass function of ``count`` steps.
    """
    one = step_pmf(noise_multiplier, sampling_probability, interval, adjacency)
    return one if count == 1 else _self_compose_pmf(one, count, TAIL_MASS)


def subsampled_gaussian_pld(
    noise_multiplier: float, sampling_probability: float, interval: float, count: int = 1
) -> privacy_loss_distribution.PrivacyLossDistribution:
    """``from_gaussian_mechanism(noise_multiplier, sampling_prob=sampling_probability,
    value_discretization_interval=interval)`` under add/remove (sensitivity 1, dp-accounting's truncation at
    e^−50 of the noise), built with array operations (module docstring), self-composed ``count`` times.

    Args:
        noise_multiplier: σ/Δ of the Gaussian.
        sampling_probability: q, the Poisson sampling probability.
        interval: the PLD grid's value discretisation interval.
        count: how many steps; 1 by default.

    Returns:
        dp-accounting's ``PrivacyLossDistribution``.
    """
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    def pmf(adjacency: Adjacency) -> Any:
        return composed_pmf(noise_multiplier, sampling_probability, interval, adjacency, count)

    if sampling_probability == 1.0:
        return pld_lib.PrivacyLossDistribution(pmf(Adjacency.REMOVE))
    return pld_lib.PrivacyLossDistribution(pmf(Adjacency.REMOVE), pmf(Adjacency.ADD))


def _log_mgfs(probs: np.ndarray, orders: np.ndarray) -> np.ndarray:
    """log Σᵢ pᵢ·e^{i·order} for each order (dp-accounting's ``logsumexp`` per order). The orders are k/n for
    integers |k| <= 20 (n the length), so e^{i·order} = wᵢᵏ with wᵢ = e^{i/n}: one exponential per point, then
    products; every term lies within e^{±20}, so no rescaling is needed."""
    steps = np.rint(orders * probs.size).astype(int)
    if not np.allclose(steps, orders * probs.size) or np.abs(steps).max() > 40:
        raise ValueError("orders must be small integers over the length")  # pragma: no cover - our orders only
    keep = probs > 0.0
    p = probs[keep]
    w = np.exp(np.flatnonzero(keep) / probs.size)
    out = np.empty(orders.size)
    for sign in (1, -1):
        base = w if sign > 0 else 1.0 / w
        power = np.ones_like(base)
        for k in range(1, int(np.abs(steps).max()) + 1):
            power = power * base
            for j in np.flatnonzero(steps == sign * k):
                total = float((p * power).sum())
                out[j] = math.log(total) if total > 0.0 else -math.inf
    return out


def _self_convolve_bounds(probs: np.ndarray, count: int, tail_mass: float) -> tuple[int, int]:
    """dp-accounting's ``compute_self_convolve_bounds``: the index range outside of which the count-fold
    convolution has at most ``tail_mass`` of mass (Chernoff's bound at 40 orders)."""
    upper, lower = (probs.size - 1) * count, 0
    orders = np.concatenate((np.arange(-20, 0), np.arange(1, 21))) / probs.size
    for order, log_mgf in zip(orders, _log_mgfs(probs, orders)):
        bound = (count * log_mgf + math.log(2.0 / tail_mass)) / order
        if not math.isfinite(bound):
            continue
        if order > 0:
            upper = min(upper, math.ceil(bound))
        else:
            lower = max(lower, math.floor(bound))
    return lower, upper


def _self_compose_pmf(pmf: Any, count: int, tail_mass: float) -> Any:
    """``DensePLDPmf.self_compose``: the FFT of the mass function to the power ``count``, truncated to the
    Chernoff range (the mass beyond, at most ``tail_mass``, added at +inf)."""
    from dp_accounting.pld import pld_pmf
    from scipy import fft

    dense = pmf.to_dense_pmf()
    probs = np.asarray(dense._probs, dtype=float)  # noqa: SLF001
    lower, upper = _self_convolve_bounds(probs, count, tail_mass)
    length = upper - lower + 1
    size = fft.next_fast_len(max(length, probs.size))
    full = fft.irfft(fft.rfft(probs, size) ** count, size)  # real input: half the work
    out = full[lower : lower + length] if lower + length <= size else np.roll(full, -lower)[:length]
    infinity = tail_mass - math.expm1(count * math.log1p(-dense._infinity_mass))  # noqa: SLF001
    return pld_pmf.DensePLDPmf(
        dense._discretization,  # noqa: SLF001
        dense._lower_loss * count + lower,  # noqa: SLF001
        out,
        infinity,
        True,
    )


def self_composed(
    pld: privacy_loss_distribution.PrivacyLossDistribution, count: int, *, tail_mass: float = TAIL_MASS
) -> privacy_loss_distribution.PrivacyLossDistribution:
    """``pld.self_compose(count)``: dp-accounting's FFT composition and tail truncation, with the Chernoff bounds of
    the truncation computed as array operations instead of one ``logsumexp`` call per order, and the FFT of real
    input (half the work; the masses agree with dp-accounting's to ~1e-16).

    Args:
        pld: a dp-accounting ``PrivacyLossDistribution``.
        count: how many times to compose it.
        tail_mass: the mass truncated from the tails; :data:`TAIL_MASS` (1e-15) by default.

    Returns:
        The composed ``PrivacyLossDistribution``.
    """
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    if count == 1:
        return pld
    remove = _self_compose_pmf(pld._pmf_remove, count, tail_mass)  # noqa: SLF001
    if pld._symmetric:  # noqa: SLF001
        return pld_lib.PrivacyLossDistribution(remove)
    return pld_lib.PrivacyLossDistribution(remove, _self_compose_pmf(pld._pmf_add, count, tail_mass))  # noqa: SLF001
