"""ℓ2 sensitivity: the closed forms under both neighbouring relations and the helpers.

(The empirical checker is tested in tests/audits/test_sensitivity_check.py.)
"""

from __future__ import annotations

import doctest
import math
from collections.abc import Callable
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from sensitivity_cases import COMBO_PARAMS, COMBOS, B, C, Case, H, V, e, pair_changes
from tiers import examples

import dpkit.accountant.sensitivity as sensitivity_module
from dpkit.accountant.sensitivity import (
    RELATIONS,
    check_relation,
    clip_norm,
    episode_outer_product_sensitivity,
    episode_product_sensitivity,
    episode_sum_sensitivity,
    outer_product_sensitivity,
    product_sensitivity,
    stacked_outer_product_sensitivity,
    symmetric_matrix_sensitivity,
    upper_triangle,
    vector_sensitivity,
)

# --------------------------------------------------------------------------------------------
# closed forms


def test_reference_values() -> None:
    s2 = math.sqrt(2)
    expected = {
        vector_sensitivity(B, "add_remove"): B,
        vector_sensitivity(B, "replace_one"): 2 * B,
        vector_sensitivity(B, "replace_one", nonnegative=True): s2 * B,
        outer_product_sensitivity(B, "add_remove"): B**2,
        outer_product_sensitivity(B, "replace_one", noise="full"): s2 * B**2,
        symmetric_matrix_sensitivity(C, "add_remove", psd=True): C,
        symmetric_matrix_sensitivity(C, "replace_one"): 2 * C,
        symmetric_matrix_sensitivity(C, "replace_one", psd=True): s2 * C,
        product_sensitivity(B, scalar_bound=V, relation="add_remove"): B * V,
        product_sensitivity(B, scalar_bound=V, relation="replace_one"): 2 * B * V,
        product_sensitivity(B, scalar_bound=V, relation="replace_one", nonnegative=True): s2 * B * V,
        episode_sum_sensitivity(B, steps=H, relation="add_remove"): H * B,
        episode_sum_sensitivity(B, steps=H, relation="replace_one"): 2 * H * B,
        episode_sum_sensitivity(B, steps=H, relation="replace_one", nonnegative=True): s2 * H * B,
        episode_outer_product_sensitivity(B, steps=H, relation="add_remove"): H * B**2,
        episode_outer_product_sensitivity(B, steps=H, relation="replace_one"): s2 * H * B**2,
        episode_product_sensitivity(B, scalar_bound=V, steps=H, relation="add_remove"): H * B * V,
        episode_product_sensitivity(B, scalar_bound=V, steps=H, relation="replace_one"): 2 * H * B * V,
        episode_product_sensitivity(B, scalar_bound=V, steps=H, relation="replace_one", nonnegative=True): s2
        * H
        * B
        * V,
    }
    for got, want in expected.items():
        assert got == pytest.approx(want, rel=1e-15)
    # The relation and the cone matter; the noise layout and (for add/remove) the cone do not.
    assert vector_sensitivity(B, "add_remove", nonnegative=True) == vector_sensitivity(B, "add_remove")
    for r in RELATIONS:
        assert outer_product_sensitivity(B, r, noise="upper") == outer_product_sensitivity(B, r, noise="full")
        assert symmetric_matrix_sensitivity(C, r, noise="upper") == symmetric_matrix_sensitivity(C, r, noise="full")


def test_seed_003_example() -> None:
    """The worked example in the docstring (Δ1 = H(1+γ)², Δ2 = H(1+γ) under add/remove) runs."""
    gamma, steps = 0.99, 20
    assert episode_outer_product_sensitivity(1 + gamma, steps=steps, relation="add_remove") == pytest.approx(
        steps * (1 + gamma) ** 2
    )
    assert episode_product_sensitivity(
        1 + gamma, scalar_bound=1.0, steps=steps, relation="add_remove"
    ) == pytest.approx(steps * (1 + gamma))
    assert episode_outer_product_sensitivity(1 + gamma, steps=steps, relation="replace-one") == pytest.approx(
        math.sqrt(2) * steps * (1 + gamma) ** 2
    )
    assert episode_product_sensitivity(
        1 + gamma, scalar_bound=1.0, steps=steps, relation="replace-one"
    ) == pytest.approx(2 * steps * (1 + gamma))
    result = doctest.testmod(sensitivity_module)
    assert result.attempted >= 4 and result.failed == 0


@settings(max_examples=examples(150))
@given(
    b=st.floats(1e-100, 1e100),
    v=st.floats(1e-50, 1e50),
    steps=st.integers(1, 10**6),
    relation=st.sampled_from(RELATIONS),
    flag=st.booleans(),
)
def test_closed_forms_round_up(b: float, v: float, steps: int, relation: str, flag: bool) -> None:
    """Every value is ≥ the exact expression (50 digits) and within a few ulps of it."""
    with mpmath.workdps(50):
        _check_rounded_up(b, v, steps, relation, flag)


