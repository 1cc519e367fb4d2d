"""``dpkit audit --target``: a release function's audit against a claim, on the user's neighbouring datasets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from dpkit import accountant
from dpkit.accountant.validation import check_index, shown_int
from dpkit.render import emit_json, format_number, print_table, progress_with_status

from .options import read_ledger
from .verdict_lines import shape_rows, verdict_caption

#: The most runs per dataset of one ``--target`` audit.
MAX_TRIALS = 10**9


def audit_target(
    *,
    target: str,
    neighbours: str,
    epsilon: float | None,
    delta: float | None,
    mu: float | None,
    rho: float | None,
    rdp_orders: list[float] | None,
    rdp_values: list[float] | None,
    claim_file: str | None,
    trials: float,
    confidence: float,
    attack: str,
    executor: str,
    workers: float | None,
    scheduler: str | None,
    seed: float,
    chunk_size: float,
    sequential: bool,
    as_json: bool,
) -> int:
    """Audit the release function ``target`` on the pairs ``neighbours`` against the one claim given.

    The options are those of ``dpkit audit`` (already checked to belong to this form); the exit status is
    1 for a violation of the claim, 0 otherwise. An exception of the user's code is one error line.
    ``sequential``: the anytime-valid audit (:mod:`dpkit.audits.sequential`), its progress bar showing the
    e-value, the runs used and the budget.
    """
    from dpkit.algorithms.executors import describe_executor, make_executor
    from dpkit.audits.engine import AuditResult
    from dpkit.facade import audit
    from dpkit.loading import FileFunction

    claim = target_claim(
        epsilon=epsilon,
        delta=delta,
        mu=mu,
        rho=rho,
        rdp_orders=rdp_orders,
        rdp_values=rdp_values,
        claim_file=claim_file,
    )
    confidence = accountant.check_probability("confidence", confidence)
    runs = accountant.check_count("trials", trials)
    if runs > MAX_TRIALS:
        raise ValueError(f"trials must be <= {MAX_TRIALS:,}, got {shown_int(runs)}")
    chunk = accountant.check_count("chunk-size", chunk_size)
    seed_value = check_index("seed", seed)
    release = FileFunction("--target", target)
    pairs = load_pairs(neighbours)
    chosen = attack_choice(attack)
    name = {"local": "in-process"}.get(executor, executor)
    n_workers = None if workers is None else accountant.check_count("workers", workers)
    budget = runs
    if sequential:
        from dpkit.audits.selection import candidate_attacks
        from dpkit.audits.sequential import plan_sequential
        from dpkit.audits.sequential_plan import max_budget

        fits = any(a.needs_fit for a in candidate_attacks(chosen))
        plan = plan_sequential(claim, runs=runs, alpha=(1.0 - confidence) / len(pairs), needs_fit=fits)
        # the most it may use: its plan, or its final split grown within the budget when the runs ask for it
        budget = max(plan.budget, max_budget(runs)) if claim.unit == "epsilon" else plan.budget
    options: dict[str, Any] = {"runs": runs, "chunk_size": chunk}
    with (
        make_executor(name, workers=n_workers, scheduler=scheduler) as pool,
        progress_with_status("auditing" + (" (sequential)" if sequential else ""), 2 * budget * len(pairs)) as (
            advance,
            status,
        ),
    ):
        if sequential:
            options["on_look"] = lambda look: status(_evidence(look, budget, confidence))
        try:
            result = audit(
                release,
                claim=claim,
                pairs=pairs,
                mode="sequential" if sequential else "fixed",
                alpha=round(1.0 - confidence, 12),
                attack=chosen,
                seed=seed_value,
                delta=delta if claim.kind != "dp" else None,
                executor=pool,
                progress=advance,
                **options,
            )
        except (ValueError, TypeError):
            raise
        except Exception as err:  # the user's code raised: one line, no traceback
            raise ValueError(f"the audit failed in user code: {type(err).__name__}: {err}") from None
        ran = describe_executor(pool)
    best = result.strongest
    out = best.to_dict()
    out.update(verdict=result.verdict, pairs=len(pairs), strongest_pair=result.results.index(best), executor=ran)
    if sequential:
        out.update(pairs_audited=len(result.results), runs_used_all_pairs=result.runs_used)
    if as_json:
        emit_json(out)
        return 1 if result.verdict == "violation" else 0
    if sequential:
        _print_sequential(target, claim, result, best, confidence, ran, len(pairs))
        return 1 if result.verdict == "violation" else 0
    assert isinstance(best, AuditResult)  # a fixed audit's result (the sequential one returned above)
    est = best.estimate
    print_table(
        f"Audit of {target} against {claim.describe()}: {result.verdict}",
        ["", "value"],
        [
            ["ε lower bound (δ = " + format_number(est.delta) + ")", format_number(best.epsilon_lower, 6)],
            ["claimed ε at that δ", format_number(best.claimed_epsilon, 6)],
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
            ["trials per dataset, pairs", f"{runs}, {len(pairs)}"],
            ["executor", ran],
            ["confidence", format_number(confidence)],
        ],
        caption=verdict_caption(best.judgement),
    )
    return 1 if result.verdict == "violation" else 0


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
    elif result.verdict == "inconclusive":
        why = " (see why below)"
    else:
        why = f" (ran its budget of {best.runs:,} runs per dataset)"
    unit = "μ" if claim.unit == "mu" else "ε"
    print_table(
        f"Sequential audit of {target} against {claim.describe()}: {result.verdict}{why}",
        ["", "value"],
        [
            ["ε lower bound (δ = " + format_number(d["delta"]) + ")", format_number(best.epsilon_lower, 6)],
            ["claimed ε at that δ", format_number(best.claimed_epsilon, 6)],
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


def target_claim(
    *,
    epsilon: float | None,
    delta: float | None,
    mu: float | None,
    rho: float | None,
    rdp_orders: list[float] | None,
    rdp_values: list[float] | None,
    claim_file: str | None,
) -> Any:
    """The one claim form the user gave: (ε, δ) (δ = 0: pure DP), μ, ρ, an RDP curve, or a ledger file."""
    from dpkit.audits import Claim

    forms = [
        name
        for name, present in (
            ("--epsilon/--delta", epsilon is not None),
            ("--mu", mu is not None),
            ("--rho", rho is not None),
            ("--rdp-orders/--rdp-values", rdp_orders is not None or rdp_values is not None),
            ("--claim", claim_file is not None),
        )
        if present
    ]
    if len(forms) != 1:
        raise click.UsageError(
            "give exactly one claim: --epsilon and --delta, --mu, --rho, --rdp-orders with "
            f"--rdp-values, or --claim FILE; got {', '.join(forms) if forms else 'none'}"
        )
    if epsilon is not None:
        if delta is None:
            raise click.UsageError("--epsilon needs --delta (0 for pure ε-DP)")
        return Claim.dp(epsilon, delta)
    if mu is not None:
        return Claim.gdp(mu)
    if rho is not None:
        return Claim.zcdp(rho)
    if claim_file is not None:
        return Claim.ledger(read_ledger(Path(claim_file)))
    if rdp_orders is None or rdp_values is None:
        raise click.UsageError("--rdp-orders and --rdp-values go together")
    return Claim.rdp(rdp_orders, rdp_values)


def load_pairs(value: str) -> list[tuple[Any, Any]]:
    """The neighbouring pairs of ``--neighbours FILE.py:NAME`` (a ValueError if it names none).

    Args:
        value: ``FILE.py:NAME``: a pair (D, D′), a non-empty list of pairs, or a function returning one.

    Returns:
        The pairs.
    """
    from dpkit.loading import load_object

    obj = load_object("--neighbours", value)
    if callable(obj):
        try:
            obj = obj()
        except Exception as err:
            raise ValueError(f"--neighbours: calling {value!r} failed: {type(err).__name__}: {err}") from None
    if isinstance(obj, tuple) and len(obj) == 2:
        return [obj]
    if isinstance(obj, list) and obj and all(isinstance(p, (tuple, list)) and len(p) == 2 for p in obj):
        return [(p[0], p[1]) for p in obj]
    raise ValueError(
        f"--neighbours: {value!r} must be a pair (D, D′), a non-empty list of pairs, or a function returning one"
    )


def attack_choice(value: str) -> Any:
    """``--attack`` of the ``--target`` form: a named attack (``lr`` and ``learned`` are aliases) or a score file."""
    from dpkit.audits import ScoreFunction
    from dpkit.audits.attacks import ATTACK_NAMES
    from dpkit.loading import FileFunction

    if value == "lr":
        return "gaussian-lr-fitted"
    if value == "learned":
        return "logistic"
    if value == "auto" or (value in ATTACK_NAMES and value not in ("gaussian-lr", "score")):
        return value
    if ":" not in value:
        raise ValueError(
            f"--attack must be auto, lr, learned, one of "
            f"{', '.join(n for n in ATTACK_NAMES if n not in ('gaussian-lr', 'score'))} "
            f"or FILE.py:SCORE, got {value!r}"
        )
    return ScoreFunction(FileFunction("--attack", value), name=value)
