"""Events lowered to plans: what dp-accounting's PLD accountant composes for an event (:class:`EventPlan`) — its
plain Gaussian releases merged into one μ-GDP Gaussian and its other mechanisms with their multiplicities — built by
:func:`lower_event` through a :class:`PlanBuilder`; :class:`UnsupportedEvent` names what the PLD method cannot
express. :mod:`dpkit.accountant.pld_events` turns a plan into PLDs and guarantees, and into the closed forms where a
plan has one."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING

from .closed_forms import (
    epsilon_delta_delta_unchecked,
    epsilon_delta_epsilon_unchecked,
    laplace_delta_unchecked,
    laplace_epsilon_unchecked,
    randomized_response_delta_unchecked,
    randomized_response_epsilon_unchecked,
)
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
from .gdp import gdp_delta_unchecked, gdp_epsilon_unchecked
from .numerics import round_up, times_count
from .sensitivity import Relation
from .validation import ArgumentTypeError

if TYPE_CHECKING:  # dp-accounting is imported where it is used: it costs 0.6 s at startup
    pass

__all__ = [
    "TAIL_TRUNCATION",
    "EventPlan",
    "PlanBuilder",
    "PlanLeaf",
    "UnsupportedEvent",
    "check_event",
    "lower_event",
    "plan_event",
]

#: Tail mass dp-accounting truncates (to +inf, pessimistically) per compose / self_compose call.
TAIL_TRUNCATION = 1e-15
#: Noise mass dp-accounting drops per discretised mechanism (log_mass_truncation_bound = −50, both tails).
_LEAF_TRUNCATION = 2.0 * math.exp(-50.0)


def _up(x: float, ulps: int = 4) -> float:
    """``x`` rounded up, but 0 stays 0 (``round_up(0.0)`` is the smallest subnormal)."""
    return round_up(x, ulps=ulps) if x > 0.0 else x


def _div_up(numerator: float, denominator: float) -> float:
    """numerator/denominator rounded up to the next double (exact quotients stay as they are)."""
    q = numerator / denominator
    if math.isfinite(q) and Fraction(q) < Fraction(numerator) / Fraction(denominator):
        q = math.nextafter(q, math.inf)
    return q


class UnsupportedEvent(Exception):
    """Raised while lowering an event the PLD method cannot express (the message is the reason)."""


# A plan leaf: ("laplace", noise_multiplier, sensitivity), ("rr", p, k), ("approx", ε, δ),
# ("poisson_gaussian", q, noise_multiplier), ("poisson_laplace", q, noise_multiplier).
PlanLeaf = tuple[str, float, float]


@dataclass(frozen=True)
class EventPlan:
    """An event lowered to what the PLD accountant composes (hashable: PLDs are cached on it)."""

    relation: Relation
    gaussian_mu2: float = 0.0  # Σ count·μ² of the plain Gaussian releases
    leaves: tuple[tuple[PlanLeaf, int], ...] = ()  # other mechanisms and their multiplicities
    non_private: bool = False

    @property
    def empty(self) -> bool:
        return not self.non_private and self.gaussian_mu2 == 0.0 and not self.leaves

    @property
    def discretisations(self) -> int:
        """m: how many discretised privacy losses the composed PLD sums."""
        return (1 if self.gaussian_mu2 > 0.0 else 0) + sum(c for _, c in self.leaves)

    @property
    def tail_mass(self) -> float:
        """τ: an upper bound on the mass dp-accounting's truncations moved to +inf."""
        ops = 2 * len(self.leaves) + 1
        return TAIL_TRUNCATION * ops + _LEAF_TRUNCATION * self.discretisations

    def effective_mu(self) -> float:
        """A GDP-like width of the composed privacy loss (for the automatic discretisation interval).

        Returns:
            sqrt(Σ count·μ²) over the Gaussians and each leaf's μ-like width.
        """
        total = self.gaussian_mu2
        for (kind, a, b), count in self.leaves:
            if kind == "laplace":
                eps = b / a
            elif kind == "rr":
                eps = randomized_response_epsilon_unchecked(a, int(b), 0.0)
            elif kind == "approx":
                eps = a
            elif kind == "poisson_gaussian":
                b2 = b * b
                total += count * a * a * math.expm1(min(1.0 / b2, 700.0)) if b2 > 0.0 else math.inf
                continue
            else:  # poisson_laplace
                eps = math.log1p(a * math.expm1(min(1.0 / b, 700.0))) if b > 0.0 else math.inf
            total += count * min(eps, 1e150) ** 2
        return math.sqrt(total)

    def pure_epsilon(self) -> float | None:
        """ε at δ = 0 (the essential supremum of the composed loss), rounded up; None if not pure DP.

        Summed in exact rationals (a Laplace ε₀ = Δ/b and a given ε are rational; logarithms are
        rounded up first), so 3 × Laplace(1) + 2 × Laplace(2) is 4 exactly.

        Returns:
            The pure ε, or None.
        """
        if self.gaussian_mu2 > 0.0:
            return None
        remove = add = Fraction(0)
        for (kind, a, b), count in self.leaves:
            if kind == "laplace":
                r = d = Fraction(b) / Fraction(a)
            elif kind == "rr":
                r = d = Fraction(randomized_response_epsilon_unchecked(a, int(b), 0.0))
            elif kind == "approx" and b == 0.0:
                r = d = Fraction(a)
            elif kind == "poisson_laplace":
                e0 = 1.0 / b
                r = Fraction(round_up(math.log1p(a * math.expm1(e0)), ulps=16))
                d = Fraction(round_up(-math.log1p(-a * -math.expm1(-e0)), ulps=16))
            else:
                return None
            remove += count * r
            add += count * d
        total = max(remove, add)
        out = float(total)
        return math.nextafter(out, math.inf) if Fraction(out) < total else out

    def _closed_parts(self) -> list[EventPlan]:
        """The parts of the plan that have an exact profile: the merged Gaussian, and each single Laplace,
        randomized-response or (ε, δ) leaf."""
        parts = [EventPlan(self.relation, gaussian_mu2=self.gaussian_mu2)] if self.gaussian_mu2 > 0.0 else []
        for (kind, a, b), count in self.leaves:
            if count == 1 and kind in ("laplace", "rr", "approx"):
                parts.append(EventPlan(self.relation, leaves=(((kind, a, b), 1),)))
        return parts

    def part_floor_epsilon(self, delta: float) -> float:
        """The largest exact ε(δ) of a part of the plan that has a closed form (:meth:`_closed_parts`): a
        composition is at least each of its parts (post-processing), so no PLD figure may fall below it. 0 when
        no part has one.

        Args:
            delta: the δ, in [0, 1] (not checked).

        Returns:
            The floor on ε(δ).
        """
        return max([0.0] + [part.exact_epsilon(delta) for part in self._closed_parts()])

    def part_floor_delta(self, epsilon: float) -> float:
        """As :meth:`part_floor_epsilon`, for δ(ε).

        Args:
            epsilon: the ε (>= 0, not checked).

        Returns:
            The floor on δ(ε).
        """
        return max([0.0] + [part.exact_delta(epsilon) for part in self._closed_parts()])

    def closed_form(self) -> str | None:
        """The name of the exact profile of this plan, if it has one.

        Returns:
            "gdp", "laplace", "randomized_response" or "epsilon_delta", or None.
        """
        if self.non_private or self.empty:
            return None
        if not self.leaves:
            return "gdp"
        if self.gaussian_mu2 == 0.0 and len(self.leaves) == 1 and self.leaves[0][1] == 1:
            kind = self.leaves[0][0][0]
            return {"laplace": "laplace", "rr": "randomized_response", "approx": "epsilon_delta"}.get(kind)
        return None

    def exact_epsilon(self, delta: float) -> float:
        """The exact ε(δ) of a plan with a closed form (:meth:`closed_form` not None), rounded up.

        Args:
            delta: the δ, in [0, 1] (not checked).

        Returns:
            ε, rounded up.
        """
        name = self.closed_form()
        if name == "gdp":
            return gdp_epsilon_unchecked(round_up(math.sqrt(self.gaussian_mu2)), delta)
        (_, a, b), _ = self.leaves[0]
        if name == "laplace":
            return laplace_epsilon_unchecked(_div_up(b, a), delta)
        if name == "randomized_response":
            return randomized_response_epsilon_unchecked(a, int(b), delta)
        return epsilon_delta_epsilon_unchecked(a, b, delta)

    def exact_delta(self, epsilon: float) -> float:
        """The exact δ(ε) of a plan with a closed form (:meth:`closed_form` not None), rounded up.

        Args:
            epsilon: the ε (>= 0, not checked).

        Returns:
            δ, rounded up.
        """
        name = self.closed_form()
        if name == "gdp":
            return gdp_delta_unchecked(round_up(math.sqrt(self.gaussian_mu2)), epsilon)
        (_, a, b), _ = self.leaves[0]
        if name == "laplace":
            return laplace_delta_unchecked(_div_up(b, a), epsilon)
        if name == "randomized_response":
            return randomized_response_delta_unchecked(a, int(b), epsilon)
        return epsilon_delta_delta_unchecked(a, b, epsilon)