def _check_rounded_up(b: float, v: float, steps: int, relation: str, flag: bool) -> None:
    factor = 1 if relation == "add_remove" else (mpmath.sqrt(2) if flag else 2)
    mb, mv = mpmath.mpf(b), mpmath.mpf(v)
    pairs = [
        (vector_sensitivity(b, relation, nonnegative=flag), factor * mb),
        (symmetric_matrix_sensitivity(b, relation, psd=flag), factor * mb),
        (product_sensitivity(b, scalar_bound=v, relation=relation, nonnegative=flag), factor * mb * mv),
        (episode_sum_sensitivity(b, steps=steps, relation=relation, nonnegative=flag), factor * steps * mb),
        (
            episode_product_sensitivity(b, scalar_bound=v, steps=steps, relation=relation, nonnegative=flag),
            factor * steps * mb * mv,
        ),
    ]
    psd_factor = 1 if relation == "add_remove" else mpmath.sqrt(2)
    pairs.append((outer_product_sensitivity(b, relation), psd_factor * mb**2))
    pairs.append((episode_outer_product_sensitivity(b, steps=steps, relation=relation), psd_factor * steps * mb**2))
    for got, exact in pairs:
        assert got >= exact
        assert got <= exact * (1 + mpmath.mpf(2) ** -49)


def test_overflow_is_refused() -> None:
    with pytest.raises(ValueError, match="overflow"):
        outer_product_sensitivity(1e200, "add_remove")
    with pytest.raises(ValueError, match="overflow"):
        vector_sensitivity(1.7e308, "replace_one")


def test_relation_spellings() -> None:
    assert [check_relation(r) for r in ("add_remove", "add-remove", "replace_one", "replace-one")] == [
        "add_remove",
        "add_remove",
        "replace_one",
        "replace_one",
    ]
    assert vector_sensitivity(B, "replace-one") == vector_sensitivity(B, "replace_one")
    for bad in ("add", "Add_Remove", "replace one", "", None, 1):
        with pytest.raises(ValueError, match=r"relation.*add_remove, replace_one") as info:
            check_relation(bad)
        assert repr(bad) in str(info.value)


def test_a_relation_checked_is_the_enum_member_and_a_member_passes() -> None:
    from dpkit.accountant.sensitivity import Relation

    got = [check_relation(r) for r in ("add-remove", "replace_one", Relation.ADD_REMOVE)]
    assert got == [Relation.ADD_REMOVE, Relation.REPLACE_ONE, Relation.ADD_REMOVE]
    assert all(type(r) is Relation for r in got)
    assert vector_sensitivity(B, Relation.REPLACE_ONE) == vector_sensitivity(B, "replace_one")


# --------------------------------------------------------------------------------------------
# every closed form, both relations: attained, approached, never exceeded


@pytest.mark.parametrize(("case", "relation"), COMBO_PARAMS)
def test_many_random_pairs_never_exceed_the_bound(case: Case, relation: str) -> None:
    rng = np.random.default_rng(2)
    n = 50_000  # per relation: 10⁵ pairs per closed form
    users = case.sample(rng, n)
    replacements = case.sample(rng, n) if relation == "replace_one" else None
    changes = pair_changes(case, users, replacements)
    claim = case.claim(relation)
    assert changes.max() <= claim
    assert changes.max() >= 0.5 * claim  # the sample does reach far into the ball


@settings(max_examples=examples(200))
@given(
    combo=st.sampled_from(COMBOS),
    seed=st.integers(0, 2**32 - 1),
    scale=st.sampled_from([1e-300, 1e-3, 1.0, 1e3, 1e300]),
    mode=st.sampled_from(["gaussian", "signs", "sparse"]),
)
def test_projected_pairs_never_exceed_the_bound(combo: tuple[Case, str], seed: int, scale: float, mode: str) -> None:
    """Adversarial raw points (huge, tiny, sign patterns, coordinate axes), projected, stay below the claim."""
    case, relation = combo
    rng = np.random.default_rng(seed)
    raw = rng.standard_normal((2, 64, case.p))
    if mode == "signs":
        raw = np.sign(raw)
    elif mode == "sparse":
        raw = raw * (rng.uniform(size=raw.shape) < 0.3)
    users, replacements = case.project_many(raw[0] * scale), case.project_many(raw[1] * scale)
    changes = pair_changes(case, users, replacements if relation == "replace_one" else None)
    assert changes.max() <= case.claim(relation)


# --------------------------------------------------------------------------------------------
# upper triangle vs Frobenius, upper_triangle, clip_norm


