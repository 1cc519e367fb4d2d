"""The LDP-UCRL-VTR audit (:mod:`dpkit.audits.rl`): its canaries and its messages observer — every user's noisy
messages up to the changed one, whitened at the claim's σ — many runs at once along the agent's run axis."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dpkit.algorithms.batches import ShippedClass, batch_parts, batchable
from dpkit.algorithms.ldp_ucrl_vtr import ALGORITHM, AUTO_FEATURES_DIM, LdpUcrlVtr
from dpkit.algorithms.spec import AuditSpec
from dpkit.algorithms.ucrl_vtr import Features

from .observers import ObservedRun, observe_messages, observe_messages_runs
from .worlds import AuditedSetting, AuditWorld

__all__ = ["AUDIT", "AUDITS", "audit_world", "batched", "observe", "observe_batch"]


def audit_world(setting: AuditedSetting) -> AuditWorld:
    """The audit's world: the uniform MDP, the users and the two canaries.

    One canary starts in and walks state 0, the other state S − 1 (disjoint features φ_V at every step), in the
    uniform MDP whose rewards keep every optimistic value at its cap, so φ_V and V reach their per-step bounds (her
    messages carry values, not rewards: rewards 1).

    Args:
        setting: The audit's setting (sizes and seeds).

    Returns:
        The environment, the users and the two canaries.
    """
    from .observers import tabular_world

    return tabular_world(setting, (1.0, 1.0))


def batched(run: ObservedRun) -> bool:
    """Whether the audit's runs of ``run`` go through the agent's run axis.

    They do for dpkit's own LDP-UCRL-VTR (no implementation under test but one marked
    :func:`~dpkit.algorithms.batches.plays_runs` — a mutant or a user's class overrides the scalar methods and runs
    one by one) under the messages observer.

    Args:
        run: the audit's run.

    Returns:
        True where :func:`observe_batch` simulates the runs along the agent's run axis.
    """
    return run.observer == "messages" and batchable(run.setting.implementation, (_SHIPPED,))


#: The agent's class as shipped: one patched in place (a test's monkeypatch) is an implementation under test, played
#: run by run.
_SHIPPED = ShippedClass(LdpUcrlVtr)


def _bytes_per_run(run: ObservedRun) -> float:
    """A generous estimate of one run's arrays in a batch: the agent's Gram matrices (H, d, d), d the features' (S²A
    one-hot, S·A·B on the transitions' support), and every user's messages up to the changed one (their upper
    triangles, residuals and magnitudes kept for the reading of reused noise)."""
    env = run.world[0]
    kind = dict(getattr(run.setting, "options", ())).get("features", "auto")
    if kind == "auto":  # the agent's own rule
        kind = "one-hot" if env.states**2 * env.actions <= AUTO_FEATURES_DIM else "support"
    d = Features(env, kind).dim
    return float(8.0 * env.horizon * (7.0 * d * d + 3.0 * d * (d + 1) / 2 * (run.index + 1)))


def observe(run: ObservedRun, rng: np.random.Generator) -> np.ndarray:
    """The messages observer (:func:`~dpkit.audits.rl.observers.observe_messages`) of one run.

    It is the batch of one of :func:`observe_batch` (which, for an implementation under test that plays one run, is
    ``observe_messages`` of its Generator).

    Args:
        run: the audit's run (setting, dataset, world, claim).
        rng: the run's Generator.

    Returns:
        The run's row.
    """
    row: np.ndarray = observe_batch(run, [rng])[0]
    return row


def observe_batch(run: ObservedRun, rngs: Sequence[np.random.Generator]) -> np.ndarray:
    """:func:`~dpkit.audits.rl.observers.observe_messages` of R runs at once, run i from ``rngs[i]``.

    One row per run, row i what ``observe_messages(run, rngs[i])`` returns (up to the rounding of batched linear
    algebra).

    The agent is one :class:`LdpUcrlVtr` of R runs (run i's noise from its own Generator, drawn as the run alone
    draws it), observed by :func:`~dpkit.audits.rl.observers.observe_messages_runs` — the one messages observer,
    of which ``observe_messages`` is the batch of one — in parts that fit the batch's memory. An implementation under
    test (``run.setting.implementation``) runs one by one through ``observe_messages``,
    unless marked :func:`~dpkit.algorithms.batches.plays_runs`.

    Args:
        run: the audit's run (setting, dataset, world, claim).
        rngs: one Generator per run.

    Returns:
        The rows, (R, width).
    """
    if not batched(run):
        return np.stack([observe_messages(run, g) for g in rngs])
    return np.concatenate([observe_messages_runs(run, part) for part in batch_parts(rngs, _bytes_per_run(run))])


#: LDP-UCRL-VTR's audit: every user's noisy messages (white-box).
AUDIT = AuditSpec(
    observers=("messages",),
    white_box=("messages",),
    world=audit_world,
    observe=observe,
    observe_batch=observe_batch,
    defaults={"states": 2, "horizon": 8, "episodes": 4},
    canaries=(
        "tabular walks through disjoint states from the first step (state 0 against S − 1): every entry of φ_V "
        "and V at its per-step bound (the values sit at their caps), so each message's difference attains its "
        "declared Δ; the optimistic values the user clips reach beyond b_V, so a randomiser that forgets to clip "
        "φ or V releases more than the declared Δ"
    ),
)
#: The audits this module registers (:mod:`dpkit.audits.rl.registry`), by algorithm name.
AUDITS = {ALGORITHM: AUDIT}
