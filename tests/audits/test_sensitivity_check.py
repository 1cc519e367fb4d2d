"""The empirical sensitivity checker: it attains and approaches every closed form, counts, reproduces, vectorises."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sensitivity_cases import COMBO_PARAMS, B, Case, e, outer_case, pair_changes, product_case, vector_case

from dpkit.accountant.sensitivity import (
    RELATIONS,
    clip_norm,
    episode_outer_product_sensitivity,
    stacked_outer_product_sensitivity,
    upper_triangle,
)
from dpkit.audits.sensitivity_check import SensitivityCheck, check_sensitivity

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
    direct = pair_changes(case, res.user[None], None if res.replacement is None else res.replacement[None])[0]
    assert res.largest == pytest.approx(direct, rel=1e-12)


# --------------------------------------------------------------------------------------------
# the checker: bookkeeping, reproducibility, vectorisation, non-additive f


VEC = vector_case(False)


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
    case = vector_case(True, d=2)

    def sample(rng: np.random.Generator, n: int) -> np.ndarray:  # |Gaussian| directions, inside the ball
        x = np.abs(rng.standard_normal((n, 2)))
        return x / np.linalg.norm(x, axis=1, keepdims=True) * B * np.sqrt(rng.uniform(size=(n, 1)))

    claim = case.claim("replace_one")
    res = check_sensitivity(case.f, sample=sample, claim=claim, relation="replace_one", rng=4, n_random=2000, n_local=0)
    assert res.ratio >= 0.97 and not res.exceeds
    assert res.evaluations == 4000  # no evaluation beyond the random draws
    rng = np.random.default_rng(4)
    users, replacements = sample(rng, 2000), sample(rng, 2000)
    side_by_side = pair_changes(case, users, replacements).max() / claim
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
@pytest.mark.parametrize("case", [VEC, product_case(True), outer_case("upper")], ids=lambda case: case.name)
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
    e1 = e(0, d)
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
