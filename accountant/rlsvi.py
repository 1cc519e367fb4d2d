"""RLSVI's inherent-noise privacy (Lu, Gajane, Bai, Talebi: *RLSVI itself is Joint Differentially Private*).

Tabular RLSVI perturbs every Q-value with Gaussian noise for exploration; under the seed's relation (one
episode's rewards change) each is a Gaussian mechanism on a mean reward. Readings, loosest first: the paper's ρ
(Corollary 14), the same ρ converted tighter, the worst case over datasets (:func:`rlsvi_worst_case_mu`, the DP
guarantee) and the per-run, ex-post μ (:func:`rlsvi_run_privacy`: data-dependent, not a DP guarantee).
The derivations: docs/FORMULAS.md §11 (RLSVI's readings).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from .accountants import AccountingMethod, Guarantee, make_accountant
from .gdp import gdp_delta_unchecked, gdp_epsilon_unchecked
from .ledger import Ledger
from .numerics import round_up
from .validation import (
    check_choice,
    check_count,
    check_extended_nonnegative,
    check_positive,
    check_probability,
    check_unit_interval,
    shown_int,
)
from .zcdp import zcdp_epsilon_unchecked

__all__ = [
    "russo_beta",
    "rlsvi_rho",
    "rlsvi_paper_epsilon",
    "RlsviClosedForm",
    "rlsvi_closed_form",
    "rlsvi_worst_case_mu",
    "RlsviRunPrivacy",
    "rlsvi_run_privacy",
]

_RUN_METHODS = ("exact", "pld", "rdp", "zcdp")
_EXACT_TERMS = 1_000_000  # episodes summed term by term in rlsvi_worst_case_mu


#: The largest sizes the closed forms take: S, A and H at most 2⁵³ (the integers doubles hold exactly: their powers
#: and products, as β_k's S·H³, stay far inside the doubles), K at most the largest double (it only scales sums).
MAX_SIZES = {"states": 2**53, "actions": 2**53, "horizon": 2**53, "episodes": int(sys.float_info.max)}


def _check_sizes(states: object, actions: object, horizon: object, episodes: object) -> tuple[int, int, int, int]:
    sizes = {"states": states, "actions": actions, "horizon": horizon, "episodes": episodes}
    out = []
    for name, value in sizes.items():
        k = check_count(name, value)
        if k > MAX_SIZES[name]:
            limit = "2**53 (the integers doubles hold exactly)" if name != "episodes" else "1.8e308 (the doubles)"
            raise ValueError(f"{name} must be at most {limit}, got {shown_int(k)}")
        out.append(k)
    return out[0], out[1], out[2], out[3]


def russo_beta(*, states: int, actions: int, horizon: int, episode: int) -> float:
    """Russo's (2019) RLSVI noise scale β_k = ½ S H³ ln(2HSAk) for episode k (1-based).

    Args:
        states: S, the number of states (an integer >= 1, at most 2**53).
        actions: A, the number of actions (an integer >= 1, at most 2**53).
        horizon: H, the steps per episode (an integer >= 1, at most 2**53).
        episode: k, the 1-based episode (an integer >= 1).

    Returns:
        β_k.

    Raises:
        ArgumentTypeError: a size of the wrong type.
        ValueError: a size below 1 or above :data:`MAX_SIZES`.
    """
    s, a, h, k = _check_sizes(states, actions, horizon, episode)
    return 0.5 * s * h**3 * math.log(2.0 * h * s * a * k)


def rlsvi_rho(*, states: int, actions: int, horizon: int, episodes: int) -> float:
    """The seed's zCDP parameter ρ = 2AK/(H² ln(2HSA)) (Corollary 14), rounded up.

    Args:
        states: S, the number of states (an integer >= 1, at most 2**53).
        actions: A, the number of actions (an integer >= 1, at most 2**53).
        horizon: H, the steps per episode (an integer >= 1, at most 2**53).
        episodes: K, the number of episodes (an integer >= 1).

    Returns:
        ρ, rounded up.

    Raises:
        ArgumentTypeError: a size of the wrong type.
        ValueError: a size below 1 or above :data:`MAX_SIZES`.

    Examples:
        >>> round(rlsvi_rho(states=2, actions=2, horizon=2, episodes=10), 6)
        3.606738
    """
    s, a, h, k = _check_sizes(states, actions, horizon, episodes)
    # K divided first: 2AK alone overflows from K = 4.5e307 on, where ρ is still a double
    return round_up(2.0 * a * (k / (h * h * math.log(2.0 * h * s * a))))


def rlsvi_paper_epsilon(*, states: int, actions: int, horizon: int, episodes: int, delta: float) -> float:
    """The seed's ε(δ) = ρ + 2 sqrt(ρ ln(1/δ)) (Corollary 14), rounded up.

    Args:
        states: S, the number of states (an integer >= 1, at most 2**53).
        actions: A, the number of actions (an integer >= 1, at most 2**53).
        horizon: H, the steps per episode (an integer >= 1, at most 2**53).
        episodes: K, the number of episodes (an integer >= 1).
        delta: the δ, in (0, 1).

    Returns:
        ε, rounded up.

    Raises:
        ArgumentTypeError: a size of the wrong type.
        ValueError: a size below 1 or above :data:`MAX_SIZES`, or δ outside (0, 1).
    """
    rho = rlsvi_rho(states=states, actions=actions, horizon=horizon, episodes=episodes)
    return zcdp_epsilon_unchecked(rho, check_probability("delta", delta), "bun-steinke")


@dataclass(frozen=True)
class RlsviClosedForm:
    """The seed's ρ and its ε(δ) under three conversions (loosest to tightest).

    Attributes:
        states: S, the number of states.
        actions: A, the number of actions.
        horizon: H, the steps per episode.
        episodes: K, the number of episodes.
        delta: the δ the ε are read at.
        rho: the paper's ρ (Corollary 14), rounded up.
        epsilon_paper: ε by Bun–Steinke (the paper's conversion).
        epsilon_rdp_optimal: ε by the improved RDP conversion of αρ.
        epsilon_exact_gdp: ε by the exact μ-GDP conversion, μ = sqrt(2ρ).
    """

    states: int
    actions: int
    horizon: int
    episodes: int
    delta: float
    rho: float
    epsilon_paper: float
    epsilon_rdp_optimal: float
    epsilon_exact_gdp: float

    @property
    def mu(self) -> float:
        """μ = sqrt(2ρ): the GDP parameter of a Gaussian composition with this ρ."""
        return round_up(math.sqrt(2.0 * self.rho))

    def to_dict(self) -> dict[str, Any]:
        """The closed form as a plain dict.

        Returns:
            The fields and μ, by name.
        """
        return {
            "states": self.states,
            "actions": self.actions,
            "horizon": self.horizon,
            "episodes": self.episodes,
            "delta": self.delta,
            "rho": self.rho,
            "mu": self.mu,
            "epsilon_paper": self.epsilon_paper,
            "epsilon_rdp_optimal": self.epsilon_rdp_optimal,
            "epsilon_exact_gdp": self.epsilon_exact_gdp,
        }


def rlsvi_closed_form(*, states: int, actions: int, horizon: int, episodes: int, delta: float) -> RlsviClosedForm:
    """ρ of Corollary 14 and its ε(δ): the paper's Bun–Steinke form, the optimal RDP conversion of
    the same curve αρ, and the exact GDP conversion (valid: ρ is a sum of Gaussian mechanisms' Δ²/2σ²).

    Order: ``epsilon_exact_gdp <= epsilon_rdp_optimal <= epsilon_paper``.

    Args:
        states: S, the number of states (an integer >= 1, at most 2**53).
        actions: A, the number of actions (an integer >= 1, at most 2**53).
        horizon: H, the steps per episode (an integer >= 1, at most 2**53).
        episodes: K, the number of episodes (an integer >= 1).
        delta: the δ, in (0, 1).

    Returns:
        The :class:`RlsviClosedForm`.

    Raises:
        ArgumentTypeError: a size of the wrong type.
        ValueError: a size below 1 or above :data:`MAX_SIZES`, or δ outside (0, 1).
    """
    s, a, h, k = _check_sizes(states, actions, horizon, episodes)
    delta = check_probability("delta", delta)
    rho = rlsvi_rho(states=s, actions=a, horizon=h, episodes=k)
    return RlsviClosedForm(
        s,
        a,
        h,
        k,
        delta,
        rho,
        epsilon_paper=zcdp_epsilon_unchecked(rho, delta, "bun-steinke"),
        epsilon_rdp_optimal=zcdp_epsilon_unchecked(rho, delta, "rdp-optimal"),
        epsilon_exact_gdp=zcdp_epsilon_unchecked(rho, delta, "gaussian-exact"),
    )


def _li_difference(c: float, k: int, head: int) -> float:
    """(li(cK) − li(c·head))/c, rounded up: scipy's Ei while cK is a double (its rounding and the cancellation
    covered by a slack), mpmath's beyond (Ei(ln c + ln K) needs no cK; the result is about K/ln(cK))."""
    log_ck = math.log(c) + math.log(k)
    if log_ck < 700.0:
        hi, lo = special.expi(log_ck), special.expi(math.log(c * head))
        return float((hi - lo + 1e-14 * (abs(hi) + abs(lo))) / c)  # the slack: expi's rounding, the cancellation
    import mpmath  # imported where used: only the K beyond 1e300 / c need it

    with mpmath.workdps(40):
        exact = (mpmath.ei(mpmath.log(c) + mpmath.log(k)) - mpmath.ei(mpmath.log(c * head))) / c
        return round_up(float(exact), ulps=16) if exact < mpmath.mpf(1.7e308) else math.inf


def rlsvi_worst_case_mu(
    *, states: int, actions: int, horizon: int, episodes: int, beta: float | None = None, reward_range: float = 1.0
) -> float:
    """μ of the worst user over every possible run, charging only what her rewards touch.

    User j's rewards enter R̂ only at the H cells she visits, and only in episodes k > j. Over all
    runs the worst case is a cell visited by nobody else (n = 1), where (R/n)²/(β_k/(n+1)) = 2R²/β_k;
    the first user is the worst: μ² = Σ_{k=2}^{K} H·2R²/β_k. ``beta=None`` uses Russo's β_k; a
    number is a constant β. (The paper's ρ charges all S·A cells of all K episodes at β_1.)
    Returns 0.0 for K = 1 (no later episode sees the user).
    With Russo's β the sum is exact up to k = 10⁶ and bounded above by an integral beyond (docs/FORMULAS.md §11).

    Args:
        states: S, the number of states (an integer >= 1, at most 2**53).
        actions: A, the number of actions (an integer >= 1, at most 2**53).
        horizon: H, the steps per episode (an integer >= 1, at most 2**53).
        episodes: K, the number of episodes (an integer >= 1).
        beta: a constant noise scale β (> 0); None: Russo's β_k.
        reward_range: R, the range [0, R] of one reward (> 0); 1 by default.

    Returns:
        μ, rounded up.

    Raises:
        ArgumentTypeError: a size of the wrong type.
        ValueError: a size below 1 or above :data:`MAX_SIZES`, or β or R not positive and finite.
    """
    s, a, h, k = _check_sizes(states, actions, horizon, episodes)
    reward_range = check_positive("reward_range", reward_range)
    if beta is not None:
        beta = check_positive("beta", beta)
    if k == 1:
        return 0.0
    scale = 2.0 * h * reward_range**2
    if beta is not None:
        return round_up(math.sqrt((k - 1) * scale / beta), ulps=16)
    head = min(k, _EXACT_TERMS)
    ks = np.arange(2, head + 1, dtype=float)
    c = 2.0 * h * s * a
    total = math.fsum(scale / (0.5 * s * h**3 * np.log(c * ks)))
    if k > head:  # Σ_{k=a+1}^{K} 1/ln(ck) <= ∫_a^K dx/ln(cx) = (li(cK) − li(ca))/c, li(y) = Ei(ln y)
        total += scale / (0.5 * s * h**3) * _li_difference(c, k, head) * (1.0 + 1e-12)
    return round_up(math.sqrt(total), ulps=16)


#: What kind of figure :class:`RlsviRunPrivacy`'s μ and ε are (the ``kind`` of its ``to_dict``).
RUN_PRIVACY_KIND = "ex-post"


@dataclass(frozen=True)
class RlsviRunPrivacy:
    """The ex-post privacy of one RLSVI run: every user's μ (GDP) given the run's own visit counts.

    The figure is data-dependent (the counts are the users' states and actions), so it is not a DP
    guarantee; ``mu_worst_case``, when known, is the guarantee: the worst case over all datasets of
    the same sizes and noise (:func:`rlsvi_worst_case_mu`), never below the run's μ.

    Attributes:
        mu_per_user: μ of each episode's user (1-based episode i at index i − 1; the last is 0).
        reward_range: R, the range [0, R] of one reward.
        mu_worst_case: the worst case over datasets, when known (None otherwise).

    Raises:
        ValueError: ``mu_worst_case`` negative or below the run's μ.
    """

    mu_per_user: np.ndarray
    reward_range: float
    mu_worst_case: float | None = None

    def __post_init__(self) -> None:
        if self.mu_worst_case is not None:
            worst = check_extended_nonnegative("mu_worst_case", self.mu_worst_case)
            if self.mu > worst * (1.0 + 1e-9):
                raise ValueError(
                    f"mu_worst_case = {worst!r} is below the run's μ = {self.mu!r}: "
                    "it is not the worst case of this run"
                )

    @property
    def data_dependent(self) -> bool:
        """Always ``True``: μ and ε come from the run's visit counts (ex-post, not a DP guarantee)."""
        return True

    @property
    def mu(self) -> float:
        """The worst user's μ in this run (ex-post: depends on the run's visit counts)."""
        return float(self.mu_per_user.max())

    @property
    def worst_user(self) -> int:
        """The 1-based episode whose user has the largest μ (the earliest on ties)."""
        return int(np.argmax(self.mu_per_user)) + 1

    def epsilon(
        self, delta: float, *, method: AccountingMethod | str = "exact", conversion: str | None = None
    ) -> Guarantee:
        """ε(δ) of the worst user under ``method`` (exact, pld, rdp or zcdp).

        The run is a composition of Gaussian mechanisms, so it is one Gaussian mechanism with
        sensitivity μ and σ = 1 under every one of these methods. ``classic`` (basic composition
        per release) does not apply to an aggregate μ and is refused.

        Args:
            delta: the δ, in [0, 1].
            method: "exact", "pld", "rdp" or "zcdp"; "exact" by default.
            conversion: the RDP or zCDP conversion (None: the method's default).

        Returns:
            The :class:`~dpkit.accountant.accountants.Guarantee`.

        Raises:
            ArgumentTypeError: a parameter of the wrong type.
            ValueError: δ outside [0, 1], or a method other than the four (classic).
        """
        delta = check_unit_interval("delta", delta)
        method = check_choice("method", method, _RUN_METHODS)
        if self.mu == 0.0:
            return Guarantee(0.0, delta, method, conversion, None)
        return make_accountant(method, conversion=conversion).epsilon(Ledger.homogeneous(self.mu, 1.0), delta)

    def delta(self, epsilon: float) -> float:
        """Exact δ(ε) of the worst user (μ-GDP).

        Args:
            epsilon: the ε (>= 0, +inf allowed).

        Returns:
            δ, rounded up (0 when no user influences any release).

        Raises:
            ArgumentTypeError: ε not a real number.
            ValueError: ε negative or NaN.
        """
        epsilon = check_extended_nonnegative("epsilon", epsilon)
        return 0.0 if self.mu == 0.0 else gdp_delta_unchecked(self.mu, epsilon)

    def exact_epsilon(self, delta: float) -> float:
        """Exact ε(δ) of the worst user (μ-GDP) in this run (ex-post); 0 when no user influences any release.

        Args:
            delta: the δ, in [0, 1].

        Returns:
            ε, rounded up.

        Raises:
            ArgumentTypeError: δ not a real number.
            ValueError: δ outside [0, 1].
        """
        delta = check_unit_interval("delta", delta)
        return 0.0 if self.mu == 0.0 else gdp_epsilon_unchecked(self.mu, delta)

    def worst_case_epsilon(self, delta: float) -> float | None:
        """Exact ε(δ) of ``mu_worst_case`` (μ-GDP), the guarantee over datasets; ``None`` when it is not known.

        Args:
            delta: the δ, in [0, 1].

        Returns:
            ε, rounded up, or None.

        Raises:
            ArgumentTypeError: δ not a real number.
            ValueError: δ outside [0, 1].
        """
        delta = check_unit_interval("delta", delta)
        if self.mu_worst_case is None:
            return None
        return 0.0 if self.mu_worst_case == 0.0 else gdp_epsilon_unchecked(self.mu_worst_case, delta)

    def to_dict(self) -> dict[str, Any]:
        """The run's privacy as a plain dict.

        Returns:
            μ, the worst user, R, every user's μ, the kind ("ex-post") and the worst case, by name.
        """
        return {
            "mu": self.mu,
            "worst_user": self.worst_user,
            "reward_range": self.reward_range,
            "mu_per_user": self.mu_per_user.tolist(),
            "kind": RUN_PRIVACY_KIND,
            "data_dependent": True,
            "mu_worst_case": self.mu_worst_case,
        }


def _check_run_array(name: str, values: object, ndim: int) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-d array (episodes, horizon, states, actions), got shape {arr.shape}")
    if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite; entry {tuple(np.argwhere(~np.isfinite(arr))[0])} is not")
    return arr


def rlsvi_run_privacy(
    counts: object, variances: object, *, reward_range: float = 1.0, mu_worst_case: float | None = None
) -> RlsviRunPrivacy:
    """Exact per-user μ of one RLSVI run from its visit counts and noise variances — an ex-post,
    data-dependent figure, not a DP guarantee (``mu_worst_case``, e.g. :func:`rlsvi_worst_case_mu`,
    is carried beside it and must not be below the run's μ).

    ``counts[k, h, s, a]`` is n_k(h, s, a), the visits before episode k (0-based k = 0..K−1, so
    ``counts[0]`` is all zeros); ``variances[k, h, s, a]`` the variance of the noise added to
    Q_h(s, a) in episode k. Episode j's own visits are ``counts[j+1] − counts[j]`` (one cell per
    step); the last episode influences nothing. User j's μ² = Σ_{k>j} Σ_h (R/n_k)²/σ²_k at her cells,
    vectorised over users with suffix sums over episodes.

    Args:
        counts: n_k(h, s, a) as a (K, H, S, A) array: the visits before episode k (``counts[0]`` all zeros).
        variances: the variance of the noise added to Q_h(s, a) in episode k, the same shape.
        reward_range: R, the range [0, R] of one reward (> 0); 1 by default.
        mu_worst_case: the worst case over datasets to carry beside the run's μ (None: unknown).

    Returns:
        The :class:`RlsviRunPrivacy`.

    Raises:
        ArgumentTypeError: R not a real number.
        ValueError: arrays not 4-d, real and finite or of different shapes; counts that are not the visit counts
            of some run (negative, not starting at zero, or not growing by exactly one visit per step per
            episode); a variance not positive where a count is; R not positive; or ``mu_worst_case`` below the
            run's μ.
    """
    reward_range = check_positive("reward_range", reward_range)
    n = _check_run_array("counts", counts, 4)
    var = _check_run_array("variances", variances, 4).astype(float)
    if n.shape != var.shape:
        raise ValueError(f"counts and variances must have the same shape, got {n.shape} and {var.shape}")
    if np.any(n != np.round(n)) or np.any(n < 0):
        raise ValueError("counts must be non-negative integers")
    n = n.astype(np.int64)
    if np.any(n[0] != 0):
        raise ValueError("counts[0] must be all zeros (no visits before the first episode)")
    if np.any(var[n > 0] <= 0.0):
        raise ValueError("variances must be > 0 wherever counts are > 0")
    visits = np.diff(n, axis=0)  # (K−1, H, S, A): episode j's visits, j = 0..K−2
    if np.any(visits < 0) or np.any(visits.sum(axis=(2, 3)) != 1):
        bad = np.argwhere((visits < 0).any(axis=(2, 3)) | (visits.sum(axis=(2, 3)) != 1))[0]
        raise ValueError(
            f"counts are not a run's visit counts: from episode {bad[0]} to {bad[0] + 1}, "
            f"step {bad[1]} does not gain exactly one visit"
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(n > 0, (reward_range / np.maximum(n, 1)) ** 2 / np.where(n > 0, var, 1.0), 0.0)
    suffix = np.cumsum(ratio[::-1], axis=0)[::-1]  # suffix[k] = Σ_{k' >= k} ratio[k']
    mu_sq = np.einsum("jhsa,jhsa->j", suffix[1:], visits.astype(float))
    # Sums of K·H non-negative terms in floating point: relative error <= (K·H)·u. Inflate by a
    # rigorous bound (plus the square root's rounding) so no user's μ is reported low.
    terms = n.shape[0] * n.shape[1] * n.shape[2] * n.shape[3]
    mu = np.sqrt(mu_sq * (1.0 + (terms + 16) * 2.0**-52)) * (1.0 + 2.0**-50)
    return RlsviRunPrivacy(np.concatenate([mu, [0.0]]), reward_range, mu_worst_case)
