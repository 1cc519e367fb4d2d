"""The ε estimate beside a verdict is the fitted shape's ε at the claim's δ: a Laplace's ε (closed form), a Gaussian's
ε at δ (∞ at δ = 0, said so), randomized response's ε; none where no shape fits. The same number in the result's
dictionary, its few lines (repr), its notebook view and the command line's table; the μ-GDP reading only against
claims that imply GDP."""

from __future__ import annotations

import dataclasses
import html
import math
from typing import Any

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpkit
from dpkit.accountant.gdp import gdp_epsilon
from dpkit.algorithms.executors import InProcessExecutor
from dpkit.audits import Claim
from dpkit.audits.shape_estimate import EpsilonEstimate, gdp_reading, shape_estimate
from dpkit.audits.shapes import family_curve, family_epsilon, read_shape, roc_points


def _laplace(scale: float) -> Any:
    def release(dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
        return float(np.sum(dataset)) + rng.laplace(0.0, scale, (n, 1))

    release.__qualname__ = f"laplace_b{scale:g}"
    return release


def _gaussian(dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
    return float(np.sum(dataset)) + 3.730631635 * rng.standard_normal((n, 1))


def _rr(dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
    bit = int(dataset[0])
    return np.where(rng.random(n) < 0.75, bit, 1 - bit).astype(float)[:, None]


def _mixture(dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
    """D′ moves 30% of its mass 4σ away: a mixture no one-parameter family follows."""
    base = rng.standard_normal((n, 1))
    return base if float(np.sum(dataset)) == 0.0 else base + np.where(rng.random((n, 1)) < 0.3, 4.0, 0.0)


def _audit(release: Any, claim: Claim, runs: int = 10_000, **options: Any) -> Any:
    return dpkit.audit(release, [0.0], [1.0], claim=claim, runs=runs, executor=InProcessExecutor(), **options)


@settings(max_examples=200, deadline=None)
@given(st.floats(1e-3, 30.0), st.floats(0.0, 0.5))
def test_a_laplace_shapes_epsilon_is_its_closed_form(eps: float, delta: float) -> None:
    # δ(ε) = 1 − e^{(ε − ε_L)/2} for ε <= ε_L: at δ, ε = ε_L + 2 log(1 − δ) (0 once that is negative), in mpmath
    with mpmath.workdps(50):
        exact = max(mpmath.mpf(0), mpmath.mpf(eps) + 2 * mpmath.log1p(-mpmath.mpf(delta)))
        value = family_epsilon("laplace", eps, delta)
        assert value >= exact and value <= exact + mpmath.mpf(1e-12) * max(1, exact) + mpmath.mpf(1e-300)
    assert family_epsilon("laplace", eps, 0.0) == eps


def test_the_shape_of_an_exact_laplace_roc_gives_back_its_epsilon() -> None:
    """An ROC drawn from a Laplace's exact curve (counts of 10⁸ runs) is read as that Laplace, its ε at δ = 0."""
    n = 10**8
    fpr = np.linspace(0.0, 1.0, 65)
    roc = dataclasses.replace(
        roc_points(np.zeros(3), np.ones(3)),
        fp=np.round(fpr * n).astype(np.int64),
        fn=np.round(family_curve("laplace", 1.5, fpr) * n).astype(np.int64),
        n0=n,
        n1=n,
    )
    shape = read_shape(Claim.dp(1.0, 0.0), roc, delta=0.0, share=0.0375, level=0.00625, runs=n)
    est = shape_estimate(shape, 0.0)
    assert est.family == "laplace" and math.isclose(est.value, 1.5, rel_tol=1e-4)
    assert est.interval[0] <= est.value <= est.interval[1]


def test_a_correct_laplace_against_pure_dp_is_estimated_at_its_epsilon() -> None:
    result = _audit(_laplace(1.0), Claim.dp(1.0, 0.0))
    est = result.shape_estimate
    assert result.verdict != "violation" and est.family == "laplace" and est.delta == 0.0
    assert est.interval[0] <= 1.0 <= est.interval[1] and est.interval[0] <= est.value <= est.interval[1]
    assert result.epsilon_estimate == est.value and result.epsilon_gdp_reading is None  # not a GDP claim
    d = result.to_dict()
    assert d["epsilon_estimate"] == est.value and d["epsilon_estimate_interval"] == list(est.interval)
    assert d["epsilon_estimate_family"] == "laplace" and d["epsilon_gdp_reading"] is None
    # the same number in the few lines and in the notebook view
    text = est.describe(3)
    assert f"ε ≈ {text}" in repr(result) and html.escape(text) in result._repr_html_()


def test_a_laplace_at_twice_its_epsilon_is_estimated_near_two() -> None:
    result = _audit(_laplace(0.5), Claim.dp(1.0, 0.0))
    assert result.verdict == "violation" and result.shape_estimate.family == "laplace"
    assert 1.8 <= result.epsilon_estimate <= 2.2
    lo, hi = result.shape_estimate.interval
    assert lo <= 2.0 <= hi


@pytest.mark.slow
def test_a_gaussian_is_estimated_at_its_epsilon_at_delta_and_infinite_at_delta_zero() -> None:
    result = _audit(_gaussian, Claim.dp(1.0, 1e-5), runs=20_000)
    est = result.shape_estimate
    assert est.family == "gaussian" and est.interval[0] <= 1.0 <= est.interval[1]
    assert est.value == pytest.approx(1.0, rel=0.2)
    # the Gaussian reading of the strongest test's μ, as the estimate was before, agrees with it
    assert gdp_epsilon(result.estimate.mu_estimate, 1e-5) == pytest.approx(est.value, rel=0.1)
    pure = _audit(_gaussian, Claim.dp(1.0, 0.0), runs=3_000)
    assert pure.epsilon_estimate == math.inf and "no finite ε at δ = 0" in pure.shape_estimate.note
    assert "∞" in repr(pure) and "∞" in pure._repr_html_() and pure.to_dict()["epsilon_estimate_note"]


def test_randomized_response_is_estimated_at_its_epsilon() -> None:
    result = _audit(_rr, Claim.dp(math.log(3.0), 0.0))
    est = result.shape_estimate
    assert est.family == "randomized-response" and est.interval[0] <= math.log(3.0) <= est.interval[1]


def test_no_estimate_where_no_shape_fits() -> None:
    result = _audit(_mixture, Claim.dp(1.0, 1e-5), attack="gaussian-lr-fitted")
    assert result.verdict == "violation" and not result.judgement.shape.fitted
    assert result.epsilon_estimate is None and "no shape fits" in result.shape_estimate.note
    assert result.to_dict()["epsilon_estimate"] is None and "ε ≈ — (no shape fits" in repr(result)


def test_the_gdp_reading_only_against_claims_that_imply_gdp() -> None:
    assert gdp_reading(0.5, Claim.gdp(1.0), 1e-5) == gdp_epsilon(0.5, 1e-5)
    assert gdp_reading(0.5, Claim.gaussian(2.0), 0.0) == gdp_epsilon(0.5, 1e-5)
    for claim in (Claim.dp(1.0, 1e-5), Claim.dp(1.0, 0.0), Claim.zcdp(0.5), Claim.rdp([2.0], [0.5])):
        assert gdp_reading(0.5, claim, 1e-5) is None


def test_an_estimate_says_what_it_is() -> None:
    assert EpsilonEstimate(2.0, (1.5, math.inf), "laplace", 0.0).describe() == "2 [1.5, ∞] (laplace shape, δ = 0)"
    assert shape_estimate(None, 0.0).value is None
    assert EpsilonEstimate(None, None, None, 0.0).describe() == "—"
