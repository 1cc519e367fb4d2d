"""What the adversary of joint DP sees: the plans served to every user after the changed one.

Joint DP promises that everything the other users receive — their plans and actions — hides one user; the
billboard lemma gets there in two steps: the billboard is DP, and each user's plan depends only on the billboard and
on her own data. The billboard observers test the first step; this module adds the second to the same audit.

* **The whole view** (:class:`ColumnsAttack`, :func:`plan_attacks`). A white-box observer records the plan served
  to every user after the changed one (:meth:`dpkit.algorithms.rows.Trace.plan`) in columns of its own; two more
  candidate attacks read only them, chosen with the others on the selection split: :class:`~dpkit.audits.
  learned_attacks.AtomAttack` (plan configurations, and each entry's values, seen under one dataset and not the
  other: a plan made on exact data repeats exactly, run after run) and a logistic regression (a plan that moves
  with the data more than the noise moves it). A correct implementation's plans are post-processing of its
  billboard, so the level of the audit holds; the existing candidates read exactly the columns they read before.
* **Worlds where plans move** (:func:`choose_plan_world`). Where the billboard's worlds cannot move a plan, an
  algorithm names a *plan probe* (:attr:`~dpkit.algorithms.spec.AuditSpec.plan_probe`: the worlds of
  :mod:`dpkit.algorithms.plan_worlds`); each is tried on pilot runs of the implementation under test, and the one
  whose plans told D and D′ apart best on held-out pilot runs is audited on fresh runs as one more neighbouring
  pair of the audit, at its share of α (:func:`dpkit.audits.rl.audit_positions`).
* **Black-box views say what they saw** (:func:`judge_view`). A black-box view (the actions of the later users, the
  policies) is `consistent` only with power measured on that view: the same audit of the same view against a twin
  that plans on exact data (the implementation at σ = 0: the worst a plan leak can be), which must certify at least
  half of what the claim allows. A view that was the same in every run of D and D′, or whose exact-data twin shows
  too little, is `inconclusive`, saying why — never `consistent` with a power borrowed from the white-box ideal.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy import stats

from dpkit.algorithms.executors import Executor, run_pair, spawn_seeds
from dpkit.algorithms.rows import RowLayout

from .claims import Claim
from .engine import AuditResult, audit_outputs
from .rl_candidates import plan_attacks, view_attack
from .rl_setting import RlSetting, audited_spec, neighbouring_datasets, rl_release
from .verdicts import POWER_RATIO_NEEDED

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
    hook = audited_spec(setting).hook("plan_probe")
    if hook is None or not setting.white_box or setting.world:
        return ()
    return tuple(replace(setting, **dict(changes)) for changes in hook(setting))


def probe_runs(runs: int) -> int:
    """Runs per dataset of a plan probe's audit: half the audit's (a plan leak in a world where plans move is a
    near-certain distinguisher), never below 100 unless the audit has fewer."""
    return max(runs // 2, min(runs, 100))


def pilot_runs(runs: int) -> int:
    """Pilot runs per dataset and world of a plan probe: ``runs``/:data:`PILOT_SHARE`, at least
    :data:`PILOT_MIN_RUNS`, at most ``runs``."""
    return min(runs, max(runs // PILOT_SHARE, PILOT_MIN_RUNS))


@dataclass(frozen=True)
class PlanChoice:
    """The world a plan probe audits: ``setting`` (its world chosen), the pilot ``signals`` of every world tried
    (:func:`plan_signal`) and the ``pilot_runs`` per dataset and world."""

    setting: RlSetting
    signals: tuple[tuple[str, float], ...]
    pilot_runs: int

    def to_dict(self) -> dict[str, Any]:
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
    """Choose the world of a plan probe on pilot runs (the audit of the chosen world runs on fresh runs, so the
    choice costs it no validity).

    Args:
        members: the probe's settings (:func:`probe_members`).
        runs: the audit's runs per dataset (the pilots are :func:`pilot_runs` of them per world).
        seed: world i's pilots draw from child i.
        executor, chunk_size, progress: as for :func:`~dpkit.algorithms.executors.run_pair`.

    Returns:
        The member whose plans told D and D′ apart best (:func:`plan_signal`; the first on ties), with every
        world's pilot signal.

    Raises:
        ValueError: when ``members`` is empty.
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

    verdict: str
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
    """The verdict of a black-box view: a violation stays one; a view that was the same in every run is
    ``inconclusive`` (it carried no signal); otherwise the view's power is measured — the same audit of the same
    view on fresh runs of the implementation at σ = 0 (it plans on exact data: the worst a plan leak can be) — and
    the view is ``consistent`` only if that audit certifies at least :data:`POWER_RATIO_NEEDED` of the allowance.

    Args:
        setting: the audit's setting (a black-box observer).
        out0: its rows of D.
        out1: its rows of D′.
        result: its audit (the claim, the allowance, the verdict so far).
        runs: runs per dataset of the exact-data twin.
        seed: the twin's runs draw from it.
        alpha: the twin's audit's α.
        executor, chunk_size, progress: as for :func:`~dpkit.algorithms.executors.run_pair`.

    Returns:
        The view's verdict, the power measured on it and, for ``inconclusive``, why.
    """
    allowed = result.claim.mu_allowed or 0.0
    layout = RowLayout.of(out0, False)
    if result.verdict == "violation":
        return ViewJudgement("violation", math.nan, math.nan, None)
    if _same_everywhere(out0, out1, layout):
        note = (
            f"the {setting.observer} view was the same in every run of D and D′: it carried no signal, and no "
            "attack on it could have seen a violation"
        )
        return ViewJudgement("inconclusive", 0.0, 0.0, note)
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
        return ViewJudgement("inconclusive", math.nan, 0.0, note)
    power = reference.mu_lower
    ratio = power / allowed if allowed > 0 else 0.0
    if ratio < POWER_RATIO_NEEDED:
        note = (
            f"the {setting.observer} view shows too little even of a twin that plans on exact data (μ >= "
            f"{power:.3g} certified from it, against {allowed:.3g} allowed): this view cannot see a violation here"
        )
        return ViewJudgement("inconclusive", power, ratio, note)
    return ViewJudgement("consistent", power, ratio, None)
