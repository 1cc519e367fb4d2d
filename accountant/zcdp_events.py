"""ρ of an event under zero-concentrated DP (Bun & Steinke 2016), for the zcdp accountant.

* A Gaussian release of μ (= its sensitivity over σ under the event's relation) is (μ²/2)-zCDP
  (Prop. 1.6); a tree-aggregation release is the Gaussian of the ⌈log2(T + 1)⌉ nodes a record lies in.
* A pure ε-DP release (Laplace, randomized response, an (ε, 0) release) is (ε²/2)-zCDP (Prop. 1.4).
* Compositions add (Lemma 1.7); a group of k records multiplies ρ by k² (Prop. 1.9), which for the
  releases above is the same as k times the sensitivity or k times ε.

Not interpreted (``zcdp_refusal`` says why): an (ε, δ) release with δ > 0 (it bounds no Rényi
divergence), sampling (zCDP is not amplified by subsampling), randomized response under add_remove
(its neighbours are defined by replacing a value).
"""

from __future__ import annotations

import math

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
from .numerics import round_up, times_count
from .sensitivity import Relation
from .tree_counts import max_psums_per_item

__all__ = ["zcdp_refusal", "zcdp_event_rho", "gaussian_only"]


class _Unsupported(Exception):
    """The reason an event has no zCDP bound here."""


def _unit(relation: Relation) -> float:
    """A record's change in units of C: 1 under add_remove, 2 under replace_one (dp-accounting's reading)."""
    return 1.0 if relation == Relation.ADD_REMOVE else 2.0


def _up(x: float) -> float:
    """x rounded up, 0 staying 0 (a release of nothing)."""
    return round_up(x) if x > 0.0 else 0.0


def _pure(epsilon: float) -> float:
    return math.inf if math.isinf(epsilon) else _up(epsilon * epsilon / 2.0)


def _rho(event: Event, group: int) -> float:
    if isinstance(event, NoOpEvent):
        return 0.0
    if isinstance(event, NonPrivateEvent):
        return math.inf
    if isinstance(event, GaussianEvent | TreeAggregationEvent):
        nm = event.noise_multiplier
        if nm == 0.0:
            return math.inf
        depth = 1 if isinstance(event, GaussianEvent) else max(max_psums_per_item(t) for t in event.step_counts)
        mu = group * _unit(event.relation) / nm
        return _up(depth * mu * mu / 2.0)
    if isinstance(event, LaplaceEvent):
        nm = event.noise_multiplier
        return math.inf if nm == 0.0 else _pure(_up(group * _unit(event.relation) / nm))
    if isinstance(event, RandomizedResponseEvent):
        if event.relation != Relation.REPLACE_ONE:
            raise _Unsupported("randomized response is defined under replace_one (a record's value changes)")
        return _pure(_up(group * event.epsilon))
    if isinstance(event, EpsilonDeltaEvent):
        if event.delta > 0.0:
            raise _Unsupported(f"an (ε, δ) release with δ = {event.delta!r} > 0 has no zCDP bound")
        return _pure(_up(group * event.epsilon))
    if isinstance(event, SelfComposedEvent):
        return _up(times_count(event.count, _rho(event.event, group)))  # any count
    if isinstance(event, ComposedEvent):
        return _up(math.fsum(_rho(child, group) for child in event.events))
    if isinstance(event, GroupEvent):
        return _rho(event.event, group * event.group_size)
    if isinstance(event, PoissonSampledEvent | SampledWithoutReplacementEvent):
        if isinstance(event, PoissonSampledEvent) and event.sampling_probability == 0.0:
            return 0.0
        raise _Unsupported("zCDP is not amplified by subsampling: use the rdp or pld method for sampled releases")
    raise _Unsupported(f"{type(event).__name__} is not an event kind the zCDP accountant knows")


def gaussian_only(event: Event) -> bool:
    """Whether every release of ``event`` is a Gaussian (or tree-aggregation) one — the only events whose ρ
    may be read as a Gaussian's μ = √(2ρ) (the ``gaussian-exact`` conversion).

    Args:
        event: an event of :mod:`dpkit.accountant.events`.

    Returns:
        Whether every release is Gaussian (or tree aggregation).
    """
    stack = [event]
    while stack:
        node = stack.pop()
        if isinstance(node, SelfComposedEvent | GroupEvent):
            stack.append(node.event)
        elif isinstance(node, ComposedEvent):
            stack.extend(node.events)
        elif not isinstance(node, GaussianEvent | TreeAggregationEvent | NoOpEvent):
            return False
    return True


def zcdp_refusal(event: Event) -> str | None:
    """None if :func:`zcdp_event_rho` bounds ``event``, else the reason it cannot.

    Args:
        event: an event of :mod:`dpkit.accountant.events`.

    Returns:
        None, or the reason.
    """
    try:
        _rho(event, 1)
    except _Unsupported as err:
        return str(err)
    return None


def zcdp_event_rho(event: Event) -> float:
    """The ρ for which ``event`` is ρ-zCDP, rounded up (+inf for a non-private release).

    Args:
        event: an event of :mod:`dpkit.accountant.events`.

    Returns:
        ρ, rounded up.

    Raises:
        ValueError: an event zCDP cannot bound (subsampling, an (ε, δ) release with δ > 0, an unknown kind, or
            randomized response under add_remove).
    """
    try:
        return _rho(event, 1)
    except _Unsupported as err:
        raise ValueError(f"zCDP cannot bound this event: {err}") from None
