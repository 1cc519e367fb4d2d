"""Episodic linear-quadratic (LQ) systems with the users made explicit (seed 003).

:class:`LQSystem` is x_{h+1} = A x_h + B u_h + w_h with the cost c_h = x_hᵀ Q x_h + u_hᵀ R u_h, checked against the
paper's Assumption 1; it gives the exact optimal cost, the exact cost and regret of any linear policy
(:func:`riccati`, :func:`optimal_cost`, :func:`policy_cost`) and rolls out clipped controls; :func:`random_lq`
draws one. Its users, each the noise sequence of her episode, are :mod:`dpkit.algorithms.envs.lq_users`'s. The
dynamics, the assumption, the users' noise and what the regret measures: docs/explanation/environments.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from dpkit.accountant.sensitivity import clip_norm  # the exact-norm guarantee the sensitivities rely on
from dpkit.accountant.validation import check_count, check_nonnegative, check_positive, check_rng

__all__ = [
    "LQ_WORLDS",
    "LQSystem",
    "make_lq_world",
    "clip_norm",
    "optimal_cost",
    "policy_cost",
    "random_lq",
    "riccati",
    "riccati_unchecked",
    "optimal_cost_from_riccati",
]

#: The relative slack allowed on norm bounds that hold with equality by construction (a canary on the bound).
NORM_TOL = 1e-12


def real_array(name: str, value: object, ndim: int = 2) -> np.ndarray:
    """``value`` as a finite float array of at least ``ndim`` axes (the check of every array of this module).

    Args:
        name: The parameter's name, for the error message.
        value: The array to check.
        ndim: The least number of axes.

    Returns:
        A float copy of ``value``.

    Raises:
        ValueError: If ``value`` is not real, has fewer than ``ndim`` axes, or is not finite.
    """
    a = np.asarray(value)
    if a.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be a real array, got dtype {a.dtype}")
    a = np.array(a, dtype=float)
    if a.ndim < ndim:
        raise ValueError(f"{name} must have at least {ndim} dimensions, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite, got {a!r}")
    return a


def _swap(a: np.ndarray) -> np.ndarray:
    return np.swapaxes(a, -1, -2)


def riccati_unchecked(
    a: np.ndarray, b: np.ndarray, q: np.ndarray, r: np.ndarray, horizon: int
) -> tuple[np.ndarray, np.ndarray]:
    """Batched Riccati recursion without validation (see :func:`riccati`).

    Args:
        a: A, shape (..., n, n).
        b: B, shape (..., n, d).
        q: Q, shape (n, n).
        r: R, shape (d, d).
        horizon: H.

    Returns:
        ``(P, K)`` of shapes (..., H + 1, n, n) and (..., H, d, n).
    """
    n, d = b.shape[-2], b.shape[-1]
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    p = np.zeros(batch + (horizon + 1, n, n))
    k = np.empty(batch + (horizon, d, n))
    at, bt = _swap(a), _swap(b)
    for h in range(horizon - 1, -1, -1):
        pn = p[..., h + 1, :, :]
        pa, pb = pn @ a, pn @ b
        if d == 1:  # a scalar division: much cheaper than a batched solve of 1×1 systems
            kh = -(bt @ pa) / (r + bt @ pb)
        else:
            kh = -np.linalg.solve(r + bt @ pb, bt @ pa)
        ph = q + at @ pa + (at @ pb) @ kh  # −AᵀPB(R + BᵀPB)⁻¹BᵀPA = AᵀPB·K
        p[..., h, :, :] = 0.5 * (ph + _swap(ph))
        k[..., h, :, :] = kh
    return p, k


def _check_system_arrays(a: object, b: object, q: object, r: object) -> tuple[np.ndarray, ...]:
    a_, b_ = real_array("A", a), real_array("B", b)
    q_, r_ = real_array("Q", q), real_array("R", r)
    n = a_.shape[-1]
    if a_.shape[-2] != n:
        raise ValueError(f"A must be square (n×n), got shape {a_.shape}")
    if b_.shape[-2] != n:
        raise ValueError(f"B must have n = {n} rows, got shape {b_.shape}")
    d = b_.shape[-1]
    if q_.shape != (n, n):
        raise ValueError(f"Q must have shape ({n}, {n}), got {q_.shape}")
    if r_.shape != (d, d):
        raise ValueError(f"R must have shape ({d}, {d}), got {r_.shape}")
    for name, m in (("Q", q_), ("R", r_)):
        if not np.allclose(m, m.T, rtol=1e-12, atol=1e-12):
            raise ValueError(f"{name} must be symmetric, got {m.tolist()}")
        low = float(np.linalg.eigvalsh(m).min())
        if low <= 0.0:
            raise ValueError(f"{name} must be positive definite, got smallest eigenvalue {low!r}")
    return a_, b_, q_, r_


def riccati(a: object, b: object, q: object, r: object, horizon: int) -> tuple[np.ndarray, np.ndarray]:
    """The finite-horizon Riccati recursion: ``(P, K)``.

    P_H = 0 and, for h = H−1 … 0,
    K_h = −(R + BᵀP_{h+1}B)⁻¹BᵀP_{h+1}A,  P_h = Q + AᵀP_{h+1}A − AᵀP_{h+1}B(R + BᵀP_{h+1}B)⁻¹BᵀP_{h+1}A
    (docs/FORMULAS.md §4, 0-based).

    Args:
        a: A, shape (..., n, n); its leading batch axes are broadcast against ``b``'s.
        b: B, shape (..., n, d).
        q: Q (n, n), symmetric positive definite.
        r: R (d, d), symmetric positive definite.
        horizon: H, an integer >= 1.

    Returns:
        ``P`` of shape (..., H + 1, n, n) and ``K`` of shape (..., H, d, n).

    Raises:
        ValueError: If an array is not real and finite or has a wrong shape, Q or R is not symmetric positive
            definite, or ``horizon`` is not an integer >= 1.

    Examples:
        >>> p, k = riccati([[0.5]], [[0.5]], [[1.0]], [[1.0]], 2)
        >>> p[:, 0, 0].tolist(), k[:, 0, 0].tolist()
        ([1.2, 1.0, 0.0], [-0.2, -0.0])
    """
    a_, b_, q_, r_ = _check_system_arrays(a, b, q, r)
    h = check_count("horizon", horizon)
    return riccati_unchecked(a_, b_, q_, r_, h)


def _check_covariance(w: object, n: int) -> np.ndarray:
    w_ = real_array("noise_covariance", w)
    if w_.shape != (n, n):
        raise ValueError(f"noise_covariance must have shape ({n}, {n}), got {w_.shape}")
    if not np.allclose(w_, w_.T, rtol=1e-12, atol=1e-14) or float(np.linalg.eigvalsh(w_).min()) < -1e-12:
        raise ValueError(f"noise_covariance must be symmetric positive semidefinite, got {w_.tolist()}")
    return w_


def check_x0(x0: object, n: int) -> np.ndarray:
    """``x0`` as a first state of n dimensions (its norm is checked by the caller).

    Args:
        x0: The state.
        n: The state dimension.

    Returns:
        ``x0`` as a float array of shape (n,).

    Raises:
        ValueError: If ``x0`` is not a real finite vector of shape (n,).
    """
    x = real_array("x0", x0, ndim=1)
    if x.shape != (n,):
        raise ValueError(f"x0 must have shape ({n},), got {x.shape}")
    return x


def optimal_cost_from_riccati(p: np.ndarray, x0: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The optimal expected cost x0ᵀ P₀ x0 + Σ_h tr(P_{h+1} W) from the Riccati matrices, unvalidated.

    Args:
        p: The Riccati matrices of :func:`riccati_unchecked`, shape (..., H + 1, n, n).
        x0: The first state, shape (n,).
        w: The noise covariance W, shape (n, n).

    Returns:
        The optimal expected cost, batched over the leading axes of ``p``.
    """
    quad = np.einsum("i,...ij,j->...", x0, p[..., 0, :, :], x0)
    return quad + np.einsum("...hij,ji->...", p[..., 1:, :, :], w)


