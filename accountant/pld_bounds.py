"""Where the truth lies below a pessimistic PLD: a rigorous lower bound on ε(δ) and δ(ε), tight to second order.

dp-accounting's pessimistic PLD (:mod:`dpkit.accountant.pld_events`) bounds the privacy profile above; its
optimistic PLD is no good as the lower end (it shifts the composed loss by about m·h/2). :class:`Profile` bounds
the truth below from the pessimistic PLD itself, through connect-the-dots' coupling: the gap is second order in
the interval h. The derivation (the coupling, the gap, ε from δ) and its accuracy on the DP-SGD grid:
docs/FORMULAS.md §11 (A lower bound under a pessimistic PLD).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from dp_accounting.pld import privacy_loss_distribution

__all__ = ["Discretisation", "Profile", "pessimistic_epsilon", "pmf_epsilon"]

#: Kernel terms beyond this many standard deviations of D are bounded as a whole (they are < 1e-30).
_WINDOW_SDS = 12.0
#: Multiples of √v tried as the envelope c of D (the best one for the query is kept).
_ENVELOPES = (1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 3.0, 3.5, 4.0, 5.0)
#: Relative slack on the floating-point sums of the PLD (dp-accounting's FFT convolutions).
_FLOAT_SLACK = 1e-9


@dataclass(frozen=True)
class Discretisation:
    """How a computed PLD departs from the truth: ``interval`` h, ``connect_dots`` factors discretised by
    connect-the-dots, ``rounded_up`` factors whose losses were rounded up onto the grid, and ``truncated`` τ,
    the probability mass dp-accounting's tail truncations moved (its total variation from the ideal coupling)."""

    interval: float
    connect_dots: int
    rounded_up: int
    truncated: float

    @property
    def variance(self) -> float:
        """v = m·h²/4: Hoeffding's variance proxy of the connect-the-dots displacement D."""
        return self.connect_dots * self.interval * self.interval / 4.0

    @property
    def mean(self) -> float:
        """M: a bound on E[D | L], m·e^h·h²/(8(1 − e^h·h/2))."""
        h = self.interval
        if self.connect_dots == 0:
            return 0.0
        return self.connect_dots * math.exp(h) * h * h / (8.0 * (1.0 - math.exp(h) * h / 2.0))

    @property
    def z_variance(self) -> float:
        """V >= Var(e^{−D} | L) = Π (1 + Var e^{−D_j}) − 1, each Var e^{−D_j} <= (e^h − 1)²/4 (two points e^h·e^{−h}
        apart at most, mean 1)."""
        return math.expm1(self.connect_dots * math.log1p(math.expm1(self.interval) ** 2 / 4.0))

    @property
    def shift(self) -> float:
        """How far up the rounded-up factors may have moved the composed loss."""
        return self.rounded_up * self.interval


def _tail(x: np.ndarray | float) -> Any:
    """Φ̄(x), the standard normal's upper tail."""
    from scipy.special import ndtr

    return ndtr(-np.asarray(x, dtype=float))


