"""Release ledgers: μ, ρ, scaling, (de)serialisation and export to dp-accounting events."""

from __future__ import annotations

import dataclasses
import math

import dp_accounting
import pytest
import references as ref
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.accountant import GaussianRelease, Ledger, make_accountant

sens_st = st.floats(1e-3, 1e3)
sigma_st = st.floats(1e-2, 1e4)
count_st = st.integers(1, 10_000)


@st.composite
def ledgers(draw: st.DrawFn, max_releases: int = 5) -> Ledger:
    n = draw(st.integers(1, max_releases))
    return Ledger(tuple(GaussianRelease(f"r{i}", draw(sens_st), draw(sigma_st), draw(count_st)) for i in range(n)))


def _triples(ledger: Ledger) -> list[tuple[float, float, int]]:
    return [(r.sensitivity, r.sigma, r.count) for r in ledger.releases]


@settings(max_examples=examples(200))
@given(ledger=ledgers())
def test_mu_and_rho_match_mpmath_and_are_rounded_up(ledger: Ledger) -> None:
    mu, rho = ref.ledger_mu(_triples(ledger)), ref.ledger_rho(_triples(ledger))
    assert ledger.mu >= mu and ledger.mu == pytest.approx(float(mu), rel=1e-14)
    assert ledger.rho >= rho and ledger.rho == pytest.approx(float(rho), rel=1e-14)
    assert ledger.rho == pytest.approx(ledger.mu**2 / 2, rel=1e-13)
    assert ledger.compositions == sum(r.count for r in ledger.releases)


def test_homogeneous_ledger() -> None:
    led = Ledger.homogeneous(2.0, 4.0, compositions=16)
    assert led.releases == (GaussianRelease("gaussian", 2.0, 4.0, 16),)
    assert led.mu == pytest.approx(2.0, rel=1e-15)  # 2·sqrt(16)/4
    assert led.rho == pytest.approx(2.0, rel=1e-15)
    assert led.releases[0].noise_multiplier == 2.0
    assert led.releases[0].mu_squared == 4.0


@settings(max_examples=examples(100))
@given(ledger=ledgers(), factor=st.floats(1e-3, 1e3))
def test_scaled_multiplies_every_sigma(ledger: Ledger, factor: float) -> None:
    scaled = ledger.scaled(factor)
    assert [r.sigma for r in scaled.releases] == [r.sigma * factor for r in ledger.releases]
    assert [(r.name, r.sensitivity, r.count) for r in scaled.releases] == [
        (r.name, r.sensitivity, r.count) for r in ledger.releases
    ]
    assert scaled.mu == pytest.approx(ledger.mu / factor, rel=1e-13)


@settings(max_examples=examples(100))
@given(ledger=ledgers())
def test_dicts_round_trip(ledger: Ledger) -> None:
    assert Ledger.from_dicts(ledger.to_dicts()) == ledger


def test_from_dicts_count_defaults_to_one() -> None:
    led = Ledger.from_dicts([{"name": "a", "sensitivity": 1.0, "sigma": 2.0}])
    assert led.releases[0].count == 1


