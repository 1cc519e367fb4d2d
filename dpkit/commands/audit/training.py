"""``dpkit audit --train FILE.py:NAME --noise-multiplier S --sampling-rate Q --steps T``: one DP-SGD training run
with canaries, its one-run ε lower bound printed beside the accountant's ε (:mod:`dpkit.audits.dp_sgd_audit`)."""

from __future__ import annotations

from typing import Any

from dpkit import accountant
from dpkit.accountant.validation import check_index
from dpkit.audits.dp_sgd_canaries import ThreatModel
from dpkit.audits.verdicts import Verdict
from dpkit.render import emit_json, format_number, print_table, progress_bar

from .form_options import TrainingOptions

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


def audit_training(options: TrainingOptions) -> int:
    """One training run of ``options.train`` with canaries, judged against the claim; print the result.

    Args:
        options: The ``--train`` form's options, as given (the claim's three parts present).

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

    q, _ = parse_rate(options.sampling_rate)
    claim = DpSgdClaim(options.noise_multiplier, q, accountant.check_count("steps", options.steps))
    level = accountant.check_probability("confidence", options.confidence)
    m = DEFAULT_CANARIES if options.canaries is None else options.canaries
    run = FileFunction("--train", options.train, call="train(dataset, rng)")
    read = None if options.loss is None else FileFunction("--loss", options.loss, call="loss(params, features, labels)")
    count = None if options.parameters is None else accountant.check_count("parameters", options.parameters)
    with progress_bar(f"one training run of {options.train}", 4) as advance:
        result = audit_training_run(
            run,
            claim=claim,
            canaries=m,  # type: ignore[arg-type]
            threat=options.threat,
            parameters=count,
            dataset=_dataset(options.examples),
            loss=read,
            clip_norm=options.clip_norm,
            seed=check_index("seed", options.seed),
            alpha=round(1.0 - level, 12),
            delta=1e-5 if options.delta is None else options.delta,
            progress=advance,
        )
    code = 1 if result.verdict == Verdict.VIOLATION else 0
    if options.as_json:
        emit_json(result.to_dict())
        return code
    d = format_number(result.delta)
    print_table(
        f"One-run audit of {options.train} against {claim.describe()}: {result.verdict}",
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