class _Kernel:
    """The bump K (its bounds A and B) of a discretisation and envelope c, widened to K̃."""

    def __init__(self, disc: Discretisation, c: float) -> None:
        self.v = disc.variance
        self.sd = math.sqrt(self.v)
        self.m = disc.mean
        self.root_z = math.sqrt(disc.z_variance)
        self.c = c
        self.beta = min(1.0, 2.0 * math.exp(-c * c / (2.0 * self.v))) if self.v > 0.0 else 0.0
        self.peak = max(float(self.a(np.array([0.0]))[0]), float(self.b(np.array([0.0]))[0]))
        self.reach = _WINDOW_SDS * self.sd  # beyond this from the flat top, K̃ <= K at the window's edge
        self.edge = float(self.a(np.array([self.reach]))[0]) + float(self.b(np.array([self.reach]))[0])

    def a(self, u: np.ndarray) -> np.ndarray:
        """A(u), u >= 0: the least of Hoeffding's tail integral and the two Cauchy–Schwarz bounds on
        e^{−u}·E[(Z − 1)₊], Z = e^{−D} (mean 1, variance <= V): √V/2 and √V·P(−D > u)^{1/2}."""
        v, sd = self.v, self.sd
        hoeffding = np.exp(-u + v / 2.0) * math.sqrt(2.0 * math.pi * v) * _tail((u - v) / sd)
        schwarz = np.exp(-u) * self.root_z * np.minimum(0.5, np.exp(-u * u / (4.0 * v)))
        return np.asarray(np.minimum(hoeffding, schwarz), dtype=float)

    def b(self, w: np.ndarray) -> np.ndarray:
        """B(w), w > 0: the least of E[(D − w)₊] by Hoeffding and E[(1 − Z)₊·1{D > w}] <= √V·min(1/2,
        P(D > w)^{1/2})."""
        excess = np.maximum(w - self.m, 0.0)
        hoeffding = np.maximum(self.m - w, 0.0) + math.sqrt(2.0 * math.pi * self.v) * _tail(excess / self.sd)
        schwarz = self.root_z * np.minimum(0.5, np.exp(-excess * excess / (4.0 * self.v)))
        return np.asarray(np.minimum(hoeffding, schwarz), dtype=float)

    def widened(self, y: np.ndarray) -> np.ndarray:
        """K̃(y) = sup over d in [−c, M + c] of K(y − d): the peak where y − d can be 0, else the nearer end."""
        out = np.full_like(y, self.peak)
        above = y > self.m + self.c
        below = y < -self.c
        out[above] = self.a(y[above] - self.m - self.c)
        out[below] = self.b(-y[below] - self.c)
        return out


class _Pair:
    """One dominating pair of the PLD as arrays: the losses of its grid points (ascending), their probabilities,
    the mass at +inf; its pessimistic δ(ε) and ε(δ) computed as dp-accounting computes them, vectorized."""

    def __init__(self, pmf: Any, interval: float) -> None:
        dense = pmf.to_dense_pmf()
        if not math.isclose(dense._discretization, interval, rel_tol=1e-12):  # noqa: SLF001
            raise ValueError(f"the PLD's interval {dense._discretization} is not {interval}")  # noqa: SLF001
        self.probs = np.asarray(dense._probs, dtype=float)  # noqa: SLF001
        self.lowest = int(dense._lower_loss)  # noqa: SLF001 - the grid index of probs[0]
        self.interval = interval
        self.infinity_mass = float(dense._infinity_mass)  # noqa: SLF001
        self._losses: np.ndarray | None = None

    @property
    def losses(self) -> np.ndarray:
        if self._losses is None:
            self._losses = self.span(0, self.probs.size)
        return self._losses

    def span(self, start: int, stop: int) -> np.ndarray:
        """The losses of grid points ``start`` to ``stop`` (indices into ``probs``)."""
        return (np.arange(start, stop) + self.lowest) * self.interval

    def delta(self, epsilon: float) -> float:
        """The pair's pessimistic δ(ε): inf mass + Σ over losses above ε of p·(1 − e^{ε−loss})."""
        if epsilon == math.inf:
            return self.infinity_mass
        i = int(np.searchsorted(self.losses, epsilon, side="right"))
        tail = -np.expm1(epsilon - self.losses[i:])
        return self.infinity_mass + float((tail * self.probs[i:]).sum())

    def epsilon(self, delta: float) -> float:
        """The pair's pessimistic ε(δ): dp-accounting's ``_get_epsilon_for_delta`` (a Python loop over the grid from
        the top, stopping where ε is found), as array operations on growing blocks from the top."""
        if self.infinity_mass > delta:
            return math.inf
        upper, lower = self.infinity_mass, 0.0  # the masses of the losses above the current block
        top, block = self.probs.size, 4096
        while top > 0:
            start = max(0, top - block)
            losses, probs = self.span(start, top)[::-1], self.probs[start:top][::-1]
            upper_after = upper + np.cumsum(probs)
            with np.errstate(over="ignore"):
                lower_after = lower + np.cumsum(np.exp(-losses) * probs)
            upper_before = np.concatenate(([upper], upper_after[:-1]))
            lower_before = np.concatenate(([lower], lower_after[:-1]))
            with np.errstate(divide="ignore", invalid="ignore"):
                stop = (
                    (upper_before > delta)
                    & (lower_before > 0.0)
                    & (np.log((upper_before - delta) / np.where(lower_before > 0.0, lower_before, 1.0)) >= losses)
                )
            zero = (upper_after >= delta) & (lower_after == 0.0)
            k_stop = int(np.argmax(stop)) if stop.any() else losses.size
            k_zero = int(np.argmax(zero)) if zero.any() else losses.size
            if k_zero < k_stop:
                return max(0.0, float(losses[k_zero]))
            if k_stop < losses.size:
                upper, lower = float(upper_before[k_stop]), float(lower_before[k_stop])
                break
            upper, lower = float(upper_after[-1]), float(lower_after[-1])
            top, block = start, block * 4
        if upper <= lower + delta:
            return 0.0
        return math.log((upper - delta) / lower)


