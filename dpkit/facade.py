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

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

from dpkit.audit_modes import AuditMode

if TYPE_CHECKING:
    from dpkit.accountant.accountants import AccountingMethod, Guarantee
    from dpkit.accountant.calibration import Calibration
    from dpkit.algorithms.spec import AlgorithmSpec
    from dpkit.audits.claims import Claim
    from dpkit.audits.engine import PairsResult
    from dpkit.audits.one_run import OneRunResult
    from dpkit.audits.rl import RlPositionsResult
    from dpkit.audits.rl.one_run import RlOneRunResult
    from dpkit.audits.rl.sequential import RlSequentialResult
    from dpkit.audits.rl.setting import RlSetting
    from dpkit.audits.summary import AuditSummary
    from dpkit.reports.config import ReportConfig

__all__ = ["MODES", "audit", "audit_algorithm", "calibrate", "gaussian_epsilon", "report"]


def calibrate(
    *,
    epsilon: float,
    delta: float,
    compositions: int = 1,
    sensitivity: float = 1.0,
    method: AccountingMethod | str = "exact",
    conversion: str | None = None,
) -> Calibration:
    """The smallest σ (rounded up) for which Gaussian releases meet an (ε, δ) budget.

    The σ of ``compositions`` Gaussian releases of ℓ2 sensitivity ``sensitivity`` that are together
    (``epsilon``, ``delta``)-DP under ``method``. See :func:`dpkit.accountant.calibrate_sigma`.

    Args:
        epsilon: The target ε (>= 0).
        delta: The target δ, in (0, 1).
        compositions: How many releases are composed (>= 1).
        sensitivity: The ℓ2 sensitivity of each release (> 0).
        method: The accountant: ``exact`` (μ-GDP, tight for the Gaussian), ``pld``, ``rdp``, ``zcdp`` or
            ``classic``.
        conversion: For ``rdp`` and ``zcdp``, the conversion to (ε, δ) (None: the method's default); the other
            methods take none.

    Returns:
        The :class:`~dpkit.accountant.calibration.Calibration`: ``sigma``, the ε it achieves and the inputs.

    Raises:
        ValueError: A value out of range, an unknown method, or a conversion the method does not take.

    Examples:
        >>> import dpkit
        >>> round(dpkit.calibrate(epsilon=1.0, delta=1e-5, compositions=1000).sigma, 2)
        117.97
        >>> round(dpkit.calibrate(epsilon=1.0, delta=1e-5, compositions=1000, method="rdp").sigma, 2)
        127.92
    """
    from dpkit.accountant.calibration import calibrate_sigma

    return calibrate_sigma(
        epsilon, delta, sensitivity=sensitivity, compositions=compositions, method=method, conversion=conversion
    )


def gaussian_epsilon(
    sigma: float,
    delta: float,
    *,
    compositions: int = 1,
    sensitivity: float = 1.0,
    method: AccountingMethod | str = "exact",
) -> Guarantee:
    """The ε (rounded up) at ``delta`` of ``compositions`` Gaussian releases with noise σ.

    See :func:`dpkit.accountant.gaussian_epsilon`.

    Args:
        sigma: The standard deviation of each release's noise (> 0).
        delta: The δ at which ε is given, in (0, 1).
        compositions: How many releases are composed (>= 1).
        sensitivity: The ℓ2 sensitivity of each release (> 0).
        method: The accountant: ``exact`` (μ-GDP, tight for the Gaussian), ``pld``, ``rdp``, ``zcdp`` or
            ``classic``.

    Returns:
        The :class:`~dpkit.accountant.accountants.Guarantee`: ``epsilon`` at ``delta``, with the method.

    Raises:
        ValueError: A value out of range or an unknown method.

    Examples:
        >>> import dpkit
        >>> round(dpkit.gaussian_epsilon(4.0, 1e-5).epsilon, 3)
        0.926
        >>> dpkit.gaussian_epsilon(0.0, 1e-5)
        Traceback (most recent call last):
        ...
        ValueError: sigma must be > 0, got 0.0
    """
    from dpkit.accountant import gaussian_epsilon as _gaussian_epsilon

    return _gaussian_epsilon(sigma, delta, sensitivity=sensitivity, compositions=compositions, method=method)


