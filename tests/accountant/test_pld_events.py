"""PLD accounting of events (dpkit.accountant.pld_events) and the exact closed forms (closed_forms).

References: mpmath integrals and brute-force hockey-stick sums inside the tests, dp-accounting
(recomputed here), and published vectors with their provenance in comments.
"""

from __future__ import annotations

import itertools
import math

import dp_accounting
import mpmath
import pytest
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.pld import privacy_loss_distribution as pld_lib

from dpkit.accountant import ArgumentTypeError, gdp_delta, gdp_epsilon
from dpkit.accountant.closed_forms import (
    epsilon_delta_delta,
    epsilon_delta_epsilon,
    laplace_delta,
    laplace_epsilon,
    randomized_response_delta,
    randomized_response_epsilon,
)
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
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    TreeAggregationEvent,
)
from dpkit.accountant.pld_events import pld_delta, pld_epsilon, pld_for_event, pld_supports

NR = dp_accounting.NeighboringRelation


# --------------------------------------------------------------------------------------------
# closed forms against independent computations


def _laplace_hockey_stick(eps0: float, eps: float) -> mpmath.mpf:
    """∫ (p − e^ε q)₊ for p = Lap(0, 1), q = Lap(ε₀, 1) (Δ/b = ε₀), by mpmath quadrature."""
    with mpmath.workdps(30):
        e0, e = mpmath.mpf(eps0), mpmath.mpf(eps)

        def f(x: mpmath.mpf) -> mpmath.mpf:
            p = mpmath.exp(-abs(x)) / 2
            q = mpmath.exp(-abs(x - e0)) / 2
            return p - mpmath.exp(e) * q

        # p > e^ε q exactly left of the kink x* = (ε₀ − ε)/2 (where the loss ε₀ − 2x crosses ε)
        kink = (e0 - e) / 2
        return mpmath.quad(f, [-mpmath.inf, 0, kink]) if kink > 0 else mpmath.mpf(0)


@pytest.mark.parametrize("eps0", [0.1, 1.0, 3.0])
@pytest.mark.parametrize("frac", [0.0, 0.3, 0.9])
def test_laplace_delta_is_the_hockey_stick_integral(eps0: float, frac: float) -> None:
    eps = frac * eps0
    ref = _laplace_hockey_stick(eps0, eps)
    ours = laplace_delta(eps0, eps)
    assert ours >= ref * (1 - 1e-12)  # never below (quadrature to ~1e-20)
    assert ours == pytest.approx(float(ref), rel=1e-12)
    assert laplace_epsilon(eps0, ours) <= eps * (1 + 1e-12) + 1e-15  # the inverse
    assert laplace_delta(eps0, laplace_epsilon(eps0, float(ref))) <= float(ref) * (1 + 1e-12)


def _rr_hockey_stick(p: float, k: int, eps: float) -> mpmath.mpf:
    """Σ over the k outputs of (P(o) − e^ε Q(o))₊ for the inputs 0 and 1 (brute force)."""
    with mpmath.workdps(40):
        pm, e = mpmath.mpf(p), mpmath.exp(mpmath.mpf(eps))

        def prob(x: int, o: int) -> mpmath.mpf:
            return (1 - pm) * (1 if o == x else 0) + pm / k

        return sum((max(prob(0, o) - e * prob(1, o), 0) for o in range(k)), mpmath.mpf(0))


@pytest.mark.parametrize(("p", "k"), [(0.1, 2), (0.5, 2), (0.3, 5), (0.9, 10)])
@pytest.mark.parametrize("eps", [0.0, 0.5, 2.0])
def test_randomized_response_delta_is_the_brute_force_hockey_stick(p: float, k: int, eps: float) -> None:
    ref = _rr_hockey_stick(p, k, eps)
    ours = randomized_response_delta(p, eps, num_buckets=k)
    assert ours >= ref
    assert ours == pytest.approx(float(ref), rel=1e-14, abs=1e-300)
    pure = randomized_response_epsilon(p, 0.0, num_buckets=k)
    assert pure == pytest.approx(math.log1p(k * (1 - p) / p), rel=1e-14)
    assert randomized_response_delta(p, pure, num_buckets=k) == 0.0
    if ours > 0:
        assert randomized_response_epsilon(p, ours, num_buckets=k) >= eps * (1 - 1e-12)


