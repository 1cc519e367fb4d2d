"""An audit's result in ``report.json`` (:mod:`dpkit.reports.models`): what ``dpkit audit ALGORITHM … --json``
prints — the fixed audit's (:class:`FixedAuditResult`) or, with ``--sequential``, the sequential one's
(:class:`SequentialAuditResult`), told apart by its ``"sequential": true`` (:data:`AnyAuditResult`) — and the audit
part of an algorithm's section (:class:`AuditDone`, :class:`AuditSkipped`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag

from .model_types import (
    Command,
    Count,
    Index,
    NonNegative,
    OpenProbability,
    Own,
    Passed,
    Position,
    Positive,
    Probability,
    Relation,
    Verdict,
)

__all__ = [
    "AUDIT_TAGS",
    "AnyAuditResult",
    "AuditDone",
    "AuditPosition",
    "FixedAuditResult",
    "AuditSkipped",
    "AuditTest",
    "AuditTests",
    "Roc",
    "SequentialAuditPosition",
    "SequentialAuditResult",
    "SequentialLook",
]


# -- the audit (as dpkit audit ALGORITHM --json prints it) --------------------------------------------------


class AuditTest(Passed):
    """One threshold test of the audit."""

    fpr: Probability
    fnr: Probability
    fpr_upper: Probability
    fnr_upper: Probability
    epsilon_lower: float | None
    mu_lower: float | None


class AuditTests(Passed):
    """The audit's tests."""

    tests: Annotated[list[AuditTest], Field(min_length=1)]


class Roc(Passed):
    """The audit's ROC curve and its confidence band (every rate's interval holds together at ``level``)."""

    fpr: list[float]
    tpr: list[float]
    negatives: Count = Field(description="evaluation runs on D (the FPR's trials)")
    positives: Count = Field(description="evaluation runs on D′ (the TPR's trials)")
    level: OpenProbability = Field(description="the band's confidence")
    kind: Literal["simultaneous"] = Field(description="all intervals hold together (Bonferroni over the points)")
    fpr_lower: list[Probability]
    fpr_upper: list[Probability]
    tpr_lower: list[Probability]
    tpr_upper: list[Probability]


class AuditPosition(Passed):
    """One probed position of the changed user: its neighbouring pair, tested at its share of α."""

    position: Position
    index: Index
    share: float = Field(description="the share of the declared mechanisms that hold her there")
    declared_mu: float = Field(description="the declared μ of those mechanisms at the σ used")
    pair_mu: float
    reach: float = Field(description="pair μ over the declared μ at this position")
    mu_allowed: float
    mu_lower: float
    epsilon_lower: float
    power_ratio: float
    verdict: Verdict


class FixedAuditResult(Passed):
    """An audit's result: ``dpkit audit ALGORITHM … --json``. Every number beside the verdict (the bounds, the
    claim, the allowance, reach, power, the tests and the ROC) is the headline position's (``position``, also
    ``worst_position``), whose verdict is the audit's; the largest bounds over the positions are named as such."""

    algorithm: str
    observer: str
    relation: Relation
    sigma: str | float | dict[str, Any]
    sigmas: dict[str, float]
    claimed_epsilon: float | None
    exact_epsilon: float | None
    exact_mu: float | None
    pair_mu: float | None = Field(description="the exact μ of the headline position's canary pair")
    epsilon_lower: float | None = Field(description="the headline position's certified ε lower bound at delta")
    mu_lower: float | None = Field(description="the headline position's certified μ lower bound")
    mu_estimate: float | None
    verdict: Verdict
    runs: Count
    episodes: Count
    position: Position = Field(description="the headline position: the changed user every number is read at")
    seed: Index
    audit: AuditTests
    roc: Roc
    worst_position: Position | None = Field(
        default=None, description="the headline position (one whose verdict is the audit's, weighing most)"
    )
    mu_lower_largest: float | None = Field(
        default=None, description="the largest certified μ lower bound of the positions (not the headline's)"
    )
    mu_lower_largest_position: Position | None = Field(default=None, description="the position of mu_lower_largest")
    epsilon_lower_largest: float | None = Field(
        default=None,
        description="the largest certified ε lower bound of the positions (claim_verdict holds it against the "
        "paper's ε)",
    )
    epsilon_lower_largest_position: Position | None = Field(
        default=None, description="the position of epsilon_lower_largest"
    )
    positions: list[AuditPosition] | None = Field(
        default=None, description="every probed position of the changed user (the headline is worst_position)"
    )


class SequentialLook(Passed):
    """The evidence of one position of a sequential audit after one piece of a batch."""

    batch: Index = Field(description="the batch (0-based): learning batches first, then the final ones")
    phase: Literal["learning", "final"]
    runs_used: Index = Field(description="runs per dataset this position had used")
    e_value: NonNegative | None = Field(description="the claim's e-value so far (null: not finite)")
    bound: NonNegative | None = Field(description="the bound certified so far, in the claim's unit (null: not finite)")
    attack: str | None = Field(description="the attack the bets were placed with (null: none yet)")


