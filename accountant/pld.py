"""Privacy loss distributions through dp-accounting.

dp-accounting's PLD accountant discretises each mechanism's privacy loss pessimistically
(``value_discretization_interval``, default 1e-4) and composes by convolution; a K-fold
Gaussian is handled exactly as one Gaussian with σ/√K, so discretisation error enters once
per distinct release. The result is an upper bound on ε up to that discretisation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .validation import check_positive

if TYPE_CHECKING:  # dp-accounting is imported where it is used: it costs 0.6 s at startup
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

__all__ = ["DEFAULT_DISCRETIZATION", "PLD_MAX_MU", "PLD_MIN_MU", "auto_discretization", "pld_accountant_for"]

#: dp-accounting's default value discretisation interval.
DEFAULT_DISCRETIZATION = 1e-4
#: Target number of grid points of the composed privacy loss under :func:`auto_discretization`.
AUTO_GRID_POINTS = 2e5
#: Largest composed μ the pld method accepts: dp-accounting 0.6 overflows by μ = 3e4 (ε ~ 4.5e8).
PLD_MAX_MU = 1e4
#: Below this μ (a noise multiplier above 1e150) dp-accounting overflows squaring the noise multiplier
#: (at about 1.3e154); the pld method then reports the exact profile, which it is raised to anyway.
PLD_MIN_MU = 1e-150


def auto_discretization(mu: float) -> float:
    """A discretisation interval that keeps the PLD grid near 2·10⁵ points.

    The privacy loss of a μ-GDP composition is N(μ²/2, μ²); dp-accounting's grid spans it to
    far tails, about μ² + 20μ wide. With dp-accounting's fixed 1e-4 a small σ (μ = 33) takes
    36 s and 2.9 GB, and the grid grows as μ². Pessimistic discretisation is sound at every
    interval; the coarser grid costs a relative ε error of about interval/ε, negligible where
    it applies (ε is then in the tens or more).

    Args:
        mu: μ of the composition (>= 0, not checked).

    Returns:
        The interval: at least dp-accounting's 1e-4.
    """
    return max(DEFAULT_DISCRETIZATION, (mu * mu + 20.0 * mu) / AUTO_GRID_POINTS)


def pld_accountant_for(
    event: dp_accounting.DpEvent, *, value_discretization_interval: float = DEFAULT_DISCRETIZATION
) -> pld_privacy_accountant.PLDAccountant:
    """A dp-accounting PLD accountant (add/remove relation) that has composed ``event``.

    Args:
        event: a dp-accounting ``DpEvent``.
        value_discretization_interval: the PLD grid's interval (> 0); dp-accounting's 1e-4 by default.

    Returns:
        The ``PLDAccountant``, with ``event`` composed.

    Raises:
        ArgumentTypeError: an interval of the wrong type.
        ValueError: an interval not positive and finite.
    """
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    interval = check_positive("value_discretization_interval", value_discretization_interval)
    accountant = pld_privacy_accountant.PLDAccountant(
        dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE, value_discretization_interval=interval
    )
    accountant.compose(event)
    return accountant
