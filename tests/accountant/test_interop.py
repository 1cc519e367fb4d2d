"""dp-accounting interop (dpkit.accountant.interop): DpEvent and JSON round trips, malformed files."""

from __future__ import annotations

import collections
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import attr
import dp_accounting
import pytest
from dp_accounting import dp_event as dpe
from dp_accounting.pld import pld_privacy_accountant as dp_pld
from dp_accounting.rdp import rdp_privacy_accountant as dp_rdp
from event_strategies import events as event_trees
from event_strategies import every_kind
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.accountant import ArgumentTypeError, gdp_epsilon
from dpkit.accountant.events import (
    ComposedEvent,
    EpsilonDeltaEvent,
    Event,
    GaussianEvent,
    GroupEvent,
    LaplaceEvent,
    NoOpEvent,
    PoissonSampledEvent,
    RandomizedResponseEvent,
    SelfComposedEvent,
    TreeAggregationEvent,
)
from dpkit.accountant.interop import (
    DP_EVENT_MODULES,
    EpsilonDeltaDpEvent,
    GroupDpEvent,
    dp_event_from_json,
    dp_event_to_json,
    dp_neighboring_relation,
    from_dp_event,
    from_dp_event_json,
    load_event,
    to_dp_event,
    to_dp_event_json,
)

REL = dp_accounting.NeighboringRelation

# DpEvents as dp-accounting users write them (ints where floats go, scalar or list step counts)
DP_EVENTS: list[Any] = [
    dpe.NoOpDpEvent(),
    dpe.NonPrivateDpEvent(),
    dpe.GaussianDpEvent(1),
    dpe.GaussianDpEvent(math.inf),
    dpe.LaplaceDpEvent(0.5),
    dpe.RandomizedResponseDpEvent(0.2, 4),
    dpe.PoissonSampledDpEvent(256 / 60000, dpe.GaussianDpEvent(1.1)),
    dpe.SampledWithoutReplacementDpEvent(60000, 256, dpe.LaplaceDpEvent(2.0)),
    dpe.SelfComposedDpEvent(dpe.PoissonSampledDpEvent(0.01, dpe.GaussianDpEvent(1.0)), 10_000),
    dpe.ComposedDpEvent([dpe.GaussianDpEvent(1.0), dpe.LaplaceDpEvent(1.0), dpe.NoOpDpEvent()]),
    dpe.SingleEpochTreeAggregationDpEvent(1.0, 5),
    dpe.SingleEpochTreeAggregationDpEvent(1.0, [5, 10]),
    EpsilonDeltaDpEvent(1.0, 1e-5),
    GroupDpEvent(dpe.GaussianDpEvent(2.0), 3),
    # dp_event_test.py's 'complex' example, minus its SampledWithReplacement part
    dpe.ComposedDpEvent(
        [
            dpe.SingleEpochTreeAggregationDpEvent(1.0, 5),
            dpe.PoissonSampledDpEvent(0.1, dpe.LaplaceDpEvent(1.0)),
            dpe.SelfComposedDpEvent(dpe.SampledWithoutReplacementDpEvent(1000, 10, dpe.GaussianDpEvent(1.0)), 50),
        ]
    ),
]

# DpEvents with no dpkit counterpart
UNMAPPED: list[Any] = [
    dpe.DpEvent(),
    dpe.UnsupportedDpEvent(),
    dpe.DiscreteLaplaceDpEvent(0.5, 1),
    dpe.SampledWithReplacementDpEvent(1000, 10, dpe.GaussianDpEvent(1.0)),
    dpe.RepeatAndSelectDpEvent(dpe.GaussianDpEvent(1.0), 30.0, 1.0),
    dpe.MixtureOfGaussiansDpEvent(1.0, [0, 1, 2], [0.25, 0.5, 0.25]),
    dpe.ZCDpEvent(1.0, 2.0),
    dpe.TruncatedSubsampledGaussianDpEvent(10000, 0.1, 1000, 1.0),
]


def _named_tuples(obj: Any) -> Any:
    """Our JSON objects as named tuples, for dp-accounting's own ``DpEvent.from_named_tuple``."""
    if isinstance(obj, dict):
        cls = collections.namedtuple("_Event", list(obj))  # type: ignore[misc]
        return cls(**{k: _named_tuples(v) for k, v in obj.items()})
    if isinstance(obj, list):
        return [_named_tuples(v) for v in obj]
    return obj