def optimal_cost(
    a: object, b: object, q: object, r: object, horizon: int, x0: object, noise_covariance: object
) -> np.ndarray | float:
    """J*(x0) = x0ᵀP_0x0 + Σ_{h=0}^{H−1} tr(P_{h+1} W): the optimal expected cost of an episode (paper's (5)).

    Args:
        a: A, shape (..., n, n); leading batch axes are broadcast against ``b``'s.
        b: B, shape (..., n, d).
        q: Q (n, n), symmetric positive definite.
        r: R (d, d), symmetric positive definite.
        horizon: H, an integer >= 1.
        x0: The first state, shape (n,).
        noise_covariance: W (n, n), symmetric positive semidefinite.

    Returns:
        J*(x0) per leading batch axis of ``a`` and ``b``; a float when there are none.

    Raises:
        ValueError: If an array is not real and finite, has a wrong shape or is not (semi)definite as required, or
            ``horizon`` is not an integer >= 1.

    Examples:
        >>> optimal_cost([[0.5]], [[0.5]], [[1.0]], [[1.0]], 2, [1.0], [[0.01]])
        1.21
    """
    a_, b_, q_, r_ = _check_system_arrays(a, b, q, r)
    h = check_count("horizon", horizon)
    x = check_x0(x0, a_.shape[-1])
    w = _check_covariance(noise_covariance, a_.shape[-1])
    p, _ = riccati_unchecked(a_, b_, q_, r_, h)
    out = optimal_cost_from_riccati(p, x, w)
    return float(out) if np.ndim(out) == 0 else out


