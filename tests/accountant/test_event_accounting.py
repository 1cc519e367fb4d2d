"""One accountant interface over any event: each method says what it interprets (and why not), and what it
answers agrees with the closed forms, with itself on Gaussian ledgers, and with dp-accounting."""

from __future__ import annotations

import math

import pytest

from dpkit.accountant import METHODS, GaussianRelease, Ledger, calibrate_ledger_scale, compare_methods, make_accountant
from dpkit.accountant.events import (
    ComposedEvent,
    EpsilonDeltaEvent,
    GaussianEvent,
    GroupEvent,
    LaplaceEvent,
    NonPrivateEvent,
    NoOpEvent,
    PoissonSampledEvent,
    RandomizedResponseEvent,
    SelfComposedEvent,
)
from dpkit.accountant.ledger import EventRelease

DP_SGD = SelfComposedEvent(PoissonSampledEvent(256 / 60000, GaussianEvent(1.1)), 14062)  # tensorflow-privacy MNIST
LEDGER = Ledger((GaussianRelease("a", 1.0, 4.0, 10), GaussianRelease("b", 2.0, 30.0, 100)))
VARIANTS = [("exact", None), ("pld", None), ("rdp", "improved"), ("rdp", "mironov"), ("zcdp", "bun-steinke")]
VARIANTS += [("zcdp", "rdp-optimal"), ("classic", None)]


@pytest.mark.parametrize(("method", "conversion"), VARIANTS)
def test_a_gaussian_ledger_read_as_an_event_gives_the_same_answer(method: str, conversion: str | None) -> None:
    """The Gaussian fast paths and the event interpreters agree (rdp: the event's grid of orders is never below
    the continuous optimum over α, and close to it)."""
    acc = make_accountant(method, conversion=conversion)
    if method == "classic":  # the Dwork–Roth bound refuses LEDGER (ε >= 1 per release) either way
        for target in (LEDGER, LEDGER.event):
            with pytest.raises(ValueError, match="epsilon < 1 per release"):
                acc.epsilon(target, 1e-5)
        return
    for delta in (1e-5, 1e-2):
        fast = acc.epsilon(LEDGER, delta).epsilon
        slow = acc.epsilon(LEDGER.event, delta).epsilon
        if method == "rdp":
            assert fast <= slow <= fast * 1.01
        elif method == "pld":
            assert slow == pytest.approx(fast, rel=2e-3) and slow >= acc.epsilon(LEDGER, delta).epsilon * (1 - 2e-3)
        else:
            assert slow == pytest.approx(fast, rel=1e-9)
    d_fast, d_slow = acc.delta(LEDGER, 3.0).delta, acc.delta(LEDGER.event, 3.0).delta
    assert d_slow == pytest.approx(d_fast, rel=0.05 if method in ("pld", "rdp") else 1e-9)
    assert acc.supports(LEDGER) and acc.supports(LEDGER.event)


def test_dp_sgd_is_accounted_by_pld_and_rdp_and_refused_by_the_others_with_the_reason() -> None:
    cmp = compare_methods(DP_SGD, 1e-5)
    assert set(cmp.refusals) == {"exact", "zcdp", "zcdp-rdp-optimal", "classic"}
    assert "no closed form" in cmp.refusals["exact"] and "subsampling" in cmp.refusals["zcdp"]
    pld, rdp = cmp.epsilons["pld"], cmp.epsilons["rdp"]
    assert pld is not None and rdp is not None and pld < rdp < cmp.epsilons["rdp-mironov"]  # type: ignore[operator]
    # dp-accounting's own accountants on the same DpEvent: RDP over its default orders is never below ours by more
    # than its loose fractional orders allow; its optimistic PLD is never above our pessimistic one
    from dp_accounting.pld import pld_privacy_accountant, privacy_loss_distribution
    from dp_accounting.rdp import rdp_privacy_accountant

    from dpkit.accountant.interop import to_dp_event

    theirs = rdp_privacy_accountant.RdpAccountant().compose(to_dp_event(DP_SGD)).get_epsilon(1e-5)
    assert rdp == pytest.approx(theirs, rel=1e-4)
    pessimistic = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    assert pld == pytest.approx(pessimistic.compose(to_dp_event(DP_SGD)).get_epsilon(1e-5), rel=2e-3)
    optimistic = privacy_loss_distribution.from_gaussian_mechanism(
        1.1, sampling_prob=256 / 60000, pessimistic_estimate=False, value_discretization_interval=1e-4
    ).self_compose(14062)
    assert pld >= optimistic.get_epsilon_for_delta(1e-5)
    for method in ("exact", "zcdp", "classic"):
        support = make_accountant(method).supports(DP_SGD)
        assert not support and support.reason
        with pytest.raises(ValueError, match=method):
            make_accountant(method).epsilon(DP_SGD, 1e-5)


