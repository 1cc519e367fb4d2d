"""``dpkit audit ALGORITHM|--agent FILE.py:NAME --one-run``: a one-run audit of an RL algorithm or agent."""

from __future__ import annotations

from dpkit import accountant
from dpkit.accountant.validation import check_index
from dpkit.audit_modes import AuditMode
from dpkit.audits.rl.candidates import RlAttack
from dpkit.audits.verdicts import Verdict
from dpkit.render import emit_json, format_number, print_table, progress_bar

from ..options import sigma_choice


def audit_one_run(
    *,
    algorithm: str,
    canaries: float | None,
    sigma: str,
    epsilon: float | None,
    delta: float | None,
    confidence: float,
    seed: float,
    attack: RlAttack | str = "white-box",
    as_json: bool,
) -> int:
    """One run of ``algorithm`` with every user a canary; print the result.

    Args:
        algorithm: ALGORITHM, a registered algorithm's name (an ``--agent`` already registered).
        canaries: ``--canaries``, the canary users in the run (None: 5000).
        sigma: ``--sigma``: ``paper``, ``tight``, ``optimal`` or a number.
        epsilon: ``--epsilon``, the target the declaration is audited at (None: the algorithm's).
        delta: ``--delta``, the δ of that target (None: the algorithm's).
        confidence: ``--confidence``, 1 − α.
        seed: ``--seed``.
        attack: ``--attack``: ``white-box``, ``learned`` or ``auto``.
        as_json: ``--json``: print one JSON object instead of the table.

    Returns:
        The exit status: 1 for a violation of the declaration, 0 otherwise.

    Raises:
        ValueError: An unknown algorithm or a bad value of an option.
    """
    from dpkit.audits.rl.registry import audited
    from dpkit.facade import audit

    audited(algorithm, what="ALGORITHM")
    m = 5000 if canaries is None else accountant.check_count("canaries", canaries)
    confidence = accountant.check_probability("confidence", confidence)
    with progress_bar(f"one run of {algorithm}", m) as advance:
        result = audit(
            algorithm,
            mode=AuditMode.ONE_RUN,
            canaries=m,
            seed=check_index("seed", seed),
            epsilon=epsilon,
            delta=delta,
            sigma=sigma_choice(sigma),
            alpha=round(1.0 - confidence, 12),
            attack=attack,
            progress=advance,
        )
    out = result.to_dict()
    exit_code = 1 if result.verdict == Verdict.VIOLATION else 0
    if as_json:
        emit_json(out)
        return exit_code
    print_table(
        f"One-run audit of {algorithm} ({out['observer']} observer): {result.verdict}",
        ["", "value"],
        [
            ["claim: the declaration at σ_tight, μ per user", format_number(result.claimed_mu, 6)],
            ["claimed ε at δ = " + format_number(result.delta), format_number(result.claimed_epsilon, 6)],
            [
                "claimed ε at the informative δ = " + format_number(result.delta_informative),
                format_number(result.claimed_epsilon_at_informative_delta, 6),
            ],
            ["canary users (one run)", str(out["run_canaries"])],
            [
                "score judged",
                "white-box, every canary"
                if result.attack == RlAttack.WHITE_BOX
                else f"learned on half the canaries, judged on the other {out['canaries']}",
            ],
            [
                "reach: μ per user the scores can show at the claim",
                "each user seen alone" if result.judged.reach is None else format_number(result.judged.reach, 6),
            ],
            ["guesses / correct (count chosen from the claim)", f"{result.guesses} / {result.correct}"],
            ["p-value under the claim's trade-off curve", format_number(result.p_value, 6)],
            ["μ lower bound", format_number(result.mu_lower, 6)],
            ["ε lower bound", format_number(result.epsilon_lower, 6)],
            [
                "power (μ certified at the claim) / ratio",
                f"{format_number(result.power, 6)} / {format_number(result.power_ratio, 4)}",
            ],
            ["confidence", format_number(1.0 - result.alpha, 6)],
            ["time", f"{out['seconds']:.1f} s"],
        ],
    )
    return exit_code