def test_epsilon_delta_profile() -> None:
    # the dominating pair of (ε₀, δ₀)-DP (Kairouz, Oh, Viswanath 2015): δ(0) = δ₀ + (1 − δ₀) tanh(ε₀/2)
    e0, d0 = 1.0, 1e-6
    assert epsilon_delta_delta(e0, d0, 0.0) == pytest.approx(d0 + (1 - d0) * math.tanh(e0 / 2), rel=1e-14)
    assert epsilon_delta_delta(e0, d0, e0) == d0
    assert epsilon_delta_delta(e0, d0, math.inf) == 0.0
    assert epsilon_delta_epsilon(e0, d0, d0) == e0
    assert epsilon_delta_epsilon(e0, d0, d0 / 2) == math.inf
    assert epsilon_delta_epsilon(e0, d0, 0.5) == 0.0
    d = epsilon_delta_delta(e0, d0, 0.4)
    assert epsilon_delta_epsilon(e0, d0, d) == pytest.approx(0.4, rel=1e-12)
    # dp-accounting's PLD of the same release, at δ(ε) = δ₀ + ...
    pld = pld_lib.from_privacy_parameters(dp_accounting.pld.common.DifferentialPrivacyParameters(e0, d0))
    assert pld.get_delta_for_epsilon(0.4) == pytest.approx(d, abs=2e-4)


def test_closed_form_ends_and_bad_arguments() -> None:
    assert laplace_delta(math.inf, 3.0) == 1.0 and laplace_epsilon(math.inf, 0.5) == math.inf
    assert laplace_delta(0.0, 0.0) == 0.0 and laplace_epsilon(0.0, 0.0) == 0.0
    assert randomized_response_delta(0.0, 5.0) == 1.0 and randomized_response_epsilon(0.0, 0.3) == math.inf
    assert randomized_response_delta(1.0, 0.0) == 0.0 and randomized_response_epsilon(0.2, 1.0) == 0.0
    with pytest.raises(ValueError, match="delta"):
        laplace_epsilon(1.0, 1.5)
    with pytest.raises(ArgumentTypeError, match="noise_parameter"):
        randomized_response_delta("0.5", 1.0)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# single releases: exact


def test_one_laplace_release_is_exact() -> None:
    event = LaplaceEvent(0.5)  # ε₀ = 2
    for delta in (0.0, 1e-6, 0.1, 0.5):
        g = pld_epsilon(event, delta)
        assert g.epsilon >= laplace_epsilon(2.0, delta)
        assert g.epsilon - g.error == pytest.approx(laplace_epsilon(2.0, delta), rel=1e-12)
        assert g.error <= 1e-3
    g = pld_delta(event, 1.0)
    assert g.delta >= laplace_delta(2.0, 1.0) and g.delta == pytest.approx(laplace_delta(2.0, 1.0), abs=1e-4)
    assert g.closed_form == "laplace"
    assert pld_epsilon(LaplaceEvent(1.0, relation="replace_one"), 0.0).epsilon == 2.0  # ε₀ = 2/nm


def test_one_randomized_response_is_exact() -> None:
    event = RandomizedResponseEvent(0.3, 4)
    for eps in (0.0, 0.7, 1.5):
        g = pld_delta(event, eps)
        exact = float(_rr_hockey_stick(0.3, 4, eps))
        assert g.delta >= exact and g.delta == pytest.approx(exact, abs=1e-4)
        assert g.closed_form == "randomized_response"
    assert pld_epsilon(event, 0.0).epsilon == pytest.approx(event.epsilon, rel=1e-14)


