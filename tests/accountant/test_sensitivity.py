"""ℓ2 sensitivity: closed forms under both neighbouring relations, helpers and the empirical checker."""

from __future__ import annotations

import doctest
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from tiers import examples

import dpkit.accountant.sensitivity as sensitivity_module
from dpkit.accountant.sensitivity import (
    NOISES,
    RELATIONS,
    SensitivityCheck,
    check_relation,
    check_sensitivity,
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

B, V, C, H = 1.5, 0.5, 2.0, 3  # vector bound, scalar bound, Frobenius bound, episode length


def _e(i: int, d: int) -> np.ndarray:
    out = np.zeros(d)
    out[i] = 1.0
    return out


def _clip(z: np.ndarray, bound: float, nonnegative: bool = False) -> np.ndarray:
    return clip_norm(np.maximum(z, 0.0) if nonnegative else z, bound)


def _release(g: np.ndarray, noise: str) -> np.ndarray:
    """What a batch of symmetric matrices (batch, d, d) releases under ``noise``."""
    return upper_triangle(g) if noise == "upper" else g.reshape(len(g), -1)


@dataclass(frozen=True)
class Case:
    """One closed form with an additive statistic that has exactly that sensitivity."""

    name: str
    claim: Callable[[str], float]  # relation -> closed form
    fv: Callable[[np.ndarray], np.ndarray]  # vectorised f: (batch, n_users, p) -> (batch, ...)
    project_many: Callable[[np.ndarray], np.ndarray]  # (n, p) -> admissible (n, p)
    p: int
    worst: Callable[[str], tuple[np.ndarray, np.ndarray | None]]  # a pair attaining the claim

    def f(self, dataset: np.ndarray) -> np.ndarray:
        return self.fv(dataset[None])[0]

    def project(self, z: np.ndarray) -> np.ndarray:
        return self.project_many(z[None])[0]

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        # Gaussian directions at log-uniform radii: many land inside, many are clipped onto the sphere.
        raw = rng.standard_normal((n, self.p)) * 10.0 ** rng.uniform(-1.0, 0.7, (n, 1))
        return self.project_many(raw)

    def __repr__(self) -> str:
        return self.name


def _pair(add: np.ndarray, replace: tuple[np.ndarray, np.ndarray]) -> Callable[[str], tuple]:
    return lambda relation: (add, None) if relation == "add_remove" else replace


def _vector_case(nn: bool, d: int = 3) -> Case:
    return Case(
        f"vector(nonnegative={nn})",
        lambda r: vector_sensitivity(B, r, nonnegative=nn),
        lambda D: D.sum(axis=-2),
        lambda Z: _clip(Z, B, nn),
        d,
        _pair(B * _e(0, d), (B * _e(0, d), B * (_e(1, d) if nn else -_e(0, d)))),
    )


def _outer_case(noise: str, d: int = 3) -> Case:
    return Case(
        f"outer_product(noise={noise})",
        lambda r: outer_product_sensitivity(B, r, noise=noise),
        lambda D: _release(np.einsum("bni,bnj->bij", D, D), noise),
        lambda Z: _clip(Z, B),
        d,
        _pair(B * _e(0, d), (B * _e(0, d), B * _e(1, d))),
    )


def _symmetric_project(psd: bool, d: int) -> Callable[[np.ndarray], np.ndarray]:
    def project(Z: np.ndarray) -> np.ndarray:
        m = Z.reshape(len(Z), d, d)
        m = (m + np.swapaxes(m, -1, -2)) / 2
        if psd:
            w, q = np.linalg.eigh(m)
            m = np.einsum("nij,nj,nkj->nik", q, np.maximum(w, 0.0), q)
            m = (m + np.swapaxes(m, -1, -2)) / 2
        return clip_norm(m, C, axis=(-2, -1)).reshape(len(Z), d * d)

    return project


def _symmetric_case(psd: bool, noise: str, d: int = 2) -> Case:
    e11, e22 = np.diag(_e(0, d)).ravel() * C, np.diag(_e(1, d)).ravel() * C
    return Case(
        f"symmetric_matrix(psd={psd}, noise={noise})",
        lambda r: symmetric_matrix_sensitivity(C, r, psd=psd, noise=noise),
        lambda D: _release(D.reshape(*D.shape[:2], d, d).sum(axis=1), noise),
        _symmetric_project(psd, d),
        d * d,
        _pair(e11, (e11, e22 if psd else -e11)),
    )


def _product_project(nn: bool, d: int, steps: int) -> Callable[[np.ndarray], np.ndarray]:
    def project(Z: np.ndarray) -> np.ndarray:
        r = Z.reshape(len(Z), steps, d + 1)
        x = _clip(r[..., :d], B, nn)
        v = np.clip(r[..., d:], 0.0 if nn else -V, V)
        return np.concatenate([x, v], axis=-1).reshape(len(Z), -1)

    return project


def _product_fv(d: int, steps: int) -> Callable[[np.ndarray], np.ndarray]:
    def fv(D: np.ndarray) -> np.ndarray:
        r = D.reshape(*D.shape[:2], steps, d + 1)
        return (r[..., :d] * r[..., d:]).sum(axis=(1, 2))

    return fv


def _product_case(nn: bool, d: int = 3) -> Case:
    u = np.append(B * _e(0, d), V)
    return Case(
        f"product(nonnegative={nn})",
        lambda r: product_sensitivity(B, scalar_bound=V, relation=r, nonnegative=nn),
        _product_fv(d, 1),
        _product_project(nn, d, 1),
        d + 1,
        _pair(u, (u, np.append(B * _e(1, d), V) if nn else np.append(B * _e(0, d), -V))),
    )


def _episode_sum_case(nn: bool, d: int = 2) -> Case:
    def project(Z: np.ndarray) -> np.ndarray:
        return _clip(Z.reshape(len(Z), H, d), B, nn).reshape(len(Z), -1)

    one, two = np.tile(B * _e(0, d), H), np.tile(B * _e(1, d), H)
    return Case(
        f"episode_sum(nonnegative={nn})",
        lambda r: episode_sum_sensitivity(B, steps=H, relation=r, nonnegative=nn),
        lambda D: D.reshape(*D.shape[:2], H, d).sum(axis=(1, 2)),
        project,
        H * d,
        _pair(one, (one, two if nn else -one)),
    )


def _episode_outer_case(noise: str, d: int = 2, steps: int = 2) -> Case:
    def fv(D: np.ndarray) -> np.ndarray:
        z = D.reshape(len(D), -1, d)  # every step of every user
        return _release(np.einsum("bni,bnj->bij", z, z), noise)

    def project(Z: np.ndarray) -> np.ndarray:
        return _clip(Z.reshape(len(Z), steps, d), B).reshape(len(Z), -1)

    one, two = np.tile(B * _e(0, d), steps), np.tile(B * _e(1, d), steps)
    return Case(
        f"episode_outer_product(noise={noise})",
        lambda r: episode_outer_product_sensitivity(B, steps=steps, relation=r, noise=noise),
        fv,
        project,
        steps * d,
        _pair(one, (one, two)),
    )


def _episode_product_case(nn: bool, d: int = 2, steps: int = 2) -> Case:
    one = np.tile(np.append(B * _e(0, d), V), steps)
    two = np.tile(np.append(B * _e(1, d), V) if nn else np.append(B * _e(0, d), -V), steps)
    return Case(
        f"episode_product(nonnegative={nn})",
        lambda r: episode_product_sensitivity(B, scalar_bound=V, steps=steps, relation=r, nonnegative=nn),
        _product_fv(d, steps),
        _product_project(nn, d, steps),
        steps * (d + 1),
        _pair(one, (one, two)),
    )


CASES = [
    *(_vector_case(nn) for nn in (False, True)),
    *(_outer_case(noise) for noise in NOISES),
    *(_symmetric_case(psd, noise) for psd in (False, True) for noise in NOISES),
    *(_product_case(nn) for nn in (False, True)),
    *(_episode_sum_case(nn) for nn in (False, True)),
    *(_episode_outer_case(noise) for noise in NOISES),
    *(_episode_product_case(nn) for nn in (False, True)),
]
COMBOS = list(itertools.product(CASES, RELATIONS))
COMBO_PARAMS = [pytest.param(case, relation, id=f"{case.name}-{relation}") for case, relation in COMBOS]


def _changes(case: Case, users: np.ndarray, replacements: np.ndarray | None) -> np.ndarray:
    """‖f(D) − f(D′)‖ for single-user datasets, all pairs at once (f is additive, f(∅) = 0)."""
    terms = case.fv(users[:, None, :]).reshape(len(users), -1)
    if replacements is not None:
        terms = terms - case.fv(replacements[:, None, :]).reshape(len(users), -1)
    return np.linalg.norm(terms, axis=1)


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


# --------------------------------------------------------------------------------------------
# every closed form, both relations: attained, approached, never exceeded


@pytest.mark.parametrize(("case", "relation"), COMBO_PARAMS)
def test_worst_case_pair_attains_the_bound(case: Case, relation: str) -> None:
    claim = case.claim(relation)
    u, v = case.worst(relation)
    # The written pair is admissible ...
    assert np.allclose(case.project(u), u, rtol=0, atol=1e-12)
    assert v is None or np.allclose(case.project(v), v, rtol=0, atol=1e-12)
    # ... and attains the claim: the checker reports it (projected), ratio 1 up to rounding.
    kw = {"rng": 0, "project": case.project, "candidates": [(u, v)], "n_random": 8, "n_local": 0}
    res = check_sensitivity(case.f, sample=case.sample, claim=claim, relation=relation, **kw)
    assert 1 - 1e-12 <= res.ratio <= 1 + 1e-12
    assert not res.exceeds
    assert np.allclose(case.project(res.user), res.user, rtol=0, atol=1e-12)
    # A claim 10% too low is refuted.
    low = check_sensitivity(case.f, sample=case.sample, claim=0.9 * claim, relation=relation, **kw)
    assert low.exceeds and low.ratio == pytest.approx(1 / 0.9, rel=1e-12)


@pytest.mark.parametrize(("case", "relation"), COMBO_PARAMS)
def test_search_without_candidates_approaches_the_bound(case: Case, relation: str) -> None:
    claim = case.claim(relation)
    res = check_sensitivity(
        case.fv,
        sample=case.sample,
        claim=claim,
        relation=relation,
        rng=1,
        project=case.project,
        n_random=400,
        n_local=2,
        vectorized=True,
    )
    assert 0.97 <= res.ratio and not res.exceeds
    # The reported pair is admissible and `largest` is the change at it.
    assert np.allclose(case.project(res.user), res.user, rtol=0, atol=1e-12)
    assert (res.replacement is None) == (relation == "add_remove")
    if res.replacement is not None:
        assert np.allclose(case.project(res.replacement), res.replacement, rtol=0, atol=1e-12)
    direct = _changes(case, res.user[None], None if res.replacement is None else res.replacement[None])[0]
    assert res.largest == pytest.approx(direct, rel=1e-12)


@pytest.mark.parametrize(("case", "relation"), COMBO_PARAMS)
def test_many_random_pairs_never_exceed_the_bound(case: Case, relation: str) -> None:
    rng = np.random.default_rng(2)
    n = 50_000  # per relation: 10⁵ pairs per closed form
    users = case.sample(rng, n)
    replacements = case.sample(rng, n) if relation == "replace_one" else None
    changes = _changes(case, users, replacements)
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
    changes = _changes(case, users, replacements if relation == "replace_one" else None)
    assert changes.max() <= case.claim(relation)


# --------------------------------------------------------------------------------------------
# upper triangle vs Frobenius, upper_triangle, clip_norm


def test_upper_triangle_norm_differs_from_frobenius_per_pair() -> None:
    x = (_e(0, 3) + _e(1, 3)) * B / math.sqrt(2)
    y = (_e(0, 3) - _e(1, 3)) * B / math.sqrt(2)
    diff = np.outer(x, x) - np.outer(y, y)
    assert np.linalg.norm(upper_triangle(diff)) == pytest.approx(B**2, rel=1e-15)
    assert np.linalg.norm(diff) == pytest.approx(math.sqrt(2) * B**2, rel=1e-15)
    # ... while the suprema coincide: the diagonal difference reaches √2 B² in both.
    diag = np.outer(B * _e(0, 3), B * _e(0, 3)) - np.outer(B * _e(1, 3), B * _e(1, 3))
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
# the checker: bookkeeping, reproducibility, vectorisation, non-additive f


VEC = _vector_case(False)


def test_evaluations_are_counted() -> None:
    res = check_sensitivity(VEC.f, sample=VEC.sample, claim=3.0, relation="add_remove", rng=0, n_random=50, n_local=0)
    assert res.evaluations == 51  # 50 datasets D and the one D′ (the empty dataset)
    res = check_sensitivity(VEC.f, sample=VEC.sample, claim=3.0, relation="replace_one", rng=0, n_random=50, n_local=0)
    assert res.evaluations == 100
    assert isinstance(res, SensitivityCheck) and res.relation == "replace_one"


def test_replace_one_pairs_up_the_whole_random_pool() -> None:
    """Without local search, replace-one still finds far pairs: any two draws are neighbours.

    With non-negative vectors, pairs drawn side by side rarely point in orthogonal directions
    (ratio ≈ 0.92 for the best of 2000 here); pairing across the pool finds ones that do.
    """
    case = _vector_case(True, d=2)

    def sample(rng: np.random.Generator, n: int) -> np.ndarray:  # |Gaussian| directions, inside the ball
        x = np.abs(rng.standard_normal((n, 2)))
        return x / np.linalg.norm(x, axis=1, keepdims=True) * B * np.sqrt(rng.uniform(size=(n, 1)))

    claim = case.claim("replace_one")
    res = check_sensitivity(case.f, sample=sample, claim=claim, relation="replace_one", rng=4, n_random=2000, n_local=0)
    assert res.ratio >= 0.97 and not res.exceeds
    assert res.evaluations == 4000  # no evaluation beyond the random draws
    rng = np.random.default_rng(4)
    users, replacements = sample(rng, 2000), sample(rng, 2000)
    side_by_side = _changes(case, users, replacements).max() / claim
    assert side_by_side < 0.95  # (so the test shows the pooling at work)
    pool = np.concatenate([users, replacements])
    assert any(np.array_equal(res.user, u) for u in pool) and any(np.array_equal(res.replacement, u) for u in pool)


def test_same_seed_same_result() -> None:
    kw = {"project": VEC.project, "n_random": 300, "n_local": 3}
    a = check_sensitivity(VEC.f, sample=VEC.sample, claim=3.0, relation="replace_one", rng=5, **kw).to_dict()
    b = check_sensitivity(VEC.f, sample=VEC.sample, claim=3.0, relation="replace-one", rng=5, **kw).to_dict()
    c = check_sensitivity(
        VEC.f, sample=VEC.sample, claim=3.0, relation="replace_one", rng=np.random.default_rng(5), **kw
    ).to_dict()
    d = check_sensitivity(VEC.f, sample=VEC.sample, claim=3.0, relation="replace_one", rng=6, **kw).to_dict()
    assert a == b == c
    assert a != d
    assert a["relation"] == "replace_one" and len(a["user"]) == len(a["replacement"]) == 3


@pytest.mark.parametrize("relation", RELATIONS)
@pytest.mark.parametrize("case", [VEC, _product_case(True), _outer_case("upper")], ids=repr)
def test_vectorized_matches_loop(case: Case, relation: str) -> None:
    kw = {"rng": 11, "project": case.project, "n_random": 200, "n_local": 2, "background": 3}
    loop = check_sensitivity(case.f, sample=case.sample, claim=case.claim(relation), relation=relation, **kw)
    batched = check_sensitivity(
        case.fv, sample=case.sample, claim=case.claim(relation), relation=relation, vectorized=True, **kw
    )
    assert loop.to_dict() == batched.to_dict()  # bit for bit: the same datasets in the same order


def test_vectorized_random_search_is_one_call_per_relation() -> None:
    calls: list[tuple[int, ...]] = []

    def fv(D: np.ndarray) -> np.ndarray:
        calls.append(D.shape)
        return D.sum(axis=-2)

    check_sensitivity(
        fv, sample=VEC.sample, claim=3.0, relation="add_remove", rng=0, n_random=400, n_local=0, vectorized=True
    )
    assert calls == [(400, 1, 3), (1, 0, 3)]
    calls.clear()
    check_sensitivity(
        fv, sample=VEC.sample, claim=3.0, relation="replace_one", rng=0, n_random=400, n_local=0, vectorized=True
    )
    assert calls == [(800, 1, 3)]


def _clipped_mean(D: np.ndarray) -> np.ndarray:
    return clip_norm(D, 1.0).mean(axis=-2)


def test_non_additive_clipped_mean_with_background() -> None:
    n_bg, d = 9, 3
    drawn: dict[int, np.ndarray] = {}

    def sample(rng: np.random.Generator, n: int) -> np.ndarray:
        drawn[n] = rng.standard_normal((n, d)) * rng.uniform(0.2, 2.0, (n, 1))  # some beyond the clip
        return drawn[n]

    # replace-one: the mean of n_bg + 1 clipped users moves by at most 2/(n_bg + 1), at (e1, −e1).
    claim = 2.0 / (n_bg + 1)
    kw = {"rng": 3, "background": n_bg, "n_random": 500, "n_local": 3}
    e1 = _e(0, d)
    hit = check_sensitivity(
        _clipped_mean, sample=sample, claim=claim, relation="replace_one", candidates=[(e1, -e1)], **kw
    )
    assert 1 - 1e-12 <= hit.ratio <= 1 + 1e-9
    found = check_sensitivity(_clipped_mean, sample=sample, claim=claim, relation="replace_one", **kw)
    assert found.ratio >= 0.97 and not found.exceeds
    vec = check_sensitivity(
        lambda D: _clipped_mean(D), sample=sample, claim=claim, relation="replace_one", vectorized=True, **kw
    )
    assert vec.to_dict() == found.to_dict()

    # add/remove with a fixed background S: sup_u ‖(S + c(u))/(n+1) − S/n‖ = (n + ‖S‖)/(n(n+1)),
    # attained at c(u) = −S/‖S‖ — below the generic 2/(n+1).
    res = check_sensitivity(_clipped_mean, sample=sample, claim=claim, relation="add_remove", **kw)
    s = clip_norm(drawn[n_bg], 1.0).sum(axis=0)
    exact = (n_bg + np.linalg.norm(s)) / (n_bg * (n_bg + 1))
    assert 0.97 * exact <= res.largest <= exact * (1 + 1e-12)
    assert not res.exceeds


# --------------------------------------------------------------------------------------------
# bad input


def _sample2(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.uniform(-0.5, 0.5, (n, 2))


def _sum(D: np.ndarray) -> np.ndarray:
    return D.sum(axis=0)


def _check(**overrides: object) -> SensitivityCheck:
    kw: dict[str, object] = {
        "f": _sum,
        "sample": _sample2,
        "claim": 1.0,
        "relation": "add_remove",
        "rng": 0,
        "n_random": 5,
        "n_local": 1,
        "project": lambda z: np.clip(z, -0.5, 0.5),
    }
    kw.update(overrides)
    return check_sensitivity(**kw)  # type: ignore[arg-type]


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

BAD_CHECKS = [
    ({"claim": 0.0}, "claim", "0.0"),
    ({"claim": -1}, "claim", "-1"),
    ({"relation": "swap"}, "relation", "'swap'"),
    ({"n_random": 0}, "n_random", "0"),
    ({"n_local": -1}, "n_local", "-1"),
    ({"n_local": 1.5}, "n_local", "1.5"),
    ({"background": -2}, "background", "-2"),
    ({"background": True}, "background", "True"),
    ({"rtol": -1e-3}, "rtol", "-0.001"),
    ({"rng": "seed"}, "rng", "'seed'"),
    ({"rng": -3}, "rng", "-3"),
    ({"vectorized": "no"}, "vectorized", "'no'"),
    ({"f": 3}, "f", "3"),
    ({"sample": None}, "sample", "None"),
    ({"project": "clip"}, "project", "'clip'"),
    ({"sample": lambda rng, n: np.zeros(n)}, "sample", "shape"),
    ({"sample": lambda rng, n: np.zeros((n + 1, 2))}, "sample", "shape"),
    ({"sample": lambda rng, n: np.full((n, 2), np.nan)}, "sample", "non-finite"),
    ({"sample": lambda rng, n: np.zeros((n, 2 + (n == 3))), "background": 3}, "sample", "shape"),
    ({"f": lambda D: np.full(2, np.inf)}, "f", "non-finite"),
    ({"f": lambda D: np.zeros(len(D))}, "f", "shapes"),
    ({"f": lambda D: D.sum(axis=-2)[:1], "vectorized": True}, "f", "leading axis"),
    ({"project": lambda z: z[:1]}, "project", "shape"),
    ({"candidates": [(np.zeros(3), None)]}, "candidates", "shape"),
    ({"candidates": [(np.zeros(2), np.zeros(2))]}, "candidates", "None"),
    ({"candidates": [np.zeros(2)]}, "candidates", "shape ()"),
    ({"candidates": [(np.zeros(2), None, None)]}, "candidates", "pair"),
    ({"candidates": 5}, "candidates", "5"),
    ({"candidates": [(np.zeros(2), None)], "relation": "replace_one"}, "candidates", "None"),
    ({"candidates": [([0.0, np.nan], None)]}, "candidates", "finite"),
]


@pytest.mark.parametrize(("call", "name", "shown"), BAD_CLOSED_FORMS)
def test_bad_closed_form_input(call: Callable[[], object], name: str, shown: str) -> None:
    with pytest.raises(ValueError) as info:
        call()
    message = str(info.value)
    assert message.startswith(name) or f" {name} " in f" {message} " or f"{name}[" in message
    assert shown in message


@pytest.mark.parametrize(("overrides", "name", "shown"), BAD_CHECKS)
def test_bad_check_input(overrides: dict[str, object], name: str, shown: str) -> None:
    with pytest.raises(ValueError) as info:
        _check(**overrides)
    message = str(info.value)
    assert message.startswith(name), message
    assert shown in message, message


def test_good_check_input_baseline() -> None:
    """The baseline used by the bad-input cases is itself valid (so each case fails for its own reason)."""
    res = _check()
    assert math.sqrt(0.5) * 0.9 <= res.largest <= math.sqrt(0.5) and not res.exceeds


# ------------------------------------------------------------------ stacked blocks z = [x₁; …; x_k]


def _stacked_sample(bounds: list[float], dims: list[int]):  # noqa: ANN202
    def project(z: np.ndarray) -> np.ndarray:
        parts, start = [], 0
        for b, d in zip(bounds, dims):
            parts.append(clip_norm(z[start : start + d], b))
            start += d
        return np.concatenate(parts)

    def sample(rng: np.random.Generator, n: int) -> np.ndarray:
        raw = rng.standard_normal((n, sum(dims)))
        out = np.stack([project(r * 10.0) for r in raw])  # mostly at the bounds
        return out * np.where(rng.random((n, 1)) < 0.7, 1.0, rng.random((n, 1)))

    return sample, project


@pytest.mark.parametrize("noise", ["upper", "full"])
@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
@pytest.mark.parametrize("bounds", [[1.0, 0.5], pytest.param([2.0, 1.0, 0.3], marks=pytest.mark.slow)])
def test_stacked_outer_product_attained_and_never_exceeded(bounds: list[float], relation: str, noise: str) -> None:
    dims = [2] * len(bounds)
    steps = 2
    p = sum(dims)
    sample, project = _stacked_sample(bounds, dims)

    def f(ds: np.ndarray) -> np.ndarray:  # user = `steps` stacked vectors z
        zs = ds.reshape(ds.shape[0], steps, p)
        m = np.einsum("uhi,uhj->ij", zs, zs)
        return upper_triangle(m) if noise == "upper" else m.ravel()

    def sample_user(rng: np.random.Generator, n: int) -> np.ndarray:
        return np.concatenate([sample(rng, n) for _ in range(steps)], axis=1)

    def project_user(z: np.ndarray) -> np.ndarray:
        return np.concatenate([project(z[i * p : (i + 1) * p]) for i in range(steps)])

    claim = stacked_outer_product_sensitivity(bounds, relation, noise=noise, steps=steps)
    first = np.concatenate([np.eye(2)[0] * b for b in bounds])  # each block at its bound on coordinate 0
    second = np.concatenate([np.eye(2)[1] * b for b in bounds])  # ... and on coordinate 1: orthogonal
    worst = (np.tile(first, steps), None if relation == "add_remove" else np.tile(second, steps))
    hit = check_sensitivity(
        f,
        sample=sample_user,
        claim=claim,
        relation=relation,
        rng=3,
        project=project_user,
        candidates=[worst],
        n_random=10,
        n_local=0,
    )
    assert hit.ratio >= 1 - 1e-12 and not hit.exceeds
    found = check_sensitivity(
        f, sample=sample_user, claim=claim, relation=relation, rng=4, project=project_user, n_random=600, n_local=2
    )
    assert not found.exceeds and found.ratio > 0.9
    # the stacked bound is never above the single-ball bound with B² = Σ b²
    single = episode_outer_product_sensitivity(
        math.sqrt(sum(b * b for b in bounds)), steps=steps, relation=relation, noise=noise
    )
    assert claim <= single * (1 + 1e-12)
    assert (claim < single * (1 - 1e-9)) == (noise == "upper")


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
