"""dp-accounting interoperability: dpkit events to and from ``DpEvent`` objects and their JSON.

:func:`to_dp_event` maps every :class:`~dpkit.accountant.events.Event` to the dp-accounting
``DpEvent`` with the same parameters, and :func:`from_dp_event` maps back every ``DpEvent`` that has
a dpkit counterpart. A ``DpEvent`` carries no neighbouring relation (dp-accounting sets it on the
accountant, see :func:`dp_neighboring_relation`), so :func:`from_dp_event` takes it as an argument.
Two events without a dp-accounting counterpart (``EpsilonDeltaDpEvent``, ``GroupDpEvent``) are exported as
dpkit's own ``DpEvent`` subclasses, which dp-accounting's accountants report as unsupported.

Round trips are exact, and the JSON form (:func:`dp_event_to_json`, :func:`dp_event_from_json`,
:func:`load_event`) imports nothing named in a file: docs/FORMULAS.md §11 (DpEvent interop).
dp-accounting is imported inside the functions (0.6 s), the two classes on first use.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

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
from .sensitivity import Relation, check_relation
from .validation import ArgumentTypeError

if TYPE_CHECKING:  # dp-accounting is imported where it is used: it costs 0.6 s at startup
    import dp_accounting

    # created on first access by the module's __getattr__ (see _dpkit_dp_event_classes)
    EpsilonDeltaDpEvent: type[Any]
    GroupDpEvent: type[Any]

__all__ = [
    "EpsilonDeltaDpEvent",
    "GroupDpEvent",
    "to_dp_event",
    "from_dp_event",
    "dp_event_to_json",
    "dp_event_from_json",
    "to_dp_event_json",
    "from_dp_event_json",
    "load_event",
    "dp_neighboring_relation",
]

#: The modules a DpEvent JSON may name: dp-accounting's event module (also under its package name,
#: which re-exports the events) and this module (dpkit's own DpEvent subclasses).
DP_EVENT_MODULES: tuple[str, ...] = ("dp_accounting.dp_event", "dp_accounting", __name__)

_DPKIT_DP_EVENTS = ("EpsilonDeltaDpEvent", "GroupDpEvent")


@functools.cache
def _dpkit_dp_event_classes() -> dict[str, type[Any]]:
    """Create dpkit's own DpEvent subclasses (once: their identity is stable)."""
    import attr
    import dp_accounting

    @attr.s(frozen=True, slots=True, auto_attribs=True)
    class EpsilonDeltaDpEvent(dp_accounting.DpEvent):  # type: ignore[misc]  # dp_accounting is untyped
        """A release known only to be (epsilon, delta)-DP (dpkit's ``EpsilonDeltaEvent``).

        The neighbouring relation is the accountant's, as for every DpEvent. epsilon is in
        [0, inf], delta in [0, 1].
        """

        epsilon: float
        delta: float

    @attr.s(frozen=True, slots=True, auto_attribs=True)
    class GroupDpEvent(dp_accounting.DpEvent):  # type: ignore[misc]
        """Group privacy of ``event`` for groups of ``group_size`` records (dpkit's ``GroupEvent``).

        The guarantee of ``event`` for datasets that differ in ``group_size`` records, i.e.
        neighbours (under the accountant's relation) chained ``group_size`` times.
        """

        event: dp_accounting.DpEvent
        group_size: int

    classes: dict[str, type[Any]] = {"EpsilonDeltaDpEvent": EpsilonDeltaDpEvent, "GroupDpEvent": GroupDpEvent}
    for name, cls in classes.items():
        cls.__qualname__ = name  # importable (and picklable) as dpkit.accountant.interop.<name>
    return classes


def __getattr__(name: str) -> Any:
    """Create ``EpsilonDeltaDpEvent`` and ``GroupDpEvent`` on first access (PEP 562)."""
    if name in _DPKIT_DP_EVENTS:
        return _dpkit_dp_event_classes()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _short(value: object) -> str:
    text = repr(value).replace("\n", " ")
    return text if len(text) <= 80 else text[:77] + "..."


