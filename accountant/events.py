"""Privacy events as data: what a mechanism releases, not how an accountant reads it.

As in dp-accounting's ``dp_event.py``, an :class:`Event` only *describes* a mechanism; the
accountants in :mod:`dpkit.accountant.accountants` interpret it (or say why they cannot). Each
event mirrors one dp-accounting ``DpEvent`` with the same parameters (:mod:`dpkit.accountant.interop`) and
also states the neighbouring relation its guarantee is under (:attr:`Event.relation`: ``"add_remove"`` or
``"replace_one"``); composite events take theirs from their children, which must agree.

Events are frozen, validated dataclasses (a bad value raises :class:`ValueError`, a wrong type
:class:`~dpkit.accountant.validation.ArgumentTypeError`), hashable and comparable. :meth:`Event.to_dict` /
:meth:`Event.from_dict` give dpkit's own JSON form; :func:`walk` flattens compositions; :func:`describe`
prints one line.
"""

from __future__ import annotations

import math
import numbers
import sys
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar

from .numerics import round_up
from .sensitivity import Relation, check_relation
from .validation import (
    ArgumentTypeError,
    check_count,
    check_extended_nonnegative,
    check_positive,
    check_unit_interval,
)

__all__ = [
    "Event",
    "GaussianEvent",
    "LaplaceEvent",
    "RandomizedResponseEvent",
    "EpsilonDeltaEvent",
    "PoissonSampledEvent",
    "SampledWithoutReplacementEvent",
    "SelfComposedEvent",
    "ComposedEvent",
    "TreeAggregationEvent",
    "GroupEvent",
    "NoOpEvent",
    "NonPrivateEvent",
    "EVENT_KINDS",
    "walk",
    "scale_noise",
    "describe",
]

#: kind -> event class, filled as the classes are defined (dpkit's JSON ``"kind"`` values).
EVENT_KINDS: dict[str, type[Event]] = {}


def _short(value: object) -> str:
    """``repr(value)`` cut to one short line, for error messages."""
    text = repr(value).replace("\n", " ")
    return text if len(text) <= 80 else text[:77] + "..."


def _check_event(name: str, value: object) -> Event:
    if not isinstance(value, Event):
        raise ArgumentTypeError(f"{name} must be a dpkit event (an Event), got {_short(value)}")
    return value


def _extended(name: str, value: object) -> float:
    """A float in [0, +inf] (NaN refused), with -0.0 read as 0.0."""
    return check_extended_nonnegative(name, value) + 0.0


def _unit(name: str, value: object) -> float:
    return check_unit_interval(name, value) + 0.0


def _safe_ratio(numerator: float, denominator: float) -> float:
    """numerator/denominator for numerator in [0, inf], denominator > 0 finite.

    A finite ratio that overflows is capped at the largest float instead of +inf: a noise
    multiplier of +inf would mean "releases nothing", which is not what a finite σ means.
    """
    ratio = numerator / denominator
    if math.isinf(ratio) and math.isfinite(numerator):
        return sys.float_info.max
    return ratio


class Event(ABC):
    """A privacy event: a mechanism described by its parameters (see the module docstring).

    Subclasses are frozen dataclasses with a class-level ``kind`` (the ``"kind"`` of
    :meth:`to_dict`). :attr:`relation` is the neighbouring relation of the guarantee.
    """

    kind: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.kind:
            EVENT_KINDS[cls.kind] = cls

    @property
    @abstractmethod
    def relation(self) -> Relation:
        """``Relation.ADD_REMOVE`` or ``Relation.REPLACE_ONE``: the neighbouring relation the guarantee is stated under
        (a string given at construction is converted)."""

    def to_dict(self) -> dict[str, Any]:
        """dpkit's JSON form: ``{"kind": ..., <field>: <value>, ...}`` (child events nested, tuples as lists).

        Returns:
            The event as plain, JSON-ready data.
        """
        out: dict[str, Any] = {"kind": self.kind}
        for f in fields(self):  # type: ignore[arg-type]  # every concrete event is a dataclass
            value = getattr(self, f.name)
            if isinstance(value, Event):
                value = value.to_dict()
            elif isinstance(value, tuple):
                value = [v.to_dict() if isinstance(v, Event) else v for v in value]
            out[f.name] = value
        return out

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> Event:
        """Rebuild an event from :meth:`to_dict`'s form; a bad document raises one ValueError naming the place.

        Args:
            data: the mapping :meth:`to_dict` writes.

        Returns:
            The event.

        Raises:
            ArgumentTypeError: ``data`` (or a nested event) not a mapping, or a field of the wrong type.
            ValueError: no or an unknown ``kind``, an unknown or missing field, or a bad value.
        """
        return _from_dict(data, "event")


