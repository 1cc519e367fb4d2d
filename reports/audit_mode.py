"""How a report audits an algorithm (:class:`AuditMode`): the word its configuration, its rows and its pages share.

It sits below every other module of the reports, so that each reads the one vocabulary: the configuration that
chooses the mode, the verdict views that show it and the job that runs it.
"""

from __future__ import annotations

import enum

__all__ = ["AuditMode"]


class AuditMode(enum.StrEnum):
    """How an algorithm is audited: the fixed audit (``dpkit.audits.rl.audit_positions``) or the sequential,
    anytime-valid one (``dpkit.audits.rl.sequential.audit_positions_sequential``)."""

    FIXED = "fixed"
    SEQUENTIAL = "sequential"
