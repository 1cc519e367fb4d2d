"""Privacy claims an audit checks, each with its whole trade-off curve.

Kinds: pure ε-DP and (ε, δ)-DP (:meth:`Claim.dp`), μ-GDP (:meth:`Claim.gdp`), ρ-zCDP (:meth:`Claim.zcdp`), an
RDP curve (:meth:`Claim.rdp`), a Gaussian mechanism (:meth:`Claim.gaussian`) and a ledger of Gaussian releases
(:meth:`Claim.ledger`; ``dpkit audit --claim FILE`` reads the ledger files that ``dpkit ledger FILE`` reads).

A claim is data. The audit reads its trade-off curve (:meth:`Claim.trade_off`: the smallest FNR allowed at a given
FPR, computed a hair below the true curve so numerics never produce a false violation), the ε it allows at a δ
(:meth:`Claim.epsilon_at`), the μ of claims that imply GDP (:attr:`Claim.mu`) and its privacy profile
(:meth:`Claim.profile`: the δ it allows at each ε, rounded up).

How a zCDP or RDP claim gets a curve: see docs/explanation/verdicts.md ("Claims without a GDP curve").
"""

from __future__ import annotations

import enum
import functools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import special

from dpkit.accountant.gdp import gdp_delta, gdp_epsilon
from dpkit.accountant.ledger import Ledger
from dpkit.accountant.numerics import times_sqrt_count
from dpkit.accountant.rdp import rdp_epsilon
from dpkit.accountant.validation import (
    check_choice,
    check_count,
    check_extended_nonnegative,
    check_positive,
    check_real,
    enum_values,
)
from dpkit.accountant.zcdp import zcdp_epsilon

__all__ = ["CLAIM_KINDS", "ClaimKind", "ClaimUnit", "Claim"]


class ClaimKind(enum.StrEnum):
    """The kinds of privacy claim an audit tests (see :class:`Claim`)."""

    DP = "dp"
    GDP = "gdp"
    ZCDP = "zcdp"
    RDP = "rdp"
    GAUSSIAN = "gaussian"
    LEDGER = "ledger"


class ClaimUnit(enum.StrEnum):
    """The unit in which an audit reads a claim (:attr:`Claim.unit`): μ for the claims that imply GDP, else ε."""

    MU = "mu"
    EPSILON = "epsilon"


#: The values of :class:`ClaimKind`.
CLAIM_KINDS: tuple[str, ...] = enum_values(ClaimKind)
#: The claims whose trade-off curve is a Gaussian one (they imply μ-GDP).
_GDP_KINDS = frozenset({ClaimKind.GDP, ClaimKind.GAUSSIAN, ClaimKind.LEDGER})
#: Slack subtracted from every trade-off curve: floating-point error never becomes a violation.
_SLACK = 1e-12
#: The fields each kind of claim takes (the others must be left unset).
_FIELDS: dict[str, frozenset[str]] = {
    "dp": frozenset({"epsilon", "delta"}),
    "gdp": frozenset({"mu_value"}),
    "zcdp": frozenset({"rho"}),
    "rdp": frozenset({"orders", "values"}),
    "gaussian": frozenset({"sigma", "sensitivity", "count"}),
    "ledger": frozenset({"mu_value", "releases"}),
}
#: The δ' grid of the zCDP and RDP envelopes.
_DELTA_GRID = np.concatenate([np.logspace(-16, -1, 61), np.linspace(0.125, 0.95, 34)])


def _delta(name: str, value: object) -> float:
    """A δ in [0, 1] (0: pure DP; 1: no guarantee at all)."""
    x = check_real(name, value)
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1], got {x!r}")
    return x


def _dp_curve(x: np.ndarray, epsilon: float, delta: float) -> np.ndarray:
    """max(0, 1 − δ − e^ε x, e^{−ε}(1 − δ − x)): the trade-off curve of (ε, δ)-DP (ε may be inf)."""
    if math.isinf(epsilon):
        return np.zeros_like(x)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        a = 1.0 - delta - np.exp(epsilon + np.log(x))  # e^ε x in log space: no cap on ε that could raise the curve
        b = math.exp(-epsilon) * (1.0 - delta - x)
    return np.maximum(0.0, np.nan_to_num(np.maximum(a, b), nan=0.0, neginf=0.0))


