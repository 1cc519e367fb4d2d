"""The privacy of the binary counting mechanism (tree aggregation): one counter's ledger, ε, δ and σ.

**Privacy.** A user changes one item, by at most Δ in ℓ2 norm, so each released p-sum changes
by at most Δ and at most m = :func:`max_psums_per_item` of them change. The release of all
noisy p-sums is therefore one Gaussian mechanism with sensitivity Δ√m and noise σ per p-sum:
μ = Δ√m/σ (:func:`tree_mu`), the same as m composed Gaussian releases of sensitivity Δ
(:func:`tree_ledger`). Every prefix is a post-processing of the p-sums released so far, so
the whole released sequence of prefixes is covered.

The counts (:func:`max_psums_per_item` …) are in :mod:`dpkit.accountant.tree_counts` and the working counter
:class:`BinaryCounter` in :mod:`dpkit.accountant.binary_counter`; both are importable from here too.
"""

from __future__ import annotations

from typing import Any

from .accountants import AccountingMethod, Guarantee, make_accountant
from .binary_counter import BinaryCounter
from .calibration import Calibration, calibrate_sigma
from .ledger import Ledger
from .tree_counts import (
    SCHEDULES,
    Schedule,
    max_psums_per_item,
    max_psums_per_prefix,
    paper_depth,
    prefix_decomposition,
    prefix_noise_variance,
    psum_interval,
    psums_per_item,
    released_prefixes,
    symmetric_noise_norm_bound,
    worst_item,
)
from .validation import check_extended_nonnegative, check_positive, check_unit_interval

__all__ = [
    "SCHEDULES",
    "Schedule",
    "BinaryCounter",
    "calibrate_tree_sigma",
    "max_psums_per_item",
    "max_psums_per_prefix",
    "paper_depth",
    "prefix_decomposition",
    "prefix_noise_variance",
    "psum_interval",
    "psums_per_item",
    "released_prefixes",
    "symmetric_noise_norm_bound",
    "tree_delta",
    "tree_epsilon",
    "tree_ledger",
    "tree_mu",
    "worst_item",
]


def tree_ledger(
    steps: int,
    *,
    sigma: float,
    sensitivity: float = 1.0,
    schedule: Schedule | str = "after-each",
    name: str = "binary-counter",
) -> Ledger:
    """The ledger of one counter: a Gaussian release of sensitivity Δ and noise σ, ``count`` = m.

    m = :func:`max_psums_per_item`: the release of all noisy p-sums is one Gaussian mechanism
    with sensitivity Δ√m, i.e. m composed releases of sensitivity Δ. Raises ``ValueError``
    when nothing is released (m = 0).

    Args:
        steps: T, the number of items (an integer >= 1).
        sigma: σ, the noise per p-sum (> 0).
        sensitivity: Δ, the ℓ2 sensitivity of one item (> 0); 1 by default.
        schedule: "after-each" or "before-episode"; "after-each" by default.
        name: the release's name; "binary-counter" by default.

    Returns:
        The :class:`~dpkit.accountant.ledger.Ledger`.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: σ or Δ not positive, T below 1, an unknown schedule, or nothing released (m = 0).
    """
    sigma = check_positive("sigma", sigma)
    sensitivity = check_positive("sensitivity", sensitivity)
    m = max_psums_per_item(steps, schedule=schedule)
    if m == 0:
        raise ValueError(
            f"nothing is released by a counter with schedule '{schedule}' and steps = {steps!r}: the ledger would "
            f"be empty"
        )
    return Ledger.homogeneous(sensitivity, sigma, compositions=m, name=name)


def tree_mu(steps: int, *, sigma: float, sensitivity: float = 1.0, schedule: Schedule | str = "after-each") -> float:
    """μ of one counter, Δ√m/σ with m = :func:`max_psums_per_item` (rounded up; 0 if m = 0).

    Args:
        steps: T, the number of items (an integer >= 1).
        sigma: σ, the noise per p-sum (> 0).
        sensitivity: Δ, the ℓ2 sensitivity of one item (> 0); 1 by default.
        schedule: "after-each" or "before-episode"; "after-each" by default.

    Returns:
        μ, rounded up.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: σ or Δ not positive, T below 1, or an unknown schedule.

    Examples:
        >>> tree_mu(8, sigma=2.0)
        1.0000000000000009
    """
    sigma = check_positive("sigma", sigma)
    sensitivity = check_positive("sensitivity", sensitivity)
    if max_psums_per_item(steps, schedule=schedule) == 0:
        return 0.0
    return tree_ledger(steps, sigma=sigma, sensitivity=sensitivity, schedule=schedule).mu


