"""RDP curves of privacy events: which events an RDP accountant can read, and their curves.

:func:`rdp_supports` says whether an event of :mod:`dpkit.accountant.events` has an RDP bound here
(and why not); :func:`rdp_curve` gives an upper bound on its Rényi divergence ε_R(α) at each order
α > 1 (``inf`` allowed), never below the truth. Curves of composed events add. Convert a curve to
(ε, δ) with :func:`dpkit.accountant.rdp.rdp_epsilon`.

Each kind of event is read under its neighbouring relation (Gaussian, Laplace, randomized response, pure
releases, Poisson and without-replacement sampling of Gaussians, tree aggregation, compositions and groups); the
readings and their sources: docs/FORMULAS.md §11 (RDP curves of events and mechanisms).
"""

from __future__ import annotations

import math
import sys

import numpy as np

from .events import (
    ComposedEvent,
    EpsilonDeltaEvent,
    Event,
    GaussianEvent,
    GroupEvent,
    LaplaceEvent,
    NonPrivateEvent,
    NoOpEvent,
    PoissonSampledEvent,
    RandomizedResponseEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    TreeAggregationEvent,
)
from .numerics import times_count
from .rdp_mechanisms import (
    check_orders,
    laplace_rdp,
    poisson_gaussian_rdp,
    randomized_response_rdp,
    round_up_array,
    sampled_without_replacement_gaussian_rdp,
)
from .sensitivity import Relation
from .tree_counts import max_psums_per_item
from .validation import ArgumentTypeError

__all__ = ["rdp_supports", "rdp_curve"]

_EPS = 2.0**-52


class _Unsupported(Exception):
    """Raised inside the traversal with the reason an event has no RDP bound here."""


def rdp_supports(event: Event) -> tuple[bool, str]:
    """``(True, "")`` if :func:`rdp_curve` can bound ``event``, else ``(False, reason)``.

    Args:
        event: an event of :mod:`dpkit.accountant.events`.

    Returns:
        (True, "") or (False, the reason).

    Raises:
        ArgumentTypeError: ``event`` is not an Event.
    """
    if not isinstance(event, Event):
        raise ArgumentTypeError(f"event must be a dpkit event (an Event), got {event!r}")
    try:
        _curve(event, np.array([2.0]), group=1, evaluate=False)
    except _Unsupported as exc:
        return False, str(exc)
    return True, ""


def rdp_curve(event: Event, orders: object) -> np.ndarray:
    """An upper bound on ``event``'s RDP ε_R(α) at each of ``orders`` (> 1; ``inf`` allowed).

    The result has the shape of ``orders`` (a number gives a 0-d array). Raises ``ValueError``
    with the reason when the event is not supported (see :func:`rdp_supports`).

    Args:
        event: an event of :mod:`dpkit.accountant.events`.
        orders: the Rényi orders α (a number or a sequence/array, each > 1, +inf allowed).

    Returns:
        ε_R(α), the shape of ``orders``.

    Raises:
        ArgumentTypeError: ``event`` is not an Event, or orders not numbers.
        ValueError: an order not above 1, or an event RDP cannot bound.
    """
    if not isinstance(event, Event):
        raise ArgumentTypeError(f"event must be a dpkit event (an Event), got {event!r}")
    alphas = check_orders(orders)
    try:
        values = _curve(event, alphas.ravel(), group=1, evaluate=True)
    except _Unsupported as exc:
        raise ValueError(f"RDP cannot bound this event: {exc}") from None
    return values.reshape(alphas.shape)


# ------------------------------------------------------------------------------------------


def _gaussian_rho(mu: float, alphas: np.ndarray) -> np.ndarray:
    """α μ²/2, rounded up (μ = inf gives inf, μ = 0 gives 0)."""
    if mu == 0.0 or mu * mu == 0.0:  # no noise-free part left (μ² below the doubles: a curve of 0 above it)
        if mu == 0.0:
            return np.zeros(alphas.shape)
        half = sys.float_info.min  # the smallest normal double: ≥ μ²/2 where μ² underflows
        with np.errstate(over="ignore"):
            return round_up_array(np.where(np.isinf(alphas), math.inf, alphas * half), 4 * _EPS)
    with np.errstate(over="ignore"):
        return round_up_array(alphas * (mu * mu / 2.0), 4 * _EPS)