def _dp_accounting_json(dp_event: Any) -> str:
    """JSON as a dp-accounting user writes it from dp-accounting's own objects (not through dpkit)."""

    def plain(value: Any) -> Any:
        if isinstance(value, dpe.DpEventNamedTuple):
            return {k: plain(v) for k, v in value._asdict().items()}
        if isinstance(value, list):
            return [plain(v) for v in value]
        return value

    return json.dumps(plain(dp_event.to_named_tuple()))


# --------------------------------------------------------------------------------------------
# objects


@settings(max_examples=examples(200))
@given(event_trees())
def test_round_trip_through_dp_event(event: Event) -> None:
    d = to_dp_event(event)
    assert isinstance(d, dp_accounting.DpEvent)
    assert from_dp_event(d, relation=event.relation) == event
    assert to_dp_event(from_dp_event(d, relation=event.relation)) == d


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
def test_every_kind_round_trips(relation: str) -> None:
    for event in every_kind(relation):
        d = to_dp_event(event)
        assert from_dp_event(d, relation=relation) == event
        assert from_dp_event_json(to_dp_event_json(event), relation=relation) == event
        assert load_event(to_dp_event_json(event), relation=relation) == event
        assert load_event(json.dumps(event.to_dict())) == event


@pytest.mark.parametrize("d", DP_EVENTS, ids=lambda d: type(d).__name__)
def test_dp_events_round_trip(d: Any) -> None:
    for relation in ("add_remove", "replace_one"):
        event = from_dp_event(d, relation=relation)
        assert event.relation == relation
        assert to_dp_event(event) == d
        assert from_dp_event_json(dp_event_to_json(d), relation=relation) == event
    assert dp_event_from_json(dp_event_to_json(d)) == d
    assert dp_event_from_json(_dp_accounting_json(d)) == d


def test_the_one_normalisation_a_single_tree_as_a_scalar() -> None:
    d = dpe.SingleEpochTreeAggregationDpEvent(1.0, [5])
    event = from_dp_event(d)
    assert event == TreeAggregationEvent(1.0, (5,))
    assert to_dp_event(event) == dpe.SingleEpochTreeAggregationDpEvent(1.0, 5)


def test_exports_are_dp_accountings_own_classes() -> None:
    g = GaussianEvent.from_sigma(2.0, sensitivity=1.0, relation="replace_one")
    assert to_dp_event(g) == dpe.GaussianDpEvent(4.0)
    assert type(to_dp_event(ComposedEvent((g, g))).events) is list  # as ComposedDpEvent is written
    assert to_dp_event(SelfComposedEvent(PoissonSampledEvent(0.5, GaussianEvent(1.0)), 3)) == dpe.SelfComposedDpEvent(
        dpe.PoissonSampledDpEvent(0.5, dpe.GaussianDpEvent(1.0)), 3
    )
    assert to_dp_event(RandomizedResponseEvent(0.25, 3)) == dpe.RandomizedResponseDpEvent(0.25, 3)


@pytest.mark.parametrize("d", UNMAPPED, ids=lambda d: type(d).__name__)
def test_dp_events_without_counterpart_are_refused_by_name(d: Any) -> None:
    name = type(d).__name__
    with pytest.raises(ValueError, match=name):
        from_dp_event(d)
    with pytest.raises(ValueError, match=rf"dp_event\.events\[1\].*{name}"):
        from_dp_event(dpe.ComposedDpEvent([dpe.GaussianDpEvent(1.0), d]))
    text = dp_event_to_json(d)  # still a DpEvent: JSON in and out
    assert dp_event_from_json(text) == d
    with pytest.raises(ValueError, match=name):
        load_event(text)


def test_bad_parameters_in_a_dp_event_name_the_place() -> None:
    with pytest.raises(ValueError, match=r"dp_event \(SelfComposedDpEvent\).*count"):
        from_dp_event(dpe.SelfComposedDpEvent(dpe.GaussianDpEvent(1.0), 0))
    with pytest.raises(ValueError, match=r"dp_event\.event \(GaussianDpEvent\).*noise_multiplier"):
        from_dp_event(dpe.PoissonSampledDpEvent(0.5, dpe.GaussianDpEvent(-1.0)))
    with pytest.raises(ValueError, match="events must not be empty"):
        from_dp_event(dpe.ComposedDpEvent([]))
    with pytest.raises(ArgumentTypeError, match="dp_event"):
        from_dp_event(GaussianEvent(1.0))  # type: ignore[arg-type]
    with pytest.raises(ArgumentTypeError, match="event"):
        to_dp_event(dpe.GaussianDpEvent(1.0))
    with pytest.raises(ValueError, match="relation"):
        from_dp_event(dpe.GaussianDpEvent(1.0), relation="replace_special")


