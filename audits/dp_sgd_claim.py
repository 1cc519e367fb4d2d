"""What a DP-SGD run claims: noise multiplier σ, Poisson sampling rate q and T steps, read through dpkit's PLD.

:class:`DpSgdClaim` gives the claim's ε at a δ (the accountant's pld figure, rounded up) and its whole trade-off
curve: the upper envelope of the (ε, δ(ε)) lines of the pessimistic PLD's privacy profile — never above the true
curve, so a rejection of it is a rejection of the run's claim. :meth:`DpSgdClaim.epsilon_lower` reads a one-run
count in the claim's own family (DP-SGD at the same q and T, any σ′): the largest rigorous lower bound on the ε of
a DP-SGD curve the count rejects.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpkit.accountant.dp_sgd import SamplingSchedule
from dpkit.accountant.pld_events import pld_epsilon, pld_for_event
from dpkit.accountant.validation import check_count, check_real, check_unit_interval

from .one_run_estimators import one_run_fdp_rejects

__all__ = ["DpSgdClaim"]

#: Slack subtracted from the curve (as :mod:`dpkit.audits.claims` does): floating point never becomes a violation.
_SLACK = 1e-12
#: The ε of the envelope's lines: fine where one-run audits read, coarse up to 50 (δ(ε) beyond is below e^-50).
_EPSILONS = np.concatenate([np.linspace(0.0, 12.0, 481), np.linspace(12.5, 50.0, 16)])


@functools.lru_cache(maxsize=64)
def _profile(noise_multiplier: float, sampling_rate: float, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """(ε grid, δ(ε) of the pessimistic PLD, rounded up) of DP-SGD at these values."""
    event = SamplingSchedule(sampling_rate, steps).event(noise_multiplier)
    pld = pld_for_event(event)
    eps = _EPSILONS  # fewer lines only lower the envelope: the curve stays below the truth
    pmfs = [pld._pmf_remove] if pld._symmetric else [pld._pmf_remove, pld._pmf_add]  # noqa: SLF001
    delta = np.max([_hockey_stick(pmf, eps) for pmf in pmfs], axis=0)
    return eps, np.minimum(1.0, np.nextafter(delta, np.inf))


def _hockey_stick(pmf: Any, eps: np.ndarray) -> np.ndarray:
    """δ(ε) = P[L = ∞] + Σ_{l_i > ε} p_i (1 − e^{ε − l_i}) of a dp-accounting mass function of the privacy loss L, at
    each ε >= 0 (what its ``get_delta_for_epsilon`` computes), from suffix sums of p_i and p_i e^{−l_i} over the
    losses above 0 (summed from the tail up; rounded up by 1e-12 of P[L > ε] against their difference's error)."""
    dense = pmf.to_dense_pmf()
    probs = np.asarray(dense._probs, dtype=float)  # noqa: SLF001
    losses = (dense._lower_loss + np.arange(probs.size)) * dense._discretization  # noqa: SLF001
    keep = (probs > 0.0) & (losses > 0.0)
    p, loss = probs[keep], losses[keep]  # ascending losses
    mass = np.append(np.cumsum(p[::-1])[::-1], 0.0)
    tilted = np.append(np.cumsum((p * np.exp(-loss))[::-1])[::-1], 0.0)
    first = np.searchsorted(loss, eps, side="right")  # the first loss above each ε
    above = mass[first]
    delta = np.maximum(0.0, above - np.exp(eps) * tilted[first]) + 1e-12 * above
    return dense._infinity_mass + delta  # noqa: SLF001


def _curve(noise_multiplier: float, sampling_rate: float, steps: int) -> Callable[[float], float]:
    """The trade-off function f(x) of DP-SGD at these values (the upper envelope of its profile's lines)."""
    eps, delta = _profile(noise_multiplier, sampling_rate, steps)
    up, down, base = np.exp(eps), np.exp(-eps), 1.0 - delta  # ε <= 50: no overflow

    def f(x: float) -> float:
        value = max(0.0, float(np.max(np.maximum(base - up * x, down * (base - x)))))
        return max(0.0, value - _SLACK)

    return f


@dataclass(frozen=True)
class DpSgdClaim:
    """A DP-SGD run's privacy claim: T steps of the Poisson-subsampled Gaussian mechanism (add/remove neighbours).

    Attributes:
        noise_multiplier: σ, the noise's standard deviation over the clipping norm (> 0, finite).
        sampling_rate: q, each example's probability of joining each batch, in (0, 1].
        steps: T, the number of noisy steps.
    """

    noise_multiplier: float
    sampling_rate: float
    steps: int

    def __post_init__(self) -> None:
        """Validate the claim; a ValueError says why it does not describe DP-SGD."""
        sigma = check_real("noise_multiplier", self.noise_multiplier)
        if not (sigma > 0.0 and math.isfinite(sigma)):
            raise ValueError(f"a DP-SGD claim needs a noise multiplier > 0 and finite, got {self.noise_multiplier!r}")
        q = check_unit_interval("sampling_rate", self.sampling_rate)
        if q <= 0.0:
            raise ValueError(f"a DP-SGD claim needs a sampling rate in (0, 1], got {self.sampling_rate!r}")
        object.__setattr__(self, "noise_multiplier", sigma)
        object.__setattr__(self, "sampling_rate", q)
        object.__setattr__(self, "steps", check_count("steps", self.steps))

    def epsilon_at(self, delta: float) -> float:
        """The accountant's ε at ``delta`` (dpkit's pessimistic PLD, rounded up).

        Args:
            delta: The δ, in [0, 1].

        Returns:
            The ε.

        Raises:
            ValueError: If ``delta`` lies outside [0, 1].
        """
        return pld_epsilon(self._event(), check_unit_interval("delta", delta)).epsilon

    def trade_off(self, fpr: float) -> float:
        """The smallest FNR the claim allows at FPR ``fpr`` (a hair below the true curve).

        Args:
            fpr: The false-positive rate, in [0, 1].

        Returns:
            The FNR.
        """
        return _curve(self.noise_multiplier, self.sampling_rate, self.steps)(min(1.0, max(0.0, float(fpr))))

    def rejected_by(self, *, canaries: int, guesses: int, correct: int, alpha: float) -> bool:
        """Whether ``correct`` right guesses of ``guesses`` among ``canaries`` reject the claim at level ``alpha``.

        Args:
            canaries: The canaries m.
            guesses: The guesses r.
            correct: The right guesses v.
            alpha: The level.

        Returns:
            True when no mechanism with the claim's curve gives that many right guesses with probability >= α.
        """
        return one_run_fdp_rejects(
            canaries=canaries, guesses=guesses, correct=correct, alpha=alpha, trade_off=self.trade_off
        )

    def epsilon_lower(self, *, canaries: int, guesses: int, correct: int, alpha: float, delta: float) -> float:
        """The largest ε at ``delta`` of a DP-SGD curve (this q and T, any noise multiplier σ′) that ``correct`` right
        guesses reject at level ``alpha``: a lower bound on the run's ε at 1 − α if its curve is one of DP-SGD's.

        Args:
            canaries: The canaries m.
            guesses: The guesses r.
            correct: The right guesses v.
            alpha: The level.
            delta: Where ε is read.

        Returns:
            The bound (the PLD's rigorous lower bound on that curve's ε); 0 when no σ′ in [σ/4, 64σ] is rejected,
            ε(σ/4) when all are (a bound, not the largest).
        """

        def rejects(log_sigma: float) -> bool:
            other = DpSgdClaim(math.exp(log_sigma), self.sampling_rate, self.steps)
            try:
                return other.rejected_by(canaries=canaries, guesses=guesses, correct=correct, alpha=alpha)
            except ValueError:  # a curve the PLD cannot represent (too little noise): counted as not rejected
                return False

        lo, hi = math.log(self.noise_multiplier / 4.0), math.log(self.noise_multiplier * 64.0)
        if not rejects(hi):
            return 0.0
        if rejects(lo):
            hi = lo
        else:
            while hi - lo > 0.01:  # σ′ within 1%: rejection is monotone in σ′ (more noise, a higher curve)
                mid = 0.5 * (lo + hi)
                lo, hi = (lo, mid) if rejects(mid) else (mid, hi)
        found = DpSgdClaim(math.exp(hi), self.sampling_rate, self.steps)
        return float(pld_epsilon(found._event(), delta).lower)

    def _event(self) -> Any:
        return SamplingSchedule(self.sampling_rate, self.steps).event(self.noise_multiplier)

    def describe(self) -> str:
        """The claim in words.

        Returns:
            ``DP-SGD σ = 1.1, q = 0.01, T = 1,000``.
        """
        return f"DP-SGD σ = {self.noise_multiplier:g}, q = {self.sampling_rate:g}, T = {self.steps:,}"

    def to_dict(self) -> dict[str, Any]:
        """The claim as plain data.

        Returns:
            Its kind, description and values.
        """
        return {
            "kind": "dp-sgd",
            "description": self.describe(),
            "noise_multiplier": self.noise_multiplier,
            "sampling_rate": self.sampling_rate,
            "steps": self.steps,
            "neighbours": "add/remove one example",
        }
