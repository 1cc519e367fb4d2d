"""The confidence ellipsoid of OFU-RL's estimate of θ and the optimistic choice within it (see
:mod:`dpkit.algorithms.ofu_rl`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
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
    "confidence_radii_of_ratios",
    "Ellipsoid",
    "EllipsoidBatch",
    "OptimisticChoice",
    "OptimisticChoices",
    "optimistic_theta",
    "optimistic_thetas",
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

    The first term is the self-normalised bound for matrix martingales:
    ‖Σ z wᵀ‖²_{(G + λI)⁻¹} <= R²(2 ln(1/α) + n ln det(I + G/λ)) for all k w.p. >= 1 − α.

    Args:
        logdet_ratio: ln det(I + GᵀG/λ_min), or an upper bound on it.
        state_dim: n.
        noise_scale: R, the sub-Gaussian parameter of the noise vectors (C_w for ‖w‖ <= C_w, σ_w for
            N(0, σ_w² I)).
        alpha: α.
        lambda_max: λ_max, the regulariser's largest eigenvalue.
        theta_bound: S >= ‖Θ*‖_F.
        nu: ν >= ‖L‖_{H⁻¹}, the cross noise's share (0 without noise).

    Returns:
        β.

    Raises:
        ValueError: If an argument is out of range.

    Examples:
        >>> confidence_radius(0.0, state_dim=1, noise_scale=0.0, alpha=0.5, lambda_max=4.0, nu=0.5)
        2.5
    """
    ratio = check_nonnegative("logdet_ratio", logdet_ratio)
    n = check_count("state_dim", state_dim)
    r = check_nonnegative("noise_scale", noise_scale)
    alpha = check_probability("alpha", alpha)
    lam = check_nonnegative("lambda_max", lambda_max)
    s = check_nonnegative("theta_bound", theta_bound)
    nu = check_nonnegative("nu", nu)
    return float(confidence_radii_of_ratios(np.asarray(ratio), n, r, alpha, lam, s, nu))


def confidence_radii_of_ratios(
    ratio: np.ndarray, n: int, r: float, alpha: float, lambda_max: float, theta_bound: float, nu: float
) -> np.ndarray:
    """:func:`confidence_radius` of many log-det ratios at once (unvalidated; the same arithmetic, run by run).

    Args:
        ratio: The log-det ratios, any shape.
        n: The state dimension.
        r: R, the noise's sub-Gaussian parameter.
        alpha: α.
        lambda_max: λ_max.
        theta_bound: S.
        nu: ν.

    Returns:
        β for every ratio, of the ratios' shape.
    """
    return r * np.sqrt(2.0 * math.log(1.0 / alpha) + n * ratio) + math.sqrt(lambda_max) * theta_bound + nu


def _frob(a: np.ndarray) -> np.ndarray:
    return np.sqrt(np.sum(a * a, axis=(-2, -1)))