@dataclass
class PlanBuilder:
    """An :class:`EventPlan` being built: the μ² of the Gaussian releases and the count of every other leaf."""

    relation: Relation
    mu2: list[float] = field(default_factory=list)
    leaves: dict[PlanLeaf, int] = field(default_factory=dict)
    non_private: bool = False

    def add(self, leaf: PlanLeaf, count: int) -> None:
        """Count ``count`` more runs of ``leaf``; an (ε, 1) or (∞, δ) release makes the plan non-private.

        Args:
            leaf: the leaf (kind, a, b).
            count: its multiplicity.
        """
        if leaf[0] == "approx" and (leaf[2] >= 1.0 or math.isinf(leaf[1])):  # (ε, 1) or (∞, δ): no privacy at all
            self.non_private = True
            return
        self.leaves[leaf] = self.leaves.get(leaf, 0) + count

    def plan(self) -> EventPlan:
        """The finished plan: the Gaussians' μ² summed (rounded up) and the leaves sorted.

        Returns:
            The :class:`EventPlan` (non-private when a leaf is, or μ² overflows).
        """
        if self.non_private:
            return EventPlan(self.relation, non_private=True)
        mu2 = round_up(math.fsum(self.mu2), ulps=4 + len(self.mu2)) if self.mu2 else 0.0
        if math.isinf(mu2):
            return EventPlan(self.relation, non_private=True)
        return EventPlan(self.relation, mu2, tuple(sorted(self.leaves.items())))