def _policy_cost(
    a: np.ndarray, b: np.ndarray, q: np.ndarray, r: np.ndarray, gains: np.ndarray, x0: np.ndarray, w: np.ndarray
) -> np.ndarray:
    horizon = gains.shape[-3]
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2], gains.shape[:-3])
    n = a.shape[-1]
    s = np.zeros(batch + (n, n))
    const = np.zeros(batch)
    for h in range(horizon - 1, -1, -1):
        const = const + np.einsum("...ij,ji->...", s, w)
        kh = gains[..., h, :, :]
        closed = a + b @ kh
        s = q + _swap(kh) @ r @ kh + _swap(closed) @ s @ closed
        s = 0.5 * (s + _swap(s))
    return np.einsum("i,...ij,j->...", x0, s, x0) + const


def policy_cost(
    a: object, b: object, q: object, r: object, gains: object, x0: object, noise_covariance: object
) -> np.ndarray | float:
    """J^π(x0): the exact expected cost of the linear policy u_h = K_h x_h.

    Backward: S_H = 0, S_h = Q + K_hᵀRK_h + (A + BK_h)ᵀS_{h+1}(A + BK_h), so
    J^π(x0) = x0ᵀS_0x0 + Σ_{h=0}^{H−1} tr(S_{h+1} W) for zero-mean noise of covariance W independent of
    the past. The controls are *not* clipped here (docs/explanation/environments.md, "Regret").

    Args:
        a: A, shape (..., n, n).
        b: B, shape (..., n, d).
        q: Q (n, n), symmetric positive definite.
        r: R (d, d), symmetric positive definite.
        gains: K_h, shape (..., H, d, n).
        x0: The first state, shape (n,).
        noise_covariance: W (n, n), symmetric positive semidefinite.

    Returns:
        J^π(x0) per leading batch axis of ``a``, ``b`` and ``gains``; a float when there are none.

    Raises:
        ValueError: If an array is not real and finite, has a wrong shape or is not (semi)definite as required.

    Examples:
        >>> import numpy as np
        >>> policy_cost([[0.5]], [[0.5]], [[1.0]], [[1.0]], np.zeros((2, 1, 1)), [1.0], [[0.01]])
        1.26
    """
    a_, b_, q_, r_ = _check_system_arrays(a, b, q, r)
    n, d = b_.shape[-2:]
    k = real_array("gains", gains, ndim=3)
    if k.shape[-2:] != (d, n):
        raise ValueError(f"gains must have shape (..., H, {d}, {n}), got {k.shape}")
    x = check_x0(x0, n)
    w = _check_covariance(noise_covariance, n)
    out = _policy_cost(a_, b_, q_, r_, k, x, w)
    return float(out) if np.ndim(out) == 0 else out


