"""Privacy loss distributions through dp-accounting.

dp-accounting's PLD accountant discretises each mechanism's privacy loss pessimistically
(``value_discretization_interval``, default 1e-4) and composes by convolution; a K-fold
Gaussian is handled exactly as one Gaussian with σ/√K, so discretisation error enters once
per distinct release. The result is an upper bound on ε up to that discretisation.
"""

from __future__ import annotations

import dp_accounting
from dp_accounting.pld import pld_privacy_accountant

from .validation import check_positive

__all__ = ["DEFAULT_DISCRETIZATION", "pld_accountant_for"]

#: dp-accounting's default value discretisation interval.
DEFAULT_DISCRETIZATION = 1e-4


def pld_accountant_for(
    event: dp_accounting.DpEvent, value_discretization_interval: float = DEFAULT_DISCRETIZATION
) -> pld_privacy_accountant.PLDAccountant:
    """A dp-accounting PLD accountant (add/remove relation) that has composed ``event``."""
    interval = check_positive("value_discretization_interval", value_discretization_interval)
    accountant = pld_privacy_accountant.PLDAccountant(
        dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE, value_discretization_interval=interval
    )
    accountant.compose(event)
    return accountant
