"""``dpkit audit --target``: a release function's audit against a claim, on the user's neighbouring datasets."""

from __future__ import annotations

import math
from typing import Any

from dpkit import accountant
from dpkit.accountant.validation import check_index, shown_int
from dpkit.audits.claims import ClaimKind, ClaimUnit
from dpkit.audits.verdicts import Verdict
from dpkit.render import emit_json, format_number, print_table, progress_with_status

from .form_options import TargetOptions
from .target_inputs import attack_choice, load_pairs, target_claim
from .verdict_lines import shape_rows, verdict_caption

#: The most runs per dataset of one ``--target`` audit.
MAX_TRIALS = 10**9


def audit_target(options: TargetOptions) -> int:
    """Audit the release function ``options.target`` on the pairs ``options.neighbours`` against the one claim given.

    The options are those of ``dpkit audit`` (already checked to belong to this form). An exception of the user's
    code is one error line. With ``sequential``, the anytime-valid audit (:mod:`dpkit.audits.sequential`), its
    progress bar showing the e-value, the runs used and the budget.

    Args:
        options: The ``--target`` form's options, as given (the pairs are read by
            :func:`~dpkit.commands.audit.target_inputs.load_pairs`, the attack by
            :func:`~dpkit.commands.audit.target_inputs.attack_choice`).

    Returns:
        The exit status: 1 for a violation of the claim, 0 otherwise.

    Raises:
        click.UsageError: Not exactly one claim given (:func:`~dpkit.commands.audit.target_inputs.target_claim`).
        ValueError: A bad value of an option, a file that cannot be loaded, or an exception of the user's code.
    """
    from dpkit.algorithms.executors import describe_executor, make_executor
    from dpkit.facade import audit
    from dpkit.loading import FileFunction

    claim = target_claim(options.claim)
    confidence = accountant.check_probability("confidence", options.confidence)
    runs = accountant.check_count("trials", options.trials)
    if runs > MAX_TRIALS:
        raise ValueError(f"trials must be <= {MAX_TRIALS:,}, got {shown_int(runs)}")
    chunk = accountant.check_count("chunk-size", options.chunk_size)
    seed_value = check_index("seed", options.seed)
    release = FileFunction("--target", options.target)
    pairs = load_pairs(options.neighbours)
    chosen = attack_choice(options.attack)
    name = {"local": "in-process"}.get(options.executor, options.executor)
    n_workers = None if options.workers is None else accountant.check_count("workers", options.workers)
    budget = runs
    if options.sequential:
        from dpkit.audits.selection import candidate_attacks
        from dpkit.audits.sequential import plan_sequential
        from dpkit.audits.sequential_plan import max_budget

        fits = any(a.needs_fit for a in candidate_attacks(chosen))
        plan = plan_sequential(claim, runs=runs, alpha=(1.0 - confidence) / len(pairs), needs_fit=fits)
        # the most it may use: its plan, or its final split grown within the budget when the runs ask for it
        budget = max(plan.budget, max_budget(runs)) if claim.unit == ClaimUnit.EPSILON else plan.budget
    engine_options: dict[str, Any] = {"runs": runs, "chunk_size": chunk}
    with (
        make_executor(name, workers=n_workers, scheduler=options.scheduler) as pool,
        progress_with_status("auditing" + (" (sequential)" if options.sequential else ""), 2 * budget * len(pairs)) as (
            advance,
            status,
        ),
    ):
        if options.sequential:
            engine_options["on_look"] = lambda look: status(_evidence(look, budget, confidence))
        try:
            result = audit(
                release,
                claim=claim,
                pairs=pairs,
                mode="sequential" if options.sequential else "fixed",
                alpha=round(1.0 - confidence, 12),
                attack=chosen,
                seed=seed_value,
                delta=options.claim.delta if claim.kind != ClaimKind.DP else None,
                executor=pool,
                progress=advance,
                **engine_options,
            )
        except (ValueError, TypeError):
            raise
        except Exception as err:  # the user's code raised: one line, no traceback
            raise ValueError(f"the audit failed in user code: {type(err).__name__}: {err}") from None
        ran = describe_executor(pool)
    best = result.strongest
    out = best.to_dict()
    out.update(verdict=result.verdict, pairs=len(pairs), strongest_pair=result.results.index(best), executor=ran)
    if options.sequential:
        out.update(pairs_audited=len(result.results), runs_used_all_pairs=result.runs_used)
    if options.as_json:
        emit_json(out)
        return 1 if result.verdict == Verdict.VIOLATION else 0
    if options.sequential:
        _print_sequential(options.target, claim, result, best, confidence, ran, len(pairs))
        return 1 if result.verdict == Verdict.VIOLATION else 0
    _print_fixed(options.target, claim, result, best, confidence=confidence, ran=ran, runs=runs, pairs=len(pairs))
    return 1 if result.verdict == Verdict.VIOLATION else 0