@dataclass(frozen=True)
class _Lines:
    """The upper envelope of lines y = intercept + slope·x on [0, 1]: the lines that make it, left to right, and the
    x at which each hands over to the next (``starts[0]`` = 0)."""

    slopes: np.ndarray
    intercepts: np.ndarray
    starts: np.ndarray

    @classmethod
    def of(cls, slopes: np.ndarray, intercepts: np.ndarray) -> _Lines:
        """The envelope of the lines given (the convex-hull trick: steepest first, a line kept while it is highest
        somewhere)."""
        order = np.lexsort((-intercepts, slopes))  # by slope, the highest intercept first among equal slopes
        kept_s: list[float] = []
        kept_c: list[float] = []
        starts: list[float] = []
        for i in order:
            m, c = float(slopes[i]), float(intercepts[i])
            if kept_s and m == kept_s[-1]:
                continue  # a parallel line no higher than the one kept
            while kept_s:
                x = (kept_c[-1] - c) / (m - kept_s[-1])  # where the new line overtakes the last kept
                if x <= starts[-1]:
                    kept_s.pop(), kept_c.pop(), starts.pop()
                else:
                    break
            start = 0.0 if not kept_s else (kept_c[-1] - c) / (m - kept_s[-1])
            if start >= 1.0:
                continue  # the new line overtakes only beyond [0, 1]
            kept_s.append(m)
            kept_c.append(c)
            starts.append(max(start, 0.0))
        return cls(np.array(kept_s), np.array(kept_c), np.array(starts))

    def __call__(self, x: np.ndarray) -> np.ndarray:
        j = np.searchsorted(self.starts, x, side="right") - 1
        j = np.clip(j, 0, self.slopes.size - 1)
        return self.intercepts[j] + self.slopes[j] * x