def test_one_laplace_release_is_exact_and_every_method_is_at_least_it() -> None:
    event = LaplaceEvent(0.5)  # pure ε = 2
    exact = make_accountant("exact")
    assert exact.epsilon(event, 0.0).epsilon == 2.0
    for delta in (1e-6, 1e-2, 0.3):
        truth = exact.epsilon(event, delta).epsilon
        assert truth == pytest.approx(max(0.0, 2.0 + 2.0 * math.log1p(-delta)), rel=1e-12)
        for method in METHODS:
            assert make_accountant(method).epsilon(event, delta).epsilon >= truth * (1 - 1e-12), method


def test_pure_compositions_at_delta_zero_and_basic_composition() -> None:
    three = SelfComposedEvent(LaplaceEvent(1.0), 3)
    assert make_accountant("pld").epsilon(three, 0.0).epsilon == 3.0
    assert make_accountant("classic").epsilon(three, 0.0).epsilon == 3.0
    assert make_accountant("classic").delta(three, 3.0).delta == 0.0
    assert make_accountant("classic").delta(three, 2.9).delta == 1.0  # basic composition says nothing below Σε
    assert not make_accountant("exact").supports(three)
    mixed = ComposedEvent((EpsilonDeltaEvent(1.0, 1e-6), LaplaceEvent(1.0)))
    assert make_accountant("classic").epsilon(mixed, 1e-5).epsilon == 2.0
    assert make_accountant("classic").epsilon(mixed, 1e-7).epsilon == math.inf  # the release's own δ is above it
    rr = RandomizedResponseEvent.from_epsilon(1.0)  # ε = 1 exactly: every method at least the exact ε(δ)
    for method in METHODS:
        truth = make_accountant("exact").epsilon(rr, 1e-3).epsilon
        assert make_accountant(method).epsilon(rr, 1e-3).epsilon >= truth * (1 - 1e-12), method
    group = GroupEvent(GaussianEvent(2.0), 3)  # μ = 3/2
    assert make_accountant("exact").epsilon(group, 1e-5).epsilon == pytest.approx(
        make_accountant("exact").epsilon(Ledger.homogeneous(1.5, 1.0), 1e-5).epsilon, rel=1e-12
    )
    assert make_accountant("zcdp").epsilon(group, 1e-5).epsilon == pytest.approx(
        make_accountant("zcdp").epsilon(Ledger.homogeneous(1.5, 1.0), 1e-5).epsilon, rel=1e-12
    )


@pytest.mark.parametrize("method", METHODS)
def test_the_ends_are_answered_for_events(method: str) -> None:
    acc = make_accountant(method)
    for event in (NoOpEvent(), SelfComposedEvent(NoOpEvent(), 5)):
        assert acc.epsilon(event, 1e-5).epsilon == 0.0 and acc.delta(event, 0.5).delta == 0.0
    assert acc.epsilon(NonPrivateEvent(), 0.5).epsilon == math.inf
    assert acc.delta(NonPrivateEvent(), 1.0).delta == 1.0
    assert acc.epsilon(LaplaceEvent(1.0), 1.0).epsilon == 0.0
    assert acc.delta(LaplaceEvent(1.0), math.inf).delta == 0.0
    nothing = Ledger.homogeneous(1.0, math.inf, compositions=1000)  # σ = inf: nothing released
    assert acc.epsilon(nothing, 1e-5).epsilon == 0.0 and acc.delta(nothing, 0.0).delta == 0.0


@pytest.mark.parametrize(("method", "conversion"), [("pld", None), ("rdp", "improved"), ("zcdp", None)])
@pytest.mark.slow
def test_a_ledger_of_events_calibrates_to_the_smallest_noise_that_meets_the_target(
    method: str, conversion: str | None
) -> None:
    ledger = Ledger((GaussianRelease("g", 1.0, 1.0, 10), EventRelease("lap", LaplaceEvent(1.0), 3)))
    if method == "rdp":
        ledger = Ledger(ledger.releases + (EventRelease("sgd", PoissonSampledEvent(0.01, GaussianEvent(1.0)), 500),))
    acc = make_accountant(method, conversion=conversion)
    c = calibrate_ledger_scale(ledger, 2.0, 1e-5, method=method, conversion=conversion)
    assert acc.epsilon(ledger.scaled(c), 1e-5).epsilon <= 2.0
    assert acc.epsilon(ledger.scaled(c * (1 - 1e-3)), 1e-5).epsilon > 2.0  # tight to 0.1 %


