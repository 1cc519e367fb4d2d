"""dpkit: account for, audit and report the privacy of differentially private RL.

Three jobs, each one call of :mod:`dpkit.facade` (options keyword-only): ``calibrate(epsilon=…, delta=…)`` finds
σ for a target budget; ``audit(release, d0, d1, claim=…)`` or ``audit("rlsvi")`` audits a release function, an RL
algorithm or an agent; ``report(out="report/")`` writes a report (Markdown, HTML, JSON, figures). The main types:
:class:`Ledger` (what mechanisms release), :class:`Calibration`, :class:`Guarantee`, :class:`PrivacyDeclaration`
(what an algorithm declares), :class:`Claim`, :class:`AuditSummary` (every audit result's headline) and
:class:`ReportConfig`. The packages underneath: :mod:`dpkit.accountant` (privacy math), :mod:`dpkit.algorithms`,
:mod:`dpkit.audits`, :mod:`dpkit.reports`. Names are imported on first use: ``import dpkit`` costs nothing.

Examples:
    >>> import dpkit
    >>> dpkit.calibrate(epsilon=1.0, delta=1e-5).sigma > 3.7
    True
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from dpkit import notebook_views as _notebook_views

__version__ = "0.1.0"

#: Public name → the module that defines it (imported on first access, PEP 562).
_EXPORTS: dict[str, str] = {
    "calibrate": "dpkit.facade",
    "gaussian_epsilon": "dpkit.facade",
    "audit": "dpkit.facade",
    "audit_algorithm": "dpkit.facade",
    "audit_training": "dpkit.training_door",
    "report": "dpkit.facade",
    "Calibration": "dpkit.accountant.calibration",
    "Guarantee": "dpkit.accountant.accountants",
    "Ledger": "dpkit.accountant.ledger",
    "GaussianRelease": "dpkit.accountant.ledger",
    "PrivacyDeclaration": "dpkit.accountant.declarations",
    "Claim": "dpkit.audits.claims",
    "AuditResult": "dpkit.audits.engine",
    "AuditSummary": "dpkit.audits.summary",
    "RlAuditResult": "dpkit.audits.rl",
    "RlPositionsResult": "dpkit.audits.rl",
    "ReportConfig": "dpkit.reports.config",
}

__all__ = ["__version__", *_EXPORTS]

if TYPE_CHECKING:
    from dpkit.accountant.accountants import Guarantee as Guarantee
    from dpkit.accountant.calibration import Calibration as Calibration
    from dpkit.accountant.declarations import PrivacyDeclaration as PrivacyDeclaration
    from dpkit.accountant.ledger import GaussianRelease as GaussianRelease
    from dpkit.accountant.ledger import Ledger as Ledger
    from dpkit.audits.claims import Claim as Claim
    from dpkit.audits.engine import AuditResult as AuditResult
    from dpkit.audits.rl import RlAuditResult as RlAuditResult
    from dpkit.audits.rl import RlPositionsResult as RlPositionsResult
    from dpkit.audits.summary import AuditSummary as AuditSummary
    from dpkit.facade import audit as audit
    from dpkit.facade import audit_algorithm as audit_algorithm
    from dpkit.facade import calibrate as calibrate
    from dpkit.facade import gaussian_epsilon as gaussian_epsilon
    from dpkit.facade import report as report
    from dpkit.reports.config import ReportConfig as ReportConfig


def _verdict_table_html(result: Any) -> str:
    """A result's view in a notebook: the reports' verdict row for it (imported when a notebook first draws one)."""
    from dpkit.reports.notebook_view import verdict_table_html

    return verdict_table_html(result)


# the audit results live below the reports that draw them: their _repr_html_ reaches the reports through this seam
_notebook_views.register_html(_verdict_table_html)

#: Public names retired by a rename (resolved, with a DeprecationWarning, for a release): old name -> new name.
_RENAMED: dict[str, str] = {"RlPositionsAudit": "RlPositionsResult"}


def __getattr__(name: str) -> Any:
    if name in _RENAMED:
        import warnings

        new = _RENAMED[name]
        warnings.warn(f"dpkit.{name} is deprecated: it is now dpkit.{new}", DeprecationWarning, 2)
        return getattr(importlib.import_module(_EXPORTS[new]), new)
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'dpkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