def dp_neighboring_relation(relation: Relation | str) -> dp_accounting.NeighboringRelation:
    """dp-accounting's ``NeighboringRelation`` for a dpkit relation (``"add_remove"`` / ``"replace_one"``).

    Args:
        relation: "add_remove" or "replace_one".

    Returns:
        ``ADD_OR_REMOVE_ONE`` or ``REPLACE_ONE``.

    Raises:
        ArgumentTypeError: not a string.
        ValueError: an unknown relation.
    """
    import dp_accounting

    relation = check_relation(relation)
    rel = dp_accounting.NeighboringRelation
    return rel.ADD_OR_REMOVE_ONE if relation == Relation.ADD_REMOVE else rel.REPLACE_ONE


# --------------------------------------------------------------------------------------------
# objects


def to_dp_event(event: Event) -> dp_accounting.DpEvent:
    """The dp-accounting ``DpEvent`` describing the same mechanism as ``event`` (its relation is dropped).

    Give ``event.relation`` to the dp-accounting accountant (:func:`dp_neighboring_relation`).
    A tree with one entry in ``step_counts`` is exported with a scalar ``step_counts``, as
    dp-accounting writes a single tree.

    Args:
        event: the dpkit event.

    Returns:
        The ``DpEvent``.

    Raises:
        ArgumentTypeError: ``event`` is not an Event.
    """
    if not isinstance(event, Event):
        raise ArgumentTypeError(f"event must be a dpkit event (an Event), got {_short(event)}")
    return _to_dp(event)


def _to_dp(event: Event) -> Any:
    import dp_accounting

    if isinstance(event, GaussianEvent):
        return dp_accounting.GaussianDpEvent(event.noise_multiplier)
    if isinstance(event, LaplaceEvent):
        return dp_accounting.LaplaceDpEvent(event.noise_multiplier)
    if isinstance(event, RandomizedResponseEvent):
        return dp_accounting.RandomizedResponseDpEvent(event.noise_parameter, event.num_buckets)
    if isinstance(event, EpsilonDeltaEvent):
        return _dpkit_dp_event_classes()["EpsilonDeltaDpEvent"](event.epsilon, event.delta)
    if isinstance(event, TreeAggregationEvent):
        steps = event.step_counts
        return dp_accounting.SingleEpochTreeAggregationDpEvent(
            event.noise_multiplier, steps[0] if len(steps) == 1 else list(steps)
        )
    if isinstance(event, NoOpEvent):
        return dp_accounting.NoOpDpEvent()
    if isinstance(event, NonPrivateEvent):
        return dp_accounting.NonPrivateDpEvent()
    if isinstance(event, PoissonSampledEvent):
        return dp_accounting.PoissonSampledDpEvent(event.sampling_probability, _to_dp(event.event))
    if isinstance(event, SampledWithoutReplacementEvent):
        return dp_accounting.SampledWithoutReplacementDpEvent(
            event.source_dataset_size, event.sample_size, _to_dp(event.event)
        )
    if isinstance(event, SelfComposedEvent):
        return dp_accounting.SelfComposedDpEvent(_to_dp(event.event), event.count)
    if isinstance(event, ComposedEvent):
        return dp_accounting.ComposedDpEvent([_to_dp(e) for e in event.events])
    if isinstance(event, GroupEvent):
        return _dpkit_dp_event_classes()["GroupDpEvent"](_to_dp(event.event), event.group_size)
    raise ValueError(f"event kind {type(event).__name__} has no DpEvent export")  # pragma: no cover


