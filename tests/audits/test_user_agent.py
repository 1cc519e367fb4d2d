"""A user's own RL agent (examples/ldp_agent.py, outside the package) audited through the documented
protocol with no edit to dpkit: the correct agent is consistent, the same agent without its clipping is a
violation of its own declaration."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dpkit.algorithms import registry
from dpkit.audits.rl import audit_registered_algorithm, register_agent
from dpkit.loading import load_object

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ldp_agent.py"


@pytest.fixture
def factories():
    correct = load_object("--agent", f"{EXAMPLE}:make_agent")
    wrong = load_object("--agent", f"{EXAMPLE}:make_agent_without_clipping")
    yield correct, wrong
    for name in ("make_agent", "make_agent_without_clipping"):
        if name in registry.names():
            registry.unregister(name)


@pytest.mark.slow
def test_a_users_ldp_agent_is_consistent_and_its_bug_is_caught(factories) -> None:
    correct, wrong = factories
    good = audit_registered_algorithm(register_agent(correct), runs=1500, seed=1)
    assert good.verdict == "consistent", good.to_dict()
    assert good.reach == pytest.approx(1.0)  # the canaries realise the declared Δ = √H
    bad = audit_registered_algorithm(register_agent(wrong), runs=1500, seed=1)
    assert bad.verdict == "violation", bad.to_dict()
    assert bad.pair_mu_allowed == pytest.approx(good.pair_mu_allowed)  # judged against the same declaration


def test_register_agent_refuses_what_is_not_an_agent() -> None:
    with pytest.raises(TypeError, match="AlgorithmSpec or an agent factory"):
        register_agent(42)  # type: ignore[arg-type]


def not_an_agent(name, env, episodes, rng, **kw):  # a factory whose product follows no protocol
    return object()


def test_an_agent_outside_the_protocol_is_named() -> None:
    """Refused when it is registered (before any run), naming the factory and both protocols' methods."""
    with pytest.raises(TypeError, match="'not_an_agent' must follow one protocol.*message_statistics.*billboard_items"):
        register_agent(not_an_agent)
    assert "not_an_agent" not in registry.names()


def _ldp_as_a_users_agent(name, env, episodes, rng, **kw):
    from dpkit.algorithms.ldp_ucrl_vtr import make_agent

    return make_agent("ldp-ucrl-vtr", env, episodes, rng, **kw)


@pytest.mark.slow
def test_the_generic_messages_observer_reads_ldp_ucrl_vtr_as_its_own_observer_does() -> None:
    """LDP-UCRL-VTR follows the messages protocol too: audited as a user's agent (the generic observer), its
    canary pair realises exactly the μ its own white-box observer computes, and the same allowance."""
    from dataclasses import replace

    from dpkit.audits.rl.observers import local_messages_audit
    from dpkit.audits.rl.registry import audit_spec

    spec = registry.get("ldp-ucrl-vtr")
    generic = replace(
        spec,
        name="ldp-as-a-user-agent",
        entry_point=_ldp_as_a_users_agent,
        audit=local_messages_audit(defaults=audit_spec(spec.name).defaults),
    )
    try:
        as_user = audit_registered_algorithm(register_agent(generic), runs=300, seed=1)
    finally:
        registry.unregister("ldp-as-a-user-agent")
    own = audit_registered_algorithm("ldp-ucrl-vtr", runs=300, seed=1)
    assert as_user.pair_mu == pytest.approx(own.pair_mu, rel=1e-12)
    assert as_user.pair_mu_allowed == pytest.approx(own.pair_mu_allowed, rel=1e-12)
    assert as_user.verdict != "violation"


# -- agents that try to fool the audit (found by review) ---------------------------------------------------


def _example():
    return load_object("--agent", f"{EXAMPLE}:make_agent")


def small_sigma_agent(name, env, episodes, rng, **kw):
    """Reports (and uses) σ = 0.05 whatever it is asked for: its allowance must not follow."""
    kw["sigma"] = 0.05
    return _example()(name, env, episodes, rng, **kw)


def lying_statistics_agent(name, env, episodes, rng, **kw):
    """Sends raw, unclipped rewards with tiny noise while its message_statistics say its messages carry nothing."""
    agent = _example()(name, env, episodes, rng, **{**kw, "sigma": 0.01})

    class Liar(type(agent)):
        def message_statistics(self, states, actions, rewards):
            return {"rewards": np.zeros(len(rewards))}

        def update(self, k, states, actions, rewards):
            message = np.asarray(rewards, dtype=float) + self.rng.normal(0.0, 0.01, len(rewards))
            return {"rewards": message}

    agent.__class__ = Liar
    return agent


@pytest.mark.slow
def test_an_agent_cannot_raise_its_own_allowance_with_a_small_sigma() -> None:
    name = register_agent(small_sigma_agent)
    try:
        result = audit_registered_algorithm(name, runs=600, seed=1)
    finally:
        registry.unregister(name)
    assert result.sigmas_claim["rewards"] > 1.0  # dpkit's σ_tight of the declaration, not the agent's 0.05
    assert result.verdict == "violation", result.to_dict()


@pytest.mark.slow
def test_an_agent_that_misreports_its_messages_is_seen_by_the_learned_attack() -> None:
    name = register_agent(lying_statistics_agent)
    try:
        result = audit_registered_algorithm(name, runs=600, seed=1, attack="learned")
    finally:
        registry.unregister(name)
    assert result.verdict == "violation", result.to_dict()


def test_an_agent_cannot_take_a_registered_algorithms_name() -> None:
    with pytest.raises(ValueError, match="name of a registered algorithm"):
        register_agent(_example(), name="rlsvi")
    assert registry.get("rlsvi").declaration is not None  # the built-in is untouched


def test_registering_a_name_again_is_read_afresh() -> None:
    first = audit_registered_algorithm(register_agent(_example(), name="mine"), runs=60, seed=0, epsilon=8.0)
    second = audit_registered_algorithm(register_agent(small_sigma_agent, name="mine"), runs=60, seed=0, epsilon=8.0)
    registry.unregister("mine")
    assert first.sigmas["rewards"] != second.sigmas["rewards"]  # the new agent's σ, not a cached one