@dataclass(frozen=True)
class Ellipsoid:
    """The confidence set {Θ : ‖V^{1/2}(Θ − Θ̂)‖_F <= β}.

    Attributes:
        centre: Θ̂, shape (p, n).
        gram: V, shape (p, p), positive definite.
        radius: β >= 0.

    Raises:
        ValueError: If the shapes do not fit, or V is not symmetric positive definite.
    """

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
        radius = check_nonnegative("radius", self.radius)
        runs = EllipsoidBatch.of(c[None], v[None], np.array([radius]))
        object.__setattr__(self, "centre", c)
        object.__setattr__(self, "gram", v)
        object.__setattr__(self, "radius", radius)
        object.__setattr__(self, "_runs", runs)
        object.__setattr__(self, "_vals", runs.vals[0])
        object.__setattr__(self, "_vecs", runs.vecs[0])
        object.__setattr__(self, "_half", runs.half[0])
        object.__setattr__(self, "_inv_half", runs.inv_half[0])

    def coordinates(self, theta: np.ndarray) -> np.ndarray:
        """Y = V^{1/2}(Θ − Θ̂), the coordinates in which the set is the ball ‖Y‖_F <= β.

        Args:
            theta: Θ, shape (p, n), or with leading axes.

        Returns:
            Y, of Θ's shape.
        """
        return self._half @ (np.asarray(theta, dtype=float) - self.centre)  # type: ignore[attr-defined]

    def point(self, y: np.ndarray) -> np.ndarray:
        """Θ = Θ̂ + V^{-1/2} Y (inside the set iff ‖Y‖_F <= β).

        Args:
            y: Y, shape (p, n), or with leading axes.

        Returns:
            Θ, of Y's shape.
        """
        return self.centre + self._inv_half @ np.asarray(y, dtype=float)  # type: ignore[attr-defined]

    def distance(self, theta: np.ndarray) -> np.ndarray | float:
        """‖V^{1/2}(Θ − Θ̂)‖_F.

        Args:
            theta: Θ, shape (p, n), or with leading axes.

        Returns:
            The distance (a float for one Θ, an array over leading axes).
        """
        out = _frob(self.coordinates(theta))
        return float(out) if np.ndim(out) == 0 else out

    def contains(self, theta: np.ndarray, rtol: float = 1e-9) -> np.ndarray | bool:
        """Whether Θ lies in the set.

        Args:
            theta: Θ, shape (p, n), or with leading axes.
            rtol: The relative slack on β.

        Returns:
            A bool for one Θ, an array over leading axes.
        """
        out = np.asarray(self.distance(theta)) <= self.radius * (1.0 + rtol) + 1e-300
        return bool(out) if out.ndim == 0 else out

    def sample_boundary(self, count: int, rng: np.random.Generator | int) -> np.ndarray:
        """Points uniform on the boundary in the Y coordinates (‖Y‖_F = β).

        Args:
            count: How many points.
            rng: A Generator or seed.

        Returns:
            The points Θ, shape (count, p, n).

        Raises:
            ValueError: If ``count`` is not a positive integer.
        """
        count = check_count("count", count)
        rng = check_rng("rng", rng)
        g = rng.standard_normal((count,) + self.centre.shape)
        return self.point(self.radius * g / _frob(g)[:, None, None])

    def min_norm_point(self) -> np.ndarray:
        """argmin ‖Θ‖_F over the set (the trust-region subproblem, by bisection on the multiplier).

        Θ = Θ̂ + Δ with Δ = −(I + μV)⁻¹Θ̂, μ >= 0 the smallest with ‖V^{1/2}Δ‖_F <= β (μ = 0: Θ = 0).

        Returns:
            The point, shape (p, n).
        """
        return self._runs.min_norm_points()[0]  # type: ignore[attr-defined]