def _from_dict(data: object, path: str) -> Event:
    if not isinstance(data, Mapping):
        raise ArgumentTypeError(f"{path} must be an object with a 'kind', got {_short(data)}")
    kind = data.get("kind")
    if kind is None:
        raise ValueError(f"{path} has no 'kind' (one of {', '.join(EVENT_KINDS)})")
    cls = EVENT_KINDS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"{path}.kind must be one of {', '.join(EVENT_KINDS)}; got {_short(kind)}")
    known = {f.name: f for f in fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - set(known) - {"kind"}, key=str)
    if unknown:
        raise ValueError(f"{path} ({kind}) has unknown field(s): {', '.join(map(str, unknown))}")
    missing = [n for n, f in known.items() if n not in data and f.init and _required(f)]
    if missing:
        raise ValueError(f"{path} ({kind}) is missing field(s): {', '.join(missing)}")
    values: dict[str, Any] = {}
    for name in known:
        if name not in data:
            continue
        value = data[name]
        if name == "event":
            value = _from_dict(value, f"{path}.event")
        elif name == "events":
            if not isinstance(value, list):
                raise ArgumentTypeError(f"{path}.events must be a list of events, got {_short(value)}")
            value = [_from_dict(v, f"{path}.events[{i}]") for i, v in enumerate(value)]
        values[name] = value
    try:
        return cls(**values)
    except ValueError as exc:  # ArgumentTypeError included: keep its type, say where
        raise type(exc)(f"{path} ({kind}): {exc}") from None


def _required(f: Any) -> bool:
    return bool(f.default is MISSING and f.default_factory is MISSING)


def _agreed_relation(name: str, children: Sequence[Event]) -> Relation:
    first = children[0].relation
    for i, child in enumerate(children):
        if child.relation != first:
            raise ValueError(
                f"{name} mix neighbouring relations: {name}[0] is {first}, {name}[{i}] is {child.relation}"
            )
    return first


# --------------------------------------------------------------------------------------------
# leaf events: one release


@dataclass(frozen=True)
class GaussianEvent(Event):
    """The Gaussian mechanism, as dp-accounting's ``GaussianDpEvent``.

    Releases f(D) + N(0, (noise_multiplier·C)² I) where each record moves f by at most C in ℓ2.
    Under ``add_remove`` neighbours' statistics are C apart (μ-GDP with μ = 1/noise_multiplier);
    under ``replace_one`` a record's change is read as 2C apart, as dp-accounting's ``REPLACE_ONE``
    reads it (μ = 2/noise_multiplier). ``noise_multiplier`` is in [0, +inf]: 0 is not private,
    +inf releases nothing.
    """

    kind: ClassVar[str] = "gaussian"
    noise_multiplier: float
    relation: Relation = field(default=Relation.ADD_REMOVE, kw_only=True)

    def __post_init__(self) -> None:
        object.__setattr__(self, "noise_multiplier", _extended("noise_multiplier", self.noise_multiplier))
        object.__setattr__(self, "relation", check_relation(self.relation))

    @classmethod
    def from_sigma(cls, sigma: float, *, sensitivity: float, relation: Relation | str) -> GaussianEvent:
        """N(0, σ²I) noise on a statistic whose neighbours (under ``relation``) are ``sensitivity`` apart in ℓ2.

        μ = sensitivity/σ; the noise multiplier is σ/sensitivity under add_remove and
        2σ/sensitivity under replace_one (dp-accounting's C is half the replace-one distance).

        Args:
            sigma: σ, the noise standard deviation (>= 0, +inf allowed).
            sensitivity: Δ, the ℓ2 distance of neighbours under ``relation`` (> 0).
            relation: "add_remove" or "replace_one".

        Returns:
            The :class:`GaussianEvent`.

        Raises:
            ArgumentTypeError: a parameter of the wrong type.
            ValueError: σ negative or NaN, Δ not positive and finite, or an unknown relation.
        """
        sigma = _extended("sigma", sigma)
        sensitivity = check_positive("sensitivity", sensitivity)
        relation = check_relation(relation)
        ratio = _safe_ratio(sigma, sensitivity)  # σ/Δ, then ×2 under replace_one (Δ/2 may underflow: never halve Δ)
        if relation == Relation.REPLACE_ONE and math.isfinite(ratio):
            ratio = min(2.0 * ratio, sys.float_info.max)  # a finite σ stays a finite noise multiplier
        return cls(ratio, relation=relation)

    @property
    def mu(self) -> float:
        """μ of one release (GDP): 1/noise_multiplier (add_remove) or 2/noise_multiplier (replace_one), rounded up."""
        numerator = 1.0 if self.relation == Relation.ADD_REMOVE else 2.0
        if self.noise_multiplier == 0.0:
            return math.inf
        if math.isinf(self.noise_multiplier):
            return 0.0
        return round_up(numerator / self.noise_multiplier)