def _controllable(a: np.ndarray, b: np.ndarray) -> bool:
    n = a.shape[0]
    blocks = [b]
    for _ in range(n - 1):
        blocks.append(a @ blocks[-1])
    s = np.linalg.svd(np.hstack(blocks), compute_uv=False)
    return bool(s.size >= n and s[n - 1] > 1e-10 * max(1.0, float(s[0])))


@dataclass(frozen=True)
class LQSystem:
    """An episodic LQ system satisfying the paper's Assumption 1 (checked on construction).

    Attributes:
        A: The state matrix (n×n), ‖A‖ < 1.
        B: The control matrix (n×d), ‖B‖ < 1.
        Q: The state cost (n×n), symmetric positive definite.
        R: The control cost (d×d), symmetric positive definite.
        horizon: H, the steps of an episode.
        noise_bound: C_w ∈ (0, 1), the bound on every noise vector's norm.
        gamma: γ > 0, the control bound (controls are clipped to the ball of radius γ).
        x0: The first state of every episode (n,), ‖x0‖ <= 1.
        name: The system's name in runs and reports.

    Raises:
        ValueError: Naming the violated condition: ‖A‖ >= 1, ‖B‖ >= 1, ‖A‖ + γ‖B‖ + C_w > 1, ‖[A, B]‖_F > 1,
            (A, B) not controllable, bad shapes.
    """

    A: np.ndarray
    B: np.ndarray
    Q: np.ndarray
    R: np.ndarray
    horizon: int
    noise_bound: float
    gamma: float
    x0: np.ndarray
    name: str = "lq"

    def __post_init__(self) -> None:
        a, b, q, r = _check_system_arrays(self.A, self.B, self.Q, self.R)
        if a.ndim != 2 or b.ndim != 2:
            raise ValueError(f"A and B must be matrices, got shapes {a.shape} and {b.shape}")
        n = a.shape[0]
        h = check_count("horizon", self.horizon)
        c_w = check_positive("noise_bound", self.noise_bound)
        if c_w >= 1.0:
            raise ValueError(f"noise_bound C_w must be < 1 (Assumption 1(d)), got {c_w!r}")
        gamma = check_positive("gamma", self.gamma)
        x0 = check_x0(self.x0, n)
        if np.linalg.norm(x0) > 1.0 + NORM_TOL:
            raise ValueError(f"x0 must have norm <= 1 (Assumption 1(c)), got ‖x0‖ = {np.linalg.norm(x0)!r}")
        c_a, c_b = float(np.linalg.norm(a, 2)), float(np.linalg.norm(b, 2))
        if c_a >= 1.0:
            raise ValueError(f"‖A‖ must be < 1 (Assumption 1(b)), got ‖A‖ = {c_a!r}")
        if c_b >= 1.0:
            raise ValueError(f"‖B‖ must be < 1 (Assumption 1(b)), got ‖B‖ = {c_b!r}")
        total = c_a + gamma * c_b + c_w
        if total > 1.0 + NORM_TOL:
            raise ValueError(
                f"Assumption 1(e) needs ‖A‖ + γ‖B‖ + C_w <= 1, got {c_a!r} + {gamma!r}·{c_b!r} + {c_w!r} = {total!r}"
            )
        frob = float(np.sqrt(np.sum(a * a) + np.sum(b * b)))
        if frob > 1.0 + NORM_TOL:
            raise ValueError(f"‖Θ‖_F = ‖[A, B]‖_F must be <= 1 (Assumption 1(a)), got {frob!r}")
        if not _controllable(a, b):
            raise ValueError(
                "(A, B) must be controllable (Assumption 1(a)): the controllability matrix is rank deficient"
            )
        if not isinstance(self.name, str):
            raise ValueError(f"name must be a string, got {self.name!r}")
        for attr, value in (("A", a), ("B", b), ("Q", q), ("R", r), ("x0", x0)):
            value.setflags(write=False)
            object.__setattr__(self, attr, value)
        object.__setattr__(self, "horizon", h)
        object.__setattr__(self, "noise_bound", c_w)
        object.__setattr__(self, "gamma", gamma)

    # ------------------------------------------------------------------ shapes and constants

    @property
    def state_dim(self) -> int:
        """n."""
        return self.A.shape[0]

    @property
    def control_dim(self) -> int:
        """d."""
        return self.B.shape[1]

    @property
    def theta(self) -> np.ndarray:
        """Θ = [A, B]ᵀ, shape (n + d, n)."""
        return np.vstack([self.A.T, self.B.T])

    @property
    def noise_covariance(self) -> np.ndarray:
        """W = C_w²/(n + 2) · I: the covariance of the noise of users drawn uniform in the ball of radius C_w."""
        n = self.state_dim
        return np.eye(n) * self.noise_bound**2 / (n + 2)

    # ------------------------------------------------------------------ exact costs

    def riccati(self) -> tuple[np.ndarray, np.ndarray]:
        """The Riccati matrices of the true system (:func:`riccati`).

        Returns:
            ``(P, K)`` of shapes (H + 1, n, n) and (H, d, n).
        """
        return riccati_unchecked(self.A, self.B, self.Q, self.R, self.horizon)

    def optimal_gains(self) -> np.ndarray:
        """The optimal gains K_h of the true system.

        Returns:
            K, shape (H, d, n).
        """
        return self.riccati()[1]

    def optimal_cost(self) -> float:
        """J*(x0) under :attr:`noise_covariance`.

        Returns:
            The optimal expected cost of an episode.
        """
        p, _ = self.riccati()
        return float(optimal_cost_from_riccati(p, self.x0, self.noise_covariance))

    def _gains(self, gains: object) -> np.ndarray:
        k = real_array("gains", gains, ndim=3)
        want = (self.horizon, self.control_dim, self.state_dim)
        if k.shape[-3:] != want:
            raise ValueError(f"gains must have shape (..., {want[0]}, {want[1]}, {want[2]}), got {k.shape}")
        return k

    def policy_cost(self, gains: object) -> np.ndarray | float:
        """J^π(x0) of the linear policy u_h = K_h x_h (unclipped), exact.

        Args:
            gains: K_h, shape (H, d, n) or batched (..., H, d, n).

        Returns:
            The expected cost per leading batch axis of ``gains``; a float when there are none.

        Raises:
            ValueError: If ``gains`` is not real and finite or has the wrong shape.
        """
        k = self._gains(gains)
        out = _policy_cost(self.A, self.B, self.Q, self.R, k, self.x0, self.noise_covariance)
        return float(out) if np.ndim(out) == 0 else out

    def regret(self, gains: object) -> np.ndarray | float:
        """J^π(x0) − J*(x0) of the linear policy with ``gains`` (docs/explanation/environments.md, "Regret").

        Args:
            gains: K_h, shape (H, d, n) or batched (..., H, d, n).

        Returns:
            The regret per leading batch axis of ``gains`` (>= 0 up to rounding); a float when there are none.

        Raises:
            ValueError: If ``gains`` is not real and finite or has the wrong shape.

        Examples:
            >>> system = random_lq(2, 1, 5, rng=0)
            >>> system.regret(system.optimal_gains())
            0.0
        """
        k = self._gains(gains)
        out = _policy_cost(self.A, self.B, self.Q, self.R, k, self.x0, self.noise_covariance) - self.optimal_cost()
        return float(out) if np.ndim(out) == 0 else out

    # ------------------------------------------------------------------ simulation

    def step(self, x: np.ndarray, u: np.ndarray, w: np.ndarray) -> np.ndarray:
        """The next state A x + B u + w.

        Args:
            x: States, shape (..., n).
            u: Controls, shape (..., d).
            w: Noise, shape (..., n).

        Returns:
            The next states, batched over the leading axes.
        """
        return x @ self.A.T + u @ self.B.T + w

    def cost(self, x: np.ndarray, u: np.ndarray) -> np.ndarray:
        """The cost xᵀQx + uᵀRu of a step.

        Args:
            x: States, shape (..., n).
            u: Controls, shape (..., d).

        Returns:
            The costs, batched over the leading axes.
        """
        return np.einsum("...i,ij,...j->...", x, self.Q, x) + np.einsum("...i,ij,...j->...", u, self.R, u)

    def rollout(
        self, gains: object, noise: object, *, clip: bool = True, x1: object = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Play u_h = clip(K_h x_h, γ), or unclipped, against ``noise`` from x0 or from ``x1``.

        Args:
            gains: K_h, shape (H, d, n) or batched (..., H, d, n), broadcasting against the noise's leading axes.
            noise: The noise w_h, shape (..., H, n).
            clip: Whether the controls are clipped to the ball of radius γ.
            x1: A user's own first state (n,) with ‖x1‖ <= 1 (Assumption 1(c) lets x_{k,1} vary with k), or
                None for the system's x0.

        Returns:
            States (..., H + 1, n), controls (..., H, d) and costs (..., H).

        Raises:
            ValueError: If ``x1`` has norm above 1, or ``gains`` or ``noise`` has the wrong shape.
        """
        start = self.x0 if x1 is None else check_x0(x1, self.state_dim)
        if np.linalg.norm(start) > 1.0 + NORM_TOL:
            raise ValueError(f"x1 must have norm <= 1 (Assumption 1(c)), got ‖x1‖ = {np.linalg.norm(start)!r}")
        k = self._gains(gains)
        w = real_array("noise", noise, ndim=2)
        n, d, h_ = self.state_dim, self.control_dim, self.horizon
        if w.shape[-2:] != (h_, n):
            raise ValueError(f"noise must have shape (..., {h_}, {n}), got {w.shape}")
        batch = np.broadcast_shapes(w.shape[:-2], k.shape[:-3])
        states = np.empty(batch + (h_ + 1, n))
        controls = np.empty(batch + (h_, d))
        states[..., 0, :] = start
        for h in range(h_):
            x = states[..., h, :]
            u = np.einsum("...ij,...j->...i", k[..., h, :, :], x)
            if clip:
                u = clip_norm(u, self.gamma)
            controls[..., h, :] = u
            states[..., h + 1, :] = self.step(x, u, w[..., h, :])
        return states, controls, self.cost(states[..., :h_, :], controls)


def random_lq(
    state_dim: int,
    control_dim: int,
    horizon: int,
    rng: np.random.Generator | int,
    *,
    a_norm: float = 0.5,
    b_norm: float = 0.5,
    noise_bound: float = 0.1,
    gamma: float | None = None,
    q: float = 1.0,
    r: float = 1.0,
    x0: Sequence[float] | np.ndarray | None = None,
    name: str = "lq",
) -> LQSystem:
    """A random LQ system satisfying Assumption 1.

    A = a_norm · G_A/‖G_A‖ and B = b_norm · G_B/‖G_B‖ with Gaussian G (so ‖A‖ = a_norm, ‖B‖ = b_norm);
    if ‖[A, B]‖_F > 1 both are divided by it (lowering their norms). Draws are repeated until (A, B) is
    controllable.

    Args:
        state_dim: n.
        control_dim: d.
        horizon: H.
        rng: A Generator or an integer seed.
        a_norm: ‖A‖ before the Frobenius rescaling, in [0, 1).
        b_norm: ‖B‖ before the Frobenius rescaling, in (0, 1).
        noise_bound: C_w, with a_norm + C_w < 1.
        gamma: The control bound γ; None for the largest Assumption 1(e) allows, (1 − ‖A‖ − C_w)/‖B‖.
        q: Q = q·I.
        r: R = r·I.
        x0: The first state; None for a uniformly random unit vector.
        name: The system's name.

    Returns:
        The system.

    Raises:
        ValueError: If a size is not an integer >= 1, a norm or bound is out of range, or a norm leaves no room
            for controls (a_norm + noise_bound >= 1).

    Examples:
        >>> system = random_lq(2, 1, 5, rng=0)
        >>> system.state_dim, system.control_dim, system.horizon, system.noise_bound
        (2, 1, 5, 0.1)
    """
    n = check_count("state_dim", state_dim)
    d = check_count("control_dim", control_dim)
    h = check_count("horizon", horizon)
    rng = check_rng("rng", rng)
    a_norm = check_nonnegative("a_norm", a_norm)
    b_norm = check_positive("b_norm", b_norm)
    if a_norm >= 1.0 or b_norm >= 1.0:
        raise ValueError(f"a_norm and b_norm must be < 1, got {a_norm!r} and {b_norm!r}")
    c_w = check_positive("noise_bound", noise_bound)
    if a_norm + c_w >= 1.0:
        raise ValueError(f"a_norm + noise_bound must be < 1 to leave room for controls, got {a_norm!r} + {c_w!r}")
    q = check_positive("q", q)
    r = check_positive("r", r)
    for _ in range(100):
        ga, gb = rng.standard_normal((n, n)), rng.standard_normal((n, d))
        a = a_norm * ga / np.linalg.norm(ga, 2)
        b = b_norm * gb / np.linalg.norm(gb, 2)
        frob = float(np.sqrt(np.sum(a * a) + np.sum(b * b)))
        if frob > 1.0:
            a, b = a / frob, b / frob
        if _controllable(a, b):
            break
    else:  # pragma: no cover - a Gaussian draw is controllable with probability one
        raise ValueError("could not draw a controllable (A, B) in 100 tries")
    c_a, c_b = float(np.linalg.norm(a, 2)), float(np.linalg.norm(b, 2))
    g = (1.0 - c_a - c_w) / c_b if gamma is None else check_positive("gamma", gamma)
    if x0 is None:
        v = rng.standard_normal(n)
        x = v / np.linalg.norm(v)
    else:
        x = check_x0(x0, n)
    return LQSystem(a, b, q * np.eye(n), r * np.eye(d), h, c_w, g, x, name)


#: The LQ worlds an experiment may name (``env``), each :func:`random_lq`'s keyword arguments; the system is drawn
#: from the experiment's environment seed at its n, d and H. ``lq``: :func:`random_lq`'s defaults (‖A‖ = ‖B‖ = 0.5,
#: C_w = 0.1, Q = R = I), where the optimal gains are small (mean |K| ≈ 0.06 for n = 2, d = 1) and the zero gains
#: cost about 0.01 an episode above J*: a learner has little to find. ``lq-learning``: ‖A‖ = ‖B‖ = 0.7 (their
#: Frobenius norm at 1, Assumption 1(a)), C_w = 0.05 and cheap controls (R = 0.1·I), so the mean optimal |gain| is
#: about 0.13 and no control costs about 0.09 an episode above J* at H = 2 (γ = 0.36). Where each lets OFU-RL and
#: Private-OFU-RL learn: docs/explanation/seed-algorithms.md.
LQ_WORLDS: Mapping[str, Mapping[str, Any]] = MappingProxyType(
    {
        "lq": MappingProxyType({}),
        "lq-learning": MappingProxyType({"a_norm": 0.7, "b_norm": 0.7, "noise_bound": 0.05, "r": 0.1}),
    }
)


def make_lq_world(
    name: str, state_dim: int, control_dim: int, horizon: int, rng: np.random.Generator | int
) -> LQSystem:
    """The LQ system of the world ``name`` (:data:`LQ_WORLDS`), drawn by :func:`random_lq`.

    Args:
        name: A world of :data:`LQ_WORLDS`.
        state_dim: n.
        control_dim: d.
        horizon: H.
        rng: A Generator or an integer seed.

    Returns:
        The system, named ``name``.

    Raises:
        ValueError: If ``name`` is not a world of :data:`LQ_WORLDS`, or a size is invalid.

    Examples:
        >>> make_lq_world("lq-learning", 2, 1, 10, rng=0).R.tolist()
        [[0.1]]
    """
    if name not in LQ_WORLDS:
        raise ValueError(f"the LQ world must be one of {', '.join(LQ_WORLDS)}, got {name!r}")
    return random_lq(state_dim, control_dim, horizon, rng, name=name, **LQ_WORLDS[name])