@dataclass(frozen=True)
class EllipsoidBatch:
    """R confidence sets at once (one per run, a leading run axis). :class:`Ellipsoid` is the batch of one.

    Attributes:
        centre: Θ̂ of each run, (R, p, n).
        gram: V of each run, (R, p, p).
        radius: β of each run, (R,).
        vals: The eigenvalues of each V, (R, p).
        vecs: The eigenvectors of each V, (R, p, p).
        half: V^{1/2}, (R, p, p).
        inv_half: V^{-1/2}, (R, p, p).
    """

    centre: np.ndarray
    gram: np.ndarray
    radius: np.ndarray
    vals: np.ndarray
    vecs: np.ndarray
    half: np.ndarray
    inv_half: np.ndarray

    @classmethod
    def of(cls, centre: np.ndarray, gram: np.ndarray, radius: np.ndarray) -> EllipsoidBatch:
        """The sets of the given centres, grams and radii, checked: finite, symmetric, positive definite.

        Args:
            centre: Θ̂ of each run, (R, p, n).
            gram: V of each run, (R, p, p).
            radius: β of each run, (R,).

        Returns:
            The batch, with the eigen-decompositions.

        Raises:
            ValueError: If a centre or gram is not finite, or a gram not symmetric positive definite.
        """
        c, v = np.asarray(centre, dtype=float), np.asarray(gram, dtype=float)
        if not (np.all(np.isfinite(c)) and np.all(np.isfinite(v))):
            raise ValueError("centre and gram must be finite")
        vt = np.swapaxes(v, -1, -2)
        if not np.allclose(v, vt, rtol=1e-10, atol=1e-12):
            raise ValueError("gram must be symmetric")
        vals, vecs = np.linalg.eigh(0.5 * (v + vt))
        if np.any(vals[:, 0] <= 0.0):
            low = vals[np.argmax(vals[:, 0] <= 0.0), 0]
            raise ValueError(f"gram must be positive definite, got smallest eigenvalue {low!r}")
        root = np.sqrt(vals)[:, None, :]
        vecs_t = np.swapaxes(vecs, -1, -2)
        return cls(c, v, np.asarray(radius, dtype=float), vals, vecs, (vecs * root) @ vecs_t, (vecs / root) @ vecs_t)

    def __len__(self) -> int:
        return self.centre.shape[0]

    def take(self, idx: np.ndarray) -> EllipsoidBatch:
        """The sets of some runs.

        Args:
            idx: The runs (indices or a boolean mask).

        Returns:
            Their batch.
        """
        return EllipsoidBatch(*(getattr(self, f)[idx] for f in self.__dataclass_fields__))

    def coordinates(self, theta: np.ndarray) -> np.ndarray:
        """Y = V^{1/2}(Θ − Θ̂), run by run.

        Args:
            theta: Θ of each run, (R, p, n).

        Returns:
            Y, (R, p, n).
        """
        return self.half @ (theta - self.centre)

    def point(self, y: np.ndarray) -> np.ndarray:
        """Θ = Θ̂ + V^{-1/2} Y, run by run.

        Args:
            y: c points Y per run, (R, c, p, n).

        Returns:
            Θ, (R, c, p, n).
        """
        return self.centre[:, None] + self.inv_half[:, None] @ y

    def min_norm_points(self) -> np.ndarray:
        """:meth:`Ellipsoid.min_norm_point` of every run (the bisections run together, each stopping as alone).

        Returns:
            The points, (R, p, n).
        """
        vals, vecs, centre, radius = self.vals, self.vecs, self.centre, self.radius
        c = np.swapaxes(vecs, -1, -2) @ centre
        row = np.sum(c * c, axis=-1)
        beta2 = radius**2

        def g(mu: np.ndarray, i: np.ndarray) -> np.ndarray:
            return np.sum(vals[i] * row[i] / (1.0 + mu[:, None] * vals[i]) ** 2, axis=-1)

        out = centre.copy()
        everyone = np.arange(len(self))
        inside = g(np.zeros(len(self)), everyone) <= beta2
        out[inside] = 0.0
        todo = np.flatnonzero(~inside & (radius != 0.0))
        if todo.size == 0:
            return out
        b2 = beta2[todo]
        lo, hi = np.zeros(todo.size), np.sqrt(np.sum(row[todo] / vals[todo], axis=-1) / b2)
        live = np.ones(todo.size, dtype=bool)
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            ok = g(mid, todo) <= b2
            hi = np.where(live & ok, mid, hi)
            lo = np.where(live & ~ok, mid, lo)
            live &= ~(hi - lo <= 1e-15 * hi)
            if not live.any():
                break
        t = todo
        out[t] = centre[t] + vecs[t] @ (-c[t] / (1.0 + hi[:, None] * vals[t])[..., None])
        return out


@dataclass(frozen=True)
class OptimisticChoice:
    """What :func:`optimistic_theta` returns.

    Attributes:
        theta: Θ̃.
        cost: J*(Θ̃).
        anchor: The anchor Θ_0 of the search.
        anchor_cost: J*(Θ_0).
        constrained: Whether the Frobenius constraint ‖Θ‖_F <= S could be met.
        evaluated: How many Θ were evaluated.
    """

    theta: np.ndarray
    cost: float
    anchor: np.ndarray
    anchor_cost: float
    constrained: bool
    evaluated: int


