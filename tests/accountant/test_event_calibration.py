"""DP-SGD calibration (dpkit.accountant.event_calibration) against dp-accounting's PLD, recomputed here.

The grid of the issue: q ∈ {1e-3, 1e-2, 0.1}, steps ∈ {1e2, 1e4, 1e5}, ε ∈ {1, 3, 8}, δ = 1e-5. For
each case the calibrated noise multiplier σ must be

* never below what dp-accounting's pessimistic PLD (interval 1e-4, its default) needs, less the
  tolerance its ``calibrate_dp_mechanism`` states (1e-6 in σ): ε_dpa(σ + 1e-6) <= ε;
* within 0.5 % of it: ε_dpa(σ / 1.005) > ε;

and dpkit's ε at σ is never below dp-accounting's optimistic PLD (``pessimistic_estimate=False``).
The full grid is ``@pytest.mark.slow``; three cases run by default.
"""

from __future__ import annotations

import itertools
import math

import dp_accounting
import pytest
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from dp_accounting.rdp import rdp_privacy_accountant

from dpkit.accountant import ArgumentTypeError, calibrate_sigma, gdp_epsilon
from dpkit.accountant.event_calibration import (
    calibrate_noise_multiplier,
    dpsgd_epsilon,
    largest_sampling_probability,
    largest_steps,
)

DELTA = 1e-5
FINE = 1e-4  # dp-accounting's default interval


def _dpsgd(q: float, nm: float, steps: int) -> dp_accounting.DpEvent:
    return dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(nm)), steps
    )


def _dpa_epsilon(q: float, nm: float, steps: int) -> float:
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=FINE)
    acc.compose(_dpsgd(q, nm, steps))
    return float(acc.get_epsilon(DELTA))


def _optimistic_delta(q: float, nm: float, steps: int, epsilon: float) -> float:
    pld = pld_lib.from_gaussian_mechanism(
        nm, sampling_prob=q, value_discretization_interval=FINE, pessimistic_estimate=False, use_connect_dots=False
    )
    return float(pld.self_compose(steps).get_delta_for_epsilon(epsilon))


GRID = list(itertools.product((1e-3, 1e-2, 0.1), (100, 10_000, 100_000), (1.0, 3.0, 8.0)))
SUBSET = [(0.1, 100, 1.0), (1e-2, 10_000, 3.0), (1e-3, 100_000, 8.0)]


def _check_case(q: float, steps: int, epsilon: float) -> None:
    cal = calibrate_noise_multiplier(epsilon, DELTA, sampling_probability=q, steps=steps)
    sigma = cal.noise_multiplier
    assert cal.value == sigma and cal.parameter == "noise_multiplier" and cal.method == "pld"
    assert cal.epsilon <= epsilon
    # sound: what dp-accounting's pessimistic PLD needs, less its stated tolerance, is <= σ
    assert _dpa_epsilon(q, sigma + 1e-6, steps) <= epsilon
    # tight: 0.5 % less noise no longer meets the target under dp-accounting's PLD
    assert _dpa_epsilon(q, sigma / 1.005, steps) > epsilon
    # dpkit's ε is never below dp-accounting's optimistic PLD (a lower estimate of the truth)
    assert _optimistic_delta(q, sigma, steps, cal.epsilon) <= DELTA


@pytest.mark.parametrize(("q", "steps", "epsilon"), SUBSET)
@pytest.mark.slow
def test_calibrated_sigma_against_dp_accounting_subset(q: float, steps: int, epsilon: float) -> None:
    _check_case(q, steps, epsilon)


@pytest.mark.slow
@pytest.mark.parametrize(("q", "steps", "epsilon"), [c for c in GRID if c not in SUBSET])
def test_calibrated_sigma_against_dp_accounting_full_grid(q: float, steps: int, epsilon: float) -> None:
    _check_case(q, steps, epsilon)


def test_mnist_dpsgd_example() -> None:
    # tensorflow-privacy's MNIST DP-SGD tutorial setting: q = 256/60000, σ = 1.1, 60 epochs (14062 steps),
    # δ = 1e-5; tensorflow-privacy reports it with dp-accounting's RDP accountant (recomputed here).
    q, nm, steps = 256 / 60000, 1.1, int(60 * 60000 / 256)
    rdp = rdp_privacy_accountant.RdpAccountant()
    rdp.compose(_dpsgd(q, nm, steps))
    ours = dpsgd_epsilon(DELTA, sampling_probability=q, noise_multiplier=nm, steps=steps)
    assert ours < rdp.get_epsilon(DELTA)  # PLD is tighter than RDP
    assert _optimistic_delta(q, nm, steps, ours) <= DELTA
    # dp-accounting's PLD built with array operations (dpkit.accountant.pld_fast): the same to rounding (dp-accounting
    # sums its loss grid by repeated subtraction, 14,062 steps drift ~1e-10)
    assert ours == pytest.approx(_dpa_epsilon(q, nm, steps), rel=1e-9)


def test_largest_steps_is_feasible_and_tight() -> None:
    q, nm, eps = 256 / 60000, 1.1, 2.92
    cal = largest_steps(eps, DELTA, sampling_probability=q, noise_multiplier=nm)
    t = int(cal.value)
    assert cal.steps == t and cal.epsilon <= eps
    assert _dpa_epsilon(q, nm, t) <= eps + 1e-3  # at dp-accounting's own interval, within its discretisation
    assert _dpa_epsilon(q, nm, int(t * 1.005) + 1) > eps  # 0.5 % more steps break the target
    one_step = largest_steps(0.01, DELTA, sampling_probability=0.5, noise_multiplier=0.5)
    assert one_step.value == 0


