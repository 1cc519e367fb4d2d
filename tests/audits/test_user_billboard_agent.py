"""A user's own jointly private agent (examples/jdp_agent.py), audited through the billboard protocol with no edit to
dpkit: the correct one is consistent, each of its four buggy twins a violation many-run (every position of the
tree), and one-run audits that say when they lack the power to see them; and audits on a user's Gymnasium
environment (FrozenLake): consistent at σ_tight, a violation at 0.7 × σ_tight."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from dpkit.algorithms.episodes import Plan
from dpkit.audits.rl import (
    audit_positions,
    audit_setting,
    default_setting,
    positions,
    register_agent,
    setting_claim_sigmas,
)
from dpkit.audits.rl.billboard import agent_protocol
from dpkit.audits.rl.observers import local_messages_audit
from dpkit.audits.rl.one_run import audit_one_run

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))
import jdp_agent  # noqa: E402
import jdp_prefix_agent  # noqa: E402

TWINS = ("Unnoised", "WrongFormula", "OneLevelShort", "SharedNoise")


def _register(cls_name: str) -> str:
    return register_agent(getattr(jdp_agent, cls_name), name=f"jdp-{cls_name.lower()}")


def test_the_protocol_is_told_by_what_the_agent_offers() -> None:
    assert agent_protocol(jdp_agent.CountingAgent) == "billboard"
    from dpkit.algorithms.ldp_ucrl_vtr import LdpUcrlVtr

    assert agent_protocol(LdpUcrlVtr) == "messages"

    class Neither:
        pass

    with pytest.raises(TypeError, match="one protocol"):
        agent_protocol(Neither)
    name = _register("CountingAgent")
    spec_audit = default_setting(name)
    assert spec_audit.observer == "billboard"
    assert local_messages_audit().observers == ("messages",)


@pytest.mark.slow
def test_the_correct_agent_is_consistent_at_every_position(pool) -> None:  # noqa: ANN001
    audit = audit_positions(default_setting(_register("CountingAgent"), sigma="paper"), runs=600, seed=1, executor=pool)
    assert audit.verdict == "consistent", audit.position_rows()
    assert audit.reason.startswith("no position's certified μ exceeds") and audit.diagnosis is None
    # the middle user is in 1 of the tree's p-sums, allowed the m = 2 any layout could hold her in (1/√2 reached);
    # the plan probe's canary paid −1 adds nothing to her reward items: √(3/4) of the declared μ
    assert [r.reach for r in audit.results] == pytest.approx([1.0, 2**-0.5, 1.0, 0.75**0.5])
    assert [r.probe is not None for r in audit.results] == [False, False, False, True]


@pytest.mark.slow
@pytest.mark.parametrize("twin", TWINS)
def test_each_twin_is_a_violation(twin: str, pool) -> None:  # noqa: ANN001
    audit = audit_positions(default_setting(_register(twin), sigma="paper"), runs=600, seed=1, executor=pool)
    assert audit.verdict == "violation", audit.position_rows()
    # the diagnosis points where the bug is: σ short of the target's for the wrong formulas, else the noise
    assert " position(s) violate the declaration; at " in audit.reason and audit.diagnosis is not None
    assert ("σ below what the target needs" in audit.diagnosis) == (twin in ("WrongFormula", "OneLevelShort"))
    assert "plans served" not in audit.diagnosis


def test_the_structure_of_the_counters_sets_the_positions() -> None:
    # a tree's positions for the CountingAgent, each allowed min(m, K − 1 − k) p-sums (m = 2 at K = 4: the standard
    # layout holds the middle user in 1, another layout could hold her in 2); the first user in all K − 1 = 3
    # prefixes of the agent that noises every prefix afresh, user k in K − 1 − k
    tree = positions(default_setting(_register("CountingAgent")))
    assert [share for _, share in tree.values()] == [1.0, 1.0, 0.5]
    name = register_agent(jdp_prefix_agent.FreshPrefixAgent, name="jdp-fresh-prefix")
    fresh = positions(default_setting(name))
    assert {k: v for k, v in fresh.items()} == {"first": (0, 1.0), "middle": (1, 2 / 3), "last": (2, 1 / 3)}


def test_a_count_of_neither_structure_is_refused() -> None:
    class OverDeclared(jdp_agent.CountingAgent):
        def __init__(self, *args, **kwargs):  # noqa: ANN002, ANN003
            super().__init__(*args, **kwargs)
            self.declaration = replace(
                self.declaration, releases=tuple(replace(r, count=r.count + 2) for r in self.declaration.releases)
            )

    name = register_agent(OverDeclared, name="jdp-over-declared")
    with pytest.raises(ValueError, match=r"declares count 4 .*m = 2 p-sums per user and step.*K − 1 = 3"):
        audit_setting(default_setting(name, position="first"), runs=50, seed=0)


@pytest.mark.slow
@pytest.mark.parametrize(("cls", "verdict"), [("FreshPrefixAgent", "consistent"), ("HalfNoise", "violation")])
def test_counters_noised_on_every_prefix(cls: str, verdict: str, pool) -> None:  # noqa: ANN001
    # each released prefix is a release of its own: the canaries reach the declared worst case at every position
    name = register_agent(getattr(jdp_prefix_agent, cls), name=f"jdp-prefix-{cls.lower()}")
    audit = audit_positions(default_setting(name, sigma="paper"), runs=600, seed=1, executor=pool)
    assert audit.verdict == verdict, audit.position_rows()
    assert [r.reach for r in audit.results] == pytest.approx([1.0] * 3 + [0.75**0.5])  # the plan probe's last


@pytest.mark.slow
@pytest.mark.parametrize("name", ["CountingAgent", *TWINS])
def test_one_run(name: str) -> None:
    # one run, every user a canary: the correct agent is never a violation; the twins' losses are beyond what one run
    # of this agent shows (the white-box score weighs every counter by its declared σ, so an un-noised counter is
    # diluted by the noisy one — the many-run audit's learned attack sees it), so each one-run audit must say it
    # lacks the power (inconclusive), never consistent
    result = audit_one_run(_register(name), canaries=400, seed=2, sigma="paper")
    assert result.verdict != "violation" if name == "CountingAgent" else result.verdict != "consistent"
    assert result.verdict == "violation" or result.power_ratio < 0.5, result.to_dict()
    assert result.scores.observer == "billboard"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["CountingAgent", *TWINS])
def test_one_run_with_a_score_learned_on_half_the_canaries(name: str) -> None:
    # the score learned on half the canaries' coins (the auditor's own) and judged on the other half finds the
    # un-noised counter and the counters seeded alike (their noise repeats: dpkit.audits.rl.reused_noise reads the
    # coins it covers) — each a violation in one run of 5,000 canaries, every guess right; the correct agent is never
    # a violation, and no twin is called consistent (σ/√2 and the level short are beyond one run of a tree counter:
    # its typical user is in half the p-sums the declaration charges — docs/your_agent.md)
    result = audit_one_run(_register(name), canaries=5_000, seed=2, sigma="paper", attack="auto")
    if name == "CountingAgent":
        assert result.verdict != "violation", result.to_dict()
    else:
        assert result.verdict != "consistent", result.to_dict()
    if name in ("Unnoised", "SharedNoise"):
        assert result.verdict == "violation" and result.attack == "learned", result.to_dict()
        assert result.correct == result.guesses and result.to_dict()["canaries"] == 2_500
    alone = audit_one_run(_register(name), canaries=2_000, seed=2, sigma="paper", attack="learned")
    assert alone.attack == "learned" and alone.to_dict()["run_canaries"] == 2_000
    assert alone.verdict != "violation" if name == "CountingAgent" else alone.verdict != "consistent"


def test_a_learned_one_run_score_needs_an_observer_that_offers_features() -> None:
    # LDP-UCRL-VTR's one-run observer scores every user alone (her messages' exact likelihood ratio): no features
    with pytest.raises(ValueError, match="offers no features"):
        audit_one_run("ldp-ucrl-vtr", canaries=50, seed=0, attack="learned")
    with pytest.raises(ValueError, match="attack"):
        audit_one_run("ldp-ucrl-vtr", canaries=50, seed=0, attack="boosting")


# -- on a user's environment --------------------------------------------------------------------------------------

gymnasium = pytest.importorskip("gymnasium")
LAKES = ["gymnasium:FrozenLake-v1,is_slippery=false", "gymnasium:FrozenLake-v1"]


@pytest.mark.slow
@pytest.mark.parametrize("env", LAKES)
@pytest.mark.parametrize("algorithm", ["ldp-ucrl-vtr", "rlsvi"])
def test_audits_on_frozen_lake(algorithm: str, env: str, pool) -> None:  # noqa: ANN001
    setting = default_setting(algorithm, env=env, horizon=8)
    assert (setting.states, setting.actions) == (16, 4)
    # RLSVI's last position holds a third of the declared releases: 800 runs give it the power to say consistent
    audit = audit_positions(setting, runs=800 if algorithm == "rlsvi" else 300, seed=1, executor=pool)
    assert audit.verdict == "consistent", audit.position_rows()
    assert min(r.reach for r in audit.results) >= 0.85
    below = replace(
        setting,
        sigma={
            k: (tuple(0.7 * x for x in v) if isinstance(v, tuple) else 0.7 * v)
            for k, v in setting_claim_sigmas(setting).items()
        },
    )
    result = audit_setting(below, runs=800, seed=2, executor=pool)
    assert result.verdict == "violation", result.to_dict()


class _ExactPlanner(jdp_agent.CountingAgent):
    """Publishes its noisy counters but plans on the exact ones: its later users' policies leak what the billboard
    hides."""

    def plan(self, k):  # noqa: ANN001, ANN201
        noisy = super().plan(k)
        exact = getattr(self, "exact", None) or {n: np.zeros(c.shape) for n, c in self.counters.items()}
        n = exact["visits"].sum(axis=3)
        p = np.where(n[..., None] > 0, exact["visits"] / np.maximum(n, 1e-9)[..., None], 1.0 / self.env.states)
        r = np.clip(exact["rewards"] / np.maximum(n, 1.0), 0.0, 1.0)
        v, policy = np.zeros(self.env.states), np.zeros((self.env.horizon, self.env.states), dtype=int)
        for h in range(self.env.horizon - 1, -1, -1):
            q = r[h] + p[h] @ v
            policy[h], v = q.argmax(axis=1), q.max(axis=1)
        return Plan(policy, noisy.released)

    def update(self, k, states, actions, rewards):  # noqa: ANN001, ANN201
        self.exact = getattr(self, "exact", None) or {n: np.zeros(c.shape) for n, c in self.counters.items()}
        for n, item in self.billboard_items(states, actions, rewards).items():
            self.exact[n] += item
        return super().update(k, states, actions, rewards)


@pytest.mark.slow
def test_a_plan_made_on_the_exact_statistics_is_a_violation() -> None:
    # the billboard positions cannot see it (its billboard is the correct agent's); the plan probe's world, where
    # the changed user alone visits a state and is paid below the bound, moves its plans between D and D′
    name = register_agent(_ExactPlanner, name="jdp-exact-planner")
    audit = audit_positions(default_setting(name, sigma="paper"), runs=600, seed=1)
    assert audit.verdict == "violation", audit.position_rows()
    probe = audit.results[-1]
    assert probe.probe is not None and probe.verdict == "violation" and probe.attack.startswith("plans-")
    assert all(r.verdict != "violation" for r in audit.results[:-1])
    assert audit.diagnosis is not None and audit.diagnosis.startswith("the plans served after the changed user")
