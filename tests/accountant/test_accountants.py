"""Accountants (exact, pld, rdp, zcdp, classic): dp-accounting parity, method ordering,
monotonicity and δ(ε)/ε(δ) consistency, on homogeneous and heterogeneous ledgers."""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
import references as ref
from dp_accounting.pld import pld_privacy_accountant as dp_pld
from dp_accounting.rdp import rdp_privacy_accountant as dp_rdp
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.accountant import (
    VARIANTS,
    ClassicAccountant,
    ExactAccountant,
    GaussianRelease,
    Ledger,
    PldAccountant,
    RdpAccountant,
    ZcdpAccountant,
    compare_methods,
    gaussian_delta,
    gaussian_epsilon,
    make_accountant,
)
from dpkit.accountant.pld import DEFAULT_DISCRETIZATION, auto_discretization

DP_ORDERS = tuple(float(o) for o in dp_rdp.DEFAULT_RDP_ORDERS)

FAST = ref.FAST_METHODS

delta_st = st.floats(-28.0, math.log(1e-2)).map(math.exp)  # 7e-13 … 1e-2
pld_delta_st = st.floats(-23.0, math.log(1e-3)).map(math.exp)
#: PLD runs take up to ~1 s each: few examples, and no shrinking (a failure is reported as found).
PLD_SETTINGS = settings(
    max_examples=examples(6),
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)


@st.composite
def homogeneous(draw: st.DrawFn, max_mu: float = 30.0, max_k: int = 2000) -> tuple[float, float, int]:
    """(Δ, σ, K) with the composition's μ = Δ sqrt(K)/σ in [0.02, max_mu]."""
    k = draw(st.integers(1, max_k))
    mu = draw(st.floats(0.02, max_mu))
    sens = draw(st.floats(0.1, 10.0))
    return sens, sens * math.sqrt(k) / mu, k


def _ledger(h: tuple[float, float, int]) -> Ledger:
    """The homogeneous ledger of a drawn (Δ, σ, K)."""
    sens, sigma, k = h
    return Ledger.homogeneous(sens, sigma, compositions=k)


@st.composite
def heterogeneous(draw: st.DrawFn, max_mu: float = 30.0, max_count: int = 200) -> Ledger:
    """2–4 releases with different Δ, σ, counts; total μ at most max_mu."""
    n = draw(st.integers(2, 4))
    raw = [(draw(st.floats(0.1, 5.0)), draw(st.floats(0.5, 1e3)), draw(st.integers(1, max_count))) for _ in range(n)]
    mu = math.sqrt(sum(c * (d / s) ** 2 for d, s, c in raw))
    target = draw(st.floats(0.02, max_mu))
    scale = mu / target  # rescale every σ so that the ledger's μ is the drawn target
    return Ledger(tuple(GaussianRelease(f"r{i}", d, s * scale, c) for i, (d, s, c) in enumerate(raw)))


# ----------------------------------------------------------------------------------------
# Construction
# ----------------------------------------------------------------------------------------


def test_make_accountant_types_and_defaults() -> None:
    assert isinstance(make_accountant("exact"), ExactAccountant)
    assert isinstance(make_accountant("pld"), PldAccountant)
    assert isinstance(make_accountant("classic"), ClassicAccountant)
    rdp = make_accountant("rdp")
    assert isinstance(rdp, RdpAccountant) and rdp.conversion == "improved" and rdp.orders is None
    zcdp = make_accountant("zcdp")
    assert isinstance(zcdp, ZcdpAccountant) and zcdp.conversion == "bun-steinke"
    assert make_accountant("rdp", conversion="mironov", orders=[2, 3]).orders == (2.0, 3.0)
    assert make_accountant("pld", value_discretization_interval=1e-3).value_discretization_interval == 1e-3
    assert make_accountant("zcdp", conversion="rdp-optimal").label == "zcdp (rdp-optimal)"
    assert make_accountant("exact").label == "exact"


