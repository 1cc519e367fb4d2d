"""The one-run ε lower bound (Steinke, Nasr & Jagielski 2023, with abstention) against an exact mpmath
computation of the same theorem, its monotonicity, its edges, and its false-rejection rate on an exactly ε-DP
randomised response."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.audits.one_run_estimators import one_run_epsilon_lower, one_run_p_value


def _reference_p_value(m: int, r: int, v: int, eps: float, delta: float) -> float:
    """The theorem's p-value with exact binomial sums (mpmath, 50 digits), term by term."""
    mpmath.mp.dps = 50
    q = mpmath.mpf(1) / (1 + mpmath.e ** (-mpmath.mpf(eps)))

    def pmf(k: int) -> mpmath.mpf:
        return mpmath.binomial(r, k) * q**k * (1 - q) ** (r - k)

    tail = mpmath.fsum(pmf(k) for k in range(v, r + 1))
    worst, partial = mpmath.mpf(0), mpmath.mpf(0)
    for i in range(1, v + 1):
        partial += pmf(v - i)
        worst = max(worst, partial / i)
    return float(tail + 2 * m * mpmath.mpf(delta) * worst)


@settings(max_examples=examples(60))
@given(
    m=st.integers(1, 60),
    data=st.data(),
    eps=st.floats(0.0, 6.0),
    delta=st.sampled_from([0.0, 1e-6, 1e-3]),
)
def test_the_p_value_is_the_theorems(m: int, data: st.DataObject, eps: float, delta: float) -> None:
    r = data.draw(st.integers(0, m))
    v = data.draw(st.integers(0, r))
    ours = one_run_p_value(canaries=m, guesses=r, correct=v, epsilon=eps, delta=delta)
    ref = 1.0 if v == 0 else min(1.0, _reference_p_value(m, r, v, eps, delta))
    assert ours >= ref * (1 - 1e-9)  # never below the theorem's value (rounded up) ...
    assert ours == pytest.approx(ref, rel=1e-8, abs=1e-300)  # ... and equal to it


@given(m=st.integers(10, 500), share=st.floats(0.1, 1.0), acc=st.floats(0.5, 1.0))
@pytest.mark.slow
def test_the_bound_is_where_the_p_value_crosses_alpha(m: int, share: float, acc: float) -> None:
    r = max(1, int(share * m))
    v = int(acc * r)
    eps = one_run_epsilon_lower(canaries=m, guesses=r, correct=v, delta=1e-5, alpha=0.05)
    kwargs = {"canaries": m, "guesses": r, "correct": v, "delta": 1e-5}
    if eps > 0:
        assert one_run_p_value(epsilon=eps, **kwargs) <= 0.05  # rejected at the reported ε (sound end)
        assert one_run_p_value(epsilon=eps + 1e-6, **kwargs) > 0.05 - 1e-9 or eps > 100
    more = one_run_epsilon_lower(canaries=m, guesses=r, correct=min(r, v + 1), delta=1e-5)
    assert more >= eps  # more correct guesses never certify less


def test_edges() -> None:
    assert one_run_p_value(canaries=5, guesses=0, correct=0, epsilon=1.0, delta=0.0) == 1.0
    assert one_run_epsilon_lower(canaries=5, guesses=3, correct=1, delta=1e-5) == 0.0
    # pure DP (δ = 0), all of r guesses right: q^r <= α, so ε = logit(α^(1/r)) exactly
    r = 50
    eps = one_run_epsilon_lower(canaries=1000, guesses=r, correct=r, delta=0.0, alpha=0.05)
    q = 0.05 ** (1 / r)
    assert eps == pytest.approx(math.log(q / (1 - q)), rel=1e-9)
    with pytest.raises(ValueError, match="correct <= guesses <= canaries"):
        one_run_p_value(canaries=5, guesses=6, correct=1, epsilon=1.0, delta=0.0)
    with pytest.raises(ValueError, match="alpha"):
        one_run_epsilon_lower(canaries=5, guesses=3, correct=1, delta=0.0, alpha=1.0)


@pytest.mark.slow
def test_an_exactly_eps_dp_mechanism_is_rejected_at_most_alpha_of_the_time() -> None:
    """Randomised response at ε = 1 on m = 1,000 coins, every canary guessed: the bound exceeds 1 in at most
    α of 400 runs (it never should in expectation; the Clopper–Pearson-like slack keeps it well below)."""
    rng = np.random.default_rng(0)
    m, eps = 1000, 1.0
    q = math.exp(eps) / (1 + math.exp(eps))
    above = 0
    for _ in range(400):
        correct = int(rng.binomial(m, q))
        above += one_run_epsilon_lower(canaries=m, guesses=m, correct=correct, delta=0.0) > eps
    assert above / 400 <= 0.05