def test_dpkit_dp_event_classes() -> None:
    for cls in (EpsilonDeltaDpEvent, GroupDpEvent):
        assert issubclass(cls, dp_accounting.DpEvent) and attr.has(cls)
        assert cls.__module__ == "dpkit.accountant.interop" and cls.__module__ in DP_EVENT_MODULES
    e = EpsilonDeltaDpEvent(1.0, 1e-5)
    with pytest.raises(attr.exceptions.FrozenInstanceError):
        e.epsilon = 2.0
    assert hash(e) == hash(EpsilonDeltaDpEvent(1.0, 1e-5))
    # dp-accounting's own named-tuple round trip rebuilds them (it imports this module by name)
    nested = GroupDpEvent(dpe.SelfComposedDpEvent(e, 3), 2)
    assert dp_accounting.DpEvent.from_named_tuple(nested.to_named_tuple()) == nested
    # dp-accounting's accountants do not know them, and say so
    for accountant in (dp_pld.PLDAccountant(), dp_rdp.RdpAccountant()):
        assert not accountant.supports(e)
        assert not accountant.supports(nested)
        assert accountant.supports(to_dp_event(GaussianEvent(1.0)))


def test_dp_neighboring_relation() -> None:
    assert dp_neighboring_relation("add_remove") is REL.ADD_OR_REMOVE_ONE
    assert dp_neighboring_relation("replace-one") is REL.REPLACE_ONE
    with pytest.raises(ValueError, match="relation"):
        dp_neighboring_relation("zero_out")


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
def test_an_event_and_its_dp_event_mean_the_same_mechanism(relation: str) -> None:
    """dp-accounting's PLD under the event's relation agrees with the closed forms the events carry."""
    rel = dp_neighboring_relation(relation)

    def pld_epsilon(event: Event, delta: float) -> float:
        acc = dp_pld.PLDAccountant(rel, value_discretization_interval=1e-4)
        acc.compose(to_dp_event(event))
        return float(acc.get_epsilon(delta))

    g = GaussianEvent.from_sigma(2.0, sensitivity=1.5, relation=relation)  # μ = 0.75 under either relation
    exact = gdp_epsilon(g.mu, 1e-5)
    assert g.mu == pytest.approx(0.75, rel=1e-15)
    assert exact <= pld_epsilon(g, 1e-5) <= exact * 1.01
    # pure mechanisms: dp-accounting's (truncated, pessimistic) PLD is not pure, so read it at a tiny δ;
    # it reads Laplace under add-remove only and randomized response under replace-one only
    if relation == "add_remove":
        lap = LaplaceEvent(4.0, relation=relation)
        assert pld_epsilon(lap, 1e-10) == pytest.approx(lap.epsilon, rel=1e-3)
    else:
        rr = RandomizedResponseEvent(0.3, 3)
        assert pld_epsilon(rr, 1e-10) == pytest.approx(rr.epsilon, rel=1e-3)


# --------------------------------------------------------------------------------------------
# JSON


@settings(max_examples=examples(150))
@given(event_trees())
def test_round_trip_through_json(event: Event) -> None:
    text = to_dp_event_json(event)
    assert from_dp_event_json(text, relation=event.relation) == event
    assert load_event(text, relation=event.relation) == event
    assert load_event(json.dumps(event.to_dict())) == event
    assert load_event(json.dumps(event.to_dict()), relation=event.relation) == event
    # the JSON is the DpEvent's to_named_tuple() form: dp-accounting itself rebuilds it
    assert dp_accounting.DpEvent.from_named_tuple(_named_tuples(json.loads(text))) == to_dp_event(event)


def test_json_form() -> None:
    event = SelfComposedEvent(PoissonSampledEvent(0.004, GaussianEvent(1.1)), 14062)
    assert json.loads(to_dp_event_json(event)) == {
        "module_name": "dp_accounting.dp_event",
        "class_name": "SelfComposedDpEvent",
        "event": {
            "module_name": "dp_accounting.dp_event",
            "class_name": "PoissonSampledDpEvent",
            "sampling_probability": 0.004,
            "event": {
                "module_name": "dp_accounting.dp_event",
                "class_name": "GaussianDpEvent",
                "noise_multiplier": 1.1,
            },
        },
        "count": 14062,
    }
    assert json.loads(to_dp_event_json(EpsilonDeltaEvent(1.0, 0.0))) == {
        "module_name": "dpkit.accountant.interop",
        "class_name": "EpsilonDeltaDpEvent",
        "epsilon": 1.0,
        "delta": 0.0,
    }
    assert "\n" in to_dp_event_json(event, indent=2)


