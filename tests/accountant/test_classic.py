"""The classic Gaussian bound (Dwork–Roth Thm A.1) with basic composition."""

from __future__ import annotations

import math

import pytest
import references as ref
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.accountant import ClassicAccountant, GaussianRelease, Ledger, classic_sigma, compare_methods, make_accountant

delta_st = st.floats(-60.0, math.log(0.5)).map(math.exp)
sens_st = st.floats(1e-3, 1e3)
k_st = st.integers(1, 10_000)


@st.composite
def classic_targets(draw: st.DrawFn) -> tuple[float, float, float, int]:
    k = draw(k_st)
    per_release = draw(st.floats(1e-4, 0.999))
    return per_release * k, draw(delta_st), draw(sens_st), k


def test_reference_value() -> None:
    # (ε, δ) = (0.5, 1e-5), Δ = 1, one release: σ = sqrt(2 ln(1.25e5)) / 0.5.
    expected = math.sqrt(2 * math.log(1.25e5)) / 0.5
    sigma = classic_sigma(0.5, 1e-5)
    assert sigma == pytest.approx(expected, rel=1e-15)
    assert sigma >= ref.classic_sigma(0.5, 1e-5)
    assert sigma == pytest.approx(9.689610525210785, rel=1e-9)  # 2·sqrt(2·11.736069) by hand: 9.6896


@settings(max_examples=examples(200))
@given(target=classic_targets())
def test_classic_sigma_matches_mpmath(target: tuple[float, float, float, int]) -> None:
    eps, delta, sens, k = target
    ours = classic_sigma(eps, delta, sensitivity=sens, compositions=k)
    truth = ref.classic_sigma(eps, delta, sensitivity=sens, compositions=k)
    assert ours >= truth  # rounded up
    assert ours == pytest.approx(float(truth), rel=1e-13)


@pytest.mark.parametrize(("eps", "k"), [(1.0, 1), (1.5, 1), (10.0, 10), (10.0, 3), (1000.0, 999)])
def test_classic_sigma_refuses_epsilon_per_release_of_one_or_more(eps: float, k: int) -> None:
    with pytest.raises(ValueError, match="epsilon"):
        classic_sigma(eps, 1e-5, sensitivity=1.0, compositions=k)


def test_classic_sigma_just_below_one_per_release() -> None:
    eps = math.nextafter(1.0, 0.0)
    assert classic_sigma(eps, 1e-5) == pytest.approx(math.sqrt(2 * math.log(1.25e5)), rel=1e-14)
    assert classic_sigma(9.99, 1e-5, sensitivity=1.0, compositions=10) > 0


@settings(max_examples=examples(100))
@given(target=classic_targets())
def test_accountant_inverts_classic_sigma(target: tuple[float, float, float, int]) -> None:
    eps, delta, sens, k = target
    sigma = classic_sigma(eps, delta, sensitivity=sens, compositions=k)
    got = ClassicAccountant().epsilon(Ledger.homogeneous(sens, sigma, compositions=k), delta).epsilon
    assert got == pytest.approx(eps, rel=1e-12)
    assert got <= eps * (1 + 1e-14)


@st.composite
def classic_ledgers(draw: st.DrawFn) -> Ledger:
    n = draw(st.integers(1, 4))
    releases = tuple(
        GaussianRelease(f"r{i}", draw(st.floats(0.1, 10.0)), draw(st.floats(1.0, 1e4)), draw(st.integers(1, 50)))
        for i in range(n)
    )
    return Ledger(releases)


@settings(max_examples=examples(100))
@given(ledger=classic_ledgers(), delta=delta_st)
def test_classic_composed_epsilon_matches_mpmath(ledger: Ledger, delta: float) -> None:
    triples = [(r.sensitivity, r.sigma, r.count) for r in ledger.releases]
    try:
        ours = ClassicAccountant().epsilon(ledger, delta).epsilon
    except ValueError as err:
        # Refused: some release's share of ε really is >= 1 (εᵢ = (Δᵢ/σᵢ) sqrt(2 ln(1.25 N/δ))).
        n = ledger.compositions
        z = math.sqrt(2 * math.log(1.25 * n / delta))
        assert max(d / s for d, s, _ in triples) * z >= 1 - 1e-12
        assert "epsilon" in str(err)
        return
    truth = ref.classic_composed_epsilon(triples, delta)
    assert ours >= truth
    assert ours == pytest.approx(float(truth), rel=1e-13)


@settings(max_examples=examples(100))
@given(ledger=classic_ledgers(), delta=delta_st)
def test_classic_delta_and_epsilon_are_inverses(ledger: Ledger, delta: float) -> None:
    acc = ClassicAccountant()
    try:
        eps = acc.epsilon(ledger, delta).epsilon
    except ValueError:
        assume(False)
    back = acc.delta(ledger, eps).delta
    assert back <= delta * (1 + 1e-12)
    assert back == pytest.approx(delta, rel=1e-10)


def test_classic_refusal_is_recorded_by_compare_methods() -> None:
    cmp = compare_methods(Ledger.homogeneous(1.0, 1.0, compositions=1), 1e-5)  # ε per release ≈ 4.8 >= 1
    assert cmp.epsilons["classic"] is None
    assert "epsilon < 1 per release" in cmp.refusals["classic"]
    assert all(cmp.epsilons[k] is not None for k in cmp.epsilons if k != "classic")
    with pytest.raises(ValueError, match="epsilon"):
        make_accountant("classic").epsilon(Ledger.homogeneous(1.0, 1.0, compositions=1), 1e-5)
    with pytest.raises(ValueError, match="epsilon"):
        make_accountant("classic").delta(Ledger.homogeneous(1.0, 1.0, compositions=1), 1.5)


@settings(max_examples=examples(100))
@given(ledger=classic_ledgers(), delta=delta_st)
def test_classic_is_never_tighter_than_exact(ledger: Ledger, delta: float) -> None:
    # The exact μ-GDP profile is the truth for a Gaussian ledger: a valid bound cannot beat it.
    try:
        classic = ClassicAccountant().epsilon(ledger, delta).epsilon
    except ValueError:
        assume(False)
    assert classic >= make_accountant("exact").epsilon(ledger, delta).epsilon