@settings(max_examples=examples(60))
@given(h=homogeneous(), delta=delta_st, mc=st.sampled_from(FAST + [("classic", None)]))
def test_gaussian_wrappers_equal_the_accountants(
    h: tuple[float, float, int], delta: float, mc: tuple[str, str | None]
) -> None:
    sens, sigma, k = h
    acc = make_accountant(mc[0], conversion=mc[1])
    led = Ledger.homogeneous(sens, sigma, compositions=k)
    try:
        expected = acc.epsilon(led, delta)
    except ValueError:
        with pytest.raises(ValueError):
            gaussian_epsilon(sigma, delta, sensitivity=sens, compositions=k, method=mc[0], conversion=mc[1])
        return
    got = gaussian_epsilon(sigma, delta, sensitivity=sens, compositions=k, method=mc[0], conversion=mc[1])
    assert got == expected
    assert (got.method, got.conversion, got.delta) == (mc[0], mc[1], delta)
    if expected.epsilon > 0:
        assert gaussian_delta(
            sigma, expected.epsilon, sensitivity=sens, compositions=k, method=mc[0], conversion=mc[1]
        ) == acc.delta(led, expected.epsilon)


# ----------------------------------------------------------------------------------------
# dp-accounting parity: RDP accountant with dp-accounting's orders
# ----------------------------------------------------------------------------------------


def _dp_rdp(event: dp_accounting.DpEvent) -> dp_rdp.RdpAccountant:
    acc = dp_rdp.RdpAccountant(DP_ORDERS)
    acc.compose(event)
    return acc


@settings(max_examples=examples(80))
@given(h=homogeneous(max_mu=50.0), delta=delta_st)
def test_rdp_with_orders_matches_dp_accounting(h: tuple[float, float, int], delta: float) -> None:
    sens, sigma, k = h
    theirs = _dp_rdp(dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(sigma / sens), k))
    ours_acc = RdpAccountant(orders=DP_ORDERS)
    led = Ledger.homogeneous(sens, sigma, compositions=k)
    t_eps, t_order = theirs.get_epsilon_and_optimal_order(delta)
    ours = ours_acc.epsilon(led, delta)
    assert ours.epsilon == pytest.approx(t_eps, rel=1e-9)
    if ours.order != t_order:  # only a tie (to rounding) may pick another order
        i = DP_ORDERS.index(ours.order)
        at_ours, _ = dp_rdp.compute_epsilon([ours.order], [theirs._rdp[i]], delta)
        assert at_ours == pytest.approx(t_eps, rel=1e-12)
    assume(ours.epsilon > 0)
    t_delta, t_dorder = theirs.get_delta_and_optimal_order(ours.epsilon)
    got = ours_acc.delta(led, ours.epsilon)
    assert got.delta == pytest.approx(t_delta, rel=1e-9 + ref.delta_slack(t_delta))
    if got.order != t_dorder:
        i = DP_ORDERS.index(got.order)
        at_ours, _ = dp_rdp.compute_delta([got.order], [theirs._rdp[i]], ours.epsilon)
        assert at_ours == pytest.approx(t_delta, rel=1e-12)


@settings(max_examples=examples(60))
@given(ledger=heterogeneous(max_mu=50.0), delta=delta_st)
def test_dp_event_export_matches_dp_accounting_rdp(ledger: Ledger, delta: float) -> None:
    theirs = _dp_rdp(ledger.to_dp_event())
    ours = RdpAccountant(orders=DP_ORDERS).epsilon(ledger, delta)
    assert ours.epsilon == pytest.approx(theirs.get_epsilon(delta), rel=1e-9)
    # Their RDP curve is α·ρ with our ρ.
    assert np.allclose(theirs._rdp, np.asarray(DP_ORDERS) * ledger.rho, rtol=1e-12, atol=0)