def _group_approx(epsilon: float, delta: float, group: int) -> tuple[float, float]:
    """(kε, δ Σ_{i<k} e^{iε}): group privacy of an (ε, δ)-DP release, rounded up."""
    if group == 1:
        return epsilon, delta
    eps = _up(group * epsilon)
    if delta == 0.0:
        return eps, 0.0
    if epsilon == 0.0:
        return eps, min(1.0, _up(group * delta))
    if math.isinf(epsilon):
        return math.inf, 1.0
    # log(δ Σ_{i<k} e^{iε}) = log δ + log(e^{kε} − 1) − log(e^ε − 1), in logs: no overflow however large kε
    log_delta = math.log(delta) + _log_expm1(group * epsilon) - _log_expm1(epsilon)
    if log_delta >= 0.0:
        return eps, 1.0  # the group bound says nothing: δ = 1
    return eps, min(1.0, _up(math.exp(log_delta), ulps=16))


def _log_expm1(x: float) -> float:
    """log(e^x − 1) for x > 0, without overflow."""
    return x + math.log1p(-math.exp(-x)) if x > 1.0 else math.log(math.expm1(x))


def lower_event(event: Event, mult: int, group: int, out: PlanBuilder) -> None:
    """Add ``mult`` runs of ``event`` (for groups of ``group`` records) to ``out``; raise UnsupportedEvent.

    Args:
        event: the event.
        mult: how many times it runs.
        group: the group size (1: single records).
        out: the builder to add to.

    Raises:
        UnsupportedEvent: an event the PLD method cannot express (the message says why).
    """
    if out.non_private:
        return
    if isinstance(event, SelfComposedEvent):
        lower_event(event.event, mult * event.count, group, out)
    elif isinstance(event, ComposedEvent):
        for child in event.events:
            lower_event(child, mult, group, out)
    elif isinstance(event, GroupEvent):
        lower_event(event.event, mult, group * event.group_size, out)
    elif isinstance(event, NoOpEvent):
        pass
    elif isinstance(event, NonPrivateEvent):
        out.non_private = True
    elif isinstance(event, GaussianEvent | TreeAggregationEvent):
        nm = event.noise_multiplier
        if nm == math.inf:
            return
        if nm == 0.0:
            out.non_private = True
            return
        depth = max(event.step_counts).bit_length() if isinstance(event, TreeAggregationEvent) else 1
        ratio = (1.0 if event.relation == Relation.ADD_REMOVE else 2.0) * group / nm
        out.mu2.append(times_count(mult * depth, ratio * ratio))  # any count
    elif isinstance(event, LaplaceEvent):
        nm = event.noise_multiplier
        if nm == math.inf:
            return
        if nm == 0.0:
            out.non_private = True
            return
        out.add(("laplace", nm, (1.0 if event.relation == Relation.ADD_REMOVE else 2.0) * group), mult)
    elif isinstance(event, RandomizedResponseEvent):
        if event.relation != Relation.REPLACE_ONE:
            raise UnsupportedEvent(
                "randomized response: dp-accounting defines its PLD under replace_one only, got relation add_remove"
            )
        p, k = event.noise_parameter, event.num_buckets
        if k == 1 or p == 1.0:
            return
        if p == 0.0:
            out.non_private = True
            return
        if group == 1:
            out.add(("rr", p, float(k)), mult)
        else:
            out.add(("approx", *_group_approx(randomized_response_epsilon_unchecked(p, k, 0.0), 0.0, group)), mult)
    elif isinstance(event, EpsilonDeltaEvent):
        eps, delta = _group_approx(event.epsilon, event.delta, group)
        if eps == math.inf or delta == 1.0:
            out.non_private = True
        elif eps > 0.0 or delta > 0.0:
            out.add(("approx", eps, delta), mult)
    elif isinstance(event, PoissonSampledEvent):
        _lower_poisson(event, mult, group, out)
    elif isinstance(event, SampledWithoutReplacementEvent):
        raise UnsupportedEvent(
            "sampling without replacement: no PLD of it is available here (use the rdp method: Wang, Balle "
            "and Kasiviswanathan 2019)"
        )
    else:
        raise UnsupportedEvent(f"{type(event).__name__} is not an event the pld method knows")


