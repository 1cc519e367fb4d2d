"""The types the models of ``report.json`` share (:mod:`dpkit.reports.models`, :mod:`dpkit.reports.audit_models`): the
two kinds of object — the report's own (:class:`Own`: every key required, no other key) and those passed on whole
from a lower layer (:class:`Passed`: the keys the report reads, others allowed) — and the constrained numbers and
words they are made of."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Command",
    "Count",
    "Index",
    "NonNegative",
    "OpenProbability",
    "Own",
    "PaperClaim",
    "Passed",
    "Position",
    "Positive",
    "PrivacyModel",
    "Probability",
    "Relation",
    "Sigma",
    "Verdict",
]


PrivacyModel = Literal["LDP", "JDP"]
Relation = Literal["add_remove", "replace_one"]
Verdict = Literal["violation", "consistent", "inconclusive"]
#: what the paper's σ gives against the paper's own (ε, δ), read off the ledger (dpkit.reports.job.paper_claim):
#: met; flawed (met here, but its accounting has an error-level flag); not met (exact ε above the claim); not
#: certified (an upper bound above the claim)
PaperClaim = Literal["met", "flawed", "not met", "not certified"]
#: a position of the changed user: a name of the algorithm's positions (first, middle, last, k=INDEX…) or an index
Position = str | int

Count = Annotated[int, Field(ge=1)]
Index = Annotated[int, Field(ge=0)]
Positive = Annotated[float, Field(gt=0)]
NonNegative = Annotated[float, Field(ge=0)]
Probability = Annotated[float, Field(ge=0, le=1)]
OpenProbability = Annotated[float, Field(gt=0, lt=1)]
Command = Annotated[list[str], Field(min_length=2, description="dpkit arguments that print the same numbers")]
#: One σ for every release, or σ per release name.
Sigma = float | Annotated[dict[str, float], Field(min_length=1)]


class Own(BaseModel):
    """An object the report builds: every key required, no other key."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class Passed(BaseModel):
    """An object passed on whole from a lower layer: the keys the report reads, others allowed."""

    model_config = ConfigDict(frozen=True, extra="allow", strict=True)