def test_rdp_with_orders_is_never_tighter_than_continuous() -> None:
    led = Ledger.homogeneous(1.0, 2.0, compositions=100)
    for conversion in ("improved", "mironov"):
        cont = make_accountant("rdp", conversion=conversion).epsilon(led, 1e-6).epsilon
        grid = make_accountant("rdp", conversion=conversion, orders=DP_ORDERS).epsilon(led, 1e-6).epsilon
        assert cont <= grid


# ----------------------------------------------------------------------------------------
# dp-accounting parity: PLD accountant
# ----------------------------------------------------------------------------------------


def _check_pld(ledger: Ledger, delta: float, interval: float | None = None) -> None:
    """Ours vs dp-accounting's PLDAccountant at the same discretisation interval (``None``: our
    default, which coarsens dp-accounting's 1e-4 for large μ by ``auto_discretization``)."""
    their_interval = auto_discretization(ledger.mu) if interval is None else interval
    theirs = dp_pld.PLDAccountant(
        dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE, value_discretization_interval=their_interval
    )
    theirs.compose(ledger.to_dp_event())
    t_eps = theirs.get_epsilon(delta)
    ours = make_accountant("pld", value_discretization_interval=interval).epsilon(ledger, delta).epsilon
    exact = make_accountant("exact").epsilon(ledger, delta).epsilon
    # dp-accounting's (pessimistic) figure, raised to the exact one if discretisation undercut it.
    assert ours >= t_eps and ours >= exact
    assert ours == pytest.approx(max(t_eps, exact), rel=1e-12)
    # PLD with a 1e-4 discretisation is close to exact.
    assert ours <= exact + 1e-3 * max(1.0, exact)


@pytest.mark.parametrize(
    ("sens", "sigma", "k", "delta"),
    [(1.0, 3.7306, 1, 1e-5), (1.0, 1.0, 1, 1e-5), (2.0, 10.0, 10, 1e-6), (1.0, 20.0, 100, 1e-9), (0.5, 30.0, 50, 1e-3)],
)
def test_pld_matches_dp_accounting(sens: float, sigma: float, k: int, delta: float) -> None:
    _check_pld(Ledger.homogeneous(sens, sigma, compositions=k), delta)
    _check_pld(Ledger.homogeneous(sens, sigma, compositions=k), delta, DEFAULT_DISCRETIZATION)


@PLD_SETTINGS
@given(ledger=heterogeneous(max_mu=1.5, max_count=50), delta=pld_delta_st)
@pytest.mark.slow
def test_pld_dp_event_export_matches_dp_accounting(ledger: Ledger, delta: float) -> None:
    _check_pld(ledger, delta, DEFAULT_DISCRETIZATION)


def test_pld_delta_matches_dp_accounting() -> None:
    led = Ledger((GaussianRelease("a", 1.0, 4.0, 5), GaussianRelease("b", 2.0, 20.0, 3)))
    theirs = dp_pld.PLDAccountant(value_discretization_interval=auto_discretization(led.mu))
    theirs.compose(led.to_dp_event())
    for eps in (0.5, 1.0, 2.0):
        ours = make_accountant("pld").delta(led, eps).delta
        exact = make_accountant("exact").delta(led, eps).delta
        assert ours >= theirs.get_delta(eps) and ours >= exact
        assert ours == pytest.approx(max(theirs.get_delta(eps), exact), rel=1e-12)


# ----------------------------------------------------------------------------------------
# compare_methods and the ordering of the methods
# ----------------------------------------------------------------------------------------


def _check_chain(eps: dict[str, float | None]) -> None:
    """exact <= pld <= rdp-improved <= rdp-mironov <= zcdp (bun-steinke), and
    exact <= zcdp (rdp-optimal) <= zcdp (bun-steinke)."""
    chain = [eps[k] for k in ("exact", "pld", "rdp", "rdp-mironov", "zcdp") if k in eps]
    assert all(a <= b for a, b in zip(chain, chain[1:])), eps
    assert eps["exact"] <= eps["zcdp-rdp-optimal"] <= eps["zcdp"], eps
    if eps.get("classic") is not None:
        assert eps["exact"] <= eps["classic"], eps