def tree_epsilon(
    steps: int,
    *,
    sigma: float,
    delta: float,
    sensitivity: float = 1.0,
    schedule: Schedule | str = "after-each",
    method: AccountingMethod | str = "exact",
    conversion: str | None = None,
    **options: Any,
) -> Guarantee:
    """ε(δ) of one counter under ``method`` (any of :data:`~dpkit.accountant.accountants.METHODS`).

    The counter's ledger is :func:`tree_ledger`; when nothing is released the guarantee is ε = 0.

    Args:
        steps: T, the number of items (an integer >= 1).
        sigma: σ, the noise per p-sum (> 0).
        delta: the δ, in [0, 1].
        sensitivity: Δ, the ℓ2 sensitivity of one item (> 0); 1 by default.
        schedule: "after-each" or "before-episode"; "after-each" by default.
        method: the accounting method (:data:`~dpkit.accountant.accountants.METHODS`); "exact" by default.
        conversion: the RDP or zCDP conversion (None: the method's default).
        **options: further options of the accountant.

    Returns:
        The :class:`~dpkit.accountant.accountants.Guarantee`.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: σ or Δ not positive, δ outside [0, 1], T below 1, an unknown schedule or method.
    """
    acc = make_accountant(method, conversion=conversion, **options)
    sigma = check_positive("sigma", sigma)
    delta = check_unit_interval("delta", delta)
    sensitivity = check_positive("sensitivity", sensitivity)
    if max_psums_per_item(steps, schedule=schedule) == 0:
        return Guarantee(0.0, delta, acc.method, acc.conversion)
    return acc.epsilon(tree_ledger(steps, sigma=sigma, sensitivity=sensitivity, schedule=schedule), delta)


def tree_delta(
    steps: int,
    *,
    sigma: float,
    epsilon: float,
    sensitivity: float = 1.0,
    schedule: Schedule | str = "after-each",
    method: AccountingMethod | str = "exact",
    conversion: str | None = None,
    **options: Any,
) -> Guarantee:
    """δ(ε) of one counter under ``method``; δ = 0 when nothing is released.

    Args:
        steps: T, the number of items (an integer >= 1).
        sigma: σ, the noise per p-sum (> 0).
        epsilon: the ε (>= 0, +inf allowed).
        sensitivity: Δ, the ℓ2 sensitivity of one item (> 0); 1 by default.
        schedule: "after-each" or "before-episode"; "after-each" by default.
        method: the accounting method (:data:`~dpkit.accountant.accountants.METHODS`); "exact" by default.
        conversion: the RDP or zCDP conversion (None: the method's default).
        **options: further options of the accountant.

    Returns:
        The :class:`~dpkit.accountant.accountants.Guarantee`.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: σ or Δ not positive, ε negative, T below 1, an unknown schedule or method.
    """
    acc = make_accountant(method, conversion=conversion, **options)
    sigma = check_positive("sigma", sigma)
    epsilon = check_extended_nonnegative("epsilon", epsilon)
    sensitivity = check_positive("sensitivity", sensitivity)
    if max_psums_per_item(steps, schedule=schedule) == 0:
        return Guarantee(epsilon, 0.0, acc.method, acc.conversion)
    return acc.delta(tree_ledger(steps, sigma=sigma, sensitivity=sensitivity, schedule=schedule), epsilon)


def calibrate_tree_sigma(
    steps: int,
    *,
    epsilon: float,
    delta: float,
    sensitivity: float = 1.0,
    schedule: Schedule | str = "after-each",
    method: AccountingMethod | str = "exact",
    conversion: str | None = None,
    **options: Any,
) -> Calibration:
    """The smallest σ per p-sum for which one counter is (ε, δ)-DP under ``method``.

    :func:`~dpkit.accountant.calibration.calibrate_sigma` with ``compositions`` = m =
    :func:`max_psums_per_item`. Raises ``ValueError`` when nothing is released (m = 0: no
    noise is needed).

    Args:
        steps: T, the number of items (an integer >= 1).
        epsilon: the target ε.
        delta: the target δ.
        sensitivity: Δ, the ℓ2 sensitivity of one item (> 0); 1 by default.
        schedule: "after-each" or "before-episode"; "after-each" by default.
        method: the accounting method (:data:`~dpkit.accountant.accountants.METHODS`); "exact" by default.
        conversion: the RDP or zCDP conversion (None: the method's default).
        **options: further options of the accountant.

    Returns:
        The :class:`~dpkit.accountant.calibration.Calibration` (σ per p-sum).

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: nothing released (m = 0), or a bad target (see
            :func:`~dpkit.accountant.calibration.calibrate_sigma`).
    """
    m = max_psums_per_item(steps, schedule=schedule)
    if m == 0:
        raise ValueError(
            f"nothing is released by a counter with schedule '{schedule}' and steps = {steps!r}: no sigma to calibrate"
        )
    return calibrate_sigma(
        epsilon, delta, sensitivity=sensitivity, compositions=m, method=method, conversion=conversion, **options
    )
