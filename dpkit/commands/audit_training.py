"""``dpkit audit --train FILE.py:NAME --noise-multiplier S --sampling-rate Q --steps T``: one DP-SGD training run
with canaries, its one-run ε lower bound printed beside the accountant's ε (:mod:`dpkit.audits.dp_sgd_audit`)."""

from __future__ import annotations

from typing import Any

from dpkit import accountant
from dpkit.accountant.validation import check_index
from dpkit.audits.dp_sgd_canaries import ThreatModel
from dpkit.audits.verdicts import Verdict
from dpkit.render import emit_json, format_number, print_table, progress_bar

__all__ = ["audit_training"]

#: Canaries of a --train audit when --canaries is not given.
DEFAULT_CANARIES = 1000


def _dataset(value: str | None) -> Any:
    """The user's examples of ``--examples FILE.py:NAME``: a pair (features, labels), or a function returning one."""
    if value is None:
        return None
    from dpkit.loading import FileFunction, load_object

    obj = load_object("--examples", value)
    return FileFunction("--examples", value, call=f"{value}()")() if callable(obj) else obj


def audit_training(
    *,
    train: str,
    noise_multiplier: float,
    sampling_rate: str,
    steps: float,
    parameters: float | None,
    loss: str | None,
    clip_norm: float,
    threat: str,
    examples: str | None,
    canaries: float | None,
    delta: float | None,
    confidence: float,
    seed: float,
    as_json: bool,
) -> int:
    """One training run of ``train`` with canaries, judged against the claim; print the result.

    Args:
        train: ``--train FILE.py:NAME``, ``train(dataset, rng)``.
        noise_multiplier: ``--noise-multiplier``, the claimed σ.
        sampling_rate: ``--sampling-rate``, the claimed q (a decimal or B/N).
        steps: ``--steps``, the claimed T.
        parameters: ``--parameters``, the model's parameter count (white-box).
        loss: ``--loss FILE.py:NAME``, ``loss(params, features, labels)`` (black-box).
        clip_norm: ``--clip-norm``, C.
        threat: ``--threat``, white-box or black-box.
        examples: ``--examples FILE.py:NAME``, the user's examples (features, labels) or a function returning them.
        canaries: ``--canaries`` (default 1000).
        delta: ``--delta``, where ε is read (default 1e-5).
        confidence: ``--confidence``, 1 − α.
        seed: ``--seed``.
        as_json: ``--json``: one JSON object instead of the table.

    Returns:
        The exit status: 1 for a violation, 0 otherwise.

    Raises:
        ValueError: A bad value, a claim that does not describe DP-SGD, a file that cannot be loaded, or an exception
            of the user's code (its file and line, on one line).
    """
    from dpkit.accountant.dp_sgd import parse_rate
    from dpkit.audits.dp_sgd_audit import audit_training_run
    from dpkit.audits.dp_sgd_claim import DpSgdClaim
    from dpkit.loading import FileFunction

    q, _ = parse_rate(sampling_rate)
    claim = DpSgdClaim(noise_multiplier, q, accountant.check_count("steps", steps))
    level = accountant.check_probability("confidence", confidence)
    m = DEFAULT_CANARIES if canaries is None else canaries
    run = FileFunction("--train", train, call="train(dataset, rng)")
    read = None if loss is None else FileFunction("--loss", loss, call="loss(params, features, labels)")
    count = None if parameters is None else accountant.check_count("parameters", parameters)
    with progress_bar(f"one training run of {train}", 4) as advance:
        result = audit_training_run(
            run,
            claim=claim,
            canaries=m,  # type: ignore[arg-type]
            threat=threat,
            parameters=count,
            dataset=_dataset(examples),
            loss=read,
            clip_norm=clip_norm,
            seed=check_index("seed", seed),
            alpha=round(1.0 - level, 12),
            delta=1e-5 if delta is None else delta,
            progress=advance,
        )
    code = 1 if result.verdict == Verdict.VIOLATION else 0
    if as_json:
        emit_json(result.to_dict())
        return code
    d = format_number(result.delta)
    print_table(
        f"One-run audit of {train} against {claim.describe()}: {result.verdict}",
        ["", "value"],
        [
            ["threat model", result.threat.value],
            [f"accountant's ε (PLD, δ = {d})", format_number(result.claimed_epsilon, 6)],
            [f"one-run ε lower bound (δ = {d}; DP-SGD's curves)", format_number(result.epsilon_lower, 6)],
            ["one-run ε lower bound, assuming nothing", format_number(result.epsilon_lower_any, 6)],
            ["canaries (one run) / included", f"{result.canaries} / {int(result.coins.sum())}"],
            ["guesses (from the claim) / correct", f"{result.guesses} / {result.correct}"],
            *[[f"p-value: {name} test", format_number(p, 6)] for name, _, p in result.tests],
            ["power (ε an ideal run at the claim certifies) / ratio", _power(result)],
            ["confidence", format_number(level)],
            ["time", f"{result.seconds:.1f} s"],
        ],
        caption=f"{result.reason}. Threat model — {result.threat.statement}.",
    )
    return code


def _power(result: Any) -> str:
    if result.threat == ThreatModel.BLACK_BOX:
        return "none known for black-box"
    return f"{format_number(result.power, 6)} / {format_number(result.power_ratio, 4)}"