def _fast_epsilons(ledger: Ledger, delta: float) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for key, method, conversion in VARIANTS:
        if method == "pld":
            continue
        try:
            out[key] = make_accountant(method, conversion=conversion).epsilon(ledger, delta).epsilon
        except ValueError:
            out[key] = None
    return out


@settings(max_examples=examples(150))
@given(h=homogeneous(), delta=delta_st)
def test_method_order_homogeneous(h: tuple[float, float, int], delta: float) -> None:
    _check_chain(_fast_epsilons(_ledger(h), delta))


@settings(max_examples=examples(150))
@given(ledger=heterogeneous(), delta=delta_st)
def test_method_order_heterogeneous(ledger: Ledger, delta: float) -> None:
    _check_chain(_fast_epsilons(ledger, delta))


@PLD_SETTINGS
@given(h=homogeneous(max_mu=2.0, max_k=200), delta=pld_delta_st)
def test_method_order_with_pld_homogeneous(h: tuple[float, float, int], delta: float) -> None:
    _check_chain(compare_methods(_ledger(h), delta).epsilons)


@PLD_SETTINGS
@given(ledger=heterogeneous(max_mu=2.0, max_count=50), delta=pld_delta_st)
def test_method_order_with_pld_heterogeneous(ledger: Ledger, delta: float) -> None:
    _check_chain(compare_methods(ledger, delta).epsilons)


def test_compare_methods_reports_every_variant() -> None:
    led = Ledger((GaussianRelease("a", 1.0, 50.0, 4), GaussianRelease("b", 0.5, 80.0, 2)))
    cmp = compare_methods(led, 1e-5)
    assert cmp.delta == 1e-5
    assert list(cmp.epsilons) == [key for key, _, _ in VARIANTS]
    assert list(cmp.epsilons) == ["exact", "pld", "rdp", "rdp-mironov", "zcdp-rdp-optimal", "zcdp", "classic"]
    for key, method, conversion in VARIANTS:
        g = make_accountant(method, conversion=conversion).epsilon(led, 1e-5)
        assert cmp.epsilons[key] == g.epsilon
        if g.order is not None:
            assert cmp.orders[key] == g.order
    assert set(cmp.orders) == {"rdp", "rdp-mironov"}
    assert not cmp.refusals
    _check_chain(cmp.epsilons)


# ----------------------------------------------------------------------------------------
# Monotonicity: ε decreasing in σ, increasing in K and Δ
# ----------------------------------------------------------------------------------------


def _eps(method: str, conversion: str | None, sens: float, sigma: float, k: int, delta: float) -> float | None:
    try:
        return gaussian_epsilon(
            sigma, delta, sensitivity=sens, compositions=k, method=method, conversion=conversion
        ).epsilon
    except ValueError:
        return None  # classic refusal


@settings(max_examples=examples(100))
@given(h=homogeneous(), delta=delta_st, up=st.floats(1e-9, 3.0), mc=st.sampled_from(FAST + [("classic", None)]))
def test_epsilon_decreasing_in_sigma(
    h: tuple[float, float, int], delta: float, up: float, mc: tuple[str, str | None]
) -> None:
    sens, sigma, k = h
    lo, hi = _eps(*mc, sens, sigma, k, delta), _eps(*mc, sens, sigma * (1 + up), k, delta)
    if mc[0] == "classic":
        assume(lo is not None)
        assert hi is not None  # more noise cannot make the classic bound refuse
    assert hi <= lo


@settings(max_examples=examples(100))
@given(
    h=homogeneous(max_k=500), delta=delta_st, extra=st.integers(1, 500), mc=st.sampled_from(FAST + [("classic", None)])
)
def test_epsilon_increasing_in_compositions(
    h: tuple[float, float, int], delta: float, extra: int, mc: tuple[str, str | None]
) -> None:
    sens, sigma, k = h
    lo, hi = _eps(*mc, sens, sigma, k, delta), _eps(*mc, sens, sigma, k + extra, delta)
    if mc[0] == "classic":
        assume(hi is not None)
        assert lo is not None
    assert lo <= hi