@dataclass(frozen=True)
class LaplaceEvent(Event):
    """The Laplace mechanism, as dp-accounting's ``LaplaceDpEvent``.

    Releases f(D) + Lap(b) coordinate-wise with scale b = noise_multiplier·C, where each record
    moves f by at most C in ℓ1. Pure ε-DP with ε = 1/noise_multiplier (add_remove) or
    2/noise_multiplier (replace_one: a record's change is 2C apart, as for the Gaussian).
    dp-accounting's PLD accountant reads it under add-remove only.
    """

    kind: ClassVar[str] = "laplace"
    noise_multiplier: float
    relation: Relation = field(default=Relation.ADD_REMOVE, kw_only=True)

    def __post_init__(self) -> None:
        object.__setattr__(self, "noise_multiplier", _extended("noise_multiplier", self.noise_multiplier))
        object.__setattr__(self, "relation", check_relation(self.relation))

    @property
    def epsilon(self) -> float:
        """Pure ε of one release, rounded up (+inf when noise_multiplier is 0)."""
        numerator = 1.0 if self.relation == Relation.ADD_REMOVE else 2.0
        if self.noise_multiplier == 0.0:
            return math.inf
        if math.isinf(self.noise_multiplier):
            return 0.0
        return round_up(numerator / self.noise_multiplier)


@dataclass(frozen=True)
class RandomizedResponseEvent(Event):
    """Randomized response over ``num_buckets`` values, as dp-accounting's ``RandomizedResponseDpEvent``.

    With probability ``noise_parameter`` p output a bucket drawn uniformly from the k buckets,
    otherwise the true one. Pure ε-DP (under replace_one, its natural relation: a record's value
    changes) with ε = log(1 + k(1 − p)/p); ε = 0 when k = 1 or p = 1, +inf when p = 0 (k >= 2).
    dp-accounting's PLD accountant reads it under replace-one only.
    """

    kind: ClassVar[str] = "randomized_response"
    noise_parameter: float
    num_buckets: int = 2
    relation: Relation = field(default=Relation.REPLACE_ONE, kw_only=True)

    def __post_init__(self) -> None:
        object.__setattr__(self, "noise_parameter", _unit("noise_parameter", self.noise_parameter))
        object.__setattr__(self, "num_buckets", check_count("num_buckets", self.num_buckets))
        object.__setattr__(self, "relation", check_relation(self.relation))

    @classmethod
    def from_epsilon(cls, epsilon: float, *, num_buckets: int = 2) -> RandomizedResponseEvent:
        """The randomized response over ``num_buckets`` (>= 2) values that is ε-DP (p = k/(e^ε − 1 + k), rounded up).

        Args:
            epsilon: the pure ε (>= 0, +inf allowed: no noise).
            num_buckets: k, the number of values (an integer >= 2); 2 by default.

        Returns:
            The :class:`RandomizedResponseEvent`.

        Raises:
            ArgumentTypeError: a parameter of the wrong type.
            ValueError: ε negative or NaN, or k below 2.
        """
        epsilon = _extended("epsilon", epsilon)
        k = check_count("num_buckets", num_buckets)
        if k < 2:
            raise ValueError(f"num_buckets must be >= 2 to calibrate to an epsilon, got {k}")
        if math.isinf(epsilon):
            return cls(0.0, k)
        p = k / (math.expm1(epsilon) + k)
        return cls(min(1.0, round_up(p)), k)

    @property
    def epsilon(self) -> float:
        """Pure ε = log(1 + k(1 − p)/p), rounded up."""
        p, k = self.noise_parameter, self.num_buckets
        if k == 1 or p == 1.0:
            return 0.0
        if p == 0.0:
            return math.inf
        return round_up(math.log1p(k * ((1.0 - p) / p)))


