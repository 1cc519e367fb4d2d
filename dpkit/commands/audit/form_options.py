"""The options of ``dpkit audit``'s forms as frozen dataclasses, built once where the command parses them.

:class:`AlgorithmOptions` (``dpkit audit ALGORITHM``) and :class:`TargetOptions` (``dpkit audit --target``) share
:class:`SharedOptions`; :class:`OneRunTargetOptions` (``--target --one-run``) and :class:`TrainingOptions`
(``--train``) stand alone. Both ``--target`` forms hold the claim's options as one :class:`ClaimOptions`.
:func:`form_options` picks a form's fields out of click's parameters. :class:`RlRuns` holds an RL audit's run
options once checked (counts as integers, the attack's canonical name, the executor's)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, is_dataclass
from typing import TYPE_CHECKING, Any, TypeVar, get_type_hints

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = [
    "AlgorithmOptions",
    "ClaimOptions",
    "OneRunTargetOptions",
    "RlRuns",
    "SharedOptions",
    "TargetOptions",
    "TrainingOptions",
    "form_options",
]

_Options = TypeVar("_Options", bound="DataclassInstance")


@dataclass(frozen=True, kw_only=True)
class ClaimOptions:
    """The claim a ``--target`` audit (many runs or one) judges the release against, as given: exactly one of its
    forms (:func:`~dpkit.commands.audit.target_inputs.target_claim` reads it).

    Attributes:
        epsilon: ``--epsilon``, the claimed ε (with ``delta``), or None.
        delta: ``--delta``, the claimed δ (0: pure ε-DP), or the δ of the ε reading of another claim.
        mu: ``--mu``, a claimed μ (GDP), or None.
        rho: ``--rho``, a claimed ρ (zCDP), or None.
        rdp_orders: ``--rdp-orders``, the orders α > 1 of a claimed RDP curve, or None.
        rdp_values: ``--rdp-values``, the curve's ε_R(α) at each order, or None.
        claim_file: ``--claim``, a ledger file whose exact μ-GDP is the claim, or None.
    """

    epsilon: float | None
    delta: float | None
    mu: float | None
    rho: float | None
    rdp_orders: list[float] | None
    rdp_values: list[float] | None
    claim_file: str | None


@dataclass(frozen=True, kw_only=True)
class SharedOptions:
    """The options both many-run forms take, as given (checked where they are used).

    Attributes:
        confidence: ``--confidence``, 1 − α.
        attack: ``--attack``: the attack's name (or ``FILE.py:SCORE`` for a ``--target``).
        executor: ``--executor``: where the runs go (already defaulted: ``auto``).
        workers: ``--workers``, the pool's size (None: the executor's default).
        scheduler: ``--scheduler``, a Dask scheduler's address, or None.
        seed: ``--seed``.
        sequential: ``--sequential``: the anytime-valid audit, stopping once the evidence is certain.
        as_json: ``--json``: print one JSON object instead of the tables.
    """

    confidence: float
    attack: str
    executor: str
    workers: float | None
    scheduler: str | None
    seed: float
    sequential: bool
    as_json: bool


@dataclass(frozen=True, kw_only=True)
class AlgorithmOptions(SharedOptions):
    """``dpkit audit ALGORITHM``'s options (many runs), beside the shared ones.

    Attributes:
        algorithm: ALGORITHM, a registered algorithm's name (an ``--agent`` already registered).
        epsilon: ``--epsilon``, the target ε the declaration is audited at (None: none given).
        delta: ``--delta``, the target's δ (None: none given).
        sigma: ``--sigma``: ``paper``, ``tight``, ``optimal`` or a number.
        observer: ``--observer``, what the attacker sees (None: the white-box one).
        runs: ``--runs``, runs per dataset (None: 4000).
        episodes: ``--episodes``, the users K (None: the algorithm's default).
        position: ``--position``, where the changed user sits (None: every position that matters).
        env: ``--env``, a user's tabular environment (None: the audit's own).
        horizon: ``--horizon``, the episodes' horizon H (with ``env``).
        max_time: ``--max-time``, the longest expected time accepted, in seconds.
    """

    algorithm: str
    epsilon: float | None
    delta: float | None
    sigma: str
    observer: str | None
    runs: float | None
    episodes: float | None
    position: str | None
    env: str | None
    horizon: float | None
    max_time: float


@dataclass(frozen=True, kw_only=True)
class TargetOptions(SharedOptions):
    """``dpkit audit --target``'s options (many runs on the user's pairs), beside the shared ones.

    Attributes:
        target: ``--target FILE.py:FUNCTION``, the release function.
        neighbours: ``--neighbours FILE.py:NAME``, the neighbouring pairs.
        claim: The claim's options.
        trials: ``--trials``, runs per dataset.
        chunk_size: ``--chunk-size``, runs per task.
    """

    target: str
    neighbours: str
    claim: ClaimOptions
    trials: float
    chunk_size: float


@dataclass(frozen=True, kw_only=True)
class OneRunTargetOptions:
    """``dpkit audit --target --one-run``'s options: one run of a release function with canary records.

    Attributes:
        target: ``--target FILE.py:FUNCTION``, the release function.
        canary_records: ``--canary-records FILE.py:NAME``: a sequence of records or a function of M returning M.
        canaries: ``--canaries``, the canary records made by a function (None: 1000) or the sequence's length.
        dataset: ``--dataset FILE.py:NAME``, the records always in the dataset (None: none).
        score: ``--score FILE.py:NAME``, ``score(output, record) -> float`` (None: their inner product).
        claim: The claim's options.
        confidence: ``--confidence``, 1 − α.
        seed: ``--seed``.
        as_json: ``--json``: print one JSON object instead of the table.
    """

    target: str
    canary_records: str | None
    canaries: float | None
    dataset: str | None
    score: str | None
    claim: ClaimOptions
    confidence: float
    seed: float
    as_json: bool


@dataclass(frozen=True, kw_only=True)
class TrainingOptions:
    """``dpkit audit --train``'s options: one DP-SGD training run with canaries, and the run's claim.

    Attributes:
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
    """

    train: str
    noise_multiplier: float
    sampling_rate: str
    steps: float
    parameters: float | None
    loss: str | None
    clip_norm: float
    threat: str
    examples: str | None
    canaries: float | None
    delta: float | None
    confidence: float
    seed: float
    as_json: bool


@dataclass(frozen=True, kw_only=True)
class RlRuns:
    """An RL audit's run options once checked: what the fixed and the sequential audit both run with.

    Attributes:
        runs: Runs per dataset and position (the fixed audit's; the sequential audit's budget is 1.3× that).
        seed: The seed.
        attack: The attack: ``auto``, ``white-box`` or ``learned``.
        confidence: 1 − α.
        executor: The executor's name (:func:`~dpkit.commands.options.rl_executor`).
        workers: The pool's size (None: the executor's default).
        scheduler: A Dask scheduler's address, or None.
        max_time: The longest expected time accepted, in seconds.
        as_json: Whether to print one JSON object instead of the tables.
    """

    runs: int
    seed: int
    attack: str
    confidence: float
    executor: str
    workers: int | None
    scheduler: str | None
    max_time: float
    as_json: bool


def form_options(kind: type[_Options], params: Mapping[str, Any]) -> _Options:
    """The options of one form, picked out of click's parameters of ``dpkit audit``; a field that is itself options
    (a ``--target`` form's :class:`ClaimOptions`) is built from the same parameters.

    Args:
        kind: One of the form's dataclasses (:class:`AlgorithmOptions`, :class:`TargetOptions`,
            :class:`OneRunTargetOptions`, :class:`TrainingOptions`).
        params: The command's parameters by name (the other forms' are ignored: they were refused if given).

    Returns:
        The form's options.
    """
    hints = get_type_hints(kind)
    return kind(
        **{
            field.name: form_options(hints[field.name], params)
            if is_dataclass(hints[field.name])
            else params[field.name]
            for field in fields(kind)
        }
    )