@settings(max_examples=examples(100))
@given(h=homogeneous(), delta=delta_st, up=st.floats(1e-9, 3.0), mc=st.sampled_from(FAST + [("classic", None)]))
def test_epsilon_increasing_in_sensitivity(
    h: tuple[float, float, int], delta: float, up: float, mc: tuple[str, str | None]
) -> None:
    sens, sigma, k = h
    lo, hi = _eps(*mc, sens, sigma, k, delta), _eps(*mc, sens * (1 + up), sigma, k, delta)
    if mc[0] == "classic":
        assume(hi is not None)
        assert lo is not None
    assert lo <= hi


@PLD_SETTINGS
@given(h=homogeneous(max_mu=1.5, max_k=100), delta=pld_delta_st, up=st.floats(0.05, 1.0))
def test_pld_epsilon_monotone(h: tuple[float, float, int], delta: float, up: float) -> None:
    sens, sigma, k = h
    base = _eps("pld", None, sens, sigma, k, delta)
    assert _eps("pld", None, sens, sigma * (1 + up), k, delta) <= base
    assert _eps("pld", None, sens * (1 + up) ** -1, sigma, k, delta) <= base  # smaller Δ
    assert _eps("pld", None, sens, sigma, k + 1, delta) >= base


# ----------------------------------------------------------------------------------------
# δ(ε) and ε(δ) are consistent inverses
# ----------------------------------------------------------------------------------------


def _check_inverse(acc, ledger: Ledger, delta: float, rel: float) -> None:  # noqa: ANN001
    try:
        eps = acc.epsilon(ledger, delta).epsilon
    except ValueError:
        assume(False)
    assume(eps > 0.0)
    back = acc.delta(ledger, eps).delta
    # δ(ε(δ)) <= δ up to the rounding and documented δ slack ...
    assert back <= delta * (1 + rel + ref.delta_slack(delta))
    # ... and δ(ε) is decreasing: a larger ε needs no more δ, a smaller ε needs more.
    try:
        larger = acc.delta(ledger, eps * 1.01).delta
    except ValueError as err:  # classic refuses once a release's share of ε reaches 1
        assert acc.method == "classic" and "holds only for epsilon < 1" in str(err)
    else:
        assert larger <= back
    assert acc.delta(ledger, eps * 0.99).delta >= back


@settings(max_examples=examples(150))
@given(
    ledger=st.one_of(heterogeneous(), homogeneous().map(lambda h: _ledger(h))),
    delta=delta_st,
    mc=st.sampled_from(FAST + [("classic", None)]),
)
def test_delta_epsilon_inverse(ledger: Ledger, delta: float, mc: tuple[str, str | None]) -> None:
    _check_inverse(make_accountant(mc[0], conversion=mc[1]), ledger, delta, rel=1e-12)


@settings(max_examples=examples(60))
@given(h=homogeneous(max_mu=50.0), delta=delta_st, conversion=st.sampled_from(["improved", "mironov"]))
def test_delta_epsilon_inverse_rdp_with_orders(h: tuple[float, float, int], delta: float, conversion: str) -> None:
    _check_inverse(make_accountant("rdp", conversion=conversion, orders=DP_ORDERS), _ledger(h), delta, rel=1e-12)


@PLD_SETTINGS
@given(ledger=heterogeneous(max_mu=1.5, max_count=50), delta=pld_delta_st)
@pytest.mark.slow
def test_delta_epsilon_inverse_pld(ledger: Ledger, delta: float) -> None:
    # PLD's ε(δ) and δ(ε) are dp-accounting's two discretised searches; they agree to ~1e-9.
    _check_inverse(make_accountant("pld"), ledger, delta, rel=1e-7)