class SequentialAuditPosition(Passed):
    """One probed position of a sequential audit: its pair, judged against an allowance fixed before any run."""

    position: Position
    share: float = Field(description="the share of the declared mechanisms that hold her there")
    mu_allowed: float = Field(description="the claim's μ at the worst-placed user × √share: the allowance")
    declared_mu: float = Field(description="the declared μ of those mechanisms at the σ used")
    runs_used: Index = Field(description="runs per dataset this position used")
    verdict: Literal["violation", "consistent", "inconclusive", "stopped"] = Field(
        description="stopped: another position's violation ended the audit before this one concluded"
    )
    mu_lower: float | None = Field(description="the certified μ lower bound (null: stopped, or not finite)")
    epsilon_lower: float | None = Field(description="the certified ε lower bound at δ (null: stopped, or not finite)")
    e_value: NonNegative | None = Field(description="the claim's e-value at the end (null: stopped, or not finite)")
    stopped_early: bool | None = Field(description="whether its e-value crossed the threshold (null: stopped)")
    attack: str | None = Field(description="the attack it ended with (null: stopped)")
    looks: list[SequentialLook] = Field(description="the evidence after every piece of a batch, in order")


class SequentialAuditResult(Passed):
    """A sequential, anytime-valid audit's result: ``dpkit audit ALGORITHM … --sequential --json``. Every position in
    turns at its share of α, all stopping at the first violation; otherwise each ends at its budget with the fixed
    audit's final test. It has no ROC, trade-off tests, reach or power: those are the fixed audit's."""

    algorithm: str
    observer: str
    relation: Relation
    sigma: str | float | dict[str, Any]
    sigmas: dict[str, float] = Field(description="the σ of each release the audit ran at")
    sigmas_claim: dict[str, float] = Field(description="the σ of each release the claim needs (σ_tight)")
    epsilon: float | None = Field(description="the target ε of the audit's setting")
    delta: OpenProbability
    claimed_epsilon: float | None = Field(description="the algorithm's target ε (its claim) at delta")
    claim_mu: float | None = Field(description="the claim's μ at the worst-placed user (at the σ the claim needs)")
    exact_mu: float | None = Field(description="the declared releases' exact μ at the σ used (worst-placed user)")
    episodes: Count
    seed: Index
    sequential: Literal[True]
    verdict: Verdict
    runs: Count = Field(description="runs per dataset and position of the fixed audit it stands in for")
    budget: Count = Field(description="the most runs per dataset one position may use (at most 1.3× runs)")
    fixed_runs: Count = Field(description="runs per dataset the fixed audit of every position spends: runs × positions")
    runs_used: Count = Field(description="runs per dataset every position used together")
    stopped_early: bool = Field(description="whether a position's e-value crossed its threshold (a violation)")
    mu_lower: float | None = Field(description="the headline position's certified μ lower bound (worst_position)")
    epsilon_lower: float | None = Field(description="the headline position's certified ε lower bound")
    mu_allowed: float | None = Field(
        default=None, description="the headline position's allowance: the claim's μ × √share there"
    )
    mu_lower_largest: float | None = Field(
        default=None, description="the largest certified μ lower bound of the positions that concluded"
    )
    mu_lower_largest_position: Position | None = Field(default=None, description="the position of mu_lower_largest")
    epsilon_lower_largest: float | None = Field(
        default=None, description="the largest certified ε lower bound of the positions that concluded"
    )
    epsilon_lower_largest_position: Position | None = Field(
        default=None, description="the position of epsilon_lower_largest"
    )
    alpha: OpenProbability
    confidence: OpenProbability
    threshold: Positive = Field(description="the e-value at which a position stops: 1/(α/positions · ½)")
    worst_position: Position = Field(
        description="the headline position: one whose verdict is the audit's, whose evidence weighs most"
    )
    positions: Annotated[list[SequentialAuditPosition], Field(min_length=1)]


#: The tags of an audit's two kinds of result (no key of the data: left out of an error's location).
AUDIT_TAGS = ("fixed audit", "sequential audit")


def _audit_kind(value: Any) -> str:
    """Which kind of result an audit's is: sequential when it says so (``"sequential": true``), fixed otherwise."""
    flag = value.get("sequential") if isinstance(value, Mapping) else getattr(value, "sequential", None)
    return AUDIT_TAGS[1] if flag is True else AUDIT_TAGS[0]


#: A fixed audit's result, or a sequential one's (told apart by its ``"sequential": true``).
AnyAuditResult = Annotated[
    Annotated[FixedAuditResult, Tag(AUDIT_TAGS[0])] | Annotated[SequentialAuditResult, Tag(AUDIT_TAGS[1])],
    Discriminator(_audit_kind),
]


class AuditDone(Own):
    """An audit that ran: the fixed one, or a sequential one (the config's ``mode``)."""

    available: Literal[True]
    reason: None
    command: Command
    result: AnyAuditResult


class AuditSkipped(Own):
    """An audit that did not run, and why."""

    available: Literal[False]
    reason: str
    command: Command
    result: None
