"""The interval the true ε lies in (dpkit.accountant.pld_bounds) and dp-accounting's PLD built with arrays
(dpkit.accountant.pld_fast).

* pld_fast's mass functions are dp-accounting's, to rounding: every step mass function, every self-composition,
  every ε(δ);
* the lower end is a valid lower bound on the true ε: below the pessimistic ε on a grid 4 times finer (itself an
  upper bound on the truth), below prv_accountant's rigorous upper bound, and above dp-accounting's optimistic
  (privacy-buckets) PLD where that is a lower bound too; the same for δ(ε);
* the interval is narrow: at most 1 % of ε on DP-SGD cases of the benchmark grid (second order in the interval,
  where the first-order bound of pld_events' docstring is off by m·h).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.accountant.events import GaussianEvent, PoissonSampledEvent, SelfComposedEvent
from dpkit.accountant.pld_bounds import Discretisation, Profile, pessimistic_epsilon
from dpkit.accountant.pld_events import pld_delta, pld_epsilon
from dpkit.accountant.pld_fast import self_composed, subsampled_gaussian_pld

DELTA = 1e-5


def _dense(pmf: object) -> tuple[int, np.ndarray, float]:
    d = pmf.to_dense_pmf()  # type: ignore[attr-defined]
    return d._lower_loss, np.asarray(d._probs), d._infinity_mass


@pytest.mark.parametrize(
    ("q", "nm", "h"),
    [(1e-3, 0.74, 1e-4), (0.1, 3.0, 1e-4), (256 / 60000, 1.1, 1e-4), (0.5, 0.3, 2e-3), (1.0, 2.0, 1e-3)],
)
def test_step_pld_is_dp_accountings(q: float, nm: float, h: float) -> None:
    theirs = pld_lib.from_gaussian_mechanism(nm, sampling_prob=q, value_discretization_interval=h)
    ours = subsampled_gaussian_pld(nm, q, h)
    for a, b in ((theirs._pmf_remove, ours._pmf_remove), (theirs._pmf_add, ours._pmf_add)):
        (lo_a, pa, inf_a), (lo_b, pb, inf_b) = _dense(a), _dense(b)
        assert lo_a == lo_b and pa.shape == pb.shape
        assert np.max(np.abs(pa - pb)) < 1e-11  # the connect-the-dots masses: differences of δ over e^h − 1
        assert inf_a == pytest.approx(inf_b, rel=1e-9, abs=1e-30)


@pytest.mark.parametrize(("q", "nm", "steps"), [(1e-3, 0.74, 10_000), (256 / 60000, 1.1, 2344), (1.0, 2.0, 10)])
def test_self_composition_and_epsilon_are_dp_accountings(q: float, nm: float, steps: int) -> None:
    one = subsampled_gaussian_pld(nm, q, 1e-4)
    theirs, ours = one.self_compose(steps), self_composed(one, steps)
    for a, b in ((theirs._pmf_remove, ours._pmf_remove), (theirs._pmf_add, ours._pmf_add)):
        (lo_a, pa, inf_a), (lo_b, pb, inf_b) = _dense(a), _dense(b)
        assert lo_a == lo_b and pa.shape == pb.shape and inf_a == inf_b
        assert np.max(np.abs(pa - pb)) < 1e-15  # the same truncation; FFT of real input
    for delta in (1e-3, DELTA, 1e-9):
        # dp-accounting walks its loss grid by repeated subtraction (a drift of ~1e-9 over 10⁵ points); ours is i·h
        assert pessimistic_epsilon(ours, delta) == pytest.approx(theirs.get_epsilon_for_delta(delta), rel=1e-8)


def _dpsgd(q: float, nm: float, steps: int) -> SelfComposedEvent:
    return SelfComposedEvent(PoissonSampledEvent(q, GaussianEvent(nm)), steps)


@pytest.mark.parametrize(
    ("q", "nm", "steps"),
    [
        (256 / 60000, 0.6937545813, 2344),  # the README's MNIST run for ε = 3, 10 epochs
        (1e-3, 1.3661, 100_000),  # the benchmark grid's widest interval (ε = 1, 10⁵ steps)
        (0.01, 3.81338, 10_000),
        (0.1, 3.94248, 100),
    ],
)
def test_the_interval_holds_the_truth_and_is_narrow(q: float, nm: float, steps: int) -> None:
    g = pld_epsilon(_dpsgd(q, nm, steps), DELTA)
    assert g.value_discretization_interval == 1e-4 and g.lower < g.epsilon
    assert g.epsilon - g.lower <= 0.01 * g.epsilon  # at most 1 % of ε (the first-order bound: m·h, up to 10)
    finer = self_composed(subsampled_gaussian_pld(nm, q, 2.5e-5), steps)
    assert g.lower <= pessimistic_epsilon(finer, DELTA)  # below an upper bound on the truth


def test_the_lower_end_is_below_prv_accountants_rigorous_upper_bound() -> None:
    prv = pytest.importorskip("prv_accountant")
    q, nm, steps = 256 / 60000, 1.1, 2000
    g = pld_epsilon(_dpsgd(q, nm, steps), DELTA)
    accountant = prv.PRVAccountant(
        prvs=[prv.PoissonSubsampledGaussianMechanism(noise_multiplier=nm, sampling_probability=q)],
        max_self_compositions=[steps],
        eps_error=0.01,
        delta_error=1e-10,
    )
    low, _, up = accountant.compute_epsilon(delta=DELTA, num_self_compositions=[steps])
    assert g.lower <= up and low <= g.epsilon  # the two rigorous intervals overlap
    assert g.epsilon - g.lower < up - low  # and ours is the narrower


def test_the_lower_bound_on_delta_holds() -> None:
    q, nm, steps = 0.01, 1.0, 1000
    g = pld_delta(_dpsgd(q, nm, steps), 2.0)
    finer = self_composed(subsampled_gaussian_pld(nm, q, 2.5e-5), steps)
    assert 0.0 < g.lower <= float(finer.get_delta_for_epsilon(2.0)) <= g.delta
    assert g.delta - g.lower <= 0.01 * g.delta


@settings(max_examples=examples(15), deadline=None)
@given(
    q=st.floats(1e-3, 0.5),
    nm=st.floats(0.6, 4.0),
    steps=st.integers(1, 300),
    delta=st.sampled_from([1e-3, 1e-5, 1e-7]),
)
@pytest.mark.slow
def test_lower_end_below_a_finer_pessimistic_bound(q: float, nm: float, steps: int, delta: float) -> None:
    h = 1e-3
    pld = self_composed(subsampled_gaussian_pld(nm, q, h), steps)
    tau = 2.0 * (3e-15 + 2.0 * math.exp(-50.0) * steps)
    lower = Profile(pld, Discretisation(h, steps, 0, tau)).lower_epsilon(delta)
    upper = pessimistic_epsilon(pld, delta)
    fine = pessimistic_epsilon(self_composed(subsampled_gaussian_pld(nm, q, h / 8), steps), delta)
    assert lower <= fine <= upper + 1e-9
    optimistic = pld_lib.from_gaussian_mechanism(
        nm, sampling_prob=q, value_discretization_interval=h / 8, pessimistic_estimate=False, use_connect_dots=False
    )
    assert float(optimistic.self_compose(steps).get_epsilon_for_delta(delta)) <= fine  # (the yardstick is sound)


def test_an_exact_answer_is_its_own_lower_end() -> None:
    from dpkit.accountant.gdp import gdp_epsilon

    g = pld_epsilon(SelfComposedEvent(GaussianEvent(2.0), 10), DELTA)  # μ-GDP: a closed form, the truth
    assert g.closed_form == "gdp" and g.lower == pytest.approx(gdp_epsilon(10**0.5 / 2.0, DELTA), rel=1e-12)
    assert 0.0 <= g.epsilon - g.lower < 1e-12
