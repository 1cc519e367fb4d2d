"""``dpkit audit --target FILE.py:FN --one-run --canary-records FILE.py:NAME``: one run of a release function on a
dataset holding each canary record with probability ½, judged against the claim's trade-off curve."""

from __future__ import annotations

from typing import Any

from dpkit import accountant
from dpkit.accountant.validation import check_index
from dpkit.audit_modes import AuditMode
from dpkit.audits.claims import ClaimKind
from dpkit.audits.verdicts import Verdict
from dpkit.render import emit_json, format_number, print_table

from .form_options import OneRunTargetOptions
from .target_inputs import target_claim

#: Canary records made by a ``--canary-records`` function when ``--canaries`` is not given.
DEFAULT_CANARIES = 1000


def _records(value: str, canaries: float | None) -> list[Any]:
    """The canary records of ``--canary-records FILE.py:NAME``: a sequence (``--canaries`` must then not differ
    from its length), or a function of M returning M records."""
    from dpkit.loading import load_object

    obj = load_object("--canary-records", value)
    m = None if canaries is None else accountant.check_count("canaries", canaries)
    if callable(obj):
        want = DEFAULT_CANARIES if m is None else m
        try:
            obj = obj(want)
        except Exception as err:
            raise ValueError(f"--canary-records: calling {value!r} failed: {type(err).__name__}: {err}") from None
        records = list(obj) if not isinstance(obj, (str, bytes)) and hasattr(obj, "__iter__") else None
        if records is None or len(records) != want:
            raise ValueError(f"--canary-records: {value!r}({want}) must return {want} records")
        return records
    if isinstance(obj, (str, bytes)) or not hasattr(obj, "__len__"):
        raise ValueError(f"--canary-records: {value!r} must be a sequence of records or a function of M")
    records = list(obj)
    if m is not None and m != len(records):
        raise ValueError(f"--canaries {m} differs from the {len(records)} records of {value!r}: give one of them")
    return records


def audit_one_run_target(options: OneRunTargetOptions) -> int:
    """One run of ``options.target`` with canary records; print the result.

    Args:
        options: The ``--target --one-run`` form's options, as given.

    Returns:
        The exit status: 1 for a violation of the claim, 0 otherwise.

    Raises:
        click.UsageError: Not exactly one claim given (:func:`~dpkit.commands.audit.target_inputs.target_claim`).
        ValueError: No ``canary_records``, a bad value of an option, a file that cannot be loaded, or an exception
            of the user's code (on one line).
    """
    from dpkit.facade import audit
    from dpkit.loading import FileFunction, load_object

    claim = target_claim(options.claim)
    if options.canary_records is None:
        raise ValueError("--one-run with --target needs --canary-records FILE.py:NAME (the canary records)")
    level = accountant.check_probability("confidence", options.confidence)
    seed_value = check_index("seed", options.seed)
    release = FileFunction("--target", options.target)
    records = _records(options.canary_records, options.canaries)
    base: Any = ()
    if options.dataset is not None:
        base = load_object("--dataset", options.dataset)
        base = base() if callable(base) else base
    read = None if options.score is None else FileFunction("--score", options.score)
    try:
        result = audit(
            release,
            mode=AuditMode.ONE_RUN,
            canaries=records,
            claim=claim,
            dataset=base,
            score=read,
            seed=seed_value,
            alpha=round(1.0 - level, 12),
            delta=None if claim.kind == ClaimKind.DP else options.claim.delta,
        )
    except (ValueError, TypeError):
        raise
    except Exception as err:  # the user's code raised: one line, no traceback
        raise ValueError(f"the audit failed in user code: {type(err).__name__}: {err}") from None
    exit_code = 1 if result.verdict == Verdict.VIOLATION else 0
    if options.as_json:
        emit_json(result.to_dict())
        return exit_code
    unit = "μ" if claim.mu is not None else "ε"
    print_table(
        f"One-run audit of {options.target} against {claim.describe()}: {result.verdict}",
        ["", "value"],
        [
            ["canary records (one run) / included", f"{result.canaries} / {int(result.coins.sum())}"],
            ["guesses / correct (count chosen from the claim)", f"{result.guesses} / {result.correct}"],
            ["p-value under the claim's trade-off curve", format_number(result.p_value, 6)],
            ["μ lower bound", format_number(result.mu_lower, 6)],
            [f"ε lower bound (δ = {format_number(result.delta)})", format_number(result.epsilon_lower, 6)],
            [f"claimed ε at that δ{'' if claim.mu is None else ' / claimed μ'}", _claimed(result)],
            [
                f"power ({unit} certified at the claim) / ratio",
                f"{format_number(result.power, 6)} / {format_number(result.power_ratio, 4)}",
            ],
            ["confidence", format_number(level)],
            ["time", f"{result.seconds:.1f} s"],
        ],
    )
    return exit_code


def _claimed(result: Any) -> str:
    text = format_number(result.claimed_epsilon, 6)
    return text if result.claim.mu is None else f"{text} / {format_number(result.claim.mu, 6)}"