def test_gaussian_compositions_are_never_below_gdp() -> None:
    # dp-accounting pld_privacy_accountant_test.py::test_gaussian_basic: Gaussian(√3) × 3 has
    # δ(1) = 0.126936 (exact: μ = 1).
    event = ComposedEvent([GaussianEvent(math.sqrt(3.0)), SelfComposedEvent(GaussianEvent(math.sqrt(3.0)), 2)])
    g = pld_delta(event, 1.0)
    assert g.delta >= gdp_delta(1.0, 1.0) and g.delta == pytest.approx(0.126936, abs=1e-6)
    assert g.closed_form == "gdp" and g.error == pytest.approx(g.delta - gdp_delta(1.0, 1.0), abs=1e-15)
    g = pld_epsilon(event, 1e-5)
    assert g.epsilon >= gdp_epsilon(1.0, 1e-5)
    # trees and groups of Gaussians are Gaussians: one exact μ
    tree = TreeAggregationEvent(2.0, (5, 7))  # depth ⌈log2(7 + 1)⌉ = 3: μ = √3/2
    assert pld_epsilon(tree, 1e-5).epsilon >= gdp_epsilon(math.sqrt(3) / 2, 1e-5)
    assert pld_epsilon(tree, 1e-5).epsilon == pytest.approx(gdp_epsilon(math.sqrt(3) / 2, 1e-5), abs=1e-3)
    group = GroupEvent(GaussianEvent(6.0), 3)
    assert pld_epsilon(group, 1e-5).epsilon == pld_epsilon(GaussianEvent(2.0), 1e-5).epsilon
    replace = GaussianEvent(4.0, relation="replace_one")  # μ = 2/4
    assert pld_epsilon(replace, 1e-5).epsilon == pld_epsilon(GaussianEvent(2.0), 1e-5).epsilon


# --------------------------------------------------------------------------------------------
# compositions: dp-accounting and exact values


def _rr_kfold_exact_delta(p: float, k: int, count: int, eps: float) -> mpmath.mpf:
    """δ(ε) of ``count`` randomized responses, by enumerating the multinomial of (#x, #x', #other)."""
    with mpmath.workdps(40):
        pm = mpmath.mpf(p)
        a, b = 1 - pm * (k - 1) / k, pm / k
        probs_p = (a, b, (k - 2) * b)  # P: the true bucket x, the other input's x', the rest
        losses = (mpmath.log(a / b), -mpmath.log(a / b), mpmath.mpf(0))
        total = mpmath.mpf(0)
        for i in range(count + 1):
            for j in range(count - i + 1):
                r = count - i - j
                if r and k == 2:
                    continue
                mass = mpmath.factorial(count) / (mpmath.factorial(i) * mpmath.factorial(j) * mpmath.factorial(r))
                mass *= probs_p[0] ** i * probs_p[1] ** j * probs_p[2] ** r
                loss = i * losses[0] + j * losses[1]
                total += mass * max(0, 1 - mpmath.exp(mpmath.mpf(eps) - loss))
        return total


@pytest.mark.parametrize(("p", "k", "count"), [(0.4, 2, 20), (0.5, 3, 40)])
def test_kfold_randomized_response_exact_and_dp_accounting(p: float, k: int, count: int) -> None:
    event = SelfComposedEvent(RandomizedResponseEvent(p, k), count)
    h = 1e-4
    theirs = pld_lib.from_randomized_response(p, k, value_discretization_interval=h).self_compose(count)
    for eps in (1.0, 3.0, 6.0, 12.0):
        exact = _rr_kfold_exact_delta(p, k, count, eps)
        g = pld_delta(event, eps, value_discretization_interval=h)
        assert g.delta >= exact  # never below the exact value
        assert g.delta - g.error <= exact  # the stated error covers the truth
        assert g.delta == pytest.approx(float(exact), abs=count * h + 1e-12)
        assert g.delta == pytest.approx(theirs.get_delta_for_epsilon(eps), rel=1e-12, abs=1e-15)


def test_dp_accounting_pld_accountant_drops_the_count_of_self_composed_randomized_response() -> None:
    # A defect of the peer (dp-accounting 0.6, pld_privacy_accountant.py): its RandomizedResponseDpEvent
    # branch composes the PLD once, whatever the count of the enclosing SelfComposedDpEvent, so it
    # reports 20 randomized responses as one. dpkit composes them all (and is exact here).
    p, k, count = 0.4, 2, 20
    theirs = pld_privacy_accountant.PLDAccountant(NR.REPLACE_ONE)
    theirs.compose(dp_accounting.SelfComposedDpEvent(dp_accounting.RandomizedResponseDpEvent(p, k), count))
    exact = _rr_kfold_exact_delta(p, k, count, 1.0)
    ours = pld_delta(SelfComposedEvent(RandomizedResponseEvent(p, k), count), 1.0).delta
    assert ours >= exact and ours == pytest.approx(float(exact), abs=3e-3)
    one = pld_delta(RandomizedResponseEvent(p, k), 1.0).delta
    if theirs.get_delta(1.0) < exact:  # the defect is present: their figure is one release's
        assert theirs.get_delta(1.0) == pytest.approx(one, abs=1e-3)


