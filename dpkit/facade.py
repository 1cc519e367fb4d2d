"""The three jobs of dpkit as plain functions: calibrate σ, audit, report.

Each is a thin, documented entry point over the packages that do the work
(:mod:`dpkit.accountant`, :mod:`dpkit.audits`, :mod:`dpkit.reports`); they import them when
called, so ``import dpkit`` stays cheap. Everything past the first argument is keyword-only.

Examples:
    >>> import dpkit
    >>> cal = dpkit.calibrate(epsilon=1.0, delta=1e-5, compositions=1000)
    >>> dpkit.gaussian_epsilon(cal.sigma, 1e-5, compositions=1000).epsilon <= 1.0
    True
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dpkit.accountant.accountants import Guarantee
    from dpkit.accountant.calibration import Calibration
    from dpkit.audits.engine import AuditResult
    from dpkit.audits.rl import RlPositionsAudit
    from dpkit.audits.sequential import SequentialResult
    from dpkit.reports.config import ReportConfig

__all__ = ["audit", "audit_algorithm", "calibrate", "gaussian_epsilon", "report"]


def calibrate(
    *,
    epsilon: float,
    delta: float,
    compositions: int = 1,
    sensitivity: float = 1.0,
    method: str = "exact",
    conversion: str | None = None,
) -> Calibration:
    """The smallest σ (rounded up) for which ``compositions`` Gaussian releases of ℓ2 sensitivity
    ``sensitivity`` are (ε, δ)-DP under ``method`` (``exact``: μ-GDP, tight for the Gaussian;
    ``pld``, ``rdp``, ``zcdp``, ``classic``). See :func:`dpkit.accountant.calibrate_sigma`.
    """
    from dpkit.accountant.calibration import calibrate_sigma

    return calibrate_sigma(
        epsilon, delta, sensitivity=sensitivity, compositions=compositions, method=method, conversion=conversion
    )


def gaussian_epsilon(
    sigma: float, delta: float, *, compositions: int = 1, sensitivity: float = 1.0, method: str = "exact"
) -> Guarantee:
    """The ε (rounded up) at ``delta`` of ``compositions`` Gaussian releases with noise σ.
    See :func:`dpkit.accountant.gaussian_epsilon`."""
    from dpkit.accountant import gaussian_epsilon as _gaussian_epsilon

    return _gaussian_epsilon(sigma, delta, sensitivity=sensitivity, compositions=compositions, method=method)


def audit(
    release: Callable[..., Any], dataset0: Any, dataset1: Any, *, sequential: bool = False, **options: Any
) -> AuditResult | SequentialResult:
    """Audit a release function ``release(dataset, rng, n)`` on the neighbouring pair
    (``dataset0``, ``dataset1``) against ``claim=`` (a :class:`dpkit.Claim`): a lower bound on ε
    at confidence 1 − ``alpha``, an estimate, and a verdict (``violation``, ``consistent`` or
    ``inconclusive``). Options are those of :func:`dpkit.audits.audit` (``claim``, ``attack``,
    ``runs``, ``seed``, ``alpha``, ``executor``, …), all keyword-only. ``sequential=True``: the
    anytime-valid audit that stops as soon as a violation is certain
    (:func:`dpkit.audits.sequential.audit_sequential`, docs/sequential.md).
    """
    if sequential:
        from dpkit.audits.sequential import audit_sequential

        return audit_sequential(release, dataset0, dataset1, **options)
    from dpkit.audits.engine import audit as _audit

    return _audit(release, dataset0, dataset1, **options)


def audit_algorithm(algorithm: str, **options: Any) -> RlPositionsAudit:
    """Audit a registered RL algorithm (a seed algorithm or one a user registered) in its audit
    setting, against what it declares: at every position of the changed user that matters (each at its share of
    α), or at ``position=``. Options are those of :func:`dpkit.audits.rl.audit_algorithm`
    (``sigma``, ``runs``, ``episodes``, ``epsilon``, ``delta``, ``seed``, ``position``, …), all keyword-only.
    """
    from dpkit.audits.rl import audit_algorithm as _audit_algorithm

    return _audit_algorithm(algorithm, **options)


def report(
    config: str | Path | ReportConfig | None = None,
    *,
    out: str | Path,
    quick: bool = False,
    progress: Callable[[str, float], None] | None = None,
) -> list[str]:
    """Compute and write a privacy report (Markdown, self-contained HTML, JSON and PNG figures)
    into the directory ``out``; returns the files written.

    ``progress(stage, k)`` is called as a stage advances by ``k`` steps: ``ledgers``, ``simulations`` and
    ``audits`` (their totals: :func:`dpkit.reports.job.stage_totals`), then ``figures`` (one per figure).

    ``config`` is a TOML file, a :class:`dpkit.reports.config.ReportConfig` or ``None`` for the
    shipped default; ``quick`` caps its sizes as ``dpkit report --quick`` does. The whole
    config and ``out`` are checked before anything is computed, and nothing is written on error.
    """
    from dpkit.reports.config import ReportConfig, load_config
    from dpkit.reports.job import compute_report
    from dpkit.reports.render import check_output_dir, write_report

    check_output_dir(out)
    if not isinstance(config, ReportConfig):
        config = load_config(config)
    if quick:
        config = config.shrunk()
    data = compute_report(config, progress=progress)
    return write_report(data, out, progress=None if progress is None else (lambda k: progress("figures", k)))
