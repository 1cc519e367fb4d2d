"""Events as data (dpkit.accountant.events): validation, JSON form, walk, ledgers, describe."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from collections import Counter
from collections.abc import Callable
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from event_strategies import events as event_trees
from event_strategies import every_kind
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.accountant import ArgumentTypeError, GaussianRelease, Ledger
from dpkit.accountant.events import (
    EVENT_KINDS,
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
    describe,
    walk,
)
from dpkit.accountant.ledger import event_from_ledger

G = GaussianEvent(1.0)

# --------------------------------------------------------------------------------------------
# validation: every bad value is refused with a message naming the field and the value

BAD: list[tuple[str, Callable[[], object], type[Exception], str]] = [
    ("nm<0", lambda: GaussianEvent(-1.0), ValueError, "noise_multiplier"),
    ("nm nan", lambda: GaussianEvent(math.nan), ValueError, "noise_multiplier"),
    ("nm str", lambda: GaussianEvent("1"), ArgumentTypeError, "noise_multiplier"),  # type: ignore[arg-type]
    ("nm bool", lambda: GaussianEvent(True), ArgumentTypeError, "noise_multiplier"),
    ("nm -inf", lambda: LaplaceEvent(-math.inf), ValueError, "noise_multiplier"),
    ("relation", lambda: GaussianEvent(1.0, relation="swap"), ValueError, "relation"),
    ("relation type", lambda: LaplaceEvent(1.0, relation=None), ArgumentTypeError, "relation"),  # type: ignore[arg-type]
    ("rr p>1", lambda: RandomizedResponseEvent(1.5), ValueError, "noise_parameter"),
    ("rr p nan", lambda: RandomizedResponseEvent(math.nan), ValueError, "noise_parameter"),
    ("rr k=0", lambda: RandomizedResponseEvent(0.5, 0), ValueError, "num_buckets"),
    ("rr k frac", lambda: RandomizedResponseEvent(0.5, 2.5), ValueError, "num_buckets"),  # type: ignore[arg-type]
    ("rr k bool", lambda: RandomizedResponseEvent(0.5, True), ArgumentTypeError, "num_buckets"),
    ("eps<0", lambda: EpsilonDeltaEvent(-1.0, 0.0), ValueError, "epsilon"),
    ("eps nan", lambda: EpsilonDeltaEvent(math.nan, 0.0), ValueError, "epsilon"),
    ("delta>1", lambda: EpsilonDeltaEvent(1.0, 1.5), ValueError, "delta"),
    ("delta inf", lambda: EpsilonDeltaEvent(1.0, math.inf), ValueError, "delta"),
    ("q>1", lambda: PoissonSampledEvent(1.1, G), ValueError, "sampling_probability"),
    ("q<0", lambda: PoissonSampledEvent(-0.1, G), ValueError, "sampling_probability"),
    ("q child", lambda: PoissonSampledEvent(0.5, "gaussian"), ArgumentTypeError, "event"),  # type: ignore[arg-type]
    ("wor b>n", lambda: SampledWithoutReplacementEvent(10, 11, G), ValueError, "sample_size"),
    ("wor n=0", lambda: SampledWithoutReplacementEvent(0, 0, G), ValueError, "source_dataset_size"),
    ("wor b=0", lambda: SampledWithoutReplacementEvent(10, 0, G), ValueError, "sample_size"),
    ("count=0", lambda: SelfComposedEvent(G, 0), ValueError, "count"),
    ("count bool", lambda: SelfComposedEvent(G, True), ArgumentTypeError, "count"),
    ("count frac", lambda: SelfComposedEvent(G, 2.5), ValueError, "count"),  # type: ignore[arg-type]
    ("count inf", lambda: SelfComposedEvent(G, math.inf), ValueError, "count"),  # type: ignore[arg-type]
    ("composed empty", lambda: ComposedEvent(()), ValueError, "events"),
    ("composed item", lambda: ComposedEvent((G, "x")), ArgumentTypeError, "events[1]"),  # type: ignore[arg-type]
    ("composed bare", lambda: ComposedEvent(G), ArgumentTypeError, "events"),  # type: ignore[arg-type]
    ("composed mix", lambda: ComposedEvent((G, RandomizedResponseEvent(0.5))), ValueError, "relation"),
    ("tree empty", lambda: TreeAggregationEvent(1.0, ()), ValueError, "step_counts"),
    ("tree zero", lambda: TreeAggregationEvent(1.0, (3, 0)), ValueError, "step_counts[1]"),
    ("tree str", lambda: TreeAggregationEvent(1.0, "12"), ArgumentTypeError, "step_counts"),  # type: ignore[arg-type]
    ("tree nm", lambda: TreeAggregationEvent(-1.0, (1,)), ValueError, "noise_multiplier"),
    ("group=0", lambda: GroupEvent(G, 0), ValueError, "group_size"),
    ("sigma<0", lambda: GaussianEvent.from_sigma(-1.0, sensitivity=1.0, relation="add_remove"), ValueError, "sigma"),
    (
        "sens=0",
        lambda: GaussianEvent.from_sigma(1.0, sensitivity=0.0, relation="add_remove"),
        ValueError,
        "sensitivity",
    ),
    (
        "sens inf",
        lambda: GaussianEvent.from_sigma(1.0, sensitivity=math.inf, relation="add_remove"),
        ValueError,
        "sensitivity",
    ),
    ("from_eps<0", lambda: RandomizedResponseEvent.from_epsilon(-1.0), ValueError, "epsilon"),
    ("from_eps k=1", lambda: RandomizedResponseEvent.from_epsilon(1.0, num_buckets=1), ValueError, "num_buckets"),
]


@pytest.mark.parametrize(("make", "exc", "name"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_values_are_refused_naming_the_field(make: Callable[[], object], exc: type[Exception], name: str) -> None:
    with pytest.raises(exc) as info:
        make()
    assert isinstance(info.value, ValueError)  # ArgumentTypeError is also a ValueError
    assert name in str(info.value)
    assert "\n" not in str(info.value)


def test_edge_values_are_accepted_and_normalised() -> None:
    assert GaussianEvent(0.0).mu == math.inf  # not private
    assert GaussianEvent(math.inf).mu == 0.0  # releases nothing
    assert GaussianEvent(1e308).mu > 0.0
    assert GaussianEvent(5e-324).mu == math.inf
    assert PoissonSampledEvent(0.0, G).sampling_probability == 0.0
    assert PoissonSampledEvent(1, G).sampling_probability == 1.0
    assert EpsilonDeltaEvent(math.inf, 0.0).epsilon == math.inf
    assert EpsilonDeltaEvent(0, 1).delta == 1.0
    assert SelfComposedEvent(G, 10**30).count == 10**30
    assert SampledWithoutReplacementEvent(10**20, 10**20, G).sample_size == 10**20
    # integral floats are counts; numpy scalars become Python numbers; -0.0 is read as 0.0
    e = SelfComposedEvent(G, 3.0)  # type: ignore[arg-type]
    assert e.count == 3 and type(e.count) is int
    n = GaussianEvent(np.float64(1.5))  # type: ignore[arg-type]
    assert type(n.noise_multiplier) is float and n == GaussianEvent(1.5)
    assert math.copysign(1.0, GaussianEvent(-0.0).noise_multiplier) == 1.0
    assert TreeAggregationEvent(1.0, 5).step_counts == (5,)  # type: ignore[arg-type]
    assert TreeAggregationEvent(1.0, [5, 10]).step_counts == (5, 10)  # type: ignore[arg-type]
    assert ComposedEvent([G, G]) == ComposedEvent((G, G))  # type: ignore[arg-type]


def test_events_are_frozen_hashable_and_compared_by_kind_and_value() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        G.noise_multiplier = 2.0  # type: ignore[misc]
    assert GaussianEvent(1) == GaussianEvent(1.0) and hash(GaussianEvent(1)) == hash(GaussianEvent(1.0))
    assert GaussianEvent(1.0) != LaplaceEvent(1.0)  # same fields, another mechanism
    assert GaussianEvent(1.0) != GaussianEvent(1.0, relation="replace_one")
    assert len({*every_kind(), *every_kind()}) == len(every_kind())


def test_relations_of_leaves_and_composites() -> None:
    assert G.relation == "add_remove"
    assert RandomizedResponseEvent(0.5).relation == "replace_one"  # its natural relation
    assert GaussianEvent(1.0, relation="replace-one").relation == "replace_one"  # CLI spelling
    for relation in ("add_remove", "replace_one"):
        for e in every_kind(relation):
            assert e.relation == relation
    r = LaplaceEvent(1.0, relation="replace_one")
    assert SelfComposedEvent(PoissonSampledEvent(0.1, r), 3).relation == "replace_one"
    with pytest.raises(ValueError, match=r"events\[0\] is add_remove, events\[1\] is replace_one"):
        ComposedEvent((LaplaceEvent(1.0), r))


# --------------------------------------------------------------------------------------------
# the closed forms the events carry


@pytest.mark.parametrize("nm", [0.3, 1.0, 1.1, 7.0, 1e-300, 1e300])
def test_gaussian_mu_is_the_exact_ratio_rounded_up(nm: float) -> None:
    for relation, numerator in (("add_remove", 1), ("replace_one", 2)):
        mu = GaussianEvent(nm, relation=relation).mu
        exact = Fraction(numerator) / Fraction(nm)
        assert Fraction(mu) >= exact
        assert mu <= float(exact) * (1 + 1e-15)


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
@pytest.mark.parametrize(("sigma", "sens"), [(1.0, 1.0), (1.1, 3.0), (0.1, 2.0), (1e300, 1e-300), (3.0, 1e-300)])
def test_from_sigma_gives_mu_sensitivity_over_sigma(sigma: float, sens: float, relation: str) -> None:
    e = GaussianEvent.from_sigma(sigma, sensitivity=sens, relation=relation)
    assert e.relation == relation and math.isfinite(e.noise_multiplier)  # an overflow is capped, not +inf
    exact = Fraction(sens) / Fraction(sigma)
    assert Fraction(e.mu) >= exact  # never less privacy loss than the truth
    assert e.mu <= float(exact) * (1 + 1e-14) or e.noise_multiplier == np.finfo(float).max
    # dp-accounting's reading: nm = σ/C with C = Δ (add/remove) or Δ/2 (replace-one)
    factor = 1.0 if relation == "add_remove" else 2.0
    assert e.noise_multiplier == pytest.approx(factor * sigma / sens, rel=1e-15) or sigma / sens > 1e300
    assert GaussianEvent.from_sigma(math.inf, sensitivity=sens, relation=relation).mu == 0.0
    assert GaussianEvent.from_sigma(0.0, sensitivity=sens, relation=relation).mu == math.inf


def test_laplace_epsilon() -> None:
    assert LaplaceEvent(2.0).epsilon == pytest.approx(0.5, rel=1e-15) and LaplaceEvent(2.0).epsilon >= 0.5
    assert LaplaceEvent(2.0, relation="replace_one").epsilon >= 1.0
    assert LaplaceEvent(0.0).epsilon == math.inf and LaplaceEvent(math.inf).epsilon == 0.0
    assert Fraction(LaplaceEvent(3.0).epsilon) >= Fraction(1, 3)


def _rr_epsilon_brute(p: float, k: int) -> mpmath.mpf:
    """max over inputs x ≠ x' and outputs y of log P(y | x)/P(y | x'), from the output distribution."""
    with mpmath.workdps(50):
        p_ = mpmath.mpf(p)
        if k == 1:
            return mpmath.mpf(0)

        def prob(y: int, x: int) -> mpmath.mpf:
            return (1 - p_) * (y == x) + p_ / k

        worst = mpmath.mpf(0)
        for x, x2, y in itertools.product(range(k), range(k), range(k)):
            if x != x2:
                if prob(y, x2) == 0:
                    return mpmath.inf
                worst = max(worst, mpmath.log(prob(y, x) / prob(y, x2)))
        return worst


@pytest.mark.parametrize(("p", "k"), [(0.5, 2), (0.1, 2), (0.9, 5), (1e-6, 3), (0.25, 7), (1.0, 4), (0.0, 2), (0.3, 1)])
def test_randomized_response_epsilon_matches_a_brute_force(p: float, k: int) -> None:
    eps = RandomizedResponseEvent(p, k).epsilon
    truth = _rr_epsilon_brute(p, k)
    if truth == mpmath.inf:
        assert eps == math.inf
        return
    assert mpmath.mpf(eps) >= truth
    assert eps <= float(truth) * (1 + 1e-14) + 1e-300


@pytest.mark.parametrize("k", [2, 3, 10])
@pytest.mark.parametrize("eps", [0.0, 1e-8, 0.5, 1.0, 3.0, 8.0, 30.0])
def test_randomized_response_from_epsilon_is_sound_and_tight(eps: float, k: int) -> None:
    e = RandomizedResponseEvent.from_epsilon(eps, num_buckets=k)
    truth = _rr_epsilon_brute(e.noise_parameter, k)
    assert truth <= eps  # the mechanism really is ε-DP
    # and not noisier than needed, up to p's representation: p moves by ulps of size <= 2^-52,
    # and dε/dp = -k/p² (which dominates for small ε, where p is close to 1)
    p = e.noise_parameter
    assert truth >= eps * (1 - 1e-12) - 8 * k * 2.0**-52 / max(p, 1e-300) ** 2
    assert e.epsilon >= truth
    assert RandomizedResponseEvent.from_epsilon(math.inf, num_buckets=k).noise_parameter == 0.0


# --------------------------------------------------------------------------------------------
# dpkit's JSON form


@settings(max_examples=examples(150))
@given(event_trees())
def test_to_dict_from_dict_round_trip(event: Event) -> None:
    assert Event.from_dict(event.to_dict()) == event
    text = json.dumps(event.to_dict())  # ±inf as Infinity, which Python's json reads back
    back = Event.from_dict(json.loads(text))
    assert back == event and hash(back) == hash(event)


def test_to_dict_form() -> None:
    e = SelfComposedEvent(PoissonSampledEvent(0.004, GaussianEvent(1.1)), 14062)
    assert e.to_dict() == {
        "kind": "self_composed",
        "event": {
            "kind": "poisson_sampled",
            "sampling_probability": 0.004,
            "event": {"kind": "gaussian", "noise_multiplier": 1.1, "relation": "add_remove"},
        },
        "count": 14062,
    }
    assert TreeAggregationEvent(1.0, (2, 3)).to_dict()["step_counts"] == [2, 3]
    assert {e.kind for e in every_kind()} == {c.kind for c in EVENT_KINDS.values() if c.__module__ == Event.__module__}
    for event in every_kind("replace_one"):
        assert Event.from_dict(event.to_dict()) == event
    # optional fields take their defaults
    assert Event.from_dict({"kind": "randomized_response", "noise_parameter": 0.5}) == RandomizedResponseEvent(0.5)


@pytest.mark.parametrize(
    ("data", "exc", "words"),
    [
        ({"kind": "gausian", "noise_multiplier": 1.0}, ValueError, ["event.kind", "gausian"]),
        ({"noise_multiplier": 1.0}, ValueError, ["no 'kind'"]),
        ({"kind": 3}, ValueError, ["event.kind"]),
        ({"kind": "gaussian"}, ValueError, ["missing", "noise_multiplier"]),
        ({"kind": "gaussian", "noise_multiplier": 1.0, "sigma": 2}, ValueError, ["unknown", "sigma"]),
        ({"kind": "gaussian", "noise_multiplier": -1.0}, ValueError, ["noise_multiplier", "-1.0"]),
        ({"kind": "gaussian", "noise_multiplier": "1"}, ArgumentTypeError, ["noise_multiplier"]),
        (
            {"kind": "composed", "events": [{"kind": "gaussian", "noise_multiplier": 1.0}, {"kind": "laplace"}]},
            ValueError,
            ["event.events[1]", "missing", "noise_multiplier"],
        ),
        ({"kind": "composed", "events": {"kind": "no_op"}}, ArgumentTypeError, ["event.events", "list"]),
        ({"kind": "self_composed", "event": [], "count": 2}, ArgumentTypeError, ["event.event"]),
        (
            {"kind": "self_composed", "event": {"kind": "no_op"}, "count": 0},
            ValueError,
            ["self_composed", "count", "0"],
        ),
        ([1, 2], ArgumentTypeError, ["event must be an object"]),
    ],
)
def test_from_dict_errors_name_the_place(data: object, exc: type[Exception], words: list[str]) -> None:
    with pytest.raises(exc) as info:
        Event.from_dict(data)  # type: ignore[arg-type]
    for word in words:
        assert word in str(info.value)
    assert "\n" not in str(info.value)


# --------------------------------------------------------------------------------------------
# walk


def _leaf_total(event: Event) -> int:
    """Σ of multiplicities over the leaves, computed recursively (the number of leaf releases)."""
    if isinstance(event, SelfComposedEvent):
        return event.count * _leaf_total(event.event)
    if isinstance(event, ComposedEvent):
        return sum(_leaf_total(e) for e in event.events)
    return 1


def test_walk_flattens_compositions_in_order() -> None:
    a, b, c = GaussianEvent(1.0), LaplaceEvent(2.0), PoissonSampledEvent(0.1, GaussianEvent(3.0))
    tree = ComposedEvent((SelfComposedEvent(ComposedEvent((a, SelfComposedEvent(b, 3))), 5), c, a))
    assert list(walk(tree)) == [(a, 5), (b, 15), (c, 1), (a, 1)]
    assert list(walk(c)) == [(c, 1)]  # a sampled event is a leaf of the walk
    # a brute force: expand every self-composition into copies and count the leaves
    brute: Counter[Event] = Counter()

    def expand(e: Event) -> None:
        if isinstance(e, SelfComposedEvent):
            for _ in range(e.count):
                expand(e.event)
        elif isinstance(e, ComposedEvent):
            for child in e.events:
                expand(child)
        else:
            brute[e] += 1

    expand(tree)
    walked: Counter[Event] = Counter()
    for leaf, mult in walk(tree):
        walked[leaf] += mult
    assert walked == brute
    with pytest.raises(ArgumentTypeError, match="event"):
        walk("gaussian")  # type: ignore[arg-type]


@settings(max_examples=examples(100))
@given(event_trees())
def test_walk_yields_no_compositions_and_the_right_total(event: Event) -> None:
    pairs = list(walk(event))
    assert pairs
    assert all(not isinstance(leaf, (ComposedEvent, SelfComposedEvent)) and m >= 1 for leaf, m in pairs)
    assert sum(m for _, m in pairs) == _leaf_total(event)


def test_walk_of_a_deep_tree_does_not_recurse() -> None:
    e: Event = G
    for _ in range(5000):
        e = SelfComposedEvent(e, 2)
    ((leaf, mult),) = walk(e)
    assert leaf == G and mult == 2**5000


# --------------------------------------------------------------------------------------------
# ledgers


positive = st.floats(min_value=1e-6, max_value=1e6)


@settings(max_examples=examples(100))
@given(st.lists(st.tuples(positive, positive, st.integers(min_value=1, max_value=10**6)), min_size=1, max_size=5))
def test_event_from_ledger_gives_the_ledgers_mu(releases: list[tuple[float, float, int]]) -> None:
    ledger = Ledger(tuple(GaussianRelease(f"r{i}", d, s, k) for i, (d, s, k) in enumerate(releases)))
    event = event_from_ledger(ledger)
    assert isinstance(event, ComposedEvent) and event.relation == "add_remove"
    assert len(event.events) == len(ledger.releases)
    mu_squared = math.fsum(m * leaf.mu**2 for leaf, m in walk(event) if isinstance(leaf, GaussianEvent))
    assert math.sqrt(mu_squared) == pytest.approx(ledger.mu, rel=1e-14)
    for child, r in zip(event.events, ledger.releases, strict=True):
        if r.count > 1:
            assert isinstance(child, SelfComposedEvent) and child.count == r.count
            child = child.event
        assert isinstance(child, GaussianEvent)
        assert Fraction(child.mu) >= Fraction(r.sensitivity) / Fraction(r.sigma)  # sound per release
        assert child.noise_multiplier == pytest.approx(r.noise_multiplier, rel=1e-15)
    with pytest.raises(ArgumentTypeError, match="ledger"):
        event_from_ledger([1])  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# describe


def test_describe() -> None:
    e = SelfComposedEvent(PoissonSampledEvent(0.004, GaussianEvent(1.1)), 14062)
    assert describe(e) == "Poisson(q=0.004) of Gaussian(nm=1.1) × 14062"
    both = ComposedEvent((e, SelfComposedEvent(ComposedEvent((GaussianEvent(2.0), LaplaceEvent(1.0))), 3)))
    assert describe(both) == "Poisson(q=0.004) of Gaussian(nm=1.1) × 14062 + (Gaussian(nm=2) + Laplace(nm=1)) × 3"
    inner = PoissonSampledEvent(0.5, SelfComposedEvent(G, 2))
    assert describe(inner) == "Poisson(q=0.5) of (Gaussian(nm=1) × 2)"
    assert describe(GroupEvent(EpsilonDeltaEvent(1.0, 1e-5), 2)) == "Group(k=2) of (1, 1e-05)-DP"
    assert (
        describe(SampledWithoutReplacementEvent(60000, 256, G)) == "WithoutReplacement(256 of 60000) of Gaussian(nm=1)"
    )
    assert describe(TreeAggregationEvent(0.5, (4, 4))) == "Tree(nm=0.5, steps=4+4)"
    assert describe(RandomizedResponseEvent(0.25)) == "RandomizedResponse(p=0.25, k=2) [replace_one]"
    assert describe(ComposedEvent((NoOpEvent(), NonPrivateEvent()))) == "NoOp + NonPrivate"
    assert describe(GaussianEvent(math.inf)) == "Gaussian(nm=inf)"


@settings(max_examples=examples(100))
@given(event_trees())
def test_describe_is_one_line(event: Event) -> None:
    text = describe(event)
    assert text and "\n" not in text