def test_kfold_laplace_against_dp_accounting() -> None:
    # dp-accounting pld_privacy_accountant_test.py::test_laplace_basic: Laplace(1) × 3 + Laplace(2) × 2 is
    # (4, ~1e-14)-DP through the PLD (exactly (4, 0): pure ε = 3 + 2/2).
    event = ComposedEvent([SelfComposedEvent(LaplaceEvent(1.0), 3), SelfComposedEvent(LaplaceEvent(2.0), 2)])
    assert pld_epsilon(event, 0.0).epsilon == 4.0
    assert pld_delta(event, 4.0).delta == 0.0
    assert pld_epsilon(event, 1e-14).epsilon <= 4.0
    # 10 × Laplace(2): dp-accounting's own value, and the truth in [lower, value]: above dp-accounting's optimistic
    # PLD (a lower bound on the truth), below its pessimistic PLD on a grid 10 times finer (an upper bound)
    event = SelfComposedEvent(LaplaceEvent(2.0), 10)
    h = 1e-4
    opt = pld_lib.from_laplace_mechanism(2.0, value_discretization_interval=h, pessimistic_estimate=False)
    opt = opt.self_compose(10)
    fine = pld_lib.from_laplace_mechanism(2.0, value_discretization_interval=h / 10).self_compose(10)
    theirs = pld_privacy_accountant.PLDAccountant(value_discretization_interval=h)
    theirs.compose(dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(2.0), 10))
    for delta in (1e-6, 1e-3):
        g = pld_epsilon(event, delta, value_discretization_interval=h)
        assert g.epsilon >= opt.get_epsilon_for_delta(delta)
        assert g.epsilon == pytest.approx(theirs.get_epsilon(delta), abs=1e-9)
        assert g.lower == g.epsilon - g.error or g.epsilon - g.error == pytest.approx(g.lower, abs=1e-15)
        assert g.lower <= fine.get_epsilon_for_delta(delta)  # a valid lower end: below an upper bound on the truth
        assert g.error < 1e-5  # second order in h (the first-order bound m·h would be 1e-3)


def test_poisson_subsampled_published_vectors() -> None:
    # dp-accounting 0.6, pld/pld_privacy_accountant_test.py::test_poisson_subsampled_gaussian and
    # ::test_self_composed_subsampled_gaussian: PoissonSampled(0.2, Gaussian(0.5)) × 3, δ(1) = 0.15594 (±1e-3)
    event = SelfComposedEvent(PoissonSampledEvent(0.2, GaussianEvent(0.5)), 3)
    assert pld_delta(event, 1.0).delta == pytest.approx(0.15594, abs=1e-3)
    assert pld_epsilon(event, 0.15594).epsilon == pytest.approx(1.0, abs=1e-3)
    # ::test_poisson_subsampled_laplace: PoissonSampled(0.2, Laplace(0.5)) × 3 is (2.46964, 1e-14)-DP;
    # exactly 3·log(1 + 0.2(e² − 1)) = 2.469645 at δ = 0
    event = SelfComposedEvent(PoissonSampledEvent(0.2, LaplaceEvent(0.5)), 3)
    pure = pld_epsilon(event, 0.0).epsilon
    assert pure >= 3 * math.log1p(0.2 * math.expm1(2.0)) and pure == pytest.approx(2.46964, abs=1e-5)
    assert pld_epsilon(event, 1e-14).epsilon == pytest.approx(2.46964, abs=1e-3)
    assert pld_epsilon(event, 1e-14).epsilon <= pure