def _dominating_pmfs(pld: privacy_loss_distribution.PrivacyLossDistribution) -> list[Any]:
    """The PLD's mass functions: one for a symmetric PLD, remove and add otherwise."""
    pmfs = [pld._pmf_remove]  # noqa: SLF001 - dp-accounting exposes no public access to the mass function
    if pld._pmf_add is not pld._pmf_remove:  # noqa: SLF001
        pmfs.append(pld._pmf_add)  # noqa: SLF001
    return pmfs


def pmf_epsilon(pmf: Any, delta: float) -> float:
    """One mass function's ``get_epsilon_for_delta(delta)``, with array operations instead of dp-accounting's loop
    over the grid.

    Args:
        pmf: a dp-accounting mass function of one dominating pair.
        delta: the δ, in [0, 1].

    Returns:
        ε, as dp-accounting computes it.
    """
    return _Pair(pmf, pmf._discretization).epsilon(delta)  # noqa: SLF001


def pessimistic_epsilon(pld: privacy_loss_distribution.PrivacyLossDistribution, delta: float) -> float:
    """``pld.get_epsilon_for_delta(delta)`` (the largest over the dominating pairs), with array operations.

    Args:
        pld: a dp-accounting ``PrivacyLossDistribution``.
        delta: the δ, in [0, 1].

    Returns:
        ε, as dp-accounting computes it.
    """
    return max(pmf_epsilon(pmf, delta) for pmf in _dominating_pmfs(pld))


class Profile:
    """The privacy profile of a pessimistic PLD and the interval the true profile lies in.

    ``upper_epsilon``/``upper_delta`` are dp-accounting's ``get_epsilon_for_delta``/``get_delta_for_epsilon``
    (the maximum over the dominating pairs), vectorized; ``lower_epsilon``/``lower_delta`` bound the truth below
    as the module docstring says, for the discretisation ``disc``.

    Args:
        pld: a PLD, or a list of some of its dominating pairs' mass functions.
        disc: the :class:`Discretisation` the PLD was built with.
    """

    def __init__(
        self, pld: privacy_loss_distribution.PrivacyLossDistribution | list[Any], disc: Discretisation
    ) -> None:
        """``pld``: a PLD, or a list of some of its dominating pairs' mass functions (each bounds the truth
        below: the true ε is the largest of the pairs')."""
        self.disc = disc
        pmfs = pld if isinstance(pld, list) else _dominating_pmfs(pld)
        self.pairs = [_Pair(pmf, disc.interval) for pmf in pmfs]

    def upper_epsilon(self, delta: float) -> float:
        """dp-accounting's ``get_epsilon_for_delta``: the largest ε(δ) over the dominating pairs.

        Args:
            delta: the δ, in [0, 1].

        Returns:
            The pessimistic ε(δ).
        """
        return max(pair.epsilon(delta) for pair in self.pairs)

    def upper_delta(self, epsilon: float) -> float:
        """dp-accounting's ``get_delta_for_epsilon``: the largest δ(ε) over the dominating pairs.

        Args:
            epsilon: the ε (>= 0).

        Returns:
            The pessimistic δ(ε).
        """
        return max(pair.delta(epsilon) for pair in self.pairs)

    def lower_delta(self, epsilon: float) -> float:
        """A rigorous lower bound on the true δ(ε); 0 when the bound says nothing.

        Args:
            epsilon: the ε (>= 0).

        Returns:
            The lower bound on δ(ε).
        """
        best = 0.0
        for pair in self.pairs:
            kernel = _best_kernel(pair, epsilon, self.disc)
            best = max(best, _lower_delta(pair, epsilon, self.disc, kernel))
        return max(0.0, best)

    def lower_epsilon(self, delta: float) -> float:
        """A rigorous lower bound on the true ε(δ) (0 < δ < 1): the largest ε found at which the lower bound on
        δ(ε) still exceeds ``delta`` (0 if none), each candidate checked.

        Args:
            delta: the δ, in (0, 1).

        Returns:
            The lower bound on ε(δ).
        """
        disc, best = self.disc, 0.0
        tops = sorted(((pair.epsilon(delta), k) for k, pair in enumerate(self.pairs)), reverse=True)
        for top, k in tops:
            if not math.isfinite(top) or top <= best:
                continue  # ε = inf: the bound says nothing; below the best so far: this pair cannot raise it
            pair = self.pairs[k]
            kernel = _best_kernel(pair, top, disc)

            def excess(x: float, kernel: _Kernel | None = kernel, pair: _Pair = pair) -> float:
                return _lower_delta(pair, x, disc, kernel) - delta

            # bracket: lo below the truth (excess > 0), hi = the pessimistic ε (excess <= 0 there)
            step = max(1e-9, 4.0 * (math.sqrt(disc.variance) + disc.shift))
            lo = max(0.0, top - step)
            f_lo = excess(lo)
            while f_lo <= 0.0 and lo > 0.0:
                step *= 2.0
                lo = max(0.0, top - step)
                f_lo = excess(lo)
            if f_lo <= 0.0:
                continue  # not even ε = 0 is shown below the truth
            hi, f_hi = top, excess(top)
            if f_hi > 0.0:  # (rounding at the pessimistic ε itself): the pessimistic value is the answer
                best = max(best, top)
                continue
            side = 0
            while hi - lo > 1e-7 * max(1.0, hi):  # regula falsi (Illinois): the excess is smooth in ε
                mid = (lo * f_hi - hi * f_lo) / (f_hi - f_lo)
                if not lo < mid < hi:
                    mid = 0.5 * (lo + hi)
                f_mid = excess(mid)
                if f_mid > 0.0:
                    lo, f_lo = mid, f_mid
                    if side == 1:
                        f_hi *= 0.5
                    side = 1
                else:
                    hi, f_hi = mid, f_mid
                    if side == -1:
                        f_lo *= 0.5
                    side = -1
            best = max(best, lo)  # excess(lo) > 0 was evaluated: lo is below the true ε
        return best


