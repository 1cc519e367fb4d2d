"""The point estimate of ε beside a verdict: the fitted shape's ε at the claim's δ (docs/explanation/verdicts.md).

An audit certifies a lower bound; beside it stands an estimate, read from the family of trade-off curves that fits
the measured ROC (:func:`~dpkit.audits.shapes.fit_shapes`): a Laplace-shaped ROC gives the Laplace's ε, a Gaussian
one its μ's ε at δ, randomized response its ε. At δ = 0 a Gaussian shape's ε is ∞ (no Gaussian mechanism is pure
ε-DP), said so; where no family fits (a mixture, a lattice) there is no estimate, and the reason says why. The μ-GDP
reading of a μ bound is a different number, shown only against claims that imply GDP (:func:`gdp_reading`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from dpkit.accountant.gdp import gdp_epsilon

from .claims import Claim
from .shapes import ShapeFamily, ShapeReading

__all__ = ["EpsilonEstimate", "gdp_reading", "shape_estimate"]


@dataclass(frozen=True)
class EpsilonEstimate:
    """A point estimate of ε at ``delta``: the fitted ``family``'s ε (``value``, ``math.inf`` for a Gaussian shape at
    δ = 0) and its ``interval`` (the family's ε at the ends of its parameter's interval); ``value`` is ``None`` when
    no family fits, with ``note`` saying why (``note`` also explains an infinite value)."""

    value: float | None
    interval: tuple[float, float] | None
    family: str | None
    delta: float
    note: str | None = None

    def describe(self, digits: int = 4) -> str:
        """The estimate in one line, for people.

        Args:
            digits: Significant digits of each number.

        Returns:
            ``1.01 [0.977, 1.05] (laplace shape, δ = 0)``, ``∞ (…)`` or ``— (…)``.

        Examples:
            >>> EpsilonEstimate(1.0, (0.9, 1.1), "laplace", 0.0).describe()
            '1 [0.9, 1.1] (laplace shape, δ = 0)'
            >>> EpsilonEstimate(None, None, None, 1e-5, "no shape fitted").describe()
            '— (no shape fitted)'
        """
        if self.value is None:
            return f"— ({self.note})" if self.note else "—"
        if math.isinf(self.value):
            return f"∞ ({self.note})" if self.note else "∞"
        text = f"{self.value:.{digits}g}"
        if self.interval is not None:
            lo, hi = self.interval
            text += f" [{lo:.{digits}g}, {'∞' if math.isinf(hi) else f'{hi:.{digits}g}'}]"
        return f"{text} ({self.family} shape, δ = {self.delta:g})"

    def to_dict(self) -> dict[str, Any]:
        """The estimate as plain data (the keys an audit result's dictionary carries).

        Returns:
            ``epsilon_estimate`` (``math.inf`` stays as is: JSON writes it as null, the note says ∞),
            ``epsilon_estimate_interval``, ``epsilon_estimate_family`` and ``epsilon_estimate_note``.
        """
        return {
            "epsilon_estimate": self.value,
            "epsilon_estimate_interval": None if self.interval is None else list(self.interval),
            "epsilon_estimate_family": self.family,
            "epsilon_estimate_note": self.note,
        }


def shape_estimate(shape: ShapeReading | None, delta: float) -> EpsilonEstimate:
    """The point estimate of ε at ``delta`` from the shape an audit read (see the module docstring).

    Args:
        shape: The audit's reading of its evaluation ROC, or ``None`` (no scores to read).
        delta: Where ε is read (the claim's δ; 0 for a pure claim).

    Returns:
        The estimate: the best-fitting family's ε at δ with its interval, ∞ with a note for a Gaussian shape at
        δ = 0, or no value (with the reason) when no shape was read or none fits.

    Examples:
        >>> shape_estimate(None, 1e-5).note
        'no ROC read, no shape fitted'
    """
    if shape is None:
        return EpsilonEstimate(None, None, None, delta, "no ROC read, no shape fitted")
    if not shape.fitted:
        return EpsilonEstimate(
            None,
            None,
            None,
            delta,
            f"no shape fits the ROC (the best, {shape.family}, misfits it by {shape.fit.misfit:.3g})",
        )
    if shape.family == ShapeFamily.GAUSSIAN and delta <= 0.0 and shape.fit.parameter > 0.0:
        return EpsilonEstimate(
            math.inf,
            (math.inf, math.inf),
            shape.family,
            delta,
            "a Gaussian shape: no finite ε at δ = 0",
        )
    return EpsilonEstimate(shape.epsilon, shape.epsilon_interval, shape.family, delta)


def gdp_reading(mu: float, claim: Claim, delta: float) -> float | None:
    """A μ (bound or estimate) read as μ-GDP: its ε at ``delta``, against a claim that implies GDP only.

    Args:
        mu: The μ.
        claim: The claim audited.
        delta: Where ε is read (δ = 0 reads at 10⁻⁵: μ-GDP has no finite ε at δ = 0).

    Returns:
        The ε, or ``None`` when the claim implies no GDP (the reading would not be its ε).

    Examples:
        >>> round(gdp_reading(1.0, Claim.gdp(1.0), 1e-5), 4)
        4.3772
        >>> gdp_reading(1.0, Claim.dp(1.0, 0.0), 0.0) is None
        True
    """
    if claim.mu is None:
        return None
    if not math.isfinite(mu):
        return math.inf
    return 0.0 if mu <= 0.0 else gdp_epsilon(min(mu, 1e3), delta if delta > 0 else 1e-5)