@dataclass(frozen=True)
class EpsilonDeltaEvent(Event):
    """A release known only to be (ε, δ)-DP (ε in [0, +inf], δ in [0, 1]). No dp-accounting counterpart.

    It is exported as dpkit's own ``EpsilonDeltaDpEvent`` (:mod:`dpkit.accountant.interop`).
    """

    kind: ClassVar[str] = "epsilon_delta"
    epsilon: float
    delta: float
    relation: Relation = field(default=Relation.ADD_REMOVE, kw_only=True)

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _extended("epsilon", self.epsilon))
        object.__setattr__(self, "delta", _unit("delta", self.delta))
        object.__setattr__(self, "relation", check_relation(self.relation))


@dataclass(frozen=True)
class TreeAggregationEvent(Event):
    """Tree aggregation in one epoch, as dp-accounting's ``SingleEpochTreeAggregationDpEvent``.

    One binary tree of Gaussian partial sums (noise ``noise_multiplier``·C per node) per entry of
    ``step_counts`` (the number of steps of that tree): more than one entry means the tree is
    restarted. Each record contributes at most once across all trees (wrap in
    :class:`SelfComposedEvent` for one contribution per tree). A bare integer is read as one tree.
    """

    kind: ClassVar[str] = "tree_aggregation"
    noise_multiplier: float
    step_counts: tuple[int, ...]
    relation: Relation = field(default=Relation.ADD_REMOVE, kw_only=True)

    def __post_init__(self) -> None:
        object.__setattr__(self, "noise_multiplier", _extended("noise_multiplier", self.noise_multiplier))
        counts: object = self.step_counts
        if isinstance(counts, numbers.Integral) and not isinstance(counts, bool):
            counts = (counts,)
        if isinstance(counts, (str, bytes, Mapping)) or not isinstance(counts, Sequence):
            raise ArgumentTypeError(f"step_counts must be a sequence of integers >= 1, got {_short(counts)}")
        if not counts:
            raise ValueError("step_counts must not be empty (one entry per tree)")
        steps = tuple(check_count(f"step_counts[{i}]", c) for i, c in enumerate(counts))
        object.__setattr__(self, "step_counts", steps)
        object.__setattr__(self, "relation", check_relation(self.relation))


@dataclass(frozen=True)
class _RelationOnly(Event):
    """An event whose only field is its relation (kept so that a DpEvent reads back exactly under it)."""

    relation: Relation = field(default=Relation.ADD_REMOVE, kw_only=True)

    def __post_init__(self) -> None:
        object.__setattr__(self, "relation", check_relation(self.relation))


@dataclass(frozen=True)
class NoOpEvent(_RelationOnly):
    """An operation with no privacy cost, as dp-accounting's ``NoOpDpEvent``."""

    kind: ClassVar[str] = "no_op"


@dataclass(frozen=True)
class NonPrivateEvent(_RelationOnly):
    """An operation that is not differentially private, as dp-accounting's ``NonPrivateDpEvent`` (ε = δ = ∞)."""

    kind: ClassVar[str] = "non_private"


# --------------------------------------------------------------------------------------------
# composite events: sampling, composition, groups


@dataclass(frozen=True)
class PoissonSampledEvent(Event):
    """Poisson subsampling, as dp-accounting's ``PoissonSampledDpEvent``.

    Each record enters the sample independently with probability ``sampling_probability`` (q in
    [0, 1]); then ``event`` runs on the sample. The relation is the child's.
    """

    kind: ClassVar[str] = "poisson_sampled"
    sampling_probability: float
    event: Event

    def __post_init__(self) -> None:
        object.__setattr__(self, "sampling_probability", _unit("sampling_probability", self.sampling_probability))
        _check_event("event", self.event)

    @property
    def relation(self) -> Relation:
        return self.event.relation