def test_json_written_by_dp_accounting_is_read() -> None:
    # MNIST DP-SGD (tensorflow-privacy's example): q = 256/60000, σ = 1.1, 60 epochs, built by
    # dp-accounting's own DpEventBuilder and serialised from its own named tuples
    steps = 60 * 60000 // 256
    builder = dp_accounting.DpEventBuilder()
    builder.compose(dpe.PoissonSampledDpEvent(256 / 60000, dpe.GaussianDpEvent(1.1)), steps)
    text = _dp_accounting_json(builder.build())
    expected = SelfComposedEvent(PoissonSampledEvent(256 / 60000, GaussianEvent(1.1)), steps)
    assert load_event(text) == expected
    assert load_event(text, relation="replace_one") == SelfComposedEvent(
        PoissonSampledEvent(256 / 60000, GaussianEvent(1.1, relation="replace_one")), steps
    )
    # the package name (which re-exports the events) is accepted as the module too
    assert load_event(text.replace('"dp_accounting.dp_event"', '"dp_accounting"')) == expected


def test_relation_of_dpkit_json_must_agree() -> None:
    text = json.dumps(RandomizedResponseEvent(0.5).to_dict())
    assert load_event(text).relation == "replace_one"
    assert load_event(text, relation="replace-one") == RandomizedResponseEvent(0.5)
    with pytest.raises(ValueError, match="stated under replace_one"):
        load_event(text, relation="add_remove")
    with pytest.raises(ValueError, match="relation"):
        load_event(text, relation="sideways")


MALFORMED: list[tuple[str, str, str]] = [
    ("bad json", '{"kind": "gaussian", ', "not valid JSON"),
    ("not an object", "[1, 2, 3]", "must be a JSON object"),
    ("neither", '{"noise_multiplier": 1.0}', "not an event"),
    ("both", '{"kind": "no_op", "module_name": "dp_accounting.dp_event", "class_name": "NoOpDpEvent"}', "not both"),
    ("unknown class", '{"module_name": "dp_accounting.dp_event", "class_name": "FooDpEvent"}', "FooDpEvent"),
    ("not a DpEvent", '{"module_name": "dp_accounting.dp_event", "class_name": "Mapping"}', "no DpEvent class"),
    ("private name", '{"module_name": "dp_accounting.dp_event", "class_name": "__class__"}', "class_name"),
    ("class not str", '{"module_name": "dp_accounting.dp_event", "class_name": 3}', "class_name"),
    ("outside", '{"module_name": "os", "class_name": "system"}', "module_name must be one of"),
    ("other dp module", '{"module_name": "dp_accounting.rdp", "class_name": "RdpAccountant"}', "module_name"),
    ("dpkit elsewhere", '{"module_name": "dpkit.accountant.ledger", "class_name": "Ledger"}', "module_name"),
    ("no class", '{"module_name": "dp_accounting.dp_event"}', "module_name and class_name"),
    (
        "missing field",
        '{"module_name": "dp_accounting.dp_event", "class_name": "GaussianDpEvent"}',
        "missing field(s): noise_multiplier",
    ),
    (
        "unknown field",
        '{"module_name": "dp_accounting.dp_event", "class_name": "GaussianDpEvent", "noise_multiplier": 1, "c": 2}',
        "unknown field(s): c",
    ),
    (
        "bad value",
        '{"module_name": "dp_accounting.dp_event", "class_name": "GaussianDpEvent", "noise_multiplier": "x"}',
        "noise_multiplier",
    ),
    (
        "NaN",
        '{"module_name": "dp_accounting.dp_event", "class_name": "GaussianDpEvent", "noise_multiplier": NaN}',
        "noise_multiplier",
    ),
    (
        "nested bad",
        '{"module_name": "dp_accounting.dp_event", "class_name": "PoissonSampledDpEvent", "sampling_probability": 0.1,'
        ' "event": {"module_name": "dp_accounting.dp_event", "class_name": "GausianDpEvent", "noise_multiplier": 1}}',
        "dp_event.event",
    ),
    (
        "child not an event",
        '{"module_name": "dp_accounting.dp_event", "class_name": "SelfComposedDpEvent", "event": 3, "count": 2}',
        "dp_event.event",
    ),
    ("kind bad", '{"kind": "gaussian", "noise_multiplier": -2}', "noise_multiplier"),
    ("deep json", "[" * 200_000 + "]" * 200_000, "nested too deeply"),
    ("deep event", '{"kind": "self_composed", "count": 2, "event": ' * 5000 + '{"kind": "no_op"}' + "}" * 5000, "deep"),
]


