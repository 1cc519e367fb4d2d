"""Findings about an accounting (:class:`Flag`) and the informative δ they are judged against: at a δ above
min(10⁻⁵, 1/K) for K users an ε says little about each individual (a mechanism that publishes one user's data outright
meets it)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .validation import check_choice, check_count, enum_values, shown_int

if TYPE_CHECKING:
    from .tree_counts import Schedule

__all__ = [
    "INFORMATIVE_DELTA",
    "SEVERITIES",
    "Severity",
    "Flag",
    "tree_depth_flag",
    "uninformative_delta_flag",
    "users_informative_delta",
]


class Severity(enum.StrEnum):
    """How grave a flag is, gravest first."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


#: The values of :class:`Severity`.
SEVERITIES: tuple[str, ...] = enum_values(Severity)
#: The informative δ when the number of users K is unknown (and its cap when K is known): 10⁻⁵.
INFORMATIVE_DELTA: float = 1e-5


@dataclass(frozen=True)
class Flag:
    """A finding about a paper's accounting: ``code`` is stable, ``message`` is for people.

    Attributes:
        code: the finding's stable identifier (e.g. ``delta-not-informative``).
        message: the finding, for people.
        severity: "error", "warning" or "info" (:data:`SEVERITIES`); "warning" by default.
        release: the release it concerns (None: the whole accounting).

    Raises:
        ArgumentTypeError: a severity that is not a string.
        ValueError: an unknown severity.
    """

    code: str
    message: str
    severity: str = "warning"
    release: str | None = None

    def __post_init__(self) -> None:
        check_choice("severity", self.severity, SEVERITIES)

    def to_dict(self) -> dict[str, Any]:
        """The flag as a plain dict.

        Returns:
            ``code``, ``severity``, ``release`` and ``message``.
        """
        return {"code": self.code, "severity": self.severity, "release": self.release, "message": self.message}


def uninformative_delta_flag(delta: float, users: int | None, *, epsilon: float | None = None) -> Flag | None:
    """A ``delta-not-informative`` warning when ``delta`` exceeds :func:`users_informative_delta` for ``users`` = K
    (None: K unknown): at such a δ an ε says little about each individual (above 1/K, a mechanism that publishes one
    user's data outright meets it). ``epsilon``, the ε at the informative δ, is quoted when given.

    Args:
        delta: the δ an accounting was read at.
        users: K, the number of users (None: unknown).
        epsilon: the ε at the informative δ, quoted in the message (None: not quoted).

    Returns:
        The warning, or None when δ is informative.

    Raises:
        ArgumentTypeError: K of the wrong type.
        ValueError: K below 1.
    """
    informative = users_informative_delta(users)
    if not delta > informative:
        return None
    shown = "unknown" if users is None else f"= {users if users < 10**15 else shown_int(users)}"  # 10**400 too
    rule = f"min(1e-5, 1/K), K {shown}"
    there = "" if epsilon is None else f" (ε = {epsilon:.6g} there)"
    return Flag(
        "delta-not-informative",
        f"δ = {delta:.3g} is above the informative δ = {informative:.3g} ({rule}): at such a δ an ε says little about "
        f"each individual; read the ε at the informative δ{there}.",
        "warning",
    )


def users_informative_delta(users: int | None) -> float:
    """The informative δ for K = ``users`` users: min(:data:`INFORMATIVE_DELTA`, 1/K), and
    :data:`INFORMATIVE_DELTA` (10⁻⁵) without K (the rule of :func:`informative_delta`, for a K given directly).

    Args:
        users: K, the number of users (an integer >= 1), or None.

    Returns:
        The informative δ.

    Raises:
        ArgumentTypeError: K of the wrong type.
        ValueError: K below 1.
    """
    if users is None:
        return INFORMATIVE_DELTA
    return min(INFORMATIVE_DELTA, 1 / check_count("users", users))  # exact int division: any K (0 beyond the doubles)


def tree_depth_flag(paper_depth: int, *, exact_depth: int, schedule: Schedule, counters: str) -> Flag:
    """The flag for a tree depth m that differs from the schedule's exact count of p-sums per item.

    Args:
        paper_depth: the paper's m.
        exact_depth: the schedule's exact count of p-sums per item.
        schedule: the schedule's name, for the message.
        counters: the counters' name, for the message.

    Returns:
        A ``tree-depth-mismatch`` flag: an error when the paper under-counts, info when it over-counts.
    """
    under = paper_depth < exact_depth
    return Flag(
        "tree-depth-mismatch",
        f"{counters}: the paper's tree depth m = {paper_depth} differs from the {exact_depth} noisy p-sums that "
        f"contain one user under the {schedule} schedule"
        + (
            " (it under-counts: the paper's σ is too small)."
            if under
            else " (it over-counts: sound, but it costs noise)."
        ),
        "error" if under else "info",
    )