#: The mode of :func:`audit` that runs a release or an algorithm once, with many canaries.
ONE_RUN = AuditMode.ONE_RUN
#: The modes of :func:`audit` (:class:`~dpkit.audit_modes.AuditMode`'s values).
MODES: tuple[str, ...] = tuple(m.value for m in AuditMode)


@overload
def audit(
    target: str | RlSetting | AlgorithmSpec, *, mode: Literal["fixed"] = "fixed", **options: Any
) -> RlPositionsResult: ...
@overload
def audit(
    target: str | RlSetting | AlgorithmSpec, *, mode: Literal["sequential", AuditMode.SEQUENTIAL], **options: Any
) -> RlSequentialResult: ...
@overload
def audit(
    target: str | RlSetting | AlgorithmSpec, *, mode: Literal["one-run", AuditMode.ONE_RUN], **options: Any
) -> RlOneRunResult: ...
@overload
def audit(
    target: Callable[..., Any],
    *,
    pairs: Sequence[tuple[Any, Any]],
    mode: Literal["fixed", "sequential"] = "fixed",
    **options: Any,
) -> PairsResult: ...
@overload
def audit(
    target: Callable[..., Any],
    *datasets: Any,
    claim: Claim,
    mode: Literal["one-run", AuditMode.ONE_RUN],
    **options: Any,
) -> OneRunResult: ...
@overload
def audit(
    target: Callable[..., Any], *datasets: Any, mode: AuditMode | str = "fixed", **options: Any
) -> AuditSummary: ...
def audit(target: Any, *datasets: Any, mode: AuditMode | str = "fixed", **options: Any) -> AuditSummary:
    """Audit anything dpkit audits, in one of three modes: the front door over the audit functions of
    :mod:`dpkit.audits` (the layer beneath it, documented there for finer control).

    ``target`` is one of:

    * a release function ``release(dataset, rng, n)`` with its datasets: ``audit(release, dataset0, dataset1,
      claim=…)`` (one neighbouring pair), ``audit(release, claim=…, pairs=[(d0, d1), …])`` (several, α split
      evenly), or ``audit(release, [dataset], mode="one-run", canaries=[record, …], claim=…)`` (one run, each
      canary record in with probability ½). A callable is read as a release when datasets, ``pairs=`` or
      ``claim=`` are given;
    * the name of a registered RL algorithm (a seed algorithm, a plugin or one registered by
      :func:`dpkit.audits.rl.register_agent`), audited in its default setting against its own declaration;
    * a user's agent — a factory or class (the local-DP messages or the joint-DP billboard protocol) or an
      :class:`~dpkit.algorithms.spec.AlgorithmSpec` — registered as :func:`~dpkit.audits.rl.register_agent` does
      (``name=``: the name to register it under) and audited as an algorithm;
    * an :class:`~dpkit.audits.rl.setting.RlSetting` (a setting built by
      :func:`~dpkit.audits.rl.default_setting`), audited at its positions.

    Every result has the headline fields of :class:`~dpkit.audits.summary.AuditSummary` (``verdict``, ``claim``,
    ``epsilon_lower``, ``epsilon_estimate``, ``power``, ``runs``, ``runs_used``, ``positions``), ``to_dict()``,
    a few lines as its ``repr`` and ``str`` (what was audited, the verdict, the claim, the bound, the estimate, the
    power, the runs) and ``_repr_html_`` (a notebook shows the verdict table). ``epsilon_estimate`` is the ε, at the
    claim's δ, of the trade-off shape fitted to the attack's ROC (a Laplace's ε, a Gaussian's ε at δ — ∞ at δ = 0 —,
    randomized response's ε), ``None`` where no shape fits.

    A release's audit starts from the defaults ``dpkit audit --target`` starts from
    (:data:`dpkit.audits.defaults.AUDIT_DEFAULTS`: 100,000 runs per dataset, seed 0, α = 0.05, attack ``auto``,
    100,000 runs per chunk): the same release, claim and seed give the same verdict and numbers from either door.
    The claim (``claim=``) is the one the release's documentation makes:

    * ``Claim.gaussian(σ, Δ, count)``: Gaussian noise N(0, σ²) on a sum of ℓ2 sensitivity Δ (``--mu`` Δ√count/σ);
    * ``Claim.gdp(μ)``: μ-GDP, the whole Gaussian curve (``--mu``); the same curve as ``Claim.gaussian`` when
      μ = Δ√count/σ;
    * ``Claim.dp(ε, δ)``: (ε, δ)-DP, δ = 0 pure ε-DP — e.g. a Laplace release (``--epsilon``, ``--delta``); a
      weaker claim than the Gaussian's curve at the σ calibrated for it;
    * ``Claim.zcdp(ρ)``, ``Claim.rdp(orders, values)``, ``Claim.ledger(ledger)``: ρ-zCDP, an RDP curve, a ledger's
      releases (``--rho``, ``--rdp-orders``/``--rdp-values``, ``--claim FILE``).

    Args:
        target: What to audit (above).
        *datasets: A release's datasets: two (the neighbouring pair), none with ``pairs=``, at most one (the other
            users) in mode ``one-run``. Nothing for the other targets.
        mode: ``fixed`` (the runs given), ``sequential`` (anytime-valid: stops as soon as a violation is certain;
            ``runs`` is the fixed audit it stands in for) or ``one-run`` (one run, many canaries).
        **options: Keyword-only options of the function beneath: for a release those of
            :func:`dpkit.audits.engine.audit_pair` (``claim``, ``runs``, ``attack``, ``seed``, ``alpha``, ``executor``,
            …), :func:`~dpkit.audits.sequential.audit_sequential` (``on_look``) or
            :func:`~dpkit.audits.one_run.audit_one_run_target` (``canaries``, ``dataset``, ``score``); for an
            algorithm the fields of its setting (``sigma``, ``episodes``, ``epsilon``, ``delta``, ``observer``,
            ``horizon``, …), ``position=`` or ``positions=`` (the positions of the changed user to probe), and the
            options of :func:`~dpkit.audits.rl.audit_positions`,
            :func:`~dpkit.audits.rl.sequential.audit_positions_sequential` or
            :func:`~dpkit.audits.rl.one_run.audit_one_run` (``canaries``).

    Returns:
        A release: :class:`~dpkit.audits.engine.AuditResult`, :class:`~dpkit.audits.sequential.SequentialResult`,
        :class:`~dpkit.audits.engine.PairsResult` (``pairs=``) or :class:`~dpkit.audits.one_run.OneRunResult`; an
        algorithm: :class:`~dpkit.audits.rl.RlPositionsResult`,
        :class:`~dpkit.audits.rl.sequential.RlSequentialResult` or :class:`~dpkit.audits.rl.one_run.RlOneRunResult`.

    Raises:
        ValueError: An unknown mode (the modes listed), a mode the target has no audit in, an unknown algorithm
            (with the registry's "did you mean …?"), or a bad value of an option.
        TypeError: An option the target's audit in that mode does not take (named), datasets it does not take, or
            ``sequential=`` (retired after a release of warnings: ``mode="sequential"``).

    Examples:
        >>> import numpy as np, dpkit
        >>> def release(data, rng, n):
        ...     return (sum(data) + rng.normal(0.0, 1.0, n))[:, None]
        >>> r = dpkit.audit(release, [0.0], [1.0], claim=dpkit.Claim.gdp(1.0), runs=2000, attack="gaussian-lr-fitted")
        >>> r.verdict in ("consistent", "inconclusive")
        True
        >>> dpkit.audit(release, [0.0], [1.0], mode="batch")
        Traceback (most recent call last):
        ...
        ValueError: mode must be one of fixed, sequential, one-run, got 'batch'
    """
    if "sequential" in options:
        raise TypeError("audit() takes no 'sequential' option (retired): pass mode='sequential'")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    door = AuditMode(mode)  # the caller's string becomes the member, once
    from dpkit.audit_door import audit_registered, audit_release, is_agent
    from dpkit.audits.rl.setting import RlSetting

    if isinstance(target, (str, RlSetting)) or is_agent(target, datasets, options):
        if datasets:
            raise TypeError(f"an algorithm's audit takes no datasets, got {len(datasets)}")
        if not isinstance(target, (str, RlSetting)):
            from dpkit.audits.rl import register_agent

            agent: AlgorithmSpec | Callable[..., Any] = target
            target = register_agent(agent, name=options.pop("name", None))
        return audit_registered(target, door, options)
    if not callable(target):
        raise TypeError(
            "target must be a release function, an algorithm's name, an agent (a factory, a class or an "
            f"AlgorithmSpec) or an RlSetting, got {type(target).__name__}"
        )
    return audit_release(target, datasets, door, options)


