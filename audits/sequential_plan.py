"""The plan of a sequential audit: how it spends its runs — learning batches that double, then a final fixed-size test
(at most 1.3 times the fixed-size audit's evaluation runs, for the same power) at the share of α the e-process does
not take (:data:`SEQUENTIAL_SHARE`)."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpkit.accountant.validation import check_count, check_probability

from .claims import Claim, ClaimUnit
from .selection import TRAIN_CAP
from .shapes import POWER_NEEDED, read_shape, roc_points
from .verdicts import power_bound

__all__ = [
    "BUDGET_FACTOR",
    "FIRST_BATCH",
    "GROWTH",
    "MIN_RUNS",
    "SEQUENTIAL_SHARE",
    "SequentialPlan",
    "grown_final_size",
    "max_budget",
    "plan_sequential",
    "split_evenly",
]

#: The share of α the e-process gets (it stops at K >= 1/(share·α)); the final fixed-size test gets the rest.
SEQUENTIAL_SHARE = 0.5
#: Runs per dataset of the first batch (it only trains; batches then double).
FIRST_BATCH = 100
#: The factor by which each learning batch outgrows the one before.
GROWTH = 2.0
#: The fewest runs per dataset of a sequential audit.
MIN_RUNS = 200
#: The most the final split may grow over the fixed audit's evaluation split (so the budget over its runs).
BUDGET_FACTOR = 1.3


def max_budget(runs: int) -> int:
    """The most runs per dataset a sequential audit standing in for a fixed one of ``runs`` may spend.

    Its learning batches take what the fixed audit's training and selection splits do, its final split at most
    :data:`BUDGET_FACTOR` × the evaluation split.

    Args:
        runs: The fixed audit's runs per dataset.

    Returns:
        The budget, in runs per dataset.
    """
    return math.ceil(BUDGET_FACTOR * check_count("runs", runs))


@dataclass(frozen=True)
class SequentialPlan:
    """The batches of a sequential audit: ``learning`` (fit, choose, bet) then ``final`` (bet, and the final
    fixed-size test on all of them); ``budget`` = their total per dataset, against ``runs`` of the fixed audit."""

    runs: int
    learning: tuple[int, ...]
    final: tuple[int, ...]
    fixed_evaluation: int

    @property
    def budget(self) -> int:
        return sum(self.learning) + sum(self.final)

    @property
    def evaluation(self) -> int:
        return sum(self.final)

    def to_dict(self) -> dict[str, Any]:
        """The plan as plain data (JSON-ready).

        Returns:
            The fixed runs it stands in for, the budget, and the learning and final batches.
        """
        return {
            "runs": self.runs,
            "budget": self.budget,
            "learning": list(self.learning),
            "final": list(self.final),
            "fixed_evaluation": self.fixed_evaluation,
        }


def _doubling(total: int, first: int) -> list[int]:
    """Sizes first, first, then growing by :data:`GROWTH` a batch, summing to ``total`` (the last one cut; a small
    rest merged)."""
    sizes: list[int] = []
    size = float(first)
    while sum(sizes) < total:
        sizes.append(min(round(size), total - sum(sizes)))
        if len(sizes) > 1:
            size *= GROWTH
    if len(sizes) > 2 and sizes[-1] < sizes[-2] // 4:
        rest = sizes.pop()
        sizes[-1] += rest
    return sizes


@functools.lru_cache(maxsize=256)
def _final_size(claim: Claim, n_eval: int, alpha: float, delta: float) -> int:
    """The smallest n (up to 1.3·``n_eval``) whose final test at α·(1 − :data:`SEQUENTIAL_SHARE`) has the power
    of the fixed audit's ``n_eval`` evaluation runs at α (bisection; the power grows with n)."""
    target = power_bound(claim, n0=n_eval, n1=n_eval, alpha=alpha, delta=delta)
    final_alpha = alpha * (1.0 - SEQUENTIAL_SHARE)

    def enough(n: int) -> bool:
        return power_bound(claim, n0=n, n1=n, alpha=final_alpha, delta=delta) >= target

    lo, hi = n_eval, math.ceil(BUDGET_FACTOR * n_eval)
    if enough(lo) or not enough(hi):
        return lo if enough(lo) else hi
    while hi - lo > max(1, n_eval // 500):
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return hi


def plan_sequential(
    claim: Claim, *, runs: int, alpha: float = 0.05, delta: float | None = None, needs_fit: bool = True
) -> SequentialPlan:
    """The batches of a sequential audit standing in for a fixed audit of ``runs`` runs per dataset.

    The learning batches double from :data:`FIRST_BATCH` up to the fixed audit's training and selection splits.
    The final evaluation split is the fixed audit's, grown until the power of the final test at its α share
    (1 − :data:`SEQUENTIAL_SHARE`) reaches the fixed audit's at α (:func:`~dpkit.audits.verdicts.power_bound`), so
    that a correct target gets the fixed audit's verdict; it is cut in up to four batches so that the e-process may
    still stop early.

    Args:
        claim: The claim audited.
        runs: The fixed audit's runs per dataset (at least :data:`MIN_RUNS`).
        alpha: The audit's error probability.
        delta: Where ε is read (default: the claim's).
        needs_fit: Whether the attack learns (training and selection: min(runs/3, TRAIN_CAP) + a quarter of the
            rest; else a fifth).

    Returns:
        The plan: the batches and the budget.

    Raises:
        TypeError: If ``claim`` is not a :class:`~dpkit.audits.claims.Claim`.
        ValueError: If ``runs`` < :data:`MIN_RUNS`.
    """
    if not isinstance(claim, Claim):
        raise TypeError(f"claim must be an audits.Claim, got {type(claim).__name__}")
    runs = check_count("runs", runs)
    if runs < MIN_RUNS:
        raise ValueError(f"a sequential audit needs runs >= {MIN_RUNS}, got {runs}")
    alpha = check_probability("alpha", alpha)
    delta = claim.default_delta() if delta is None else float(delta)
    if needs_fit:
        n_train = min(runs // 3, TRAIN_CAP)
        learn = n_train + (runs - n_train) // 4
    else:
        learn = max(1, runs // 5)
    n_eval = runs - learn
    n_final = _final_size(claim, n_eval, alpha, delta)
    first = max(10, min(FIRST_BATCH, learn // 8))
    learning = _doubling(learn, first)
    parts = max(1, min(4, n_final // max(learning[-1], 1)))
    final = [n_final // parts] * parts
    final[-1] += n_final - sum(final)
    return SequentialPlan(runs=runs, learning=tuple(learning), final=tuple(final), fixed_evaluation=n_eval)


def split_evenly(total: int, parts: int) -> tuple[int, ...]:
    """``total`` runs in ``parts`` batches (the last takes what rounding leaves).

    Args:
        total: The runs to split.
        parts: The number of batches.

    Returns:
        The batch sizes.
    """
    sizes = [total // parts] * parts
    sizes[-1] += total - sum(sizes)
    return tuple(sizes)


def grown_final_size(
    plan: SequentialPlan,
    claim: Claim,
    scores0: np.ndarray,
    scores1: np.ndarray,
    shares: tuple[float, ...],
    delta: float,
) -> int:
    """The final split's size: as ``plan`` has it, or — for a claim read in ε whose learning runs (the chosen
    attack's ``scores0`` and ``scores1`` on the last learning batch) show a shape that points past it, or one whose
    violation just past it the planned final test would not see (:func:`~dpkit.audits.shapes.read_shape`) — as large
    as the budget allows (:func:`max_budget` of the fixed audit's runs, less the learning batches). Chosen from the
    learning runs only: the final test stays valid.

    Args:
        plan: the audit's plan.
        claim: the claim.
        scores0: the chosen attack's scores of the last learning batch on D.
        scores1: the same on D′.
        shares: the shares of α of the final tests.
        delta: where ε is read.

    Returns:
        The final split's runs per dataset.
    """
    planned = plan.evaluation
    if claim.unit != ClaimUnit.EPSILON or not (np.all(np.isfinite(scores0)) and np.all(np.isfinite(scores1))):
        return planned
    roc = roc_points(scores0, scores1)
    shape = read_shape(claim, roc, delta=delta, share=max(shares), level=min(shares) / 2.0, runs=plan.runs)
    lacking = shape.alternative is not None and shape.power < POWER_NEEDED
    if not (shape.points_to_violation or lacking):
        return planned
    return max(planned, max_budget(plan.runs) - sum(plan.learning))