def _lower_delta(pair: _Pair, epsilon: float, disc: Discretisation, kernel: _Kernel | None) -> float:
    """A lower bound on the pair's true δ(ε) (may be negative: then it says nothing)."""
    return _upper_part(pair, epsilon, disc) - _gap(pair, epsilon, disc, kernel)


def _upper_part(pair: _Pair, epsilon: float, disc: Discretisation) -> float:
    """δ_{S'} at ε + the rounded-up factors' shift (the true loss is at least S' − shift), a hair lower."""
    return pair.delta(epsilon + disc.shift) * (1.0 - _FLOAT_SLACK)


def _gap(pair: _Pair, epsilon: float, disc: Discretisation, kernel: _Kernel | None) -> float:
    """What the true δ(ε) may lie below the pessimistic one: the widened bump's mass, the envelope's failure and
    the truncated mass (module docstring)."""
    tau = disc.truncated
    if kernel is None:  # no connect-the-dots factor: S' − shift <= S exactly (up to τ)
        return 2.0 * tau
    x = epsilon + disc.shift
    lo = np.searchsorted(pair.losses, x - kernel.c - kernel.reach, side="left")
    hi = np.searchsorted(pair.losses, x + kernel.m + kernel.c + kernel.reach, side="right")
    near = float((np.maximum(pair.probs[lo:hi], 0.0) * kernel.widened(pair.losses[lo:hi] - x)).sum())
    return (near + kernel.edge + tau * kernel.peak) / max(1e-12, 1.0 - kernel.beta) * (1.0 + _FLOAT_SLACK) + 2.0 * tau


def _best_kernel(pair: _Pair, epsilon: float, disc: Discretisation) -> _Kernel | None:
    """The envelope c (among :data:`_ENVELOPES` multiples of √v) whose bound is highest at ``epsilon``."""
    if disc.connect_dots == 0 or disc.variance == 0.0:
        return None
    sd = math.sqrt(disc.variance)
    kernels = [_Kernel(disc, k * sd) for k in _ENVELOPES]
    return min(kernels, key=lambda k: _gap(pair, epsilon, disc, k))