@pytest.mark.parametrize(("text", "words"), [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_malformed_input_gives_one_clear_value_error(text: str, words: str) -> None:
    with pytest.raises(ValueError) as info:
        load_event(text)
    message = str(info.value)
    assert words in message and "\n" not in message and len(message) < 300
    assert not isinstance(info.value, RecursionError)


KEYS = ["kind", "module_name", "class_name", "event", "events", "count", "noise_multiplier", "step_counts", "relation"]
VALUES = [
    "gaussian", "composed", "self_composed", "tree_aggregation", "dp_accounting.dp_event", "dpkit.accountant.interop",
    "GaussianDpEvent", "ComposedDpEvent", "SelfComposedDpEvent", "GroupDpEvent", "replace_one", "os",
]  # fmt: skip
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.sampled_from(VALUES), st.text(max_size=5)),
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=3), children, max_size=5),
    ),
    max_leaves=12,
)


@settings(max_examples=examples(150))
@given(json_values)
def test_any_json_gives_an_event_or_one_value_error(data: Any) -> None:
    for text in (json.dumps(data), "9" * 5000):
        try:
            event = load_event(text)
        except ValueError as exc:  # ArgumentTypeError included; nothing else may escape
            assert "\n" not in str(exc)
        else:
            assert isinstance(event, Event)


def test_deep_dp_event_json_is_refused_cleanly() -> None:
    deep = '{"module_name": "dp_accounting.dp_event", "class_name": "SelfComposedDpEvent", "count": 2, "event": '
    text = deep * 5000 + '{"module_name": "dp_accounting.dp_event", "class_name": "NoOpDpEvent"}' + "}" * 5000
    with pytest.raises(ValueError, match="nested too deeply"):
        dp_event_from_json(text)
    with pytest.raises(ValueError, match="nested too deeply"):
        from_dp_event_json(text)


def test_a_module_named_in_the_file_is_never_imported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "dpkit_trap_module.py").write_text("raise SystemExit('imported!')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    text = json.dumps({"module_name": "dpkit_trap_module", "class_name": "GaussianDpEvent", "noise_multiplier": 1.0})
    for read in (load_event, dp_event_from_json, from_dp_event_json):
        with pytest.raises(ValueError, match="dpkit_trap_module"):
            read(text)
    assert "dpkit_trap_module" not in sys.modules


def test_wrong_argument_types() -> None:
    for read in (load_event, dp_event_from_json, from_dp_event_json):
        with pytest.raises(ArgumentTypeError, match="text"):
            read(b"{}")  # type: ignore[arg-type]
    with pytest.raises(ArgumentTypeError, match="dp_event"):
        dp_event_to_json(GaussianEvent(1.0))  # type: ignore[arg-type]


def test_importing_the_modules_stays_light() -> None:
    code = (
        "import sys, dpkit.accountant.events, dpkit.accountant.interop\n"
        "assert 'dp_accounting' not in sys.modules, 'dp_accounting imported'\n"
        "from dpkit.accountant.interop import GroupDpEvent\n"
        "assert 'dp_accounting' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_edge_values_survive_json() -> None:
    for event in (
        GaussianEvent(math.inf),
        GaussianEvent(0.0),
        GaussianEvent(5e-324),
        LaplaceEvent(1e308),
        EpsilonDeltaEvent(math.inf, 1.0),
        PoissonSampledEvent(0.0, NoOpEvent()),
        PoissonSampledEvent(1.0, GaussianEvent(1.0)),
        SelfComposedEvent(GaussianEvent(1.0), 10**30),
        GroupEvent(TreeAggregationEvent(1.0, (2**60, 1)), 10**20),
    ):
        assert from_dp_event_json(to_dp_event_json(event), relation=event.relation) == event
        assert load_event(json.dumps(event.to_dict())) == event