def _unit_mu(relation: Relation) -> float:
    """The change of one record's contribution in units of C: 1 (add_remove) or 2 (replace_one)."""
    return 1.0 if relation == Relation.ADD_REMOVE else 2.0


def _effective_noise_multiplier(event: Event, path: str) -> float:
    """Noise multiplier of the one Gaussian equivalent to a (nested) composition of Gaussians."""
    total = 0.0  # Σ count / nm²
    stack: list[tuple[Event, int]] = [(event, 1)]
    while stack:
        node, count = stack.pop()
        if isinstance(node, GaussianEvent):
            nm = node.noise_multiplier
            if nm == 0.0:
                return 0.0
            if nm * nm == 0.0:  # the noise multiplier squared underflows: no noise to speak of
                return 0.0
            total += times_count(count, 1.0) / (nm * nm)  # nm = inf contributes 0; any count
        elif isinstance(node, SelfComposedEvent):
            stack.append((node.event, count * node.count))
        elif isinstance(node, ComposedEvent):
            stack.extend((e, count) for e in node.events)
        elif isinstance(node, NoOpEvent):
            continue
        else:
            raise _Unsupported(
                f"{path} must be a Gaussian or a composition of Gaussians (reduced to one Gaussian as "
                f"dp-accounting does); found {type(node).__name__}"
            )
    if total == 0.0:
        return math.inf
    # round the noise multiplier down: a smaller noise multiplier gives a larger (sound) curve
    return (1.0 / math.sqrt(total)) * (1.0 - 4 * _EPS)


def _pure_curve(epsilon: float, alphas: np.ndarray) -> np.ndarray:
    """The RDP of any ε-DP pair: binary randomized response of ε, capped by α ε²/2."""
    rr = randomized_response_rdp(epsilon=epsilon, k=2, orders=alphas)
    with np.errstate(over="ignore", invalid="ignore"):
        bun_steinke = round_up_array(alphas * (epsilon * epsilon / 2.0), 4 * _EPS)
    out: np.ndarray = np.minimum(rr, bun_steinke)
    return out