def test_upper_triangle_norm_differs_from_frobenius_per_pair() -> None:
    x = (e(0, 3) + e(1, 3)) * B / math.sqrt(2)
    y = (e(0, 3) - e(1, 3)) * B / math.sqrt(2)
    diff = np.outer(x, x) - np.outer(y, y)
    assert np.linalg.norm(upper_triangle(diff)) == pytest.approx(B**2, rel=1e-15)
    assert np.linalg.norm(diff) == pytest.approx(math.sqrt(2) * B**2, rel=1e-15)
    # ... while the suprema coincide: the diagonal difference reaches √2 B² in both.
    diag = np.outer(B * e(0, 3), B * e(0, 3)) - np.outer(B * e(1, 3), B * e(1, 3))
    assert np.linalg.norm(upper_triangle(diag)) == np.linalg.norm(diag) == pytest.approx(math.sqrt(2) * B**2)


@settings(max_examples=examples(60))
@given(
    m=hnp.arrays(
        np.float64,
        st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(1, 5)).map(lambda t: (*t[:2], t[2], t[2])),
        elements=st.floats(-1e6, 1e6),
    ),
    symmetric=st.booleans(),
)
def test_upper_triangle_matches_loop(m: np.ndarray, symmetric: bool) -> None:
    if symmetric:
        m = m + np.swapaxes(m, -1, -2)
    d = m.shape[-1]
    got = upper_triangle(m)
    assert got.shape == (*m.shape[:-2], d * (d + 1) // 2)
    for idx in np.ndindex(m.shape[:-2]):
        ref = [m[idx][i, j] for i in range(d) for j in range(i, d)]
        assert np.array_equal(got[idx], ref)
        if symmetric:  # ‖U(M)‖² = (‖M‖_F² + ‖diag M‖²)/2
            assert np.sum(got[idx] ** 2) == pytest.approx(
                (np.sum(m[idx] ** 2) + np.sum(np.diag(m[idx]) ** 2)) / 2, rel=1e-12, abs=1e-300
            )


def _exact_sq_norm(values: np.ndarray) -> Fraction:
    return sum((Fraction(float(v)) ** 2 for v in values.ravel()), Fraction(0))


wide_floats = st.one_of(
    st.floats(-1e308, 1e308, allow_subnormal=True),
    st.floats(-1e-300, 1e-300, allow_subnormal=True),
    st.sampled_from([0.0, -0.0, 5e-324, 1.7e308, -1.7e308, 1.0, 1e-160, 1e160]),
)


@settings(max_examples=examples(200))
@given(
    x=hnp.arrays(np.float64, st.tuples(st.integers(0, 4), st.integers(1, 5)), elements=wide_floats),
    bound=st.one_of(st.floats(1e-300, 1e300), st.sampled_from([5e-324, 1e-310, 1.0, 1.7e308])),
)
def test_clip_norm_never_exceeds_the_bound(x: np.ndarray, bound: float) -> None:
    out = clip_norm(x, bound)
    assert out.shape == x.shape
    for row_in, row_out in zip(x, out, strict=True):
        assert _exact_sq_norm(row_out) <= Fraction(bound) ** 2  # exactly, not up to rounding
        assert np.all(np.abs(row_out) <= np.abs(row_in))  # never scaled up
        assert np.all((np.sign(row_out) == np.sign(row_in)) | (row_out == 0))  # direction kept
        if _exact_sq_norm(row_in) <= (Fraction(bound) * (1 - Fraction(1, 10**12))) ** 2:
            assert np.array_equal(row_out, row_in)  # short vectors unchanged
        elif bound >= 1e-300 and np.any(row_in):
            # a long vector is scaled to the bound (up to the rounding margin)
            assert math.sqrt(float(_exact_sq_norm(row_out / bound))) >= 1 - 1e-12


@settings(max_examples=examples(100))
@given(
    x=hnp.arrays(np.float64, st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3)), elements=wide_floats),
    bound=st.floats(1e-200, 1e200),
)
def test_clip_norm_of_matrices_uses_frobenius(x: np.ndarray, bound: float) -> None:
    out = clip_norm(x, bound, axis=(-2, -1))
    for m_in, m_out in zip(x, out, strict=True):
        assert _exact_sq_norm(m_out) <= Fraction(bound) ** 2
        if _exact_sq_norm(m_in) <= (Fraction(bound) * (1 - Fraction(1, 10**12))) ** 2:
            assert np.array_equal(m_out, m_in)
        else:  # one scalar factor for the whole matrix (where the output is not subnormal)
            normal = np.abs(m_out) >= 1e-290
            ratios = m_out[normal] / m_in[normal]
            assert np.all(ratios <= 1) and np.ptp(ratios) <= 1e-12 * ratios.max()