def _lower_poisson(event: PoissonSampledEvent, mult: int, group: int, out: PlanBuilder) -> None:
    q, child = event.sampling_probability, event.event
    if q == 0.0:
        return
    if q == 1.0:
        lower_event(child, mult, group, out)
        return
    if group != 1:
        raise UnsupportedEvent("group privacy of a Poisson-subsampled event: no PLD of it is available here")
    if isinstance(child, GaussianEvent | LaplaceEvent) and child.noise_multiplier == math.inf:
        return
    if isinstance(child, NoOpEvent):
        return
    nm = child.noise_multiplier if isinstance(child, GaussianEvent | LaplaceEvent) else math.nan
    if isinstance(child, NonPrivateEvent) or nm == 0.0:
        # with probability q the record's data is released as is: exactly the (0, q) dominating pair
        if child.relation != Relation.ADD_REMOVE:
            raise UnsupportedEvent("a Poisson-subsampled non-private event is expressed under add_remove only")
        out.add(("approx", 0.0, q), mult)
    elif isinstance(child, GaussianEvent):
        out.add(("poisson_gaussian", q, nm), mult)
    elif isinstance(child, LaplaceEvent):
        if child.relation != Relation.ADD_REMOVE:
            raise UnsupportedEvent(
                "a Poisson-subsampled Laplace: dp-accounting's PLD needs add_remove, got relation replace_one"
            )
        out.add(("poisson_laplace", q, nm), mult)
    elif isinstance(child, EpsilonDeltaEvent):
        if child.relation != Relation.ADD_REMOVE:
            raise UnsupportedEvent(
                "a Poisson-subsampled (epsilon, delta) release: amplification is stated under add_remove, "
                "got relation replace_one"
            )
        if child.epsilon == math.inf or child.delta == 1.0:
            out.add(("approx", 0.0, q), mult)  # no better than releasing the record when sampled
            return
        # amplification by Poisson subsampling (Balle, Barthe and Gaboardi 2018): (log(1 + q(e^ε − 1)), qδ)
        eps = _up(math.log1p(q * math.expm1(child.epsilon)), ulps=8)
        delta = min(1.0, _up(q * child.delta))
        if eps > 0.0 or delta > 0.0:
            out.add(("approx", eps, delta), mult)
    else:
        raise UnsupportedEvent(
            f"Poisson sampling of {type(child).__name__}: the pld method subsamples a Gaussian, a Laplace or an "
            f"(epsilon, delta) release only"
        )


def check_event(event: object) -> Event:
    """``event`` if it is a dpkit event, else an ArgumentTypeError naming it.

    Args:
        event: the value.

    Returns:
        The event.

    Raises:
        ArgumentTypeError: not an Event.
    """
    if not isinstance(event, Event):
        raise ArgumentTypeError(f"event must be a dpkit event (dpkit.accountant.events.Event), got {event!r}")
    return event


def plan_event(event: Event) -> EventPlan:
    """``event`` lowered to its plan, or a ValueError (``pld: …``) naming what the PLD method cannot express.

    Args:
        event: the event.

    Returns:
        The :class:`EventPlan`.

    Raises:
        ValueError: an event the PLD method cannot express.
    """
    out = PlanBuilder(event.relation)
    try:
        lower_event(event, 1, 1, out)
    except UnsupportedEvent as err:
        raise ValueError(f"pld: {err}") from None
    return out.plan()
