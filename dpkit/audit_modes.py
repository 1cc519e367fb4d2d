"""How an audit runs (:class:`AuditMode`): the one word the front door, the audits' results and the reports share.

It sits in the lowest layer of the package and imports nothing of dpkit, so that the audits (a one-run result says
its mode), the reports (a report's configuration chooses fixed or sequential) and the front door (``dpkit.audit``'s
``mode``) read one vocabulary without importing each other.
"""

from __future__ import annotations

import enum

__all__ = ["AuditMode"]


class AuditMode(enum.StrEnum):
    """How an audit runs: many runs of a fixed size (``dpkit.audits.rl.audit_positions``,
    ``dpkit.audits.engine.audit_pair``), many runs tested as they come, anytime-valid
    (``dpkit.audits.rl.sequential.audit_positions_sequential``), or one run with many canaries
    (``dpkit.audits.one_run.audit_one_run_target``, ``dpkit.audits.rl.one_run.audit_one_run``). A report audits
    fixed or sequential."""

    FIXED = "fixed"
    SEQUENTIAL = "sequential"
    ONE_RUN = "one-run"