def _curve(event: Event, alphas: np.ndarray, *, group: int, evaluate: bool) -> np.ndarray:
    """The curve of ``event`` for groups of ``group`` records (1: plain neighbours).

    With ``evaluate=False`` only support is decided (zeros are returned); unsupported events raise
    :class:`_Unsupported` with the reason.
    """
    zeros = np.zeros(alphas.shape)
    relation = event.relation
    if isinstance(event, NoOpEvent):
        return zeros
    if isinstance(event, NonPrivateEvent):
        return np.full(alphas.shape, math.inf)
    if isinstance(event, GaussianEvent):
        nm = event.noise_multiplier
        if not evaluate:
            return zeros
        mu = math.inf if nm == 0.0 else group * _unit_mu(relation) / nm
        return _gaussian_rho(mu, alphas)
    if isinstance(event, LaplaceEvent):
        if not evaluate:
            return zeros
        nm = event.noise_multiplier
        # ℓ1 shift of group · (1 or 2) · C against scale nm·C
        return laplace_rdp(scale=nm, sensitivity=group * _unit_mu(relation), orders=alphas)
    if isinstance(event, RandomizedResponseEvent):
        if relation != Relation.REPLACE_ONE:
            raise _Unsupported(
                "randomized response is bounded under replace_one (a record's value changes); its add_remove "
                "reading is not defined by the event (dp-accounting's REPLACE_SPECIAL is not modelled)"
            )
        if not evaluate:
            return zeros
        p, k = event.noise_parameter, event.num_buckets
        if k == 1 or p == 1.0:
            return zeros
        if p == 0.0:
            return np.full(alphas.shape, math.inf)
        # ε = log(1 + k(1 − p)/p), rounded up (the curve grows with ε)
        eps = float(round_up_array(np.asarray(math.log1p(k * ((1.0 - p) / p))), 4 * _EPS))
        if group == 1:
            return randomized_response_rdp(epsilon=eps, k=k, orders=alphas)
        return _pure_curve(group * eps, alphas)
    if isinstance(event, EpsilonDeltaEvent):
        if event.delta > 0.0:
            raise _Unsupported(
                f"an (ε, δ) release with δ = {event.delta!r} > 0 bounds no Rényi divergence (the δ mass is "
                "unconstrained); only pure (ε, 0) releases have an RDP curve"
            )
        if not evaluate:
            return zeros
        if event.epsilon == 0.0:
            return zeros
        return _pure_curve(group * event.epsilon, alphas)
    if isinstance(event, TreeAggregationEvent):
        if not evaluate:
            return zeros
        nm = event.noise_multiplier
        depth = max(max_psums_per_item(t) for t in event.step_counts)
        if nm == 0.0:
            return np.full(alphas.shape, math.inf)
        mu = group * _unit_mu(relation) * math.sqrt(depth) / nm
        return _gaussian_rho(mu, alphas)
    if isinstance(event, SelfComposedEvent):
        inner = _curve(event.event, alphas, group=group, evaluate=evaluate)
        with np.errstate(over="ignore", invalid="ignore"):
            if event.count <= sys.float_info.max:
                scaled = inner * float(event.count)
            else:  # a count beyond the doubles: each value multiplied exactly (finite where the product is)
                scaled = np.array([times_count(event.count, float(v)) for v in inner.flat]).reshape(inner.shape)
            out = np.where(inner == 0.0, 0.0, round_up_array(scaled, 2 * _EPS))
        return out
    if isinstance(event, ComposedEvent):
        total = zeros.copy()
        for child in event.events:
            total = total + _curve(child, alphas, group=group, evaluate=evaluate)
        return round_up_array(total, len(event.events) * _EPS) if evaluate else total
    if isinstance(event, GroupEvent):
        return _curve(event.event, alphas, group=group * event.group_size, evaluate=evaluate)
    if isinstance(event, PoissonSampledEvent):
        q = event.sampling_probability
        if q == 0.0:
            return zeros
        if group > 1:
            raise _Unsupported("no sound RDP bound here for a group of records under Poisson sampling")
        if relation != Relation.ADD_REMOVE:
            raise _Unsupported(
                "Poisson-subsampled RDP (Mironov, Talwar & Zhang 2019) is stated under add_remove; the child "
                f"is under {relation} (as dp-accounting's RDP accountant, which refuses REPLACE_ONE)"
            )
        nm = _effective_noise_multiplier(event.event, "the child of Poisson sampling")
        if not evaluate:
            return zeros
        return poisson_gaussian_rdp(q=q, noise_multiplier=nm, orders=alphas)
    if isinstance(event, SampledWithoutReplacementEvent):
        if group > 1:
            raise _Unsupported("no sound RDP bound here for a group of records under sampling without replacement")
        if relation != Relation.REPLACE_ONE:
            raise _Unsupported(
                "sampling without replacement (Wang, Balle & Kasiviswanathan 2019) is bounded under replace_one "
                f"(the dataset size is public); the child is under {relation}"
            )
        nm = _effective_noise_multiplier(event.event, "the child of sampling without replacement")
        if not evaluate:
            return zeros
        # WBK's base curve α/(2σ²) with σ the noise relative to the replace-one change 2C: σ = nm/2
        sigma = nm / 2.0 if math.isfinite(nm) else math.inf
        return sampled_without_replacement_gaussian_rdp(
            population=event.source_dataset_size, batch=event.sample_size, noise_multiplier=sigma, orders=alphas
        )
    raise _Unsupported(f"{type(event).__name__} is not an event kind the RDP accountant knows")