def from_dp_event(dp_event: dp_accounting.DpEvent, *, relation: Relation | str = "add_remove") -> Event:
    """The dpkit event for a dp-accounting ``DpEvent``, stated under ``relation`` (the accountant's).

    Every DpEvent with a dpkit counterpart is read: NoOp, NonPrivate, Gaussian, Laplace,
    RandomizedResponse, PoissonSampled, SampledWithoutReplacement, SelfComposed, Composed,
    SingleEpochTreeAggregation and dpkit's EpsilonDelta and Group events. The others
    (``UnsupportedDpEvent``, the base ``DpEvent``, DiscreteLaplace, SampledWithReplacement,
    RepeatAndSelect, MixtureOfGaussians, ZCDp, TruncatedSubsampledGaussian) raise ValueError
    naming the class; so do parameters dpkit refuses (e.g. a count of 0, an empty composition).

    Args:
        dp_event: the ``DpEvent``.
        relation: "add_remove" or "replace_one"; "add_remove" by default.

    Returns:
        The dpkit event.

    Raises:
        ArgumentTypeError: not a DpEvent (or a composition of something else).
        ValueError: a DpEvent without a dpkit counterpart, a parameter dpkit refuses, or an unknown relation.
    """
    relation = check_relation(relation)
    return _from_dp(dp_event, relation, "dp_event")


def _from_dp(d: Any, relation: Relation, path: str) -> Event:
    import dp_accounting
    from dp_accounting import dp_event as dpe

    if not isinstance(d, dp_accounting.DpEvent):
        raise ArgumentTypeError(f"{path} must be a dp_accounting DpEvent, got {_short(d)}")
    ours = _dpkit_dp_event_classes()
    cls = type(d)
    try:
        if cls is dpe.GaussianDpEvent:
            return GaussianEvent(d.noise_multiplier, relation=relation)
        if cls is dpe.LaplaceDpEvent:
            return LaplaceEvent(d.noise_multiplier, relation=relation)
        if cls is dpe.RandomizedResponseDpEvent:
            return RandomizedResponseEvent(d.noise_parameter, d.num_buckets, relation=relation)
        if cls is ours["EpsilonDeltaDpEvent"]:
            return EpsilonDeltaEvent(d.epsilon, d.delta, relation=relation)
        if cls is dpe.SingleEpochTreeAggregationDpEvent:
            return TreeAggregationEvent(d.noise_multiplier, d.step_counts, relation=relation)
        if cls is dpe.NoOpDpEvent:
            return NoOpEvent(relation=relation)
        if cls is dpe.NonPrivateDpEvent:
            return NonPrivateEvent(relation=relation)
        if cls is dpe.PoissonSampledDpEvent:
            child = _from_dp(d.event, relation, f"{path}.event")
            return PoissonSampledEvent(d.sampling_probability, child)
        if cls is dpe.SampledWithoutReplacementDpEvent:
            child = _from_dp(d.event, relation, f"{path}.event")
            return SampledWithoutReplacementEvent(d.source_dataset_size, d.sample_size, child)
        if cls is dpe.SelfComposedDpEvent:
            return SelfComposedEvent(_from_dp(d.event, relation, f"{path}.event"), d.count)
        if cls is dpe.ComposedDpEvent:
            events = d.events
            if isinstance(events, (str, bytes, Mapping)) or not isinstance(events, (list, tuple)):
                raise ArgumentTypeError(f"events must be a list of DpEvents, got {_short(events)}")
            return ComposedEvent(tuple(_from_dp(e, relation, f"{path}.events[{i}]") for i, e in enumerate(events)))
        if cls is ours["GroupDpEvent"]:
            return GroupEvent(_from_dp(d.event, relation, f"{path}.event"), d.group_size)
    except ValueError as exc:  # ArgumentTypeError included; a child's message already says where
        if str(exc).startswith(path):
            raise
        raise type(exc)(f"{path} ({cls.__name__}): {exc}") from None
    raise ValueError(f"{path}: {cls.__module__}.{cls.__name__} has no dpkit counterpart and cannot be imported")


# --------------------------------------------------------------------------------------------
# JSON


