"""The tables of ``dpkit audit ALGORITHM``: one row per position, then the headline position's numbers one per row
(each release's σ on rows of its own, so that no cell wraps into three lines at 80 columns), under them why the
verdict is what it is, the diagnosis where the evidence points somewhere, and what each verdict is judged against."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dpkit.render import format_number, print_table

if TYPE_CHECKING:
    from dpkit.audits.rl.setting import RlSetting

__all__ = ["print_rl_audit", "position_caption", "headline_caption", "step_values"]


def step_values(x: float | Sequence[float]) -> str:
    """A σ: one number, one repeated at every step (said once), or one per step (4 significant digits each).

    Args:
        x: A number, or one per step.

    Returns:
        The text of a table cell.
    """
    if isinstance(x, (int, float)):
        return format_number(float(x), 6)
    values = [float(v) for v in x]
    if len(set(values)) == 1:
        return f"{format_number(values[0], 6)} at each of {len(values)} steps"
    return ", ".join(format_number(v, 4) for v in values)


def position_caption() -> str:
    """The position table's caption: what its columns are.

    Returns:
        The caption.
    """
    from dpkit.audits.verdicts import POWER_RATIO_NEEDED

    return (
        "k: the changed user's index; share: the part of the declared releases that hold her; reach: the pair's "
        "exact μ ÷ the declared μ there; ideal ÷ allowed: the μ an ideal attack would certify with these runs ÷ "
        f"μ allowed (consistent needs ≥ {POWER_RATIO_NEEDED})"
    )


def headline_caption(result: Any) -> str:
    """The headline table's caption: why, the diagnosis where there is one, and what each verdict is judged against.

    Args:
        result: The audit (:class:`~dpkit.audits.rl.RlPositionsResult`).

    Returns:
        The caption, one line each.
    """
    from dpkit.audits.rl.explain import verdict_meanings

    from .verdict_lines import verdict_caption

    declaration, claim = verdict_meanings()
    # the why: and diagnosis: lines of a release audit's table, from the audit's reason and diagnosis
    return "\n".join([verdict_caption(result) or "", f"verdict {declaration}", f"verdict {claim}"])


def print_rl_audit(result: Any, *, setting: RlSetting, runs: int, title: str) -> None:
    """Print an RL audit of several positions: the positions' table, then the headline position's.

    Args:
        result: The audit (:class:`~dpkit.audits.rl.RlPositionsResult`).
        setting: Its setting (:func:`dpkit.audits.rl.default_setting`).
        runs: Runs per dataset and position.
        title: The first table's title, before the observer and the verdict.
    """
    worst, rows = result.worst, result.position_rows()
    users = sum(r.probe is None for r in result.results)  # the changed user's positions (a plan probe's pair aside)
    print_table(
        f"{title} ({setting.observer} observer, {users} position(s)): {result.verdict}",
        ["position", "k", "share", "reach", "μ allowed", "μ lower", "ideal ÷ allowed", "verdict"],
        [
            [
                str(row["position"]),
                str(row["index"]),
                format_number(row["share"], 3),
                format_number(row["reach"], 3),
                format_number(row["mu_allowed"], 4),
                format_number(row["mu_lower"], 4),
                format_number(row["power_ratio"], 3),
                row["verdict"],
            ]
            for row in rows
        ],
        caption=position_caption(),
    )
    informative = format_number(worst.delta_informative)
    sigma_rows = []
    for name, used in worst.sigmas.items():
        sigma_rows.append([f"σ of {name}, used", step_values(used)])
        if name in worst.sigmas_claim:
            needed = worst.sigmas_claim[name]
            sigma_rows.append([f"σ of {name}, the claim needs ({worst.setting.claim_allocation})", step_values(needed)])
    mu_top, eps_top = result.strongest("mu_lower"), result.strongest("epsilon_lower")
    form = worst.paper_epsilon_closed_form
    print_table(
        f"The headline position: {worst.position_name} (the evidence that weighs most against the declaration)",
        ["", "value"],
        [
            ["claimed ε (target) at δ = " + format_number(setting.delta), format_number(worst.claimed_epsilon, 6)],
            *([] if form is None else [["the paper's closed form ε(δ)", format_number(form, 6)]]),
            [
                f"claim's ε / μ at δ = {informative} (informative)",
                f"{format_number(worst.claimed_epsilon_at_informative_delta, 6)} / {format_number(worst.claim_mu, 6)}",
            ],
            *sigma_rows,
            [
                "exact ε / μ of the declared releases",
                f"{format_number(worst.exact_epsilon, 6)} / {format_number(worst.exact_mu, 6)}",
            ],
            [f"… their exact ε at δ = {informative}", format_number(worst.exact_epsilon_at_informative_delta, 6)],
            [
                "declared μ here / pair μ (reach)",
                f"{format_number(worst.declared_mu_at_position, 6)} / {format_number(worst.pair_mu, 6)} "
                f"({format_number(worst.reach, 4)})",
            ],
            ["μ allowed this pair (Δ capped)", format_number(worst.pair_mu_allowed, 6)],
            ["ε lower bound here", format_number(worst.epsilon_lower, 6)],
            [
                "μ lower bound here (÷ pair μ)",
                f"{format_number(worst.mu_lower, 6)} ({format_number(worst.efficiency, 4)})",
            ],
            [
                "largest ε lower bound of the positions",
                f"{format_number(eps_top.epsilon_lower, 6)} at {eps_top.position_name}",
            ],
            [
                "largest μ lower bound of the positions",
                f"{format_number(mu_top.mu_lower, 6)} at {mu_top.position_name}",
            ],
            [
                "μ an ideal attack certifies (÷ allowed)",
                f"{format_number(worst.audit.power, 6)} ({format_number(worst.audit.power_ratio, 4)})",
            ],
            ["verdict against the declaration", result.verdict],
            ["verdict against the paper's claim", result.claim_verdict],
            ["attack", worst.attack],
            ["runs per dataset and position", str(runs)],
            ["episodes K, α per position", f"{setting.episodes}, {format_number(worst.alpha, 4)}"],
            ["relation", setting.relation.replace("_", "-")],
            ["time", f"{result.seconds:.1f} s"],
        ],
        caption=headline_caption(result),
    )
