"""Privacy claims an audit checks: (ε, δ)-DP, μ-GDP, ρ-zCDP, or a Gaussian mechanism (σ, Δ).

A claim is data; the audit reads from it the ε it allows at a δ (:meth:`Claim.epsilon_at`) and,
for claims that imply μ-GDP (a μ or a Gaussian σ), the μ it allows (:attr:`Claim.mu`). A ρ-zCDP
claim does not imply sqrt(2ρ)-GDP (zCDP is the weaker notion), so it is only checked through its
(ε, δ) conversion (the optimal RDP conversion of the curve αρ, valid for every ρ-zCDP mechanism).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from accountant.gdp import gdp_epsilon
from accountant.validation import check_choice, check_count, check_positive, check_probability
from accountant.zcdp import zcdp_epsilon

__all__ = ["CLAIM_KINDS", "Claim"]

CLAIM_KINDS: tuple[str, ...] = ("dp", "gdp", "zcdp", "gaussian")


@dataclass(frozen=True)
class Claim:
    """What a release function is claimed to satisfy. Build with :meth:`dp`, :meth:`gdp`,
    :meth:`zcdp` or :meth:`gaussian`."""

    kind: str
    epsilon: float | None = None
    delta: float | None = None
    mu_value: float | None = None
    rho: float | None = None
    sigma: float | None = None
    sensitivity: float | None = None
    count: int = 1

    def __post_init__(self) -> None:
        check_choice("kind", self.kind, CLAIM_KINDS)
        need = {"dp": ("epsilon", "delta"), "gdp": ("mu_value",), "zcdp": ("rho",), "gaussian": ("sigma", "sensitivity")}
        for attr in need[self.kind]:
            if getattr(self, attr) is None:
                raise ValueError(f"a {self.kind} claim needs {attr.removesuffix('_value')}")

    @classmethod
    def dp(cls, epsilon: float, delta: float) -> Claim:
        """(ε, δ)-DP. ε may be 0; δ in [0, 1)."""
        epsilon = float(epsilon) if epsilon == 0 else check_positive("epsilon", epsilon)
        if delta != 0:
            delta = check_probability("delta", delta)
        return cls("dp", epsilon=epsilon, delta=float(delta))

    @classmethod
    def gdp(cls, mu: float) -> Claim:
        """μ-GDP."""
        return cls("gdp", mu_value=check_positive("mu", mu))

    @classmethod
    def zcdp(cls, rho: float) -> Claim:
        """ρ-zCDP."""
        return cls("zcdp", rho=check_positive("rho", rho))

    @classmethod
    def gaussian(cls, sigma: float, sensitivity: float = 1.0, count: int = 1) -> Claim:
        """``count`` Gaussian releases of ℓ2 sensitivity Δ with noise N(0, σ²I): μ = Δ sqrt(count)/σ."""
        return cls(
            "gaussian",
            sigma=check_positive("sigma", sigma),
            sensitivity=check_positive("sensitivity", sensitivity),
            count=check_count("count", count),
        )

    @property
    def mu(self) -> float | None:
        """The μ of μ-GDP the claim implies, or ``None`` (for dp and zcdp claims)."""
        if self.kind == "gdp":
            return self.mu_value
        if self.kind == "gaussian":
            return self.sensitivity * math.sqrt(self.count) / self.sigma  # type: ignore[operator]
        return None

    def default_delta(self) -> float:
        """The δ at which the audit evaluates ε: the claim's own δ for dp claims, else 1e-5."""
        if self.kind == "dp":
            return self.delta  # type: ignore[return-value]
        return 1e-5

    def epsilon_at(self, delta: float) -> float:
        """The ε the claim allows at ``delta`` (``inf`` when it allows nothing at that δ).

        dp: the claimed ε when δ >= the claimed δ (a smaller δ is not covered: ``inf``); gdp and
        gaussian: the exact ε(δ) of μ-GDP; zcdp: the optimal RDP conversion of αρ.
        """
        delta = check_probability("delta", delta)
        if self.kind == "dp":
            return self.epsilon if delta >= self.delta else math.inf  # type: ignore[return-value, operator]
        if self.kind == "zcdp":
            return zcdp_epsilon(self.rho, delta, "rdp-optimal")  # type: ignore[arg-type]
        return gdp_epsilon(self.mu, delta)  # type: ignore[arg-type]

    def describe(self) -> str:
        if self.kind == "dp":
            return f"({self.epsilon:g}, {self.delta:g})-DP"
        if self.kind == "gdp":
            return f"{self.mu_value:g}-GDP"
        if self.kind == "zcdp":
            return f"{self.rho:g}-zCDP"
        return f"Gaussian σ = {self.sigma:g}, Δ = {self.sensitivity:g}, ×{self.count} (μ = {self.mu:.6g})"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "description": self.describe()}
        if self.kind == "dp":
            out.update(epsilon=self.epsilon, delta=self.delta)
        elif self.kind == "zcdp":
            out.update(rho=self.rho)
        else:
            out.update(mu=self.mu)
            if self.kind == "gaussian":
                out.update(sigma=self.sigma, sensitivity=self.sensitivity, count=self.count)
        return out