def audit_algorithm(algorithm: str, **options: Any) -> RlPositionsResult:
    """Deprecated: ``dpkit.audit(algorithm, …)`` is the one door. Audit a registered RL algorithm in its audit setting.

    ``dpkit.audit(algorithm, **options)`` gives the same result; this second door warns for a release, then goes.
    The algorithm (a seed algorithm or one a user registered) is audited at every position of the changed user
    that matters (each at its share of α), or at ``position=``.

    Args:
        algorithm: The registered algorithm's name.
        **options: Keyword-only options of :func:`dpkit.audits.rl.audit_registered_algorithm` (``sigma``, ``runs``,
            ``episodes``, ``epsilon``, ``delta``, ``seed``, ``position``, …).

    Returns:
        The audit at each position probed, with the headline of the whole
        (:class:`~dpkit.audits.rl.RlPositionsResult`).

    Raises:
        ValueError: An unknown algorithm (the registered ones listed) or a bad value of an option.
        TypeError: An option the audit does not take.

    Examples:
        >>> import dpkit
        >>> dpkit.audit_algorithm("no-such-algorithm")
        Traceback (most recent call last):
        ...
        ValueError: algorithm must be one of ...; got 'no-such-algorithm'
    """
    import warnings

    from dpkit.audits.rl import audit_registered_algorithm

    warnings.warn(
        "dpkit.audit_algorithm(name, …) is deprecated: dpkit.audit(name, …) is the one door", DeprecationWarning, 2
    )
    return audit_registered_algorithm(algorithm, **options)


def report(
    config: str | Path | ReportConfig | None = None,
    *,
    out: str | Path,
    quick: bool = False,
    progress: Callable[[str, float], None] | None = None,
) -> list[str]:
    """Compute and write a privacy report (Markdown, self-contained HTML, JSON and PNG figures) into ``out``.

    The whole config and ``out`` are checked before anything is computed, and nothing is written on error.

    Args:
        config: A TOML file, a :class:`dpkit.reports.config.ReportConfig` or ``None`` for the shipped default.
        out: The directory to write the report into.
        quick: Whether to cap the config's sizes, as ``dpkit report --quick`` does.
        progress: None, or ``progress(stage, k)``, called as a stage advances by ``k`` steps: ``ledgers``,
            ``simulations`` and ``audits`` (their totals: :func:`dpkit.reports.job.stage_totals`), then
            ``figures`` (one per figure).

    Returns:
        The files written.

    Raises:
        ValueError: A config that cannot be read or is invalid, or an ``out`` that cannot take the report.

    Examples:
        >>> import dpkit
        >>> dpkit.report(out="/dev/null")
        Traceback (most recent call last):
        ...
        ValueError: --out '/dev/null' exists and is not a directory
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
