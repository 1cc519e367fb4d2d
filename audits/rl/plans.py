"""What the adversary of joint DP sees: the plans served to every user after the changed one.

Joint DP promises that everything the other users receive — their plans and actions — hides one user. A white-box
observer records the later users' plans, read by attacks of their own (:func:`plan_attacks`); where the billboard's
worlds cannot move a plan, a plan probe tries the algorithm's worlds on pilot runs (:func:`choose_plan_world`); a
black-box view is ``consistent`` only with power measured on it (:func:`judge_view`). Why each step keeps the
audit's level: see docs/explanation/rl-audits.md ("What joint DP's adversary sees").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy import stats

from dpkit.algorithms.executors import Executor, run_pair, spawn_seeds

from ..claims import Claim
from ..engine import AuditResult, audit_outputs
from ..verdicts import POWER_RATIO_NEEDED, Verdict
from .candidates import AUTO_MIN_RUNS, RlAttack, plan_attacks, view_attack
from .rows import RowLayout
from .setting import RlSetting, audit_hook, neighbouring_datasets, rl_release

__all__ = [
    "PILOT_MIN_RUNS",
    "PILOT_SHARE",
    "plan_signal",
    "probe_members",
    "probe_runs",
    "pilot_runs",
    "PlanChoice",
    "choose_plan_world",
    "ViewJudgement",
    "judge_view",
    "plan_probe_runs",
    "reads_plans",
]

#: The fewest pilot runs per dataset and world of a plan probe.
PILOT_MIN_RUNS = 60
#: Pilot runs per dataset and world: the audit's runs per dataset over this (at least :data:`PILOT_MIN_RUNS`).
PILOT_SHARE = 20


def _auc(s0: np.ndarray, s1: np.ndarray) -> float:
    """P(score under D′ > score under D), ties counted half (Mann–Whitney)."""
    ranks = stats.rankdata(np.concatenate([s0, s1]))
    n0, n1 = s0.size, s1.size
    return float((ranks[n0:].sum() - n1 * (n1 + 1) / 2.0) / (n0 * n1))


def plan_signal(out0: np.ndarray, out1: np.ndarray, layout: RowLayout) -> float:
    """How well the plans of pilot rows tell D from D′ (a pilot statistic: it only chooses which world the audit's
    fresh runs test).

    Args:
        out0: pilot rows of D.
        out1: pilot rows of D′.
        layout: where the plans lie in the rows.

    Returns:
        |AUC − ½| of the best plan attack fitted on the first half of each dataset's rows and scored on the second
        half (0 when the rows hold no plan, or too few).
    """
    half = min(out0.shape[0], out1.shape[0]) // 2
    best = 0.0
    if half < 2:
        return best
    for attack in plan_attacks(layout):
        try:
            attack.fit(out0[:half], out1[:half])
        except (ValueError, np.linalg.LinAlgError):
            continue
        s0, s1 = attack.score(out0[half:]), attack.score(out1[half:])
        best = max(best, abs(_auc(np.asarray(s0, dtype=float), np.asarray(s1, dtype=float)) - 0.5))
    return best


def probe_members(setting: RlSetting) -> tuple[RlSetting, ...]:
    """The settings of ``setting``'s plan probe.

    Args:
        setting: the audit's setting.

    Returns:
        One setting per member its algorithm names (:attr:`~dpkit.algorithms.spec.AuditSpec.plan_probe`); none
        without one, for a black-box observer, or for a setting already in a probe's world.
    """
    hook = audit_hook(setting, "plan_probe")
    if hook is None or not setting.white_box or setting.world:
        return ()
    return tuple(replace(setting, **dict(changes)) for changes in hook(setting))


def probe_runs(runs: int) -> int:
    """Runs per dataset of a plan probe's audit: half the audit's, never below 100 unless the audit has fewer.

    Args:
        runs: The audit's runs per dataset.

    Returns:
        The probe's runs (a plan leak in a world where plans move is a near-certain distinguisher).
    """
    return max(runs // 2, min(runs, 100))


def pilot_runs(runs: int) -> int:
    """Pilot runs per dataset and world of a plan probe.

    Args:
        runs: The audit's runs per dataset.

    Returns:
        ``runs``/:data:`PILOT_SHARE`, at least :data:`PILOT_MIN_RUNS`, at most ``runs``.
    """
    return min(runs, max(runs // PILOT_SHARE, PILOT_MIN_RUNS))


@dataclass(frozen=True)
class PlanChoice:
    """The world a plan probe audits: ``setting`` (its world chosen), the pilot ``signals`` of every world tried
    (:func:`plan_signal`) and the ``pilot_runs`` per dataset and world."""

    setting: RlSetting
    signals: tuple[tuple[str, float], ...]
    pilot_runs: int

    def to_dict(self) -> dict[str, Any]:
        """The choice as plain data (JSON-ready).

        Returns:
            The chosen world, the pilot runs and every world's pilot signal.
        """
        return {"world": self.setting.world, "pilot_runs": self.pilot_runs, "pilot_signals": dict(self.signals)}


def choose_plan_world(
    members: Sequence[RlSetting],
    *,
    runs: int,
    seed: int | np.random.SeedSequence,
    executor: Executor | None = None,
    chunk_size: int = 250,
    progress: Callable[[int], None] | None = None,
) -> PlanChoice:
    """Choose the world of a plan probe on pilot runs.

    The audit of the chosen world runs on fresh runs, so the choice costs it no validity.

    Args:
        members: The probe's settings (:func:`probe_members`).
        runs: The audit's runs per dataset (the pilots are :func:`pilot_runs` of them per world).
        seed: World i's pilots draw from child i.
        executor: As for :func:`~dpkit.algorithms.executors.run_pair`.
        chunk_size: As for :func:`~dpkit.algorithms.executors.run_pair`.
        progress: As for :func:`~dpkit.algorithms.executors.run_pair`.

    Returns:
        The member whose plans told D and D′ apart best (:func:`plan_signal`; the first on ties), with every
        world's pilot signal.

    Raises:
        ValueError: When ``members`` is empty.
    """
    if not members:
        raise ValueError("a plan probe needs at least one world to try")
    n = pilot_runs(runs)
    signals = []
    for member, child in zip(members, spawn_seeds(seed, len(members)), strict=True):
        d0, d1 = neighbouring_datasets(member)
        out0, out1 = run_pair(rl_release, d0, d1, n, child, executor=executor, chunk_size=chunk_size, progress=progress)
        signals.append((member.world, plan_signal(out0, out1, RowLayout.of(out0, member.white_box))))
    best = max(range(len(members)), key=lambda i: (signals[i][1], -i))
    return PlanChoice(members[best], tuple(signals), n)


@dataclass(frozen=True)
class ViewJudgement:
    """The verdict of a black-box view: ``verdict``, the power measured on the view (``power``: the μ lower bound
    its audit certifies against the exact-data twin, ``nan`` when not measured; ``power_ratio`` over the allowance)
    and ``note``, why a view is ``inconclusive``."""

    verdict: Verdict
    power: float
    power_ratio: float
    note: str | None


def _same_everywhere(out0: np.ndarray, out1: np.ndarray, layout: RowLayout) -> bool:
    view = np.concatenate([out0[:, : layout.body], out1[:, : layout.body]])
    return bool(np.all(view == view[:1]))


def judge_view(
    setting: RlSetting,
    out0: np.ndarray,
    out1: np.ndarray,
    result: AuditResult,
    *,
    runs: int,
    seed: int,
    alpha: float,
    executor: Executor | None = None,
    chunk_size: int = 250,
    progress: Callable[[int], None] | None = None,
) -> ViewJudgement:
    """The verdict of a black-box view, with power measured on that view.

    A violation stays one; a view that was the same in every run is ``inconclusive`` (it carried no signal);
    otherwise the same audit of the same view runs on fresh runs of the implementation at σ = 0 (it plans on exact
    data: the worst a plan leak can be), and the view is ``consistent`` only if that audit certifies at least
    :data:`POWER_RATIO_NEEDED` of the allowance.

    Args:
        setting: The audit's setting (a black-box observer).
        out0: Its rows of D.
        out1: Its rows of D′.
        result: Its audit (the claim, the allowance, the verdict so far).
        runs: Runs per dataset of the exact-data twin.
        seed: The twin's runs draw from it.
        alpha: The twin's audit's α.
        executor: As for :func:`~dpkit.algorithms.executors.run_pair`.
        chunk_size: As for :func:`~dpkit.algorithms.executors.run_pair`.
        progress: As for :func:`~dpkit.algorithms.executors.run_pair`.

    Returns:
        The view's verdict, the power measured on it and, for ``inconclusive``, why.
    """
    allowed = result.claim.mu_allowed or 0.0
    layout = RowLayout.of(out0, False)
    if result.verdict == Verdict.VIOLATION:
        return ViewJudgement(Verdict.VIOLATION, math.nan, math.nan, None)
    if _same_everywhere(out0, out1, layout):
        note = (
            f"the {setting.observer} view was the same in every run of D and D′: it carried no signal, and no "
            "attack on it could have seen a violation"
        )
        return ViewJudgement(Verdict.INCONCLUSIVE, 0.0, 0.0, note)
    try:
        twin = replace(setting, sigma=0.0)
        d0, d1 = neighbouring_datasets(twin)
        ref0, ref1 = run_pair(
            rl_release, d0, d1, runs, seed, executor=executor, chunk_size=chunk_size, progress=progress
        )
        reference = audit_outputs(
            ref0, ref1, Claim.gdp(max(allowed, 1e-9)), attack=view_attack(layout), seed=seed, alpha=alpha
        )
    except (ValueError, ArithmeticError, np.linalg.LinAlgError) as err:
        note = f"the power of the {setting.observer} view could not be measured (its twin on exact data: {err})"
        return ViewJudgement(Verdict.INCONCLUSIVE, math.nan, 0.0, note)
    power = reference.mu_lower
    ratio = power / allowed if allowed > 0 else 0.0
    if ratio < POWER_RATIO_NEEDED:
        note = (
            f"the {setting.observer} view shows too little even of a twin that plans on exact data (μ >= "
            f"{power:.3g} certified from it, against {allowed:.3g} allowed): this view cannot see a violation here"
        )
        return ViewJudgement(Verdict.INCONCLUSIVE, power, ratio, note)
    return ViewJudgement(Verdict.CONSISTENT, power, ratio, None)


def plan_probe_runs(setting: RlSetting, runs: int, attack: RlAttack = RlAttack.AUTO) -> int:
    """Runs per dataset the plan probe adds to a default audit of ``setting``.

    Args:
        setting: The audit's setting.
        runs: Runs per dataset and position of the audit.
        attack: The audit's attack (a probe is made only where some candidate reads the plans).

    Returns:
        Its pilots over every world it tries and its own runs; 0 without a probe.
    """
    members = probe_members(setting) if reads_plans(attack, runs) else ()
    return len(members) * pilot_runs(runs) + probe_runs(runs) if members else 0


def reads_plans(attack: RlAttack, runs: int) -> bool:
    """Whether an audit has candidate attacks that read the plans.

    Args:
        attack: The audit's attack.
        runs: Runs per dataset and position.

    Returns:
        True for the learned attack, and for ``auto`` where the probe's runs reach :data:`AUTO_MIN_RUNS`.
    """
    return attack == RlAttack.LEARNED or (attack == RlAttack.AUTO and probe_runs(runs) >= AUTO_MIN_RUNS)