@dataclass(frozen=True)
class Claim:
    """What a release function (or an algorithm) is claimed to satisfy.

    Build with :meth:`dp`, :meth:`gdp`, :meth:`zcdp`, :meth:`rdp`, :meth:`gaussian`, :meth:`ledger`, or directly
    (``Claim("gaussian", sigma=2.0, sensitivity=1.0)``): every value is validated either way, and a value out of
    range, one the kind needs and lacks, or one it does not take is a ValueError naming the field.

    Attributes:
        kind: One of :data:`CLAIM_KINDS` (``dp``, ``gdp``, ``zcdp``, ``rdp``, ``gaussian``, ``ledger``).
        epsilon: dp: the ε, in [0, ∞].
        delta: dp: the δ, in [0, 1] (0: pure ε-DP).
        mu_value: gdp and ledger: the μ.
        rho: zcdp: the ρ.
        sigma: gaussian: the noise's standard deviation.
        sensitivity: gaussian: the ℓ2 sensitivity Δ.
        count: gaussian: the number of releases composed.
        orders: rdp: the orders α_i > 1.
        values: rdp: ε_R(α_i) at each order.
        releases: ledger: the ledger's releases, as dictionaries (not compared).
    """

    kind: str
    epsilon: float | None = None
    delta: float | None = None
    mu_value: float | None = None
    rho: float | None = None
    sigma: float | None = None
    sensitivity: float | None = None
    count: int = 1
    orders: tuple[float, ...] = ()
    values: tuple[float, ...] = ()
    releases: tuple[dict[str, Any], ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        """Validate every value (whichever way the claim is built): a value out of range, a value the kind needs
        and lacks, or one it does not take is a ValueError naming the field and the value."""
        kind = check_choice("kind", self.kind, CLAIM_KINDS)
        takes = _FIELDS[kind]
        for name in ("epsilon", "delta", "mu_value", "rho", "sigma", "sensitivity"):
            value = getattr(self, name)
            if value is None and name in takes:
                raise ValueError(f"a {kind} claim needs {name.removesuffix('_value')}")
            if value is not None and name not in takes:
                raise ValueError(f"a {kind} claim takes no {name.removesuffix('_value')}, got {value!r}")
        for name, unset in (("count", 1), ("orders", ()), ("values", ()), ("releases", ())):
            if name not in takes and getattr(self, name) != unset:
                raise ValueError(f"a {kind} claim takes no {name}, got {getattr(self, name)!r}")
        checked: dict[str, Any] = {}
        if kind == ClaimKind.DP:
            checked["epsilon"] = check_extended_nonnegative("epsilon", self.epsilon)  # ε = inf: no guarantee
            checked["delta"] = _delta("delta", self.delta)
        elif kind == ClaimKind.GDP:
            checked["mu_value"] = check_positive("mu", self.mu_value)
        elif kind == ClaimKind.LEDGER:  # a ledger's μ: 0 where its σ are all inf, inf beyond the doubles
            checked["mu_value"] = check_extended_nonnegative("mu", self.mu_value)
        elif kind == ClaimKind.ZCDP:
            checked["rho"] = check_positive("rho", self.rho)
        elif kind == ClaimKind.RDP:
            if isinstance(self.orders, (str, bytes)) or isinstance(self.values, (str, bytes)):
                raise ValueError(f"an rdp claim needs sequences of orders and values, got {self.orders!r}")
            orders, values = tuple(self.orders), tuple(self.values)
            if not orders:
                raise ValueError("an rdp claim needs orders and values")
            rdp_epsilon(orders, values, 0.5)  # validates lengths, orders > 1, values >= 0 (names the bad entry)
            checked["orders"], checked["values"] = tuple(map(float, orders)), tuple(map(float, values))
        else:  # gaussian
            checked["sigma"] = check_positive("sigma", self.sigma)
            checked["sensitivity"] = check_positive("sensitivity", self.sensitivity)
            checked["count"] = check_count("count", self.count)
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    # -- constructors -------------------------------------------------------------------------
    @classmethod
    def dp(cls, epsilon: float, delta: float = 0.0) -> Claim:
        """(ε, δ)-DP; δ = 0 is pure ε-DP.

        Args:
            epsilon: The ε, in [0, ∞].
            delta: The δ, in [0, 1].

        Returns:
            The claim.

        Raises:
            ValueError: If ε or δ lies outside its range.
        """
        return cls("dp", epsilon=epsilon, delta=delta)

    @classmethod
    def gdp(cls, mu: float) -> Claim:
        """μ-GDP.

        Args:
            mu: The μ, > 0.

        Returns:
            The claim.

        Raises:
            ValueError: If μ is not positive.
        """
        return cls("gdp", mu_value=mu)

    @classmethod
    def zcdp(cls, rho: float) -> Claim:
        """ρ-zCDP.

        Args:
            rho: The ρ, > 0.

        Returns:
            The claim.

        Raises:
            ValueError: If ρ is not positive.
        """
        return cls("zcdp", rho=rho)

    @classmethod
    def rdp(cls, orders: Any, values: Any) -> Claim:
        """An RDP curve: (α_i, ε_R(α_i)) for every order α_i > 1 (each is claimed).

        Args:
            orders: The orders α_i > 1.
            values: ε_R(α_i) >= 0 at each order, as many.

        Returns:
            The claim.

        Raises:
            ValueError: If there is no order, the lengths differ, an order is <= 1 or a value negative.
        """
        return cls("rdp", orders=orders, values=values)

    @classmethod
    def gaussian(cls, sigma: float, sensitivity: float = 1.0, count: int = 1) -> Claim:
        """``count`` Gaussian releases of ℓ2 sensitivity Δ with noise N(0, σ²I): μ = Δ sqrt(count)/σ.

        Args:
            sigma: The noise's standard deviation σ, > 0.
            sensitivity: The ℓ2 sensitivity Δ, > 0.
            count: The number of releases composed, >= 1.

        Returns:
            The claim.

        Raises:
            ValueError: If a value lies outside its range.

        Examples:
            >>> Claim.gaussian(2.0, count=4).mu  # Δ·√4/σ
            1.0
        """
        return cls("gaussian", sigma=sigma, sensitivity=sensitivity, count=count)

    @classmethod
    def ledger(cls, ledger: Ledger) -> Claim:
        """The releases of a :class:`~dpkit.accountant.ledger.Ledger` (Gaussian, composed): μ-GDP with its exact μ.

        Args:
            ledger: The ledger.

        Returns:
            The claim, holding the ledger's releases.

        Raises:
            TypeError: If ``ledger`` is not a :class:`~dpkit.accountant.ledger.Ledger`.
        """
        if not isinstance(ledger, Ledger):
            raise TypeError(f"ledger must be an accountant.Ledger, got {type(ledger).__name__}")
        return cls(ClaimKind.LEDGER, mu_value=ledger.mu, releases=tuple(ledger.to_dicts()))

    # -- what the claim allows ----------------------------------------------------------------
    @property
    def mu(self) -> float | None:
        """The μ of μ-GDP the claim implies, or ``None`` (dp, zcdp and rdp claims)."""
        if self.kind in (ClaimKind.GDP, ClaimKind.LEDGER):
            return self.mu_value
        if self.kind == ClaimKind.GAUSSIAN:
            return times_sqrt_count(self.count, self.sensitivity / self.sigma)  # type: ignore[operator]
        return None

    @property
    def mu_allowed(self) -> float | None:
        """The μ of the noisiest Gaussian mechanism the claim still allows: the claim in the audit's own unit. μ for
        claims that imply GDP; the largest μ whose μ-GDP meets (ε, δ) for a dp claim (None at δ = 0: no Gaussian
        mechanism is purely DP); √(2ρ) for ρ-zCDP; min over the orders of √(2 ε(α)/α) for an RDP curve (a Gaussian
        mechanism's curve is α·μ²/2). A Gaussian release measured at μ above this breaks the claim by that ratio."""
        if self.mu is not None:
            return self.mu
        if self.kind == ClaimKind.DP:
            if self.delta == 0.0 or self.delta is None or self.epsilon is None:
                return None
            if self.delta >= 1.0 or math.isinf(self.epsilon):
                return math.inf
            from dpkit.accountant.gdp import gdp_mu

            return gdp_mu(self.epsilon, self.delta)
        if self.kind == ClaimKind.ZCDP:
            return math.sqrt(2.0 * self.rho)  # type: ignore[operator]
        if self.kind == ClaimKind.RDP:
            bounds = [math.sqrt(2.0 * v / a) for a, v in zip(self.orders, self.values) if math.isfinite(a * v)]
            return min(bounds) if bounds else None
        return None

    def default_delta(self) -> float:
        """The δ at which the audit evaluates ε.

        Returns:
            The claim's own δ for dp claims, else 1e-5.
        """
        if self.kind == ClaimKind.DP:
            return self.delta  # type: ignore[return-value]
        return 1e-5

    def epsilon_at(self, delta: float) -> float:
        """The ε the claim allows at ``delta``.

        Args:
            delta: The δ, in [0, 1].

        Returns:
            The ε (``inf`` when the claim allows nothing at that δ).

        Raises:
            ValueError: If ``delta`` lies outside [0, 1].
        """
        delta = _delta("delta", delta)
        if delta >= 1.0:
            return 0.0
        if self.kind == ClaimKind.DP:
            return self.epsilon if delta >= self.delta else math.inf  # type: ignore[return-value, operator]
        if delta == 0.0:
            return math.inf  # GDP, zCDP and RDP (finite orders) allow no pure ε
        if self.kind == ClaimKind.ZCDP:
            return zcdp_epsilon(self.rho, delta, conversion="rdp-optimal")  # type: ignore[arg-type]
        if self.kind == ClaimKind.RDP:
            return rdp_epsilon(self.orders, self.values, delta).epsilon
        return gdp_epsilon(self.mu, delta)  # type: ignore[arg-type]

    def trade_off(self, fpr: Any) -> np.ndarray:
        """The smallest FNR the claim allows at each FPR in ``fpr`` (vectorised; in [0, 1]).

        Rounded in the claim's favour (never above the true curve), so that a point below it is a
        violation of the claim and not of floating point.

        Args:
            fpr: False-positive rates (clipped to [0, 1]).

        Returns:
            The smallest FNR at each, of ``fpr``'s shape.
        """
        x = np.clip(np.asarray(fpr, dtype=float), 0.0, 1.0)
        if self.kind in _GDP_KINDS:
            f = special.ndtr(special.ndtri(1.0 - x) - self.mu)
        elif self.kind == ClaimKind.DP:
            f = _dp_curve(x, self.epsilon, self.delta)  # type: ignore[arg-type]
        else:  # the envelope's (ε, δ) curves: the upper envelope of their lines (and 0), built once
            f = self._lines(x)
        return np.maximum(0.0, f - _SLACK)

    def profile(self, epsilon: Any) -> np.ndarray:
        """The δ the claim allows at each ε in ``epsilon`` (its privacy profile δ(ε); vectorised, ε >= 0), rounded up.

        Every (ε, δ(ε)) is a guarantee the claim implies: for every test of D against D′ (in either direction)
        TPR <= e^ε FPR + δ(ε) — the tangent lines of the trade-off curve, which the sequential audit bets on
        (:mod:`dpkit.audits.sequential`). dp (ε₀, δ₀): δ₀ for ε >= ε₀, else
        max(δ₀, 1 − (1 + e^ε)(1 − δ₀)/(1 + e^ε₀)) (the curve's corner); claims that imply GDP: the exact
        δ(ε) of μ-GDP (:func:`~dpkit.accountant.gdp.gdp_delta`, rounded up); zCDP and RDP: the smallest δ' of the
        envelope's (ε(δ'), δ') with ε(δ') <= ε (1 when there is none). Never below the true profile.

        Args:
            epsilon: The ε values, >= 0 (inf allowed).

        Returns:
            δ(ε) at each, of ``epsilon``'s shape.

        Raises:
            ValueError: If an ε is negative or NaN.
        """
        eps = np.asarray(epsilon, dtype=float)
        if np.any(~(eps >= 0.0)):
            raise ValueError(f"epsilon must be >= 0 (inf allowed), got {epsilon!r}")
        flat = eps.reshape(-1)
        if self.kind in _GDP_KINDS:
            out = np.array([gdp_delta(self.mu, float(e)) for e in flat])  # type: ignore[arg-type]
        elif self.kind == ClaimKind.DP:
            e0, d0 = float(self.epsilon), float(self.delta)  # type: ignore[arg-type]
            if math.isinf(e0):
                out = np.where(np.isinf(flat), d0, 1.0)  # (∞, δ₀) bounds no finite-ε test
            else:
                with np.errstate(over="ignore"):
                    corner = 1.0 - (1.0 - d0) * (1.0 + np.exp(flat)) / (1.0 + math.exp(e0))
                out = np.where(flat >= e0, d0, np.maximum(d0, corner))
            out = np.minimum(1.0, out + _SLACK)
        else:
            pairs = [(e, d) for e, d in self._envelope if math.isfinite(e)]
            out = np.array([min([d for e, d in pairs if e <= x], default=1.0) for x in flat])
        return np.clip(out, 0.0, 1.0).reshape(eps.shape)

    @functools.cached_property
    def _lines(self) -> _Lines:
        """The lines of the envelope's (ε, δ) curves — 1 − δ − e^ε x and e^{−ε}(1 − δ − x) for each finite ε, and 0 —
        and their upper envelope (a convex piecewise-linear curve: evaluated by bisection on its breakpoints)."""
        pairs = [(e, d) for e, d in self._envelope if math.isfinite(e) and e < 700.0]
        eps = np.array([e for e, _ in pairs])
        dlt = np.array([d for _, d in pairs])
        slopes = np.concatenate([-np.exp(eps), -np.exp(-eps), [0.0]])
        intercepts = np.concatenate([1.0 - dlt, np.exp(-eps) * (1.0 - dlt), [0.0]])
        return _Lines.of(slopes, intercepts)

    @functools.cached_property
    def _envelope(self) -> tuple[tuple[float, float], ...]:
        """(ε(δ'), δ') over the δ' grid: the (ε, δ) guarantees a zCDP or RDP claim implies (computed once)."""
        return tuple((self.epsilon_at(float(d)), float(d)) for d in _DELTA_GRID)

    def refuted_by(self, fpr_upper: float, fnr_upper: float) -> bool:
        """Whether error rates lie strictly below the trade-off curve, in either orientation.

        The claims are symmetric in D and D′: no mechanism with this claim has such error rates.

        Args:
            fpr_upper: An upper bound FPR⁺ on the false-positive rate.
            fnr_upper: An upper bound FNR⁺ on the false-negative rate.

        Returns:
            True when (FPR⁺, FNR⁺) refutes the claim.

        Examples:
            >>> Claim.dp(1.0).refuted_by(0.1, 0.5)  # pure 1-DP needs FNR >= 1 − e·0.1 ≈ 0.73 at FPR 0.1
            True
            >>> Claim.dp(1.0).refuted_by(0.3, 0.6)
            False
        """
        a, b = float(fpr_upper), float(fnr_upper)
        return bool(b < self.trade_off(a)[()] or a < self.trade_off(b)[()])

    @property
    def unit(self) -> ClaimUnit:
        """The unit in which the audit reads this claim: μ (claims that imply GDP) or ε."""
        return ClaimUnit.MU if self.kind in _GDP_KINDS else ClaimUnit.EPSILON

    def describe(self) -> str:
        """The claim in words.

        Returns:
            The kind and its values in one line.

        Examples:
            >>> Claim.dp(1.0, 1e-5).describe()
            '(1, 1e-05)-DP'
            >>> Claim.gaussian(2.0).describe()
            'Gaussian σ = 2, Δ = 1, ×1 (μ = 0.5)'
        """
        if self.kind == ClaimKind.DP:
            return f"{self.epsilon:g}-DP (pure)" if self.delta == 0 else f"({self.epsilon:g}, {self.delta:g})-DP"
        if self.kind == ClaimKind.GDP:
            return f"{self.mu_value:g}-GDP"
        if self.kind == ClaimKind.ZCDP:
            return f"{self.rho:g}-zCDP"
        if self.kind == ClaimKind.RDP:
            return "RDP curve " + ", ".join(f"ε({o:g}) = {v:g}" for o, v in zip(self.orders, self.values))
        if self.kind == ClaimKind.LEDGER:
            return f"ledger of {len(self.releases)} Gaussian releases (μ = {self.mu:.6g})"
        return f"Gaussian σ = {self.sigma:g}, Δ = {self.sensitivity:g}, ×{self.count} (μ = {self.mu:.6g})"

    def to_dict(self) -> dict[str, Any]:
        """The claim as plain data (JSON-ready).

        Returns:
            Its kind, its description and the values of its kind (μ for claims that imply GDP).
        """
        out: dict[str, Any] = {"kind": self.kind, "description": self.describe()}
        if self.kind == ClaimKind.DP:
            out.update(epsilon=self.epsilon, delta=self.delta)
        elif self.kind == ClaimKind.ZCDP:
            out.update(rho=self.rho)
        elif self.kind == ClaimKind.RDP:
            out.update(orders=list(self.orders), values=list(self.values))
        else:
            out.update(mu=self.mu)
            if self.kind == ClaimKind.GAUSSIAN:
                out.update(sigma=self.sigma, sensitivity=self.sensitivity, count=self.count)
            if self.kind == ClaimKind.LEDGER:
                out.update(releases=[dict(r) for r in self.releases])
        return out