@dataclass(frozen=True)
class SampledWithoutReplacementEvent(Event):
    """A uniformly random batch of ``sample_size`` distinct records out of ``source_dataset_size``.

    As dp-accounting's ``SampledWithoutReplacementDpEvent``: ``event`` runs on the batch
    (1 <= sample_size <= source_dataset_size). The relation is the child's.
    """

    kind: ClassVar[str] = "sampled_without_replacement"
    source_dataset_size: int
    sample_size: int
    event: Event

    def __post_init__(self) -> None:
        n = check_count("source_dataset_size", self.source_dataset_size)
        b = check_count("sample_size", self.sample_size)
        if b > n:
            raise ValueError(f"sample_size must be <= source_dataset_size ({n}), got {b}")
        object.__setattr__(self, "source_dataset_size", n)
        object.__setattr__(self, "sample_size", b)
        _check_event("event", self.event)

    @property
    def relation(self) -> Relation:
        return self.event.relation


@dataclass(frozen=True)
class SelfComposedEvent(Event):
    """``event`` run ``count`` times, possibly adaptively, as dp-accounting's ``SelfComposedDpEvent``."""

    kind: ClassVar[str] = "self_composed"
    event: Event
    count: int

    def __post_init__(self) -> None:
        _check_event("event", self.event)
        object.__setattr__(self, "count", check_count("count", self.count))

    @property
    def relation(self) -> Relation:
        return self.event.relation


@dataclass(frozen=True)
class ComposedEvent(Event):
    """The (adaptive) composition of ``events`` in order, as dp-accounting's ``ComposedDpEvent``.

    ``events`` is non-empty (a list is accepted and stored as a tuple); all children state their
    guarantee under the same relation.
    """

    kind: ClassVar[str] = "composed"
    events: tuple[Event, ...]

    def __post_init__(self) -> None:
        events: object = self.events
        if isinstance(events, (str, bytes, Mapping, Event)) or not isinstance(events, Sequence):
            raise ArgumentTypeError(f"events must be a list of events, got {_short(events)}")
        children = tuple(_check_event(f"events[{i}]", e) for i, e in enumerate(events))
        if not children:
            raise ValueError("events must not be empty (use NoOpEvent for no release)")
        _agreed_relation("events", children)
        object.__setattr__(self, "events", children)

    @property
    def relation(self) -> Relation:
        return self.events[0].relation


@dataclass(frozen=True)
class GroupEvent(Event):
    """Group privacy: ``event``'s guarantee for datasets differing in ``group_size`` records.

    No dp-accounting counterpart. Neighbours under the child's relation, chained ``group_size``
    times. Exported as dpkit's own ``GroupDpEvent`` (:mod:`dpkit.accountant.interop`).
    """

    kind: ClassVar[str] = "group"
    event: Event
    group_size: int

    def __post_init__(self) -> None:
        _check_event("event", self.event)
        object.__setattr__(self, "group_size", check_count("group_size", self.group_size))

    @property
    def relation(self) -> Relation:
        return self.event.relation


# --------------------------------------------------------------------------------------------
# functions


def walk(event: Event) -> Iterator[tuple[Event, int]]:
    """Yield (leaf, multiplicity) through :class:`ComposedEvent` and :class:`SelfComposedEvent`, in order.

    A "leaf" is any event that is neither (a sampled or group event is yielded whole); its
    multiplicity is the product of the counts above it. Repeated leaves are not merged.

    Args:
        event: the event.

    Yields:
        (leaf, multiplicity) pairs.

    Raises:
        ArgumentTypeError: ``event`` is not an Event.
    """
    return _walk(_check_event("event", event))  # checked now, not at the first next()


def _walk(event: Event) -> Iterator[tuple[Event, int]]:
    stack: list[tuple[Event, int]] = [(event, 1)]
    while stack:
        node, mult = stack.pop()
        if isinstance(node, SelfComposedEvent):
            stack.append((node.event, mult * node.count))
        elif isinstance(node, ComposedEvent):
            stack.extend((child, mult) for child in reversed(node.events))
        else:
            yield node, mult