def test_bad_targets_are_named() -> None:
    with pytest.raises(TypeError, match="ledger must be a dpkit.accountant.Ledger or a dpkit event"):
        make_accountant("exact").epsilon([1.0], 1e-5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="got str"):
        make_accountant("pld").supports("gaussian")  # type: ignore[arg-type]


# -- found by a second reading: each a hole or a crash before ------------------------------------------------


def test_a_noise_ratio_beyond_the_doubles_is_no_privacy_not_nan() -> None:
    """Δ/σ overflowing used to make μ NaN, and exact/rdp/zcdp report ε = 0."""
    for ledger in (Ledger.homogeneous(1e300, 1e-10), Ledger.homogeneous(1.0, 5e-324)):
        assert ledger.mu == math.inf
        for method in ("exact", "rdp", "zcdp"):
            assert make_accountant(method).epsilon(ledger, 1e-5).epsilon == math.inf
            assert make_accountant(method).delta(ledger, 1.0).delta == 1.0


def test_gaussian_exact_zcdp_refuses_non_gaussian_events() -> None:
    """ρ = ε²/2 of a pure release read as a Gaussian's μ = √(2ρ) was below the exact profile of randomized response."""
    rr = RandomizedResponseEvent.from_epsilon(1.0)
    acc = make_accountant("zcdp", conversion="gaussian-exact")
    assert not acc.supports(rr) and "only Gaussian" in acc.supports(rr).reason
    assert acc.supports(SelfComposedEvent(GaussianEvent(2.0), 3))
    assert make_accountant("zcdp").delta(rr, 0.0).delta >= math.tanh(0.5)  # the exact TV of RR at ε = 1


def test_a_pld_composition_is_never_below_its_gaussian_part() -> None:
    """dp-accounting's PLD is optimistic in the Gaussian tail: a composition stays above each part's profile."""
    from dpkit.accountant.gdp import gdp_delta, gdp_epsilon

    mixed = ComposedEvent((GaussianEvent(0.1), LaplaceEvent(1e7)))
    pld = make_accountant("pld")
    assert pld.epsilon(mixed, 1e-12).epsilon >= gdp_epsilon(10.0, 1e-12)
    assert pld.delta(mixed, 1.0).delta >= gdp_delta(10.0, 1.0)


def test_group_privacy_of_large_groups_does_not_overflow_into_optimism() -> None:
    """(kε, δ Σ e^{iε}) with kε beyond 700: the group bound is vacuous (δ = 1), never a small δ."""
    big = GroupEvent(EpsilonDeltaEvent(7.5, 5e-324), 100)
    for method in ("exact", "pld", "classic"):
        assert make_accountant(method).epsilon(big, 1e-10).epsilon == math.inf, method
    huge = GroupEvent(EpsilonDeltaEvent(300.0, 1e-300), 3)
    assert make_accountant("exact").epsilon(huge, 1e-100).epsilon == math.inf


def test_arithmetic_beyond_the_doubles_is_a_refusal_not_a_crash() -> None:
    tiny = PoissonSampledEvent(0.01, GaussianEvent(1e-300))
    for method in METHODS:
        acc = make_accountant(method)
        acc.supports(tiny)  # answers, never raises
    assert make_accountant("rdp").epsilon(tiny, 1e-5).epsilon == math.inf
    assert make_accountant("rdp").epsilon(GaussianEvent(1e160), 1e-5).epsilon == 0.0
    assert make_accountant("classic").epsilon(LaplaceEvent(math.inf), 1e-5).epsilon == 0.0
    cmp = compare_methods(EpsilonDeltaEvent(800.0, 1e-10), 1e-5)
    assert cmp.epsilons["exact"] == pytest.approx(800.0) and cmp.epsilons["classic"] == 800.0
    from dpkit.accountant.events import GaussianEvent as G

    assert G.from_sigma(1.0, sensitivity=5e-324, relation="replace_one").noise_multiplier > 1e300


def test_calibrating_an_event_without_a_noise_scale_says_so() -> None:
    ledger = Ledger((EventRelease("rr", RandomizedResponseEvent.from_epsilon(1.0)),))
    with pytest.raises(ValueError, match="no noise scale"):
        calibrate_ledger_scale(ledger, 1.0, 1e-5, method="pld")


def test_a_very_wide_subsampled_pld_is_refused_with_the_way_out() -> None:
    """A billion DP-SGD steps at σ = 1 (ε ~ 10⁵): the pld method would take minutes; it says so, rdp answers."""
    event = SelfComposedEvent(PoissonSampledEvent(0.01, GaussianEvent(1.0)), 10**9)
    with pytest.raises(ValueError, match="use the rdp method"):
        make_accountant("pld").epsilon(event, 1e-5)
    assert make_accountant("rdp").epsilon(event, 1e-5).epsilon > 1e4
