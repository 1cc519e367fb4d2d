"""assess_ledger: the certified ε of a ledger or an event, the informative δ, and the noise a claim needs."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.accountant import GaussianRelease, Ledger, compare_methods, gdp_epsilon, make_accountant
from dpkit.accountant.assessment import LedgerAssessment, assess_ledger, users_informative_delta
from dpkit.accountant.declarations import INFORMATIVE_DELTA
from dpkit.accountant.events import GaussianEvent, LaplaceEvent, PoissonSampledEvent, SelfComposedEvent
from dpkit.accountant.ledger import EventRelease
from dpkit.accountant.validation import ArgumentTypeError

#: DP-SGD-like: Poisson-sampled Gaussian (q = 0.01, noise multiplier 1.1), 1000 steps.
DPSGD = SelfComposedEvent(PoissonSampledEvent(0.01, GaussianEvent(1.1)), 1000)
HETERO = Ledger((GaussianRelease("gram", 1.5, 30.0, 20), GaussianRelease("target", 2.0, 12.0, 5)))


def _eps(ledger: Ledger, key: str, delta: float) -> float:
    return make_accountant(key).epsilon(ledger, delta).epsilon


@pytest.mark.parametrize("delta", [1e-10, 1e-5, 0.1])
def test_a_gaussian_ledgers_certified_epsilon_is_the_exact_gdp_epsilon(delta: float) -> None:
    a = assess_ledger(HETERO, delta=delta)
    assert a.certified_method == "exact" and a.definitive and a.gaussian
    assert a.mu == HETERO.mu
    assert a.certified_epsilon == gdp_epsilon(HETERO.mu, delta)
    assert all(e is None or e >= a.certified_epsilon for e in a.at_delta.epsilons.values())


def test_the_claims_noise_scale_meets_the_claim_exactly() -> None:
    claim, delta = 0.5, 1e-6
    a = assess_ledger(HETERO, delta=delta, epsilon=claim)
    c = a.noise_scale
    assert c is not None and a.noise_ratio == pytest.approx(1.0 / c)
    assert _eps(HETERO.scaled(c), "exact", delta) <= claim
    assert _eps(HETERO.scaled(c * (1 - 1e-9)), "exact", delta) > claim
    # the certified ε is above the claim exactly when the claim needs more noise than the file has
    assert (a.certified_epsilon is not None and a.certified_epsilon > claim) == (c > 1.0)


def test_the_reference_point_sigma_3_7306() -> None:
    # one release, Δ = 1, σ = 1: the claim (1, 1e-5) needs σ = 3.7306 (exact), i.e. c = 3.7306
    a = assess_ledger(Ledger.homogeneous(1.0, 1.0), delta=1e-5, epsilon=1.0)
    assert a.noise_scale == pytest.approx(3.7306, abs=1e-4)
    assert a.noise_ratio == pytest.approx(1 / 3.7306, rel=1e-4)
    assert not a.claim_met and [f.code for f in a.flags] == ["claim-not-met"]


def test_a_gaussian_claim_not_met_is_definitive() -> None:
    led = Ledger.homogeneous(1.0, 3.7)  # σ below 3.7306: ε(1e-5) > 1
    a = assess_ledger(led, delta=1e-5, epsilon=1.0)
    (flag,) = a.flags
    assert (flag.code, flag.severity) == ("claim-not-met", "error") and "exact" in flag.message
    assert a.noise_ratio is not None and a.noise_ratio < 1.0 and a.claim_met is False
    met = assess_ledger(Ledger.homogeneous(1.0, 3.8), delta=1e-5, epsilon=1.0)
    assert met.flags == () and met.claim_met and met.noise_ratio is not None and met.noise_ratio > 1.0


def test_a_dpsgd_event_is_certified_by_pld_or_rdp() -> None:
    a = assess_ledger(DPSGD, delta=1e-5)
    assert a.certified_method in ("pld", "rdp") and not a.definitive and not a.gaussian and a.mu is None
    answered = [e for e in a.at_delta.epsilons.values() if e is not None]
    assert len(answered) >= 2 and all(a.certified_epsilon <= e for e in answered)
    assert "exact" in a.at_delta.refusals  # no closed form for a subsampled Gaussian
    assert [f.code for f in a.flags] == ["no-claim"] and a.noise_scale is None


@pytest.mark.slow
def test_a_dpsgd_claim_not_met_says_the_bound_is_an_upper_bound() -> None:
    base = assess_ledger(DPSGD, delta=1e-5)
    assert base.certified_epsilon is not None and base.certified_epsilon_lower is not None
    assert base.certified_epsilon_lower < base.certified_epsilon and not base.definitive
    # a claim inside the interval [lower, certified]: not certified, which does not show that it fails
    inside = assess_ledger(DPSGD, delta=1e-5, epsilon=(base.certified_epsilon_lower + base.certified_epsilon) / 2)
    (flag,) = inside.flags
    assert inside.claim_status == "not certified" and "upper bound" in flag.message
    # a claim below the interval: the truth exceeds it (issue 33: the lower end makes the verdict definite)
    claim = base.certified_epsilon * 0.8
    a = assess_ledger(DPSGD, delta=1e-5, epsilon=claim)
    (flag,) = a.flags
    assert a.claim_status == "not met" and flag.code == "claim-not-met" and a.certified_method in flag.message
    assert "lies in [" in flag.message and "does not meet the claim" in flag.message
    c = a.noise_scale
    assert c is not None and c > 1.0 and a.noise_ratio == pytest.approx(1.0 / c)
    # the scaled event meets the claim under the method that certified
    scaled = Ledger((EventRelease("event", DPSGD),)).scaled(c)
    assert compare_methods(scaled, 1e-5).epsilons[a.certified_method] <= claim


def test_an_event_with_a_closed_form_is_certified_exactly() -> None:
    # Laplace with scale b = 2Δ: pure ε = 0.5; exactly, δ(ε′) = 1 − e^{(ε′−ε)/2}, so ε′(δ) = ε + 2 ln(1 − δ)
    a = assess_ledger(LaplaceEvent(2.0), delta=1e-6, epsilon=0.5)
    assert a.certified_method == "exact" and a.definitive
    assert a.certified_epsilon == pytest.approx(0.5 + 2 * math.log1p(-1e-6), rel=1e-9) and a.claim_met


def test_informative_delta_and_the_not_informative_warning() -> None:
    assert users_informative_delta(None) == INFORMATIVE_DELTA == 1e-5
    assert users_informative_delta(100) == 1e-5 and users_informative_delta(10**6) == 1e-6
    a = assess_ledger(HETERO, delta=0.1, users=100, epsilon=10.0)
    assert a.delta_informative == 1e-5
    assert [(f.code, f.severity) for f in a.flags] == [("delta-not-informative", "warning")]
    assert a.certified_epsilon_at_informative_delta == gdp_epsilon(HETERO.mu, 1e-5)
    b = assess_ledger(HETERO, delta=1e-7, users=10**6)
    assert b.delta_informative == 1e-6 and [f.code for f in b.flags] == ["no-claim"]
    assert b.flags[0].severity == "info"


def test_the_ends() -> None:
    one = assess_ledger(HETERO, delta=1.0, epsilon=0.1)  # every mechanism is (0, 1)-DP
    assert one.certified_epsilon == 0.0 and one.claim_met and one.noise_scale == 0.0 and one.noise_ratio == math.inf
    free = assess_ledger(HETERO, delta=1e-5, epsilon=math.inf)
    assert free.claim_met and free.noise_scale == 0.0 and free.flags == ()
    zero = assess_ledger(HETERO, delta=0.0, epsilon=5.0)  # a Gaussian is never pure DP
    assert zero.certified_epsilon == math.inf and not zero.claim_met and zero.noise_scale is None
    assert zero.scale_note and [f.code for f in zero.flags] == ["claim-not-met"]
    nothing = assess_ledger(Ledger.homogeneous(1.0, math.inf), delta=1e-5, epsilon=0.0)  # σ = inf releases nothing
    assert nothing.certified_epsilon == 0.0 and nothing.claim_met


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"delta": 1.5}, ValueError, "delta"),
        ({"delta": math.nan}, ValueError, "delta"),
        ({"delta": "0.1"}, ArgumentTypeError, "delta"),
        ({"delta": 1e-5, "epsilon": -1.0}, ValueError, "epsilon"),
        ({"delta": 1e-5, "epsilon": math.nan}, ValueError, "epsilon"),
        ({"delta": 1e-5, "users": 0}, ValueError, "users"),
        ({"delta": 1e-5, "users": 2.5}, ValueError, "users"),
        ({"delta": 1e-5, "users": True}, ArgumentTypeError, "users"),
    ],
)
def test_bad_arguments_name_the_value(kwargs: dict, error: type, words: str) -> None:
    with pytest.raises(error, match=words):
        assess_ledger(HETERO, **kwargs)


def test_the_target_and_options_are_checked() -> None:
    with pytest.raises(TypeError, match="target"):
        assess_ledger({"release": []}, delta=1e-5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        assess_ledger(HETERO, 1e-5)  # type: ignore[misc]  # options are keyword-only


def test_to_dict_is_plain_json() -> None:
    a = assess_ledger(HETERO, delta=0.1, epsilon=1.0, users=1000)
    d = a.to_dict()
    assert isinstance(a, LedgerAssessment)
    assert json.loads(json.dumps(d)) == d
    assert d["certified_epsilon"] == a.certified_epsilon and d["certified_method"] == "exact" and d["definitive"]
    assert d["flags"][0]["code"] == "delta-not-informative" and set(d["epsilons"]) == set(d["refusals"]) | {
        k for k, v in d["epsilons"].items() if v is not None
    }


@settings(
    max_examples=examples(15),
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
@given(
    mu=st.floats(0.05, 20.0),
    k=st.integers(1, 500),
    log_delta=st.floats(math.log(1e-9), math.log(0.5)),
    users=st.none() | st.integers(1, 10**9),
)
@pytest.mark.slow
def test_certified_epsilon_at_the_informative_delta_is_not_smaller(
    mu: float, k: int, log_delta: float, users: int | None
) -> None:
    ledger = Ledger.homogeneous(1.0, math.sqrt(k) / mu, compositions=k)
    a = assess_ledger(ledger, delta=math.exp(log_delta), users=users)
    assert a.delta_informative == users_informative_delta(users)
    assert a.certified_epsilon is not None and a.certified_epsilon_at_informative_delta is not None
    if a.delta_informative <= a.delta:
        assert a.certified_epsilon_at_informative_delta >= a.certified_epsilon
    else:
        assert a.certified_epsilon_at_informative_delta <= a.certified_epsilon
