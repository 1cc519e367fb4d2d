"""The linear-mixture view of a tabular MDP (seed 000 §6, seed 004).

With one-hot features φ(s′|s, a) = e_(s,a,s′) ∈ R^d, d = S²A, the transition kernel is linear,
P_h(s′|s, a) = ⟨φ(s′|s, a), θ_h⟩ with θ_h = vec P_h, and so is every expected next value:
φ_V(s, a) = Σ_s′ φ(s′|s, a) V(s′) puts V in the block of (s, a), and ⟨φ_V(s, a), θ_h⟩ = P_h(·|s, a)ᵀV.
Hence ‖φ_V(s, a)‖ = ‖V‖₂ <= sqrt(S)·max|V| and φ_V >= 0 entrywise when V >= 0. Reward features
(seed 004's random-reward model) are ϕ(s, a) = e_(s,a) ∈ R^(SA), ‖ϕ‖ = 1, θ_r,h = vec r_h.

The flat index of (s, a, s′) is (s·A + a)·S + s′ and that of (s, a) is s·A + a.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .tabular import TabularMDP

__all__ = ["LinearMixture"]


@dataclass(frozen=True)
class LinearMixture:
    """One-hot linear-mixture features of ``env``: φ_V ∈ R^(S²A), ϕ ∈ R^(SA)."""

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
        """An upper bound on ‖φ_V(s, a)‖ for V ∈ [0, value_bound]: sqrt(S)·value_bound."""
        return float(np.sqrt(self.env.states)) * float(value_bound) * (1.0 + 2.0**-50)

    def phi_v(self, v: np.ndarray) -> np.ndarray:
        """φ_V(s, a) for every (s, a): shape (..., S, A, d) for V of shape (..., S)."""
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
        """φ_V(s, a) for one pair: shape (d,)."""
        v = np.asarray(v, dtype=float)
        s_, a_ = self.env.states, self.env.actions
        out = np.zeros(self.dim)
        start = (s * a_ + a) * s_
        out[start : start + s_] = v
        return out

    def block(self, s: int, a: int) -> slice:
        """The coordinates of φ_V(s, a) that can be non-zero."""
        s_, a_ = self.env.states, self.env.actions
        start = (s * a_ + a) * s_
        return slice(start, start + s_)

    def theta(self) -> np.ndarray:
        """θ_h = vec P_h for every step: shape (H, d)."""
        return self.env.transitions.reshape(self.env.horizon, self.dim)

    def reward_features(self) -> np.ndarray:
        """ϕ(s, a) = e_(s,a): shape (S, A, SA)."""
        s_, a_ = self.env.states, self.env.actions
        return np.eye(s_ * a_).reshape(s_, a_, s_ * a_)

    def theta_r(self) -> np.ndarray:
        """θ_r,h = vec r_h: shape (H, SA), so that r_h(s, a) = ⟨ϕ(s, a), θ_r,h⟩."""
        return self.env.rewards.reshape(self.env.horizon, self.reward_dim)