@pytest.mark.parametrize(
    ("items", "needle"),
    [
        ([{"name": "a", "sensitivity": 1.0, "sigma": 2.0, "colour": 1}], "colour"),
        ([{"name": "a", "sensitivity": 1.0}], "sigma"),
        ([{"sensitivity": 1.0, "sigma": 1.0}], "name"),
        (["not a mapping"], "release 0"),
        ([{"name": "a", "sensitivity": -1.0, "sigma": 2.0}], "sensitivity"),
        ([{"name": "a", "sensitivity": 1.0, "sigma": 2.0, "count": 2.5}], "count"),
        ([], "at least one release"),
    ],
)
def test_from_dicts_rejects_bad_items(items: list[object], needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        Ledger.from_dicts(items)  # type: ignore[arg-type]


def test_ledger_and_release_are_immutable() -> None:
    led = Ledger.homogeneous(1.0, 2.0, compositions=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        led.releases = ()  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        led.releases[0].sigma = 1.0  # type: ignore[misc]


def test_ledger_accepts_a_list_and_stores_a_tuple() -> None:
    led = Ledger([GaussianRelease("a", 1.0, 1.0)])  # type: ignore[arg-type]
    assert isinstance(led.releases, tuple)


def test_integral_float_count_is_accepted() -> None:
    assert GaussianRelease("a", 1.0, 1.0, 3.0).count == 3  # type: ignore[arg-type]


# ----------------------------------------------------------------------------------------
# Export to dp-accounting
# ----------------------------------------------------------------------------------------


def test_to_dp_event_structure() -> None:
    one = Ledger.homogeneous(2.0, 3.0, compositions=1).to_dp_event()
    assert one == dp_accounting.GaussianDpEvent(1.5)
    many = Ledger.homogeneous(2.0, 3.0, compositions=7).to_dp_event()
    assert many == dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(1.5), 7)
    mixed = Ledger((GaussianRelease("a", 1.0, 2.0, 1), GaussianRelease("b", 0.5, 4.0, 3))).to_dp_event()
    assert mixed == dp_accounting.ComposedDpEvent(
        [dp_accounting.GaussianDpEvent(2.0), dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(8.0), 3)]
    )


# ----------------------------------------------------------------------------------------
# Exact accounting depends on μ only: invariant to how a composition is split
# ----------------------------------------------------------------------------------------


@st.composite
def splits(draw: st.DrawFn) -> tuple[Ledger, Ledger]:
    """A homogeneous ledger and the same releases split into parts (and rescaled Δ, σ)."""
    sens, sigma, k = draw(st.floats(0.1, 10.0)), draw(st.floats(0.1, 1e3)), draw(st.integers(2, 5000))
    cuts = sorted(draw(st.sets(st.integers(1, k - 1), max_size=min(5, k - 1))))
    counts = [b - a for a, b in zip([0, *cuts], [*cuts, k])]
    # Scaling Δ and σ of a part by the same power of two leaves Δ/σ bit-identical.
    scales = [2.0 ** draw(st.integers(-3, 3)) for _ in counts]
    whole = Ledger.homogeneous(sens, sigma, compositions=k)
    parts = Ledger(
        tuple(GaussianRelease(f"p{i}", sens * s, sigma * s, c) for i, (c, s) in enumerate(zip(counts, scales)))
    )
    return whole, parts


@settings(max_examples=examples(150))
@given(pair=splits(), delta=st.floats(-200.0, -1.0).map(math.exp))
def test_exact_is_invariant_to_splitting(pair: tuple[Ledger, Ledger], delta: float) -> None:
    whole, parts = pair
    exact = make_accountant("exact")
    e_whole, e_parts = exact.epsilon(whole, delta).epsilon, exact.epsilon(parts, delta).epsilon
    if whole.mu == parts.mu:
        assert e_whole == e_parts  # same μ ⇒ same ε, bit for bit
    else:  # μ differs only by the rounding of Σ countᵢ Δᵢ²/σᵢ²
        assert parts.mu == pytest.approx(whole.mu, rel=1e-14)
        assert e_parts == pytest.approx(e_whole, rel=1e-12)
    d_whole, d_parts = exact.delta(whole, 1.0).delta, exact.delta(parts, 1.0).delta
    assert d_parts == pytest.approx(d_whole, rel=1e-12)


@settings(max_examples=examples(100))
@given(pair=splits(), delta=st.floats(-200.0, -1.0).map(math.exp))
def test_rdp_and_zcdp_are_invariant_to_splitting(pair: tuple[Ledger, Ledger], delta: float) -> None:
    whole, parts = pair
    for method, conversion in [
        ("rdp", "improved"),
        ("rdp", "mironov"),
        ("zcdp", "bun-steinke"),
        ("zcdp", "rdp-optimal"),
    ]:
        acc = make_accountant(method, conversion=conversion)
        assert acc.epsilon(parts, delta).epsilon == pytest.approx(acc.epsilon(whole, delta).epsilon, rel=1e-12)