def test_opacus_published_vector() -> None:
    # Opacus, opacus/tests/accountants_test.py (pytorch/opacus): q = 0.04, σ = 1.5, steps = int(90 // 0.04),
    # δ = 1e-5: PRVAccountant 6.777395712150674 (eps_error 0.01), RDPAccountant 7.32911117143,
    # GaussianAccountant (CLT) in (6.59, 6.6).
    event = SelfComposedEvent(PoissonSampledEvent(0.04, GaussianEvent(1.5)), int(90 // 0.04))
    g = pld_epsilon(event, 1e-5)
    assert 6.777395712150674 - 0.02 <= g.epsilon <= 6.777395712150674 + 0.01
    assert g.epsilon < 7.32911117143
    assert g.epsilon - g.error <= 6.777395712150674  # the stated bound brackets the peer's value


def test_prv_accountant_recomputed_when_installed() -> None:
    prv = pytest.importorskip("prv_accountant")
    q, nm, steps, delta = 256 / 100000, 0.9, 4900, 1e-5  # prv_accountant tests/test_accountant.py's setting
    acc = prv.PRVAccountant(
        prvs=[prv.PoissonSubsampledGaussianMechanism(sampling_probability=q, noise_multiplier=nm)],
        max_self_compositions=[steps],
        eps_error=0.01,
        delta_error=1e-10,
    )
    lower, _, upper = acc.compute_epsilon(delta=delta, num_self_compositions=[steps])
    g = pld_epsilon(SelfComposedEvent(PoissonSampledEvent(q, GaussianEvent(nm)), steps), delta)
    assert lower - 1e-9 <= g.epsilon <= upper + 0.01


def test_mixed_composition_matches_dp_accounting() -> None:
    h = 2e-4
    event = ComposedEvent(
        [
            SelfComposedEvent(PoissonSampledEvent(0.05, GaussianEvent(1.2)), 50),
            GaussianEvent(3.0),
            SelfComposedEvent(LaplaceEvent(4.0), 2),
            SelfComposedEvent(PoissonSampledEvent(0.1, LaplaceEvent(1.0)), 5),
        ]
    )
    theirs = pld_privacy_accountant.PLDAccountant(value_discretization_interval=h)
    theirs.compose(
        dp_accounting.ComposedDpEvent(
            [
                dp_accounting.SelfComposedDpEvent(
                    dp_accounting.PoissonSampledDpEvent(0.05, dp_accounting.GaussianDpEvent(1.2)), 50
                ),
                dp_accounting.GaussianDpEvent(3.0),
                dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(4.0), 2),
                dp_accounting.SelfComposedDpEvent(
                    dp_accounting.PoissonSampledDpEvent(0.1, dp_accounting.LaplaceDpEvent(1.0)), 5
                ),
            ]
        )
    )
    for delta in (1e-5, 1e-3):
        ours = pld_epsilon(event, delta, value_discretization_interval=h).epsilon
        assert ours == pytest.approx(theirs.get_epsilon(delta), abs=5e-3)
    pld = pld_for_event(event, value_discretization_interval=h)
    assert pld.get_epsilon_for_delta(1e-5) == pytest.approx(theirs.get_epsilon(1e-5), abs=5e-3)


def test_replace_one_subsampled_gaussian_passes_the_relation() -> None:
    h = 1e-3
    event = SelfComposedEvent(PoissonSampledEvent(0.1, GaussianEvent(2.0, relation="replace_one")), 20)
    theirs = pld_privacy_accountant.PLDAccountant(NR.REPLACE_ONE, value_discretization_interval=h)
    theirs.compose(
        dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(0.1, dp_accounting.GaussianDpEvent(2.0)), 20
        )
    )
    g = pld_epsilon(event, 1e-5, value_discretization_interval=h)
    assert g.relation == "replace_one"
    assert g.epsilon == pytest.approx(theirs.get_epsilon(1e-5), rel=1e-12)
    add_remove = pld_epsilon(SelfComposedEvent(PoissonSampledEvent(0.1, GaussianEvent(2.0)), 20), 1e-5)
    assert g.epsilon > add_remove.epsilon  # replacing a record moves twice as far