def _print_fixed(
    target: str, claim: Any, result: Any, best: Any, *, confidence: float, ran: str, runs: int, pairs: int
) -> None:
    """The table of a fixed audit: its strongest pair's bounds and estimates, the attack, the runs."""
    from dpkit.audits.engine import AuditResult

    assert isinstance(best, AuditResult)  # a fixed audit's result (the sequential one is printed apart)
    est = best.estimate
    print_table(
        f"Audit of {target} against {claim.describe()}: {result.verdict}",
        ["", "value"],
        [
            ["ε lower bound (δ = " + format_number(est.delta) + ")", format_number(best.epsilon_lower, 6)],
            ["claimed ε at that δ", format_number(best.claimed_epsilon, 6)],
            ["ε estimate [interval] (its shape)", estimate_cell(best.shape_estimate)],
            ["μ lower bound", format_number(best.mu_lower, 6)],
            [
                "μ estimate [interval]",
                f"{format_number(est.mu_estimate, 6)} [{format_number(est.mu_interval[0], 6)}, "
                f"{format_number(est.mu_interval[1], 6)}]",
            ],
            *shape_rows(best.judgement),
            ["δ lower bound at the claimed ε", format_number(best.judgement.delta_lower, 6)],
            [
                "power at the claim's extreme: bound / ratio",
                f"{format_number(best.power, 6)} / {format_number(best.power_ratio, 4)}",
            ],
            ["attack", best.attack],
            ["FPR / FNR", f"{format_number(est.fpr, 4)} / {format_number(est.fnr, 4)}"],
            ["trials per dataset, pairs", f"{runs}, {pairs}"],
            ["executor", ran],
            ["confidence", format_number(confidence)],
        ],
        caption=verdict_caption(best.judgement),
    )


def estimate_cell(estimate: Any) -> str:
    """The table's cell of an ε estimate (:class:`~dpkit.audits.shape_estimate.EpsilonEstimate`): the fitted shape's
    ε at the audit's δ with its interval and family, ∞ for a Gaussian shape at δ = 0, or — with the reason.

    Args:
        estimate: The estimate.

    Returns:
        The cell's text.
    """
    if estimate.value is None or math.isinf(estimate.value):
        return str(estimate.describe())
    lo, hi = estimate.interval
    return f"{format_number(estimate.value, 4)} [{format_number(lo, 4)}, {format_number(hi, 4)}] ({estimate.family})"


def _evidence(look: Any, budget: int, confidence: float) -> str:
    """The progress bar's text after a batch: the e-value against its threshold, runs used of the budget."""
    from dpkit.audits.sequential import SEQUENTIAL_SHARE

    level = 1.0 / ((1.0 - confidence) * SEQUENTIAL_SHARE)
    bound = f", bound ≥ {format_number(look.bound, 4)}" if look.bound > 0 else ""
    runs = f"runs {look.runs_used:,}/{budget:,}"
    return f"e-value {format_number(look.e_value, 3)} / {format_number(level, 3)}{bound}, {runs}"


def _print_sequential(target: str, claim: Any, result: Any, best: Any, confidence: float, ran: str, pairs: int) -> None:
    """The table of a sequential audit: the verdict and why it stopped, the bounds, the evidence, the runs."""
    d = best.to_dict()
    ev = d["evidence"]
    if best.stopped_early:
        why = (
            f" (stopped after {best.runs_used:,} of {best.runs:,} runs per dataset: e-value "
            f"{format_number(ev['e_value_max'], 4)} ≥ {format_number(ev['threshold'], 4)})"
        )
    elif result.verdict == Verdict.INCONCLUSIVE:
        why = " (see why below)"
    else:
        why = f" (ran its budget of {best.runs:,} runs per dataset)"
    unit = "μ" if claim.unit == ClaimUnit.MU else "ε"
    print_table(
        f"Sequential audit of {target} against {claim.describe()}: {result.verdict}{why}",
        ["", "value"],
        [
            ["ε lower bound (δ = " + format_number(d["delta"]) + ")", format_number(best.epsilon_lower, 6)],
            ["claimed ε at that δ", format_number(best.claimed_epsilon, 6)],
            ["ε estimate [interval] (its shape)", estimate_cell(best.shape_estimate)],
            ["μ lower bound", format_number(best.mu_lower, 6)],
            ["μ estimate", format_number(d["mu_estimate"], 6)],
            ["claimed μ", format_number(best.claimed_mu, 6)],
            [
                "e-value (its largest) / stop at 1/(α/2)",
                f"{format_number(ev['e_value'], 4)} ({format_number(ev['e_value_max'], 4)}) / "
                f"{format_number(ev['threshold'], 4)}",
            ],
            [f"{unit} the e-values certify (above it)", format_number(ev["bound"], 6)],
            [
                "power of the final test (α/2) / ratio",
                f"{format_number(best.power, 6)} / {format_number(best.power_ratio, 4)}",
            ],
            ["attack", best.attack],
            [
                "runs used / budget per dataset (fixed audit: --trials)",
                f"{best.runs_used:,} / {best.runs:,} ({best.plan.runs:,})",
            ],
            ["pairs audited / given", f"{len(result.results)} / {pairs}"],
            ["executor", ran],
            ["confidence", format_number(confidence)],
        ],
        caption=None if best.final is None else verdict_caption(best.final.judgement),
    )
