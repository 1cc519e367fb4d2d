"""The structured sensitivities: one-hot block features (brute force over the box ∩ ball) and the joint bound of a
Gram sum and a cross sum released together (never exceeded by any pair a search finds; nearly attained by the pairs
the audits use)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize
from tiers import examples

from dpkit.accountant.sensitivity import clip_norm, outer_product_sensitivity, upper_triangle
from dpkit.accountant.structured_sensitivity import (
    block_norm_bound,
    block_outer_product_sensitivity,
    gram_cross_joint_sensitivity,
)


def _upper_norm2(v: np.ndarray) -> float:
    return float(np.sum(upper_triangle(np.outer(v, v)) ** 2))


@pytest.mark.parametrize("size", [1, 2, 3])
@pytest.mark.parametrize("norm_bound", [None, 0.7, 1.3, 5.0])
@pytest.mark.slow
def test_block_gram_is_the_brute_force_maximum(size: int, norm_bound: float | None) -> None:
    # every v on a grid of [0, c]^S, clipped to the ball: the largest upper-triangle norm is the add/remove Δ
    # (attained: the grid holds the maximiser's k entries at c and one at the remainder only approximately)
    c = 1.0
    grid = np.linspace(0.0, c, 41)
    best = 0.0
    for v in itertools.product(grid, repeat=size):
        x = np.asarray(v)
        if norm_bound is not None:
            x = clip_norm(x, norm_bound)
        best = max(best, _upper_norm2(x))
    delta = block_outer_product_sensitivity(c, size, "add_remove", norm_bound=norm_bound)
    assert best <= delta**2 * (1 + 1e-12)
    assert best >= delta**2 * (1 - 0.03)
    # replace-one: two such blocks in different places (disjoint supports) — √2 of it, attained
    assert block_outer_product_sensitivity(c, size, "replace_one", norm_bound=norm_bound) == pytest.approx(
        math.sqrt(2) * delta, rel=1e-12
    )


def test_block_gram_is_below_the_norm_ball_bound_and_equal_for_one_entry() -> None:
    # the tabular case: S entries at c, no binding clip: sqrt(S(S+1))·c² against √2·S·c² for a feature of norm √S·c
    for size in (2, 3, 5):
        ours = block_outer_product_sensitivity(0.5, size, "replace_one")
        assert ours == pytest.approx(math.sqrt(size * (size + 1)) * 0.25, rel=1e-12)
        assert ours < outer_product_sensitivity(block_norm_bound(0.5, size), "replace_one")
    # a block of one entry is a coordinate: the norm-ball bound is attained there
    assert block_outer_product_sensitivity(2.0, 1, "replace_one") == pytest.approx(
        outer_product_sensitivity(2.0, "replace_one"), rel=1e-12
    )


@settings(max_examples=examples(200), deadline=None)
@given(
    v=st.lists(st.floats(0.0, 1.0), min_size=3, max_size=3),
    w=st.lists(st.floats(0.0, 1.0), min_size=3, max_size=3),
    same_block=st.booleans(),
    norm_bound=st.floats(0.2, 2.0),
)
def test_block_gram_replace_one_holds_for_any_pair(
    v: list[float], w: list[float], same_block: bool, norm_bound: float
) -> None:
    x, y = clip_norm(np.asarray(v), norm_bound), clip_norm(np.asarray(w), norm_bound)
    phi, psi = np.zeros(6), np.zeros(6)
    phi[:3] = x
    psi[(0 if same_block else 3) : (3 if same_block else 6)] = y
    diff = upper_triangle(np.outer(phi, phi) - np.outer(psi, psi))
    assert np.linalg.norm(diff) <= block_outer_product_sensitivity(1.0, 3, "replace_one", norm_bound=norm_bound) * (
        1 + 1e-12
    )


# -- the joint bound of seed 003's counters ---------------------------------------------------------------------


def _whitened(xs: np.ndarray, us: np.ndarray, xs2: np.ndarray, us2: np.ndarray, s1: float, s2: float) -> float:
    """sqrt(‖U(ΔB1)‖²/σ1² + ‖ΔB2‖²/σ2²) of two trajectories: states (H + 1, n), controls (H, d)."""

    def sums(x: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        z = np.hstack([x[:-1], u])
        return upper_triangle(z.T @ z), z.T @ x[1:]

    a1, c1 = sums(xs, us)
    a2, c2 = sums(xs2, us2)
    return math.sqrt(float(np.sum((a1 - a2) ** 2)) / s1**2 + float(np.sum((c1 - c2) ** 2)) / s2**2)


def _trajectory(z: np.ndarray, h: int, n: int, d: int, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    xs = clip_norm(z[: (h + 1) * n].reshape(h + 1, n), 1.0)
    us = clip_norm(z[(h + 1) * n :].reshape(h, d), gamma) if d and gamma > 0 else np.zeros((h, d))
    return xs, us


@pytest.mark.parametrize(("steps", "gamma", "ratio"), [(2, 0.0, 1.0), (3, 0.1, 1.21), (4, 0.1, 0.8), (3, 0.5, 0.5)])
@pytest.mark.slow
def test_the_joint_bound_is_never_exceeded(steps: int, gamma: float, ratio: float) -> None:
    # random trajectories on the spheres, then local ascent from the best: never above the bound
    n, d = 2, 1
    s1, s2 = 1.0, math.sqrt(ratio)
    bound = gram_cross_joint_sensitivity(
        steps=steps, state_bound=1.0, control_bound=gamma, sigma_gram=s1, sigma_cross=s2, relation="replace_one"
    )
    rng = np.random.default_rng(steps)
    width = (steps + 1) * n + steps * d

    def value(z: np.ndarray) -> float:
        xs, us = _trajectory(z[:width], steps, n, d, gamma)
        xs2, us2 = _trajectory(z[width:], steps, n, d, gamma)
        return _whitened(xs, us, xs2, us2, s1, s2)

    starts = rng.standard_normal((600, 2 * width)) * 3.0
    values = np.array([value(z) for z in starts])
    assert values.max() <= bound * (1 + 1e-12)
    for z in starts[np.argsort(values)[-4:]]:
        found = optimize.minimize(lambda q: -value(q), z, method="Nelder-Mead", options={"maxfev": 3000})
        assert -found.fun <= bound * (1 + 1e-12)


@pytest.mark.parametrize(("ratio", "pair"), [(0.8, "orthogonal"), (1.21, "alternating")])
def test_the_audits_canary_pairs_nearly_attain_the_joint_bound(ratio: float, pair: str) -> None:
    # two trajectories on e1/e2 (orthogonal), or e1 against ±e1 (alternating), at weights w2/w1 = σ1²/σ2² = ratio
    # (0.8: the optimal allocation's, 1.21: the tight one's): within 5% of the bound at H = 4
    h, s1, s2 = 4, 1.0, 1.0 / math.sqrt(ratio)
    e1, e2 = np.eye(2)
    xs = np.tile(e1, (h + 1, 1))
    other = np.tile(e2, (h + 1, 1)) if pair == "orthogonal" else np.array([(-1.0) ** k * e1 for k in range(h + 1)])
    zero = np.zeros((h, 0))
    reached = _whitened(xs, zero, other, zero, s1, s2)
    bound = gram_cross_joint_sensitivity(
        steps=h, state_bound=1.0, control_bound=0.0, sigma_gram=s1, sigma_cross=s2, relation="replace_one"
    )
    assert reached <= bound
    assert reached >= 0.95 * bound


@settings(max_examples=examples(60), deadline=None)
@given(
    steps=st.integers(1, 12),
    gamma=st.floats(0.0, 2.0),
    s1=st.floats(1e-3, 1e3),
    s2=st.floats(1e-3, 1e3),
    scale=st.floats(1e-6, 1e6),
)
def test_the_joint_bound_is_below_the_separate_ones_and_scales_as_one_over_sigma(
    steps: int, gamma: float, s1: float, s2: float, scale: float
) -> None:
    kw = {"steps": steps, "state_bound": 1.0, "control_bound": gamma}
    joint = gram_cross_joint_sensitivity(**kw, sigma_gram=s1, sigma_cross=s2, relation="replace_one")
    a2 = 1 + gamma**2 + gamma**4
    b2 = 1 + gamma**2
    separate = math.sqrt(2 * steps**2 * a2 / s1**2 + 4 * steps**2 * b2 / s2**2)
    assert joint <= separate * (1 + 1e-12)
    scaled = gram_cross_joint_sensitivity(**kw, sigma_gram=s1 * scale, sigma_cross=s2 * scale, relation="replace_one")
    assert scaled == pytest.approx(joint / scale, rel=1e-9)
    # add/remove: one trajectory alone attains both counters' Δ at once
    alone = gram_cross_joint_sensitivity(**kw, sigma_gram=s1, sigma_cross=s2, relation="add_remove")
    assert alone == pytest.approx(math.sqrt(steps**2 * a2 / s1**2 + steps**2 * b2 / s2**2), rel=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"steps": 0}, "steps"),
        ({"sigma_gram": 0.0}, "sigma_gram"),
        ({"control_bound": -1.0}, "control_bound"),
        ({"relation": "neighbours"}, "relation"),
    ],
)
def test_bad_input_names_the_value(kwargs: dict[str, object], match: str) -> None:
    base: dict[str, object] = {
        "steps": 2,
        "state_bound": 1.0,
        "control_bound": 0.1,
        "sigma_gram": 1.0,
        "sigma_cross": 1.0,
        "relation": "replace_one",
    }
    with pytest.raises(ValueError, match=match):
        gram_cross_joint_sensitivity(**(base | kwargs))  # type: ignore[arg-type]
