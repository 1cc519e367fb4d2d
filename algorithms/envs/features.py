"""The linear-mixture view of a tabular MDP (seed 000 §6, seed 004).

:class:`LinearMixture` gives the one-hot features under which a tabular MDP's transitions and rewards are linear:
φ_V(s, a) ∈ R^(S²A) with ⟨φ_V(s, a), θ_h⟩ = P_h(·|s, a)ᵀV, and ϕ(s, a) ∈ R^(SA) with ⟨ϕ(s, a), θ_r,h⟩ = r_h(s, a).
The derivation and the flat indices: docs/explanation/environments.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .tabular import TabularMDP

__all__ = ["LinearMixture"]


@dataclass(frozen=True)
class LinearMixture:
    """One-hot linear-mixture features of ``env``: φ_V ∈ R^(S²A), ϕ ∈ R^(SA).

    Attributes:
        env: The tabular MDP whose features these are.
    """

    env: TabularMDP

    @property
    def dim(self) -> int:
        """d1 = S²A, the dimension of φ_V."""
        return self.env.states**2 * self.env.actions

    @property
    def reward_dim(self) -> int:
        """d2 = SA, the dimension of ϕ."""
        return self.env.states * self.env.actions

    def feature_bound(self, value_bound: float) -> float:
        """An upper bound on ‖φ_V(s, a)‖ for V ∈ [0, value_bound]: sqrt(S)·value_bound, rounded up.

        Args:
            value_bound: The bound on every value of V.

        Returns:
            sqrt(S)·value_bound, raised by a relative 2⁻⁵⁰ against rounding.
        """
        return float(np.sqrt(self.env.states)) * float(value_bound) * (1.0 + 2.0**-50)

    def phi_v(self, v: np.ndarray) -> np.ndarray:
        """φ_V(s, a) for every (s, a).

        Args:
            v: V, shape (..., S).

        Returns:
            φ_V, shape (..., S, A, d).

        Raises:
            ValueError: If the last axis of ``v`` is not S.
        """
        v = np.asarray(v, dtype=float)
        s_, a_ = self.env.states, self.env.actions
        if v.shape[-1:] != (s_,):
            raise ValueError(f"V must have last axis {s_}, got shape {v.shape}")
        out = np.zeros(v.shape[:-1] + (s_, a_, s_, a_, s_))
        idx = np.arange(s_)
        for a in range(a_):
            out[..., idx, a, idx, a, :] = v[..., None, :]
        return out.reshape(v.shape[:-1] + (s_, a_, self.dim))

    def phi_v_at(self, v: np.ndarray, s: int, a: int) -> np.ndarray:
        """φ_V(s, a) for one pair.

        Args:
            v: V, shape (S,).
            s: The state.
            a: The action.

        Returns:
            φ_V(s, a), shape (d,): V in the block of (s, a) (:meth:`block`), 0 elsewhere.

        Examples:
            >>> from dpkit.algorithms.envs.tabular import riverswim
            >>> LinearMixture(riverswim(2)).phi_v_at([1.0, 2.0], 1, 0).tolist()
            [0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0]
        """
        v = np.asarray(v, dtype=float)
        s_, a_ = self.env.states, self.env.actions
        out = np.zeros(self.dim)
        start = (s * a_ + a) * s_
        out[start : start + s_] = v
        return out

    def block(self, s: int, a: int) -> slice:
        """The coordinates of φ_V(s, a) that can be non-zero.

        Args:
            s: The state.
            a: The action.

        Returns:
            The slice of the S coordinates from (s·A + a)·S.

        Examples:
            >>> from dpkit.algorithms.envs.tabular import riverswim
            >>> LinearMixture(riverswim(2)).block(1, 0)
            slice(4, 6, None)
        """
        s_, a_ = self.env.states, self.env.actions
        start = (s * a_ + a) * s_
        return slice(start, start + s_)

    def theta(self) -> np.ndarray:
        """θ_h = vec P_h for every step.

        Returns:
            θ, shape (H, d).
        """
        return self.env.transitions.reshape(self.env.horizon, self.dim)

    def reward_features(self) -> np.ndarray:
        """The reward features ϕ(s, a) = e_(s,a).

        Returns:
            ϕ, shape (S, A, SA).
        """
        s_, a_ = self.env.states, self.env.actions
        return np.eye(s_ * a_).reshape(s_, a_, s_ * a_)

    def theta_r(self) -> np.ndarray:
        """θ_r,h = vec r_h, so that r_h(s, a) = ⟨ϕ(s, a), θ_r,h⟩.

        Returns:
            θ_r, shape (H, SA).
        """
        return self.env.rewards.reshape(self.env.horizon, self.reward_dim)
