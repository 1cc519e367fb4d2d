"""Hypothesis strategies for dpkit events (:mod:`dpkit.accountant.events`), shared by the tests.

``events()`` draws random event trees of every kind, with one neighbouring relation throughout
(composite events require their children to agree), including the edge values the events accept
(noise multiplier 0 and +inf, q = 0 and 1, ε = +inf, δ = 0 and 1, huge counts).
``every_kind()`` is a fixed list with at least one event of each kind.
"""

from __future__ import annotations

import math

from hypothesis import strategies as st

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
)

__all__ = ["events", "leaf_events", "every_kind", "RELATIONS"]

RELATIONS = ("add_remove", "replace_one")

#: noise multipliers in [0, +inf], with the ends and extreme finite values over-represented
noise_multipliers = st.one_of(
    st.sampled_from([0.0, math.inf, 1.0, 1.1, 1e308, 5e-324]),
    st.floats(min_value=0.0, max_value=math.inf, allow_nan=False),
)
unit = st.one_of(st.sampled_from([0.0, 1.0, 0.5, 1e-300]), st.floats(min_value=0.0, max_value=1.0))
extended = st.one_of(st.sampled_from([0.0, math.inf]), st.floats(min_value=0.0, max_value=math.inf, allow_nan=False))
counts = st.one_of(st.integers(min_value=1, max_value=20), st.integers(min_value=1, max_value=10**30))


def leaf_events(relation: str) -> st.SearchStrategy[Event]:
    """One release of each leaf kind, under ``relation``."""
    return st.one_of(
        st.builds(GaussianEvent, noise_multipliers, relation=st.just(relation)),
        st.builds(LaplaceEvent, noise_multipliers, relation=st.just(relation)),
        st.builds(RandomizedResponseEvent, unit, counts, relation=st.just(relation)),
        st.builds(EpsilonDeltaEvent, extended, unit, relation=st.just(relation)),
        st.builds(
            TreeAggregationEvent,
            noise_multipliers,
            st.lists(counts, min_size=1, max_size=4).map(tuple),
            relation=st.just(relation),
        ),
        st.just(NoOpEvent(relation=relation)),
        st.just(NonPrivateEvent(relation=relation)),
    )


@st.composite
def _without_replacement(draw: st.DrawFn, children: st.SearchStrategy[Event]) -> Event:
    n = draw(st.one_of(st.integers(min_value=1, max_value=100), st.integers(min_value=1, max_value=10**18)))
    b = draw(st.integers(min_value=1, max_value=n))
    return SampledWithoutReplacementEvent(n, b, draw(children))


def _extend(children: st.SearchStrategy[Event]) -> st.SearchStrategy[Event]:
    return st.one_of(
        st.builds(PoissonSampledEvent, unit, children),
        _without_replacement(children),
        st.builds(SelfComposedEvent, children, counts),
        st.builds(ComposedEvent, st.lists(children, min_size=1, max_size=4).map(tuple)),
        st.builds(GroupEvent, children, counts),
    )


def events(relation: str | None = None, *, max_leaves: int = 6) -> st.SearchStrategy[Event]:
    """Random event trees of every kind under one relation (drawn when ``relation`` is None)."""
    if relation is None:
        return st.sampled_from(RELATIONS).flatmap(lambda r: events(r, max_leaves=max_leaves))
    return st.recursive(leaf_events(relation), _extend, max_leaves=max_leaves)


def every_kind(relation: str = "add_remove") -> list[Event]:
    """At least one event of each kind (and both tree forms), all under ``relation``."""
    g = GaussianEvent(1.1, relation=relation)
    out: list[Event] = [
        g,
        LaplaceEvent(2.0, relation=relation),
        RandomizedResponseEvent(0.25, relation=relation),
        RandomizedResponseEvent(0.1, 7, relation=relation),
        EpsilonDeltaEvent(1.0, 1e-5, relation=relation),
        TreeAggregationEvent(0.7, (128,), relation=relation),
        TreeAggregationEvent(0.7, (100, 100, 28), relation=relation),
        NoOpEvent(relation=relation),
        NonPrivateEvent(relation=relation),
        PoissonSampledEvent(256 / 60000, g),
        SampledWithoutReplacementEvent(60000, 256, g),
        SelfComposedEvent(PoissonSampledEvent(0.01, g), 1000),
        ComposedEvent((g, LaplaceEvent(3.0, relation=relation))),
        GroupEvent(EpsilonDeltaEvent(0.5, 0.0, relation=relation), 3),
    ]
    ours = {cls.kind for cls in EVENT_KINDS.values() if cls.__module__ == "dpkit.accountant.events"}
    assert {e.kind for e in out} == ours, "every_kind() misses a kind"
    return out
