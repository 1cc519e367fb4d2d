"""An event as the classic accountant reads it: each release (ε_i, δ_i)-DP, composed by basic composition.

* A pure release (Laplace: ε = sensitivity/scale; randomized response; an (ε, 0) release) is (ε, 0).
* An (ε, δ) release is itself; a group of k records of it is (kε, k e^{(k−1)ε} δ) (Dwork & Roth,
  Thm 2.2 extended to approximate DP), of a pure release (kε, 0).
* A Gaussian (or tree-aggregation) release of μ is left to the Dwork–Roth bound of
  :mod:`dpkit.accountant.classic`, with the δ the other releases leave split evenly among them.

Basic composition of (εᵢ, δᵢ) gives (Σ εᵢ, Σ δᵢ). Sampled releases are not interpreted (no
amplification is applied here: use the pld or rdp method).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

from .classic import classic_composed_delta, classic_composed_epsilon
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
from .numerics import round_up
from .sensitivity import Relation
from .tree_counts import max_psums_per_item

__all__ = ["ClassicParts", "classic_parts", "classic_refusal", "classic_event_epsilon", "classic_event_delta"]


class _Unsupported(Exception):
    """The reason an event has no classic bound here."""


@dataclass
class ClassicParts:
    """What basic composition adds up: Σ ε and Σ δ of the pure and (ε, δ) releases (exact rationals, so that
    3 × ε = 1 is 3, rounded up once at the end), and the Gaussian releases as (name, μ, count) for the Dwork–Roth
    bound."""

    eps: Fraction | float = Fraction(0)
    dlt: Fraction | float = Fraction(0)
    gaussians: list[tuple[str, float, int]] = field(default_factory=list)

    @property
    def epsilon(self) -> float:
        return _to_float_up(self.eps)

    @property
    def delta(self) -> float:
        return _to_float_up(self.dlt)


def _to_float_up(x: Fraction | float) -> float:
    """The smallest double >= x (+inf stays)."""
    if isinstance(x, float):
        return x
    try:
        out = float(x)
    except OverflowError:  # a sum beyond the doubles (a count beyond them): +inf is its double rounded up
        return math.inf
    return math.nextafter(out, math.inf) if Fraction(out) < x else out


def _quotient(numerator: float, denominator: float) -> Fraction:
    return Fraction(numerator) / Fraction(denominator)


def _add(total: Fraction | float, count: int, value: Fraction | float) -> Fraction | float:
    if isinstance(total, float) or isinstance(value, float):
        return math.inf if value != 0 else total
    return total + count * value


def _unit(relation: Relation) -> float:
    return 1.0 if relation == Relation.ADD_REMOVE else 2.0


def _collect(event: Event, count: int, group: int, out: ClassicParts) -> None:
    if isinstance(event, NoOpEvent):
        return
    if isinstance(event, NonPrivateEvent):
        out.eps = math.inf
        return
    if isinstance(event, GaussianEvent | TreeAggregationEvent):
        nm = event.noise_multiplier
        if nm == 0.0:
            out.eps = math.inf
            return
        depth = 1 if isinstance(event, GaussianEvent) else max(max_psums_per_item(t) for t in event.step_counts)
        mu = group * _unit(event.relation) * math.sqrt(depth) / nm
        if mu > 0.0:
            out.gaussians.append((f"{event.kind} #{len(out.gaussians) + 1}", mu, count))
        return
    if isinstance(event, LaplaceEvent):
        nm = event.noise_multiplier
        if nm == math.inf:  # no noise scale: nothing released
            return
        ratio: Fraction | float = math.inf if nm == 0.0 else _quotient(group * _unit(event.relation), nm)
        out.eps = _add(out.eps, count, ratio)
        return
    if isinstance(event, RandomizedResponseEvent):
        if event.relation != Relation.REPLACE_ONE:
            raise _Unsupported("randomized response is defined under replace_one (a record's value changes)")
        e = event.epsilon
        out.eps = _add(out.eps, count, group * Fraction(e) if math.isfinite(e) else math.inf)
        return
    if isinstance(event, EpsilonDeltaEvent):
        eps, delta = event.epsilon, event.delta
        out.eps = _add(out.eps, count, group * Fraction(eps) if math.isfinite(eps) else math.inf)
        if delta > 0.0:
            if group == 1:
                out.dlt = _add(out.dlt, count, Fraction(delta))
            else:
                # k e^{(k−1)ε} δ, in logs: at 1 or more the group bound says nothing (δ = 1)
                log_grown = math.log(group) + (group - 1) * eps + math.log(delta) if math.isfinite(eps) else 0.0
                grown = 1.0 if log_grown >= 0.0 else min(1.0, round_up(math.exp(log_grown), ulps=8))
                out.dlt = _add(out.dlt, count, Fraction(grown))
        return
    if isinstance(event, SelfComposedEvent):
        _collect(event.event, count * event.count, group, out)
        return
    if isinstance(event, ComposedEvent):
        for child in event.events:
            _collect(child, count, group, out)
        return
    if isinstance(event, GroupEvent):
        _collect(event.event, count, group * event.group_size, out)
        return
    if isinstance(event, PoissonSampledEvent | SampledWithoutReplacementEvent):
        if isinstance(event, PoissonSampledEvent) and event.sampling_probability == 0.0:
            return
        raise _Unsupported("the classic accountant applies no amplification by subsampling: use pld or rdp")
    raise _Unsupported(f"{type(event).__name__} is not an event kind the classic accountant knows")


def classic_parts(event: Event) -> ClassicParts:
    """The releases of ``event`` as basic composition adds them up (ValueError with the reason if it cannot).

    Args:
        event: an event of :mod:`dpkit.accountant.events`.

    Returns:
        The pure, (ε, δ) and Gaussian parts, summed as basic composition does.

    Raises:
        ValueError: an event the classic accountant cannot read (subsampling, an unknown kind, randomized response
            under add_remove).
    """
    out = ClassicParts()
    try:
        _collect(event, 1, 1, out)
    except _Unsupported as err:
        raise ValueError(f"classic cannot bound this event: {err}") from None
    return out


def classic_refusal(event: Event) -> str | None:
    """None if the classic accountant reads ``event``, else the reason it cannot.

    Args:
        event: an event of :mod:`dpkit.accountant.events`.

    Returns:
        None, or the reason.
    """
    try:
        _collect(event, 1, 1, ClassicParts())
    except _Unsupported as err:
        return str(err)
    return None


def _left(budget: float, used: Fraction | float) -> float:
    """budget − used, rounded down (what is left for the Gaussian releases; negative: over budget)."""
    if isinstance(used, float):
        return -math.inf
    rest = Fraction(budget) - used
    out = float(rest)
    return math.nextafter(out, -math.inf) if Fraction(out) > rest else out


def classic_event_epsilon(event: Event, delta: float) -> float:
    """ε at ``delta`` (0 < δ < 1) by basic composition, rounded up (+inf when the releases' own δ use it up).

    Args:
        event: an event of :mod:`dpkit.accountant.events`.
        delta: the δ, in (0, 1) (not checked).

    Returns:
        ε, rounded up.

    Raises:
        ValueError: an event the classic accountant cannot read.
    """
    parts = classic_parts(event)
    left = _left(delta, parts.dlt)
    if not math.isfinite(parts.epsilon) or left < 0.0 or (parts.gaussians and left == 0.0):
        return math.inf
    if not parts.gaussians:
        return parts.epsilon
    return round_up(parts.epsilon + classic_composed_epsilon(parts.gaussians, left))


def classic_event_delta(event: Event, epsilon: float) -> float:
    """δ at ``epsilon`` (finite) by basic composition, rounded up, at most 1.

    Args:
        event: an event of :mod:`dpkit.accountant.events`.
        epsilon: the ε (finite, not checked).

    Returns:
        δ, rounded up, at most 1.

    Raises:
        ValueError: an event the classic accountant cannot read.
    """
    parts = classic_parts(event)
    if not math.isfinite(parts.epsilon) or epsilon < parts.epsilon:
        return 1.0
    if not parts.gaussians:
        return min(1.0, parts.delta)
    left = _left(epsilon, parts.eps)
    if left == 0.0:
        return 1.0
    return min(1.0, round_up(parts.delta + classic_composed_delta(parts.gaussians, left)))
