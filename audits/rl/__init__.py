"""The RL audits: whole private RL algorithms audited on neighbouring users, and everything they observe with.

A setting (:mod:`.setting`) fixes an algorithm, its world, K users and the changed one; :mod:`.fixed` audits
several positions of the changed user (many runs each), :mod:`.sequential` stops at the first violation and
:mod:`.one_run` reads one run whose users are all canaries. Their attacks and reasons: :mod:`.candidates`,
:mod:`.plans`, :mod:`.explain`. What they observe with: the rows (:mod:`.rows`), the observers' toolkit
(:mod:`.observers`, :mod:`.psums`, :mod:`.reused_noise`), the plan worlds (:mod:`.plan_worlds`), the billboard
protocol of a user's agent (:mod:`.billboard`, :mod:`.user_agents`) and one audit module per built-in algorithm,
registered by name in :mod:`.registry`. Where each part lives and why: docs/explanation/where-things-live.md.
The names of :mod:`.fixed` (the fixed audit of an algorithm by name) and of the setting it audits are importable
from here.
"""

from __future__ import annotations

from .candidates import AUTO_SPLITS, RL_ATTACKS, WhiteBoxRuns
from .fixed import (
    PLAN_PROBE_CHILD,
    RlAuditResult,
    RlPositionsResult,
    audit_plan_probe,
    audit_positions,
    audit_registered_algorithm,
    audit_setting,
    declared_mu,
    register_agent,
)
from .plans import plan_probe_runs
from .registry import audited_algorithms
from .setting import (
    MAX_EPISODES,
    MAX_RUNS,
    POSITIONS,
    RlDataset,
    RlSetting,
    audit_hook,
    audited_spec,
    declared_sensitivities,
    default_setting,
    make_setting_agent,
    neighbouring_datasets,
    observers,
    positions,
    probe_plan,
    registered_declaration,
    rl_release,
    setting_claim_sigmas,
    setting_world,
)

__all__ = [
    "audited_algorithms",
    "observers",
    "POSITIONS",
    "RL_ATTACKS",
    "MAX_RUNS",
    "MAX_EPISODES",
    "RlSetting",
    "RlDataset",
    "RlAuditResult",
    "RlPositionsResult",
    "neighbouring_datasets",
    "rl_release",
    "WhiteBoxRuns",
    "audit_setting",
    "audit_positions",
    "audit_plan_probe",
    "plan_probe_runs",
    "PLAN_PROBE_CHILD",
    "probe_plan",
    "audit_registered_algorithm",
    "positions",
    "AUTO_SPLITS",
    "default_setting",
    "register_agent",
    "audited_spec",
    "audit_hook",
    "setting_world",
    "make_setting_agent",
    "registered_declaration",
    "setting_claim_sigmas",
    "declared_sensitivities",
    "declared_mu",
]