def test_clip_norm_examples() -> None:
    assert np.array_equal(clip_norm([[0.0, 0.0], [0.3, 0.4]], 1.0), [[0.0, 0.0], [0.3, 0.4]])
    assert clip_norm([3.0, 4.0], 1.0) == pytest.approx([0.6, 0.8], rel=1e-14)
    assert clip_norm([1e308, 1e308], 1.0) == pytest.approx([math.sqrt(0.5)] * 2, rel=1e-14)
    assert clip_norm([3e-320, 4e-320], 1e-320) == pytest.approx([6e-321, 8e-321], rel=1e-2)


# --------------------------------------------------------------------------------------------
# bad input


BAD_CLOSED_FORMS = [
    (lambda: vector_sensitivity(-1.0, "add_remove"), "bound", "-1.0"),
    (lambda: vector_sensitivity(float("nan"), "add_remove"), "bound", "NaN"),
    (lambda: vector_sensitivity(1.0, "add_remove", nonnegative="yes"), "nonnegative", "'yes'"),
    (lambda: vector_sensitivity(1.0, "neighbours"), "relation", "'neighbours'"),
    (lambda: outer_product_sensitivity(0.0, "add_remove"), "bound", "0.0"),
    (lambda: outer_product_sensitivity(1.0, "add_remove", noise="lower"), "noise", "'lower'"),
    (lambda: symmetric_matrix_sensitivity(math.inf, "replace_one"), "frobenius_bound", "inf"),
    (lambda: symmetric_matrix_sensitivity(1.0, "replace_one", psd=1), "psd", "1"),
    (lambda: symmetric_matrix_sensitivity(1.0, "replace_one", noise=None), "noise", "None"),
    (lambda: product_sensitivity(1.0, scalar_bound=-2.0, relation="add_remove"), "scalar_bound", "-2.0"),
    (lambda: product_sensitivity("1", scalar_bound=2.0, relation="add_remove"), "vector_bound", "'1'"),
    (lambda: episode_sum_sensitivity(1.0, steps=0, relation="add_remove"), "steps", "0"),
    (lambda: episode_sum_sensitivity(1.0, steps=2.5, relation="add_remove"), "steps", "2.5"),
    (lambda: episode_outer_product_sensitivity(1.0, steps=3, relation="add_remove", noise="diag"), "noise", "'diag'"),
    (lambda: episode_product_sensitivity(1.0, scalar_bound=1.0, steps=-1, relation="add_remove"), "steps", "-1"),
    (
        lambda: episode_product_sensitivity(1.0, scalar_bound=1.0, steps=2, relation="replace_one", nonnegative=None),
        "nonnegative",
        "None",
    ),
    (lambda: upper_triangle(np.zeros((2, 3))), "m", "(2, 3)"),
    (lambda: upper_triangle(np.zeros(3)), "m", "(3,)"),
    (lambda: clip_norm([1.0, 2.0], 0.0), "bound", "0.0"),
    (lambda: clip_norm([1.0, np.nan], 1.0), "x", "non-finite"),
    (lambda: clip_norm([1.0, 2.0], 1.0, axis=1), "axis", "1"),
    (lambda: clip_norm([[1.0, 2.0]], 1.0, axis=(0, 0)), "axis", "(0, 0)"),
    (lambda: clip_norm("abc", 1.0), "x", "abc"),
]


@pytest.mark.parametrize(("call", "name", "shown"), BAD_CLOSED_FORMS)
def test_bad_closed_form_input(call: Callable[[], object], name: str, shown: str) -> None:
    with pytest.raises(ValueError) as info:
        call()
    message = str(info.value)
    assert message.startswith(name) or f" {name} " in f" {message} " or f"{name}[" in message
    assert shown in message


def test_stacked_outer_product_reference_values() -> None:
    g = 0.5
    assert stacked_outer_product_sensitivity([1.0, g], "add_remove", steps=3) == pytest.approx(
        3 * math.sqrt(1 + g**2 + g**4), rel=1e-15
    )
    assert stacked_outer_product_sensitivity([1.0, g], "replace_one") == pytest.approx(
        math.sqrt(2 * (1 + g**2 + g**4)), rel=1e-15
    )
    assert stacked_outer_product_sensitivity([1.0, g], "replace_one", noise="full") == pytest.approx(
        math.sqrt(2) * (1 + g**2), rel=1e-15
    )
    # one block is the plain outer product
    assert stacked_outer_product_sensitivity([3.0], "add_remove") == pytest.approx(
        outer_product_sensitivity(3.0, "add_remove")
    )
    for bad, match in [([], "block_bounds"), ("1", "block_bounds"), ([1.0, -1.0], r"block_bounds\[1\]")]:
        with pytest.raises(ValueError, match=match):
            stacked_outer_product_sensitivity(bad, "add_remove")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="steps"):
        stacked_outer_product_sensitivity([1.0], "add_remove", steps=0)
