"""``dpkit audit ALGORITHM --sequential``: the anytime-valid RL audit, every position in turns, stopping at the first
violation; :mod:`dpkit.commands.audit.rl` checks the options and runs the fixed audit."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from dpkit.audits.verdicts import Verdict
from dpkit.facade import audit
from dpkit.render import emit_json, format_number, print_table, progress_with_status

from .form_options import RlRuns
from .verdict_lines import verdict_caption

if TYPE_CHECKING:
    from dpkit.audits.rl.setting import RlSetting

__all__ = ["audit_algorithm_sequential"]


def audit_algorithm_sequential(setting: RlSetting, probed: list[Any], run: RlRuns) -> int:
    """``--sequential``: every position audited in turns, stopping at the first violation; print it.

    The table gives each position's evidence and the runs used against the fixed audit's. The budget (at most 1.3×
    the fixed audit's runs) is what is timed against ``run.max_time``.

    Args:
        setting: The audited setting (:func:`dpkit.audits.rl.default_setting`).
        probed: The positions of the changed user audited.
        run: The checked run options (``run.runs``: the fixed audit's runs per dataset and position).

    Returns:
        The exit status: 1 for a violation of the declaration, 0 otherwise.
    """
    from dpkit.algorithms.executors import make_executor
    from dpkit.audits.sequential import SEQUENTIAL_SHARE

    from .timing import announced, expected_time, planned_workers

    alpha = round(1.0 - run.confidence, 12)
    level = len(probed) / (alpha * SEQUENTIAL_SHARE)
    with make_executor(run.executor, workers=run.workers, scheduler=run.scheduler) as pool:
        # the budget (at most 1.3× the fixed audit) is what is timed against --max-time
        note = expected_time(
            setting,
            runs=math.ceil(1.3 * run.runs),
            positions=len(probed),
            seed=run.seed,
            max_time=run.max_time,
            **planned_workers(pool),
        )
        budget = math.ceil(1.3 * run.runs) * len(probed)
        with progress_with_status(f"auditing {setting.algorithm} (sequential)", 2 * budget) as (advance, status):
            tick = announced(note, advance)

            def look(seen: Any) -> None:
                status(f"e-value {format_number(seen.e_value, 3)} / {format_number(level, 3)} at one position")

            result = audit(
                setting,
                mode="sequential",
                positions=probed,
                runs=run.runs,
                seed=run.seed,
                attack=run.attack,
                alpha=alpha,
                executor=pool,
                progress=tick,
                on_look=look,
            )
    out = result.to_dict()  # its reason and diagnosis included
    reason, diagnosis = out["reason"], out["diagnosis"]
    exit_code = 1 if result.verdict == Verdict.VIOLATION else 0
    if run.as_json:
        emit_json(out)
        return exit_code
    why = (
        f"stopped after {result.runs_used:,} runs per dataset (fixed audit: {result.fixed_runs:,})"
        if result.stopped_early
        else f"{result.runs_used:,} runs per dataset (fixed audit: {result.fixed_runs:,})"
    )
    print_table(
        f"Sequential audit of {setting.algorithm} ({setting.observer} observer, {len(probed)} position(s)): "
        f"{result.verdict} ({why})",
        ["position", "share", "μ allowed", "μ lower", "e-value", "runs used", "verdict"],
        [
            [
                str(row["position"]),
                format_number(row["share"], 3),
                format_number(row["mu_allowed"], 4),
                "—" if row["mu_lower"] is None else format_number(row["mu_lower"], 4),
                "—" if row["e_value"] is None else format_number(row["e_value"], 4),
                f"{row['runs_used']:,}",
                row["verdict"],
            ]
            for row in out["positions"]
        ],
        caption=(
            f"Each position at α/{len(probed)}; its e-value stops the audit at "
            f"{format_number(level, 4)} (Ville: a correct implementation crosses with probability ≤ α/2); "
            f"'stopped': another position's violation ended the audit first. Budget per position: "
            f"{result.budget:,} runs per dataset; time {result.seconds:.1f} s.\n"
            + str(verdict_caption(SimpleNamespace(reason=reason, diagnosis=diagnosis)))
        ),
    )
    return exit_code
