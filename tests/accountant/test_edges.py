"""The ends of the (ε, δ) profile are answered, not refused; any bad argument is a TypeError or ValueError naming it."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit import accountant as a
from dpkit.accountant import rlsvi as rlsvi_mod
from dpkit.accountant import tree as tree_mod

INF = math.inf
LEDGER = a.Ledger.homogeneous(1.0, 2.0, compositions=3)
ACCOUNTANTS = [a.make_accountant(m, conversion=c) for _, m, c in a.VARIANTS]


def _mp_delta_at_zero(mu: float) -> float:
    """2Φ(μ/2) − 1 at 50 digits."""
    with mpmath.workdps(50):
        return float(2 * mpmath.ncdf(mpmath.mpf(mu) / 2) - 1)


@pytest.mark.parametrize("mu", [1e-12, 1e-6, 0.01, 0.5, 1.0, 3.0, 10.0, 40.0])
def test_gdp_delta_at_zero_is_the_total_variation(mu: float) -> None:
    ref = _mp_delta_at_zero(mu)
    got = a.gdp_delta(mu, 0.0)
    assert ref <= got <= ref * (1 + 1e-6)  # sound, and tight to the rounding margin of conservative_delta


@pytest.mark.parametrize("mu", [1e-6, 0.5, 1.0, 10.0])
def test_gdp_epsilon_is_zero_from_delta_at_zero_up_to_one(mu: float) -> None:
    d0 = a.gdp_delta(mu, 0.0)
    assert a.gdp_epsilon(mu, min(1.0, d0)) == 0.0
    assert a.gdp_epsilon(mu, 1.0) == 0.0
    assert a.gdp_epsilon(mu, 0.0) == INF
    assert a.gdp_delta(mu, INF) == 0.0


@pytest.mark.parametrize("delta", [1e-9, 1e-3, 0.1, 0.5, 0.99])
def test_gdp_mu_at_epsilon_zero_inverts_the_total_variation(delta: float) -> None:
    mu = a.gdp_mu(0.0, delta)
    with mpmath.workdps(50):
        exact = float(2 * mpmath.erfinv(mpmath.mpf(delta)) * mpmath.sqrt(2))  # 2Φ⁻¹((1 + δ)/2)
        assert 2 * mpmath.ncdf(mpmath.mpf(mu) / 2) - 1 <= delta  # sound: μ-GDP is (0, δ)-DP
    assert exact * (1 - 1e-6) <= mu <= exact


def test_gdp_mu_at_the_trivial_ends() -> None:
    assert a.gdp_mu(1.0, 0.0) == 0.0
    assert a.gdp_mu(1.0, 1.0) == INF
    assert a.gdp_mu(INF, 1e-5) == INF


@pytest.mark.parametrize("conversion", ["bun-steinke", "rdp-optimal", "gaussian-exact"])
def test_zcdp_trivial_ends_and_epsilon_zero(conversion: Any) -> None:
    rho = 0.3
    assert a.zcdp_epsilon(rho, 1.0, conversion=conversion) == 0.0
    assert a.zcdp_epsilon(rho, 0.0, conversion=conversion) == INF
    assert a.zcdp_delta(rho, INF, conversion=conversion) == 0.0
    d0 = a.zcdp_delta(rho, 0.0, conversion=conversion)
    assert _mp_delta_at_zero(math.sqrt(2 * rho)) <= d0 <= 1.0  # never below the exact Gaussian's
    assert a.zcdp_rho(0.5, 0.0, conversion=conversion) == 0.0
    assert a.zcdp_rho(0.5, 1.0, conversion=conversion) == INF
    assert a.zcdp_rho(INF, 1e-5, conversion=conversion) == INF
    rho0 = a.zcdp_rho(0.0, 0.2, conversion=conversion)
    assert rho0 == 0.0 or a.zcdp_delta(rho0, 0.0, conversion=conversion) <= 0.2


@pytest.mark.parametrize("conversion", ["improved", "mironov"])
def test_rdp_trivial_ends(conversion: Any) -> None:
    o, v = [2.0, 8.0], [0.1, 0.4]
    assert a.rdp_epsilon(o, v, 1.0, conversion=conversion).epsilon == 0.0
    assert a.rdp_epsilon(o, v, 0.0, conversion=conversion).epsilon == INF
    assert a.rdp_epsilon(o, [0.0, 0.0], 0.0, conversion=conversion).epsilon == 0.0
    assert a.rdp_delta(o, v, INF, conversion=conversion).delta == 0.0
    assert 0.0 < a.rdp_delta(o, v, 0.0, conversion=conversion).delta <= 1.0
    assert a.linear_rdp_epsilon(0.1, 0.0, conversion=conversion).epsilon == INF
    assert a.linear_rdp_epsilon(0.1, 1.0, conversion=conversion).epsilon == 0.0
    assert a.linear_rdp_delta(0.1, INF, conversion=conversion).delta == 0.0
    assert _mp_delta_at_zero(math.sqrt(0.2)) <= a.linear_rdp_delta(0.1, 0.0, conversion=conversion).delta <= 1.0


@pytest.mark.parametrize("acc", ACCOUNTANTS, ids=lambda acc: acc.label)
def test_every_accountant_answers_the_trivial_ends(acc: a.Accountant) -> None:
    assert acc.epsilon(LEDGER, 1.0).epsilon == 0.0
    assert acc.epsilon(LEDGER, 0.0).epsilon == INF
    assert acc.delta(LEDGER, INF).delta == 0.0
    d0 = acc.delta(LEDGER, 0.0).delta
    assert _mp_delta_at_zero(LEDGER.mu) <= d0 <= 1.0  # no method claims less than the exact δ(0)


def test_wrappers_answer_the_trivial_ends() -> None:
    assert a.gaussian_delta(2.0, 0.0).delta == pytest.approx(a.gdp_delta(0.5, 0.0), rel=1e-12)
    assert a.gaussian_epsilon(2.0, 0.0).epsilon == INF
    assert a.tree_epsilon(8, sigma=2.0, delta=1.0).epsilon == 0.0
    assert a.compare_deltas(LEDGER, INF).deltas["exact"] == 0.0
    assert a.compare_methods(LEDGER, 1.0).epsilons["classic"] == 0.0


def test_calibration_answers_the_ends() -> None:
    """δ = 0: no finite σ (σ = +inf, which achieves ε = 0); δ = 1 or ε = +inf: no noise needed (σ = 0); ε = 0:
    the exact σ with δ(0) = 2Φ(μ/2) − 1 = δ, which the methods that cannot certify ε = 0 refuse with the reason."""
    assert a.calibrate_sigma(1.0, 0.0).sigma == INF and a.calibrate_sigma(1.0, 0.0).epsilon == 0.0
    assert a.calibrate_sigma(1.0, 1.0).sigma == 0.0 and a.calibrate_sigma(1.0, 1.0).epsilon == 0.0
    assert a.calibrate_sigma(INF, 1e-5).sigma == 0.0
    zero = a.calibrate_sigma(0.0, 1e-5, compositions=4)
    assert zero.epsilon == 0.0 and a.gaussian_delta(zero.sigma, 0.0, compositions=4).delta <= 1e-5
    assert a.gaussian_delta(zero.sigma * (1 - 1e-9), 0.0, compositions=4).delta > 1e-5 * (1 - 1e-6)
    for method in ("pld", "rdp", "zcdp", "classic"):
        with pytest.raises(ValueError, match="epsilon = 0|no finite sigma|\\(0.0"):
            a.calibrate_sigma(0.0, 1e-5, method=method)
    with pytest.raises(ValueError, match="epsilon"):
        a.calibrate_sigma(-1.0, 1e-5)


# --- every public function: a bad argument is a TypeError or ValueError that names it ---------------------------

_RUN = a.rlsvi_run_privacy(np.array([[[[0.0]]], [[[1.0]]]]), np.ones((2, 1, 1, 1)))

#: (label, function, valid keyword arguments); each numeric argument is replaced by a bad value in turn.
PUBLIC: list[tuple[str, Callable[..., Any], dict[str, Any]]] = [
    ("gdp_delta", a.gdp_delta, {"mu": 1.0, "epsilon": 1.0}),
    ("gdp_epsilon", a.gdp_epsilon, {"mu": 1.0, "delta": 1e-5}),
    ("gdp_mu", a.gdp_mu, {"epsilon": 1.0, "delta": 1e-5}),
    ("zcdp_epsilon", a.zcdp_epsilon, {"rho": 0.5, "delta": 1e-5}),
    ("zcdp_delta", a.zcdp_delta, {"rho": 0.5, "epsilon": 1.0}),
    ("zcdp_rho", a.zcdp_rho, {"epsilon": 1.0, "delta": 1e-5}),
    ("linear_rdp_epsilon", a.linear_rdp_epsilon, {"rho": 0.5, "delta": 1e-5}),
    ("linear_rdp_delta", a.linear_rdp_delta, {"rho": 0.5, "epsilon": 1.0}),
    ("rdp_epsilon", a.rdp_epsilon, {"orders": [2.0], "values": [0.1], "delta": 1e-5}),
    ("rdp_delta", a.rdp_delta, {"orders": [2.0], "values": [0.1], "epsilon": 1.0}),
    ("classic_sigma", a.classic_sigma, {"epsilon": 0.5, "delta": 1e-5, "sensitivity": 1.0, "compositions": 2}),
    ("calibrate_sigma", a.calibrate_sigma, {"epsilon": 1.0, "delta": 1e-5, "sensitivity": 1.0, "compositions": 2}),
    ("gaussian_epsilon", a.gaussian_epsilon, {"sigma": 5.0, "delta": 1e-5, "sensitivity": 1.0, "compositions": 2}),
    ("gaussian_delta", a.gaussian_delta, {"sigma": 5.0, "epsilon": 1.0, "sensitivity": 1.0, "compositions": 2}),
    ("calibrate_ledger_scale", a.calibrate_ledger_scale, {"ledger": LEDGER, "epsilon": 1.0, "delta": 1e-5}),
    ("compare_methods", a.compare_methods, {"ledger": LEDGER, "delta": 1e-5}),
    ("compare_deltas", a.compare_deltas, {"ledger": LEDGER, "epsilon": 1.0}),
    ("Ledger.homogeneous", a.Ledger.homogeneous, {"sensitivity": 1.0, "sigma": 2.0, "compositions": 3}),
    ("GaussianRelease", a.GaussianRelease, {"name": "q", "sensitivity": 1.0, "sigma": 2.0, "count": 3}),
    ("tree_mu", a.tree_mu, {"steps": 8, "sigma": 2.0, "sensitivity": 1.0}),
    ("tree_epsilon", a.tree_epsilon, {"steps": 8, "sigma": 2.0, "delta": 1e-5, "sensitivity": 1.0}),
    ("tree_delta", tree_mod.tree_delta, {"steps": 8, "sigma": 2.0, "epsilon": 1.0, "sensitivity": 1.0}),
    ("calibrate_tree_sigma", a.calibrate_tree_sigma, {"steps": 8, "epsilon": 1.0, "delta": 1e-5}),
    ("max_psums_per_item", a.max_psums_per_item, {"steps": 8}),
    ("paper_depth", a.paper_depth, {"steps": 8, "base": 2.0}),
    ("vector_sensitivity", a.vector_sensitivity, {"bound": 1.0, "relation": "add_remove"}),
    ("outer_product_sensitivity", a.outer_product_sensitivity, {"bound": 1.0, "relation": "add_remove"}),
    (
        "product_sensitivity",
        a.product_sensitivity,
        {"vector_bound": 1.0, "scalar_bound": 1.0, "relation": "replace_one"},
    ),
    ("episode_sum_sensitivity", a.episode_sum_sensitivity, {"term_bound": 1.0, "steps": 3, "relation": "add_remove"}),
    (
        "rlsvi_closed_form",
        a.rlsvi_closed_form,
        {"states": 3, "actions": 2, "horizon": 4, "episodes": 10, "delta": 1e-5},
    ),
    ("rlsvi_rho", rlsvi_mod.rlsvi_rho, {"states": 3, "actions": 2, "horizon": 4, "episodes": 10}),
    ("rlsvi_worst_case_mu", a.rlsvi_worst_case_mu, {"states": 3, "actions": 2, "horizon": 4, "episodes": 10}),
    ("RlsviRunPrivacy.epsilon", _RUN.epsilon, {"delta": 1e-5}),
    ("RlsviRunPrivacy.delta", _RUN.delta, {"epsilon": 1.0}),
]
PUBLIC += [(f"{acc.label}.epsilon", acc.epsilon, {"ledger": LEDGER, "delta": 1e-5}) for acc in ACCOUNTANTS]
PUBLIC += [(f"{acc.label}.delta", acc.delta, {"ledger": LEDGER, "epsilon": 1.0}) for acc in ACCOUNTANTS]

WRONG_TYPES: list[Any] = ["1", True, None]
BAD_VALUES: list[Any] = [math.nan, INF, -INF, -1, -1.0, 0, 2.5]


@settings(max_examples=examples(300), deadline=None)
@given(
    case=st.sampled_from(PUBLIC),
    which=st.integers(0, 10),
    bad=st.sampled_from(WRONG_TYPES + BAD_VALUES),
)
def test_a_bad_argument_is_a_named_type_or_value_error(
    case: tuple[str, Callable[..., Any], dict[str, Any]], which: int, bad: Any
) -> None:
    label, fn, good = case
    params = sorted(k for k, v in good.items() if isinstance(v, (int, float)) and not isinstance(v, bool))
    param = params[which % len(params)]
    kwargs = {**good, param: bad}
    try:
        fn(**kwargs)
    except TypeError as err:
        assert any(bad is t for t in WRONG_TYPES), f"{label}({param}={bad!r}): TypeError for a value of the right type"
        assert param in str(err), f"{label}({param}={bad!r}): {err}"
    except ValueError as err:
        assert param in str(err) or label.endswith("sensitivity"), f"{label}({param}={bad!r}): {err}"
    else:  # accepted: only where the mathematics has an answer (an ε of +inf, a count-like 2.5 nowhere)
        assert not any(bad is t for t in WRONG_TYPES), f"{label} accepted {param}={bad!r}"