def test_epsilon_delta_releases_compose_and_group() -> None:
    event = SelfComposedEvent(EpsilonDeltaEvent(0.5, 1e-7), 10)
    g = pld_epsilon(event, 1e-5)
    assert g.epsilon <= 5.0  # never worse than basic composition
    # the optimal composition theorem (Kairouz, Oh, Viswanath 2015) gives a floor: at δ = 1 − (1 − δ₀)^k
    # the composition is (kε₀ − 2iε₀, ...)-DP; at least it is no better than one release
    assert g.epsilon >= epsilon_delta_epsilon(0.5, 1e-7, 1e-5)
    group = pld_epsilon(GroupEvent(EpsilonDeltaEvent(0.5, 1e-7), 2), 0.0)
    assert group.epsilon == math.inf  # δ > 0: not pure
    assert pld_epsilon(GroupEvent(LaplaceEvent(2.0), 3), 0.0).epsilon == 1.5
    assert pld_epsilon(GroupEvent(RandomizedResponseEvent.from_epsilon(1.0), 2), 0.0).epsilon == pytest.approx(2.0)
    # Poisson subsampling of an (ε, δ) release: (log(1 + q(e^ε − 1)), qδ) (Balle, Barthe, Gaboardi 2018)
    sub = pld_epsilon(PoissonSampledEvent(0.1, EpsilonDeltaEvent(1.0, 0.0)), 0.0).epsilon
    assert sub == pytest.approx(math.log1p(0.1 * math.expm1(1.0)), rel=1e-12)


# --------------------------------------------------------------------------------------------
# edges, supports


def test_edge_inputs_are_answered() -> None:
    gauss = GaussianEvent(1.0)
    assert pld_epsilon(gauss, 0.0).epsilon == math.inf
    assert pld_epsilon(gauss, 1.0).epsilon == 0.0
    assert pld_delta(gauss, math.inf).delta == 0.0
    assert pld_delta(gauss, 0.0).delta == pytest.approx(gdp_delta(1.0, 0.0), abs=1e-4)
    assert pld_epsilon(LaplaceEvent(0.25), 0.0).epsilon == 4.0
    assert pld_epsilon(NonPrivateEvent(), 0.5).epsilon == math.inf
    assert pld_delta(NonPrivateEvent(), 3.0).delta == 1.0
    assert pld_epsilon(NoOpEvent(), 0.0).epsilon == 0.0
    assert pld_epsilon(GaussianEvent(math.inf), 1e-5).epsilon == 0.0  # releases nothing
    assert pld_epsilon(GaussianEvent(0.0), 1e-5).epsilon == math.inf  # releases the statistic as is
    assert pld_epsilon(PoissonSampledEvent(0.0, GaussianEvent(1.0)), 1e-9).epsilon == 0.0
    q1 = pld_epsilon(PoissonSampledEvent(1.0, GaussianEvent(1.0)), 1e-5).epsilon
    assert q1 == pld_epsilon(GaussianEvent(1.0), 1e-5).epsilon
    # no noise on a Poisson sample: with probability q the record is out, exactly (0, q)-DP
    assert pld_epsilon(PoissonSampledEvent(0.01, GaussianEvent(0.0)), 0.01).epsilon == 0.0
    assert pld_epsilon(PoissonSampledEvent(0.01, GaussianEvent(0.0)), 0.005).epsilon == math.inf
    # huge μ: beyond dp-accounting's grid, the exact profile answers
    huge = SelfComposedEvent(GaussianEvent(1e-6), 10**6)
    assert pld_epsilon(huge, 1e-5).epsilon == gdp_epsilon(round(1e9, 0), 1e-5) or math.isfinite(
        pld_epsilon(huge, 1e-5).epsilon
    )
    assert pld_epsilon(huge, 1e-5).value_discretization_interval is None
    # tiny δ, down at dp-accounting's truncation floor: never below the exact profile
    tiny = pld_epsilon(GaussianEvent(1.0), 1e-20).epsilon
    assert tiny >= gdp_epsilon(1.0, 1e-20) and tiny == pytest.approx(gdp_epsilon(1.0, 1e-20), abs=1e-3)