# -- ledgers of any event --------------------------------------------------------------------------------------


def _dp_sgd(q: float = 0.01, nm: float = 1.1, steps: int = 1000):
    from dpkit.accountant.events import GaussianEvent, PoissonSampledEvent

    return PoissonSampledEvent(q, GaussianEvent(nm))


def test_a_ledger_holds_any_event_and_round_trips() -> None:
    from dpkit.accountant.events import ComposedEvent, LaplaceEvent, SelfComposedEvent
    from dpkit.accountant.ledger import EventRelease

    ledger = Ledger(
        (
            GaussianRelease("gram", 1.5, 30.0, 20),
            EventRelease("sgd", _dp_sgd(), 1000),
            EventRelease("count", LaplaceEvent(2.0)),
        )
    )
    assert not ledger.is_gaussian and ledger.relation == "add_remove"
    assert Ledger.from_dicts(ledger.to_dicts()) == ledger
    event = ledger.event
    assert isinstance(event, ComposedEvent) and len(event.events) == 3
    assert event.events[1] == SelfComposedEvent(_dp_sgd(), 1000) and event.events[2] == LaplaceEvent(2.0)
    assert event.events[0].event.mu == pytest.approx(1.5 / 30.0)  # the Gaussian release at its own μ
    with pytest.raises(ValueError, match="sgd is an event"):
        _ = ledger.mu
    with pytest.raises(ValueError, match="is defined for a ledger of Gaussian releases"):
        _ = ledger.rho
    from dpkit.accountant.interop import from_dp_event

    assert from_dp_event(ledger.to_dp_event()) == event  # exported as the event it is


def test_scaling_a_ledger_of_events_scales_every_noise_multiplier() -> None:
    from dpkit.accountant.events import EpsilonDeltaEvent, GaussianEvent, LaplaceEvent, PoissonSampledEvent
    from dpkit.accountant.ledger import EventRelease

    ledger = Ledger(
        (GaussianRelease("g", 1.0, 2.0), EventRelease("l", LaplaceEvent(3.0)), EventRelease("s", _dp_sgd()))
    )
    twice = ledger.scaled(2.0)
    assert twice.releases[0].sigma == 4.0
    assert twice.releases[1].event == LaplaceEvent(6.0)
    assert twice.releases[2].event == PoissonSampledEvent(0.01, GaussianEvent(2.2))
    with pytest.raises(ValueError, match="no noise scale"):
        Ledger((EventRelease("rr", EpsilonDeltaEvent(1.0, 1e-6)),)).scaled(2.0)


def test_ledger_entries_are_validated() -> None:
    from dpkit.accountant.events import GaussianEvent, RandomizedResponseEvent
    from dpkit.accountant.ledger import EventRelease

    with pytest.raises(TypeError, match="x.event must be a dpkit event"):
        EventRelease("x", 1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="one relation"):
        Ledger((EventRelease("a", GaussianEvent(1.0)), EventRelease("b", RandomizedResponseEvent(0.5))))
    with pytest.raises(ValueError, match="release 0 is missing key"):
        Ledger.from_dicts([{"event": {"kind": "gaussian", "noise_multiplier": 1.0}}])
    with pytest.raises(ValueError, match="release 0 has unknown key"):
        Ledger.from_dicts([{"name": "a", "event": {"kind": "gaussian", "noise_multiplier": 1.0}, "sigma": 2}])
    with pytest.raises(TypeError, match="event must be a table"):
        Ledger.from_dicts([{"name": "a", "event": 3}])
    replace_one = Ledger((GaussianRelease("g", 2.0, 4.0), EventRelease("rr", RandomizedResponseEvent(0.5))))
    assert replace_one.relation == "replace_one"
    assert replace_one.event.events[0].mu == pytest.approx(0.5)  # Δ/σ whatever the relation it is stated under