def _plain(value: Any) -> Any:
    """A named-tuple tree (``DpEvent.to_named_tuple()``) as JSON-ready dicts and lists."""
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {name: _plain(v) for name, v in zip(value._fields, value, strict=True)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def dp_event_to_json(dp_event: dp_accounting.DpEvent, *, indent: int | None = None) -> str:
    """A ``DpEvent`` as JSON: its ``to_named_tuple()`` form as nested objects (module and class names kept).

    Args:
        dp_event: the ``DpEvent``.
        indent: the JSON indent (None: one line).

    Returns:
        The JSON text.

    Raises:
        ArgumentTypeError: not a DpEvent.
    """
    import dp_accounting

    if not isinstance(dp_event, dp_accounting.DpEvent):
        raise ArgumentTypeError(f"dp_event must be a dp_accounting DpEvent, got {_short(dp_event)}")
    return json.dumps(_plain(dp_event.to_named_tuple()), indent=indent)


def _parse(text: object) -> Any:
    if not isinstance(text, str):
        raise ArgumentTypeError(f"text must be a JSON string, got {type(text).__name__}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise ValueError("not readable JSON: nested too deeply") from None
    except ValueError as exc:  # e.g. an integer literal beyond Python's digit limit
        raise ValueError(f"not readable JSON: {exc}") from None


def _dp_event_class(module_name: object, class_name: object, path: str) -> type[Any]:
    """The DpEvent class a JSON object names, checked before anything is looked up or imported."""
    if not isinstance(module_name, str) or module_name not in DP_EVENT_MODULES:
        raise ValueError(f"{path}.module_name must be one of {', '.join(DP_EVENT_MODULES)}; got {_short(module_name)}")
    if not isinstance(class_name, str) or not class_name.isidentifier() or class_name.startswith("_"):
        raise ValueError(f"{path}.class_name must be the name of a DpEvent class, got {_short(class_name)}")
    import attr
    import dp_accounting
    from dp_accounting import dp_event as dpe

    if module_name == __name__:
        cls = _dpkit_dp_event_classes().get(class_name)
    else:
        cls = getattr(dpe, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, dp_accounting.DpEvent) and attr.has(cls)):
        raise ValueError(f"{path}: {module_name} has no DpEvent class {class_name!r}")
    return cls


def _dp_event_from_plain(obj: Any, path: str) -> Any:
    import attr

    if not isinstance(obj, dict):
        raise ValueError(f"{path} must be a DpEvent object with module_name and class_name, got {_short(obj)}")
    if "module_name" not in obj or "class_name" not in obj:
        raise ValueError(f"{path} must have module_name and class_name keys, got keys {sorted(obj)}")
    cls = _dp_event_class(obj["module_name"], obj["class_name"], path)
    declared = {f.name: f for f in attr.fields(cls)}
    unknown = sorted(set(obj) - set(declared) - {"module_name", "class_name"})
    if unknown:
        raise ValueError(f"{path} ({cls.__name__}) has unknown field(s): {', '.join(unknown)}")
    missing = [n for n, f in declared.items() if n not in obj and f.default is attr.NOTHING]
    if missing:
        raise ValueError(f"{path} ({cls.__name__}) is missing field(s): {', '.join(missing)}")
    values: dict[str, Any] = {}
    for name in declared:
        if name not in obj:
            continue
        value = obj[name]
        if isinstance(value, dict):
            value = _dp_event_from_plain(value, f"{path}.{name}")
        elif isinstance(value, list):
            value = [
                _dp_event_from_plain(v, f"{path}.{name}[{i}]") if isinstance(v, dict) else v
                for i, v in enumerate(value)
            ]
        values[name] = value
    try:
        return cls(**values)
    except (TypeError, ValueError) as exc:  # pragma: no cover - attrs classes take any values
        raise ValueError(f"{path} ({cls.__name__}): {exc}") from None


def dp_event_from_json(text: str) -> dp_accounting.DpEvent:
    """Read :func:`dp_event_to_json`'s form back into a ``DpEvent`` (any class of dp-accounting's or dpkit's).

    Module names are checked against :data:`DP_EVENT_MODULES` before anything is looked up, so a
    file cannot make this import a module. Malformed input raises one ValueError line.

    Args:
        text: the JSON text.

    Returns:
        The ``DpEvent``.

    Raises:
        ArgumentTypeError: ``text`` not a string.
        ValueError: invalid JSON, a module outside :data:`DP_EVENT_MODULES`, an unknown class, unknown or
            missing fields, or a bad value.
    """
    try:
        return _dp_event_from_plain(_parse(text), "dp_event")
    except RecursionError:
        raise ValueError("not readable as a DpEvent: nested too deeply") from None


def to_dp_event_json(event: Event, *, indent: int | None = None) -> str:
    """``event`` as DpEvent JSON (:func:`to_dp_event` then :func:`dp_event_to_json`); the relation is not in it.

    Args:
        event: the dpkit event.
        indent: the JSON indent (None: one line).

    Returns:
        The JSON text.

    Raises:
        ArgumentTypeError: ``event`` is not an Event.
    """
    return dp_event_to_json(to_dp_event(event), indent=indent)


def from_dp_event_json(text: str, *, relation: Relation | str = "add_remove") -> Event:
    """The dpkit event of a DpEvent JSON (:func:`dp_event_from_json` then :func:`from_dp_event`).

    Args:
        text: the JSON text.
        relation: "add_remove" or "replace_one"; "add_remove" by default.

    Returns:
        The dpkit event.

    Raises:
        ArgumentTypeError: ``text`` not a string, or a value of the wrong type.
        ValueError: malformed input, or a DpEvent without a dpkit counterpart.
    """
    relation = check_relation(relation)
    dp_event = dp_event_from_json(text)
    try:
        return from_dp_event(dp_event, relation=relation)
    except RecursionError:
        raise ValueError("not readable as an event: nested too deeply") from None


def load_event(text: str, *, relation: Relation | str | None = None) -> Event:
    """Read an event from dpkit's own JSON (``{"kind": ...}``) or from DpEvent JSON (module_name/class_name keys).

    dpkit's JSON states its relation; a ``relation`` given as well must agree with it. A DpEvent
    states none: it is read under ``relation`` (default ``"add_remove"``). Malformed input raises
    one ValueError line (:class:`ArgumentTypeError` for a value of the wrong type).

    Args:
        text: the JSON text (dpkit's or DpEvent's).
        relation: "add_remove" or "replace_one" (None: the file's, or "add_remove" for a DpEvent).

    Returns:
        The dpkit event.

    Raises:
        ArgumentTypeError: a value of the wrong type.
        ValueError: malformed input, or a ``relation`` that disagrees with the file's.
    """
    wanted = None if relation is None else check_relation(relation)
    data = _parse(text)
    if not isinstance(data, dict):
        raise ValueError(f"an event must be a JSON object, got {_short(data)}")
    is_dpkit = "kind" in data
    is_dp_event = "module_name" in data or "class_name" in data
    if is_dpkit and is_dp_event:
        raise ValueError("an event JSON has either a 'kind' (dpkit) or module_name/class_name (DpEvent), not both")
    try:
        if is_dpkit:
            event = Event.from_dict(data)
            if wanted is not None and event.relation != wanted:
                raise ValueError(f"the event is stated under {event.relation}, but relation={wanted!r} was asked for")
            return event
        if is_dp_event:
            return from_dp_event(_dp_event_from_plain(data, "dp_event"), relation=wanted or "add_remove")
    except RecursionError:
        raise ValueError("not readable as an event: nested too deeply") from None
    raise ValueError(
        "not an event: expected dpkit's event JSON (a 'kind' key) or a DpEvent JSON (module_name, class_name)"
    )
