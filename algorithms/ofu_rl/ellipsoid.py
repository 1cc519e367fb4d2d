"""The confidence ellipsoid of OFU-RL's estimate of θ and the optimistic choice within it (see
:mod:`dpkit.algorithms.ofu_rl`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpkit.accountant.validation import (
    check_count,
    check_index,
    check_nonnegative,
    check_positive,
    check_probability,
    check_rng,
)

__all__ = [
    "confidence_radius",
    "Ellipsoid",
    "OptimisticChoice",
    "optimistic_theta",
]


def confidence_radius(
    logdet_ratio: float,
    *,
    state_dim: int,
    noise_scale: float,
    alpha: float,
    lambda_max: float,
    theta_bound: float = 1.0,
    nu: float = 0.0,
) -> float:
    """β = R·sqrt(2 ln(1/α) + n·logdet_ratio) + √λ_max·S + ν (the paper's Lemma 1, failure α for the first term).

    ``logdet_ratio`` is ln det(I + GᵀG/λ_min) (or an upper bound on it), ``noise_scale`` R the
    sub-Gaussian parameter of the noise vectors (C_w for ‖w‖ <= C_w, σ_w for N(0, σ_w² I)),
    ``theta_bound`` S >= ‖Θ*‖_F, ``nu`` >= ‖L‖_{H⁻¹}. The first term is the self-normalised bound for
    matrix martingales: ‖Σ z wᵀ‖²_{(G + λI)⁻¹} <= R²(2 ln(1/α) + n ln det(I + G/λ)) for all k w.p. >= 1 − α.
    """
    ratio = check_nonnegative("logdet_ratio", logdet_ratio)
    n = check_count("state_dim", state_dim)
    r = check_nonnegative("noise_scale", noise_scale)
    alpha = check_probability("alpha", alpha)
    lam = check_nonnegative("lambda_max", lambda_max)
    s = check_nonnegative("theta_bound", theta_bound)
    nu = check_nonnegative("nu", nu)
    return r * math.sqrt(2.0 * math.log(1.0 / alpha) + n * ratio) + math.sqrt(lam) * s + nu


def _frob(a: np.ndarray) -> np.ndarray:
    return np.sqrt(np.sum(a * a, axis=(-2, -1)))


@dataclass(frozen=True)
class Ellipsoid:
    """The confidence set {Θ : ‖V^{1/2}(Θ − Θ̂)‖_F <= β}: ``centre`` Θ̂ (p×n), ``gram`` V (p×p, p.d.), ``radius`` β."""

    centre: np.ndarray
    gram: np.ndarray
    radius: float

    def __post_init__(self) -> None:
        c = np.array(self.centre, dtype=float)
        v = np.array(self.gram, dtype=float)
        if v.ndim != 2 or v.shape[0] != v.shape[1]:
            raise ValueError(f"gram must be a square matrix, got shape {v.shape}")
        if c.ndim != 2 or c.shape[0] != v.shape[0]:
            raise ValueError(f"centre must have shape ({v.shape[0]}, n), got {c.shape}")
        if not (np.all(np.isfinite(c)) and np.all(np.isfinite(v))):
            raise ValueError("centre and gram must be finite")
        if not np.allclose(v, v.T, rtol=1e-10, atol=1e-12):
            raise ValueError("gram must be symmetric")
        radius = check_nonnegative("radius", self.radius)
        vals, vecs = np.linalg.eigh(0.5 * (v + v.T))
        if vals[0] <= 0.0:
            raise ValueError(f"gram must be positive definite, got smallest eigenvalue {vals[0]!r}")
        object.__setattr__(self, "centre", c)
        object.__setattr__(self, "gram", v)
        object.__setattr__(self, "radius", radius)
        object.__setattr__(self, "_vals", vals)
        object.__setattr__(self, "_vecs", vecs)
        object.__setattr__(self, "_half", (vecs * np.sqrt(vals)) @ vecs.T)
        object.__setattr__(self, "_inv_half", (vecs / np.sqrt(vals)) @ vecs.T)

    def coordinates(self, theta: np.ndarray) -> np.ndarray:
        """Y = V^{1/2}(Θ − Θ̂), batched over leading axes."""
        return self._half @ (np.asarray(theta, dtype=float) - self.centre)  # type: ignore[attr-defined]

    def point(self, y: np.ndarray) -> np.ndarray:
        """Θ = Θ̂ + V^{-1/2} Y (inside the set iff ‖Y‖_F <= β), batched."""
        return self.centre + self._inv_half @ np.asarray(y, dtype=float)  # type: ignore[attr-defined]

    def distance(self, theta: np.ndarray) -> np.ndarray | float:
        """‖V^{1/2}(Θ − Θ̂)‖_F, batched."""
        out = _frob(self.coordinates(theta))
        return float(out) if np.ndim(out) == 0 else out

    def contains(self, theta: np.ndarray, rtol: float = 1e-9) -> np.ndarray | bool:
        """Whether Θ lies in the set (up to a relative slack ``rtol`` on β), batched."""
        out = np.asarray(self.distance(theta)) <= self.radius * (1.0 + rtol) + 1e-300
        return bool(out) if out.ndim == 0 else out

    def sample_boundary(self, count: int, rng: np.random.Generator | int) -> np.ndarray:
        """``count`` points uniform on the boundary in the Y coordinates (‖Y‖_F = β), shape (count, p, n)."""
        count = check_count("count", count)
        rng = check_rng("rng", rng)
        g = rng.standard_normal((count,) + self.centre.shape)
        return self.point(self.radius * g / _frob(g)[:, None, None])

    def min_norm_point(self) -> np.ndarray:
        """argmin ‖Θ‖_F over the set (the trust-region subproblem, by bisection on the multiplier).

        Θ = Θ̂ + Δ with Δ = −(I + μV)⁻¹Θ̂, μ >= 0 the smallest with ‖V^{1/2}Δ‖_F <= β (μ = 0: Θ = 0).
        """
        vals, vecs = self._vals, self._vecs  # type: ignore[attr-defined]
        c = vecs.T @ self.centre
        row = np.sum(c * c, axis=1)
        beta2 = self.radius**2

        def g(mu: float) -> float:
            return float(np.sum(vals * row / (1.0 + mu * vals) ** 2))

        if g(0.0) <= beta2:
            return np.zeros_like(self.centre)
        if self.radius == 0.0:
            return self.centre.copy()
        lo, hi = 0.0, math.sqrt(float(np.sum(row / vals)) / beta2)
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if g(mid) <= beta2:
                hi = mid
            else:
                lo = mid
            if hi - lo <= 1e-15 * hi:
                break
        return self.centre + vecs @ (-c / (1.0 + hi * vals)[:, None])


@dataclass(frozen=True)
class OptimisticChoice:
    """What :func:`optimistic_theta` returns: Θ̃ and its J*, the anchor and its J*, whether the
    Frobenius constraint could be met (``constrained``), and how many Θ were evaluated."""

    theta: np.ndarray
    cost: float
    anchor: np.ndarray
    anchor_cost: float
    constrained: bool
    evaluated: int


def _toward(anchor: np.ndarray, thetas: np.ndarray, bound: float) -> np.ndarray:
    """Each Θ moved along the segment to ``anchor`` (‖anchor‖_F <= bound) until ‖Θ‖_F <= bound."""
    d = thetas - anchor
    a = np.sum(d * d, axis=(-2, -1))
    b = np.sum(anchor * d, axis=(-2, -1))
    c = float(np.sum(anchor * anchor)) - bound * bound
    disc = np.maximum(b * b - a * c, 0.0)
    safe = np.where(a > 0.0, a, 1.0)
    t = np.clip(np.where(a > 0.0, (-b + np.sqrt(disc)) / safe, 1.0), 0.0, 1.0)
    t = np.where(_frob(thetas) > bound, t, 1.0)
    return anchor + t[..., None, None] * d


def _clip_ball(ys: np.ndarray, radius: float) -> np.ndarray:
    norms = _frob(ys)
    return ys * np.where(norms > radius, radius / np.where(norms > 0.0, norms, 1.0), 1.0)[..., None, None]


def optimistic_theta(
    ellipsoid: Ellipsoid,
    objective: Callable[[np.ndarray], Any],
    rng: np.random.Generator | int,
    *,
    gradient: bool = False,
    theta_bound: float = 1.0,
    candidates: int = 32,
    refine_rounds: int = 10,
    line_search: int = 8,
) -> OptimisticChoice:
    """An approximate argmin of ``objective`` (J*_1(Θ, x0), batched over Θ of shape (c, p, n)) over
    F = ellipsoid ∩ {‖Θ‖_F <= S}. With ``gradient`` the objective returns ``(costs, gradients)``, the
    gradients ∇_Θ of shape (c, p, n).

    The exact argmin is non-convex; this is a stated search, in the coordinates Y = V^{1/2}(Θ − Θ̂)
    where the ellipsoid is the ball ‖Y‖_F <= β:

    1. anchor Θ_0: the centre Θ̂ if ‖Θ̂‖_F <= S; otherwise the last point inside the ball on the segment
       from the ellipsoid's minimum-norm point to Θ̂ (if that point has norm <= S, F is non-empty);
       if even it lies outside the ball, F is empty (the true Θ is then not in the ellipsoid either)
       and the search runs over the ellipsoid alone with Θ_0 = Θ̂ (``constrained=False``). Every point
       below is brought into F by moving it along its segment to Θ_0 until ‖Θ‖_F <= S (F is convex);
    2. multi-start: ``candidates`` points uniform on the boundary ‖Y‖_F = β; the best of them and Θ_0
       is kept;
    3. ``refine_rounds`` rounds of descent from the best point: with ``gradient``, projected
       gradient in Y (direction −V^{-1/2}∇_Θ J*, ``line_search`` step sizes
       β, β/2, …, evaluated together, Y projected onto ‖Y‖_F <= β), stopping when no step improves;
       without it, ``candidates`` random perturbations of size step·β per round (step 0.3, halved after
       a round without improvement).

    **Guarantee.** The returned Θ̃ lies in F (in the ellipsoid when F is empty), up to rounding, and
    J*(Θ̃) <= J*(Θ_0) and <= J* of every candidate evaluated; in particular J*(Θ̃) <= J*(Θ̂) whenever
    ‖Θ̂‖_F <= S. It is not certified to be the global minimum, so the paper's optimism
    J*(Θ̃) <= J*(Θ*) is not guaranteed.
    """
    if not isinstance(ellipsoid, Ellipsoid):
        raise ValueError(f"ellipsoid must be an Ellipsoid, got {type(ellipsoid).__name__}")
    rng = check_rng("rng", rng)
    s = check_positive("theta_bound", theta_bound)
    count = check_count("candidates", candidates)
    rounds = check_index("refine_rounds", refine_rounds)
    steps = check_count("line_search", line_search)
    beta = ellipsoid.radius
    centre = ellipsoid.centre
    constrained = True
    if float(_frob(centre)) <= s:
        anchor = centre.copy()
    else:
        low = ellipsoid.min_norm_point()
        if float(_frob(low)) <= s * (1.0 + 1e-12):
            anchor = _toward(low, centre[None], s)[0] if float(_frob(low)) < s else low
        else:
            anchor, constrained = centre.copy(), False

    def feasible(ys: np.ndarray) -> np.ndarray:
        thetas = ellipsoid.point(_clip_ball(ys, beta))
        return _toward(anchor, thetas, s) if constrained else thetas

    def evaluate(thetas: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        out = objective(thetas)
        c, g = (out[0], np.asarray(out[1], dtype=float)) if gradient else (out, None)
        c = np.asarray(c, dtype=float)
        if c.shape != thetas.shape[:1]:
            raise ValueError(f"objective must return one cost per Θ, shape {thetas.shape[:1]}, got {c.shape}")
        if g is not None and g.shape != thetas.shape:
            raise ValueError(f"objective must return one gradient per Θ, shape {thetas.shape}, got {g.shape}")
        return np.where(np.isfinite(c), c, np.inf), g

    shape = centre.shape
    g = rng.standard_normal((count,) + shape)
    first = np.concatenate([anchor[None], feasible(beta * g / _frob(g)[:, None, None])])
    costs, grads = evaluate(first)
    anchor_cost = float(costs[0])
    i = int(np.argmin(costs))
    best, best_cost = first[i], float(costs[i])
    best_grad = None if grads is None else grads[i]
    evaluated = first.shape[0]
    scales = beta * 0.5 ** np.arange(steps)
    step = 0.3
    for _ in range(rounds):
        if beta == 0.0:
            break
        y = ellipsoid.coordinates(best)
        if best_grad is not None:
            direction = -(ellipsoid._inv_half @ best_grad)  # type: ignore[attr-defined]
            norm = float(_frob(direction))
            if not np.isfinite(norm) or norm == 0.0:
                break
            ys = y + scales[:, None, None] * (direction / norm)
        else:
            g = rng.standard_normal((count,) + shape)
            ys = y + step * beta * g / _frob(g)[:, None, None]
        thetas = feasible(ys)
        c, gr = evaluate(thetas)
        evaluated += thetas.shape[0]
        j = int(np.argmin(c))
        if c[j] < best_cost:
            best, best_cost = thetas[j], float(c[j])
            best_grad = None if gr is None else gr[j]
        elif gradient:
            break
        else:
            step *= 0.5
    return OptimisticChoice(best.copy(), best_cost, anchor, anchor_cost, constrained, evaluated)