def _toward(anchor: np.ndarray, thetas: np.ndarray, bound: float) -> np.ndarray:
    """Each Θ (R, c, p, n) moved along the segment to its run's ``anchor`` (R, p, n) (‖anchor‖_F <= bound) until
    ‖Θ‖_F <= bound."""
    d = thetas - anchor[:, None]
    a = np.sum(d * d, axis=(-2, -1))
    b = np.sum(anchor[:, None] * d, axis=(-2, -1))
    c = np.sum(anchor * anchor, axis=(-2, -1))[:, None] - bound * bound
    disc = np.maximum(b * b - a * c, 0.0)
    safe = np.where(a > 0.0, a, 1.0)
    t = np.clip(np.where(a > 0.0, (-b + np.sqrt(disc)) / safe, 1.0), 0.0, 1.0)
    t = np.where(_frob(thetas) > bound, t, 1.0)
    return anchor[:, None] + t[..., None, None] * d


def _clip_ball(ys: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """Each Y (R, c, p, n) scaled into its run's ball ‖Y‖_F <= radius (R,)."""
    norms = _frob(ys)
    r = radius[:, None]
    return ys * np.where(norms > r, r / np.where(norms > 0.0, norms, 1.0), 1.0)[..., None, None]


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
    """An approximate argmin of ``objective`` over F = ellipsoid ∩ {‖Θ‖_F <= S}.

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

    Args:
        ellipsoid: The confidence set.
        objective: J*_1(Θ, x0), batched over Θ of shape (c, p, n); with ``gradient`` it returns
            ``(costs, gradients)``, the gradients ∇_Θ of shape (c, p, n).
        rng: A Generator or seed (the multi-start and perturbations).
        gradient: Whether the objective returns gradients (projected-gradient descent).
        theta_bound: S.
        candidates: The multi-start's points (and, without ``gradient``, each round's perturbations).
        refine_rounds: The rounds of descent.
        line_search: The step sizes of a gradient round.

    Returns:
        The choice.

    Raises:
        ValueError: If ``ellipsoid`` is not an Ellipsoid, an option is out of range, or the objective returns the
            wrong shapes.
    """
    if not isinstance(ellipsoid, Ellipsoid):
        raise ValueError(f"ellipsoid must be an Ellipsoid, got {type(ellipsoid).__name__}")
    rng = check_rng("rng", rng)
    s = check_positive("theta_bound", theta_bound)
    count = check_count("candidates", candidates)
    rounds = check_index("refine_rounds", refine_rounds)
    steps = check_count("line_search", line_search)

    def one(thetas: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:  # the run axis off, and on again
        out = objective(thetas[0])
        c, g = (out[0], np.asarray(out[1], dtype=float)) if gradient else (out, None)
        c = np.asarray(c, dtype=float)
        if c.shape != thetas.shape[1:2]:
            raise ValueError(f"objective must return one cost per Θ, shape {thetas.shape[1:2]}, got {c.shape}")
        if g is not None and g.shape != thetas.shape[1:]:
            raise ValueError(f"objective must return one gradient per Θ, shape {thetas.shape[1:]}, got {g.shape}")
        return c[None], None if g is None else g[None]

    out = optimistic_thetas(
        ellipsoid._runs,  # type: ignore[attr-defined]
        one,
        [rng],
        gradient=gradient,
        theta_bound=s,
        candidates=count,
        refine_rounds=rounds,
        line_search=steps,
    )
    return OptimisticChoice(
        out.theta[0],
        float(out.cost[0]),
        out.anchor[0],
        float(out.anchor_cost[0]),
        bool(out.constrained[0]),
        int(out.evaluated[0]),
    )


@dataclass(frozen=True)
class OptimisticChoices:
    """:class:`OptimisticChoice` of R runs at once, every field with a leading run axis.

    Attributes:
        theta: Θ̃ of each run.
        cost: J*(Θ̃) of each run.
        anchor: Each run's anchor Θ_0.
        anchor_cost: J*(Θ_0) of each run.
        constrained: Whether each run could meet the Frobenius constraint.
        evaluated: How many Θ each run evaluated.
    """

    theta: np.ndarray
    cost: np.ndarray
    anchor: np.ndarray
    anchor_cost: np.ndarray
    constrained: np.ndarray
    evaluated: np.ndarray


def optimistic_thetas(
    ellipsoids: EllipsoidBatch,
    objective: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray | None]],
    rngs: Sequence[np.random.Generator],
    *,
    gradient: bool,
    theta_bound: float,
    candidates: int,
    refine_rounds: int,
    line_search: int,
) -> OptimisticChoices:
    """:func:`optimistic_theta` of R runs at once (unvalidated).

    Run i searches its own ellipsoid with its own Generator ``rngs[i]``, drawing exactly what the search of run i
    alone draws, and stops when it would alone.

    Args:
        ellipsoids: the R sets.
        objective: Θ (R′, c, p, n) of any R′ <= R runs → (costs (R′, c), gradients (R′, c, p, n) or ``None``).
        rngs: one Generator per run.
        gradient: whether the search descends along the objective's gradients.
        theta_bound: S.
        candidates: the multi-start's points (and, without ``gradient``, each round's perturbations).
        refine_rounds: the rounds of descent.
        line_search: the step sizes of a gradient round.

    Returns:
        Each run's choice.
    """
    s, count, rounds, steps = theta_bound, candidates, refine_rounds, line_search
    runs = len(rngs)
    everyone = np.arange(runs)
    beta = ellipsoids.radius
    centre = ellipsoids.centre
    constrained = np.ones(runs, dtype=bool)
    anchor = centre.copy()
    outside = np.flatnonzero(_frob(centre) > s)
    if outside.size:
        low = ellipsoids.take(outside).min_norm_points()
        norm = _frob(low)
        reachable = norm <= s * (1.0 + 1e-12)
        moved = _toward(low, centre[outside][:, None], s)[:, 0]
        pick = np.where((norm < s)[:, None, None], moved, low)
        anchor[outside] = np.where(reachable[:, None, None], pick, centre[outside])
        constrained[outside] = reachable

    def feasible(ys: np.ndarray, idx: np.ndarray) -> np.ndarray:
        thetas = ellipsoids.take(idx).point(_clip_ball(ys, beta[idx]))
        return np.where(constrained[idx][:, None, None, None], _toward(anchor[idx], thetas, s), thetas)

    def evaluate(thetas: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        c, g = objective(thetas)
        c = np.asarray(c, dtype=float)
        return np.where(np.isfinite(c), c, np.inf), g

    shape = centre.shape[1:]
    g = np.stack([rng.standard_normal((count,) + shape) for rng in rngs])
    first = np.concatenate(
        [anchor[:, None], feasible(beta[:, None, None, None] * g / _frob(g)[..., None, None], everyone)], axis=1
    )
    costs, grads = evaluate(first)
    anchor_cost = costs[:, 0].copy()
    i = np.argmin(costs, axis=1)
    best, best_cost = first[everyone, i], costs[everyone, i]
    best_grad = None if grads is None else grads[everyone, i]
    evaluated = np.full(runs, first.shape[1])
    scales = beta[:, None] * 0.5 ** np.arange(steps)
    step = np.full(runs, 0.3)
    active = beta != 0.0
    for _ in range(rounds):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        y = ellipsoids.take(idx).coordinates(best[idx])
        if best_grad is not None:
            direction = -(ellipsoids.inv_half[idx] @ best_grad[idx])
            norm = _frob(direction)
            good = np.isfinite(norm) & (norm != 0.0)
            active[idx[~good]] = False
            idx, y, direction, norm = idx[good], y[good], direction[good], norm[good]
            if idx.size == 0:
                break
            ys = y[:, None] + scales[idx][:, :, None, None] * (direction / norm[:, None, None])[:, None]
        else:
            g = np.stack([rngs[int(r)].standard_normal((count,) + shape) for r in idx])
            ys = y[:, None] + (step[idx] * beta[idx])[:, None, None, None] * g / _frob(g)[..., None, None]
        thetas = feasible(ys, idx)
        c, gr = evaluate(thetas)
        evaluated[idx] += thetas.shape[1]
        j = np.argmin(c, axis=1)
        cj = c[np.arange(idx.size), j]
        better = cj < best_cost[idx]
        won = idx[better]
        best[won] = thetas[better, j[better]]
        best_cost[won] = cj[better]
        if best_grad is not None and gr is not None:
            best_grad[won] = gr[better, j[better]]
        if gradient:
            active[idx[~better]] = False
        else:
            step[idx[~better]] *= 0.5
    return OptimisticChoices(best.copy(), best_cost, anchor, anchor_cost, constrained, evaluated)