def scale_noise(event: Event, factor: float) -> Event:
    """The same mechanism with every noise scale multiplied by ``factor`` (> 0): the noise multipliers of the
    Gaussian, Laplace and tree-aggregation events in it, through sampling, composition and groups (so a ledger
    of events can be calibrated by one common factor, as a Gaussian ledger is). Events whose privacy is not a
    noise scale — randomized response, an (ε, δ) release, a non-private release — cannot be rescaled: a
    ValueError names them. A no-op stays a no-op.

    Args:
        event: the event.
        factor: the factor on every noise scale (> 0).

    Returns:
        The rescaled event.

    Raises:
        ArgumentTypeError: ``event`` is not an Event, or ``factor`` not a real number.
        ValueError: ``factor`` not positive and finite, or an event whose privacy is not a noise scale.
    """
    from dataclasses import replace

    factor = check_positive("factor", factor)

    def scaled(node: Event) -> Event:
        if isinstance(node, (GaussianEvent, LaplaceEvent, TreeAggregationEvent)):
            return replace(node, noise_multiplier=node.noise_multiplier * factor)
        if isinstance(node, (PoissonSampledEvent, SampledWithoutReplacementEvent, SelfComposedEvent, GroupEvent)):
            return replace(node, event=scaled(node.event))
        if isinstance(node, ComposedEvent):
            return replace(node, events=tuple(scaled(e) for e in node.events))
        if isinstance(node, NoOpEvent):
            return node
        raise ValueError(f"{describe(node)} has no noise scale to multiply (only Gaussian, Laplace and tree events)")

    return scaled(_check_event("event", event))


def _num(x: float) -> str:
    if isinstance(x, int):
        return str(x)
    if math.isfinite(x) and x.is_integer() and abs(x) < 1e16:
        return str(int(x))
    return repr(x)


# precedence for describe(): a leaf binds tightest, then "of", then "×", then "+"
_LEAF, _OF, _TIMES, _PLUS = 3, 2, 1, 0


def _describe(event: Event) -> tuple[str, int]:
    def inner(child: Event, level: int) -> str:
        text, prec = _describe(child)
        return text if prec > level else f"({text})"

    if isinstance(event, GaussianEvent):
        return f"Gaussian(nm={_num(event.noise_multiplier)})", _LEAF
    if isinstance(event, LaplaceEvent):
        return f"Laplace(nm={_num(event.noise_multiplier)})", _LEAF
    if isinstance(event, RandomizedResponseEvent):
        return f"RandomizedResponse(p={_num(event.noise_parameter)}, k={event.num_buckets})", _LEAF
    if isinstance(event, EpsilonDeltaEvent):
        return f"({_num(event.epsilon)}, {_num(event.delta)})-DP", _LEAF
    if isinstance(event, TreeAggregationEvent):
        steps = "+".join(str(s) for s in event.step_counts)
        return f"Tree(nm={_num(event.noise_multiplier)}, steps={steps})", _LEAF
    if isinstance(event, NoOpEvent):
        return "NoOp", _LEAF
    if isinstance(event, NonPrivateEvent):
        return "NonPrivate", _LEAF
    if isinstance(event, PoissonSampledEvent):
        return f"Poisson(q={_num(event.sampling_probability)}) of {inner(event.event, _TIMES)}", _OF
    if isinstance(event, SampledWithoutReplacementEvent):
        head = f"WithoutReplacement({event.sample_size} of {event.source_dataset_size})"
        return f"{head} of {inner(event.event, _TIMES)}", _OF
    if isinstance(event, GroupEvent):
        return f"Group(k={event.group_size}) of {inner(event.event, _TIMES)}", _OF
    if isinstance(event, SelfComposedEvent):
        return f"{inner(event.event, _TIMES)} × {event.count}", _TIMES
    if isinstance(event, ComposedEvent):
        return " + ".join(inner(e, _PLUS) for e in event.events), _PLUS
    return type(event).__name__, _LEAF  # pragma: no cover - every kind is handled above


def describe(event: Event) -> str:
    """One human-readable line, e.g. ``"Poisson(q=0.004) of Gaussian(nm=1.1) × 14062"``.

    "of" binds tighter than "×", which binds tighter than "+"; " [replace_one]" is appended when
    the event is stated under replace_one.

    Args:
        event: the event.

    Returns:
        The line.

    Raises:
        ArgumentTypeError: ``event`` is not an Event.

    Examples:
        >>> e = SelfComposedEvent(PoissonSampledEvent(0.004, GaussianEvent(1.1)), 14062)
        >>> describe(e)
        'Poisson(q=0.004) of Gaussian(nm=1.1) × 14062'
        >>> Event.from_dict(e.to_dict()) == e
        True
    """
    text, _ = _describe(_check_event("event", event))
    return text if event.relation == Relation.ADD_REMOVE else f"{text} [replace_one]"