def test_supports_and_refusals() -> None:
    ok, reason = pld_supports(SelfComposedEvent(PoissonSampledEvent(0.01, GaussianEvent(1.0)), 100))
    assert ok and reason == ""
    ok, reason = pld_supports(SampledWithoutReplacementEvent(1000, 10, GaussianEvent(1.0)))
    assert not ok and "without replacement" in reason
    ok, reason = pld_supports(RandomizedResponseEvent(0.5, relation="add_remove"))
    assert not ok and "replace_one" in reason
    ok, reason = pld_supports(GroupEvent(PoissonSampledEvent(0.1, GaussianEvent(1.0)), 2))
    assert not ok and "group" in reason
    ok, reason = pld_supports(PoissonSampledEvent(0.1, LaplaceEvent(1.0, relation="replace_one")))
    assert not ok and "add_remove" in reason
    ok, _ = pld_supports(ComposedEvent([EpsilonDeltaEvent(1.0, 1e-6), GaussianEvent(1.0)]))
    assert ok
    with pytest.raises(ValueError, match="without replacement"):
        pld_epsilon(SampledWithoutReplacementEvent(1000, 10, GaussianEvent(1.0)), 1e-5)
    with pytest.raises(ArgumentTypeError, match="event"):
        pld_epsilon("gaussian", 1e-5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="delta"):
        pld_epsilon(GaussianEvent(1.0), 2.0)
    with pytest.raises(ValueError, match="value_discretization_interval"):
        pld_epsilon(GaussianEvent(1.0), 1e-5, value_discretization_interval=0.0)


def test_connect_the_dots_is_dominated_by_privacy_buckets() -> None:
    # the stated error bound relies on it: the connect-the-dots PLD is tighter than rounding up
    h = 1e-3
    ctd = pld_lib.from_gaussian_mechanism(1.0, sampling_prob=0.05, value_discretization_interval=h).self_compose(200)
    pb = pld_lib.from_gaussian_mechanism(
        1.0, sampling_prob=0.05, value_discretization_interval=h, use_connect_dots=False
    ).self_compose(200)
    for eps in itertools.chain([0.0, 0.1], [0.5 * i for i in range(1, 8)]):
        assert ctd.get_delta_for_epsilon(eps) <= pb.get_delta_for_epsilon(eps) * (1 + 1e-9) + 1e-15


def test_closed_forms_of_events() -> None:
    from dpkit.accountant.pld_events import closed_form_delta, closed_form_epsilon, closed_form_refusal

    gauss = ComposedEvent([GaussianEvent(2.0), SelfComposedEvent(GaussianEvent(2.0), 3)])  # μ = 1
    assert closed_form_refusal(gauss) is None
    exact_eps = closed_form_epsilon(gauss, 1e-5)  # μ is rounded up by a few ulps: never below
    assert exact_eps >= gdp_epsilon(1.0, 1e-5) and exact_eps == pytest.approx(gdp_epsilon(1.0, 1e-5), rel=1e-13)
    exact_delta = closed_form_delta(gauss, 1.0)
    assert exact_delta >= gdp_delta(1.0, 1.0) and exact_delta == pytest.approx(gdp_delta(1.0, 1.0), rel=1e-13)
    assert closed_form_epsilon(LaplaceEvent(0.5), 0.1) == laplace_epsilon(2.0, 0.1)
    assert closed_form_delta(RandomizedResponseEvent(0.3, 4), 0.5) == randomized_response_delta(0.3, 0.5, num_buckets=4)
    assert closed_form_epsilon(EpsilonDeltaEvent(1.0, 1e-6), 1e-6) == 1.0
    assert closed_form_epsilon(NonPrivateEvent(), 0.5) == math.inf and closed_form_delta(NoOpEvent(), 0.0) == 0.0
    refusal = closed_form_refusal(SelfComposedEvent(LaplaceEvent(1.0), 2))
    assert refusal is not None and "pld" in refusal
    with pytest.raises(ValueError, match="exact"):
        closed_form_epsilon(SelfComposedEvent(PoissonSampledEvent(0.1, GaussianEvent(1.0)), 2), 1e-5)
    # a noise multiplier so large that dp-accounting would overflow: the exact profile answers
    assert pld_epsilon(GaussianEvent(1e200), 1e-5).epsilon >= gdp_epsilon(1e-200, 1e-5)