def test_largest_sampling_probability_is_feasible_and_tight() -> None:
    nm, steps, eps = 1.1, 10_000, 3.0
    cal = largest_sampling_probability(eps, DELTA, noise_multiplier=nm, steps=steps)
    q = cal.value
    assert cal.sampling_probability == q and cal.epsilon <= eps
    assert _dpa_epsilon(q, nm, steps) <= eps + 1e-3
    assert _dpa_epsilon(min(1.0, q * 1.005), nm, steps) > eps


def test_ends_are_answered() -> None:
    # q = 1: the plain Gaussian, calibrated exactly (μ-GDP)
    cal = calibrate_noise_multiplier(1.0, DELTA, sampling_probability=1.0, steps=100)
    assert cal.method == "exact" and cal.value == calibrate_sigma(1.0, DELTA, compositions=100).sigma
    # q = 0 or σ = inf: nothing released
    assert calibrate_noise_multiplier(1.0, DELTA, sampling_probability=0.0, steps=100).value == 0.0
    assert largest_steps(1.0, DELTA, sampling_probability=0.0, noise_multiplier=1.0).value == math.inf
    assert largest_steps(1.0, DELTA, sampling_probability=0.1, noise_multiplier=math.inf).value == math.inf
    assert largest_sampling_probability(1.0, DELTA, noise_multiplier=math.inf, steps=10).value == 1.0
    # q = 1 in the other two
    t = largest_steps(1.0, DELTA, sampling_probability=1.0, noise_multiplier=10.0)
    assert gdp_epsilon(math.sqrt(t.value) / 10.0, DELTA) <= 1.0 < gdp_epsilon(math.sqrt(t.value + 1) / 10.0, DELTA)
    assert largest_sampling_probability(1.0, DELTA, noise_multiplier=100.0, steps=10).value == 1.0
    # no noise: T steps are exactly (0, 1 − (1 − q)^T)-DP
    assert calibrate_noise_multiplier(1.0, 0.5, sampling_probability=1e-3, steps=100).value == 0.0
    q0 = largest_sampling_probability(1.0, DELTA, noise_multiplier=0.0, steps=10).value
    assert 1 - (1 - q0) ** 10 <= DELTA < 1 - (1 - q0 * 1.001) ** 10
    assert largest_steps(1.0, 0.01, sampling_probability=1e-3, noise_multiplier=0.0).value == 10
    # dpsgd_epsilon's ends
    assert dpsgd_epsilon(0.0, sampling_probability=0.1, noise_multiplier=1.0, steps=10) == math.inf
    assert dpsgd_epsilon(1.0, sampling_probability=0.1, noise_multiplier=1.0, steps=10) == 0.0
    assert dpsgd_epsilon(DELTA, sampling_probability=0.0, noise_multiplier=1.0, steps=10) == 0.0


def test_bad_arguments_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="epsilon"):
        calibrate_noise_multiplier(0.0, DELTA, sampling_probability=0.1, steps=10)
    with pytest.raises(ValueError, match="delta"):
        calibrate_noise_multiplier(1.0, 1.5, sampling_probability=0.1, steps=10)
    with pytest.raises(ValueError, match="sampling_probability"):
        calibrate_noise_multiplier(1.0, DELTA, sampling_probability=1.5, steps=10)
    with pytest.raises(ArgumentTypeError, match="steps"):
        largest_sampling_probability(1.0, DELTA, noise_multiplier=1.0, steps="10")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        calibrate_noise_multiplier(1.0, DELTA, 0.1, 10)  # type: ignore[misc]


def test_rdp_method_is_looser_than_pld_and_close_to_dp_accounting_rdp() -> None:
    q, steps, eps = 1e-2, 10_000, 3.0
    rdp_cal = calibrate_noise_multiplier(eps, DELTA, sampling_probability=q, steps=steps, method="rdp")
    pld_cal = calibrate_noise_multiplier(eps, DELTA, sampling_probability=q, steps=steps)
    assert rdp_cal.method == "rdp" and rdp_cal.epsilon <= eps
    assert rdp_cal.value > pld_cal.value  # RDP needs more noise than the PLD
    theirs = rdp_privacy_accountant.RdpAccountant()
    theirs.compose(_dpsgd(q, rdp_cal.value, steps))
    assert theirs.get_epsilon(DELTA) == pytest.approx(eps, rel=0.02)  # dp-accounting's RDP, other orders
    t = largest_steps(2.92, DELTA, sampling_probability=256 / 60000, noise_multiplier=1.1, method="rdp")
    assert (
        t.epsilon <= 2.92
        and t.value < largest_steps(2.92, DELTA, sampling_probability=256 / 60000, noise_multiplier=1.1).value
    )
    qr = largest_sampling_probability(eps, DELTA, noise_multiplier=1.1, steps=steps, method="rdp")
    assert qr.epsilon <= eps and 0.0 < qr.value
    with pytest.raises(ValueError, match="method"):
        calibrate_noise_multiplier(eps, DELTA, sampling_probability=q, steps=steps, method="prv")
