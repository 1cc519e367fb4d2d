"""A user's own RL agent (examples/ldp_agent.py, outside the package) audited through the documented
protocol with no edit to dpkit: the correct agent is consistent, the same agent without its clipping is a
violation of its own declaration."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpkit.algorithms import registry
from dpkit.audits.rl import audit_algorithm, register_agent
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


def test_a_users_ldp_agent_is_consistent_and_its_bug_is_caught(factories) -> None:
    correct, wrong = factories
    good = audit_algorithm(register_agent(correct), runs=1500, seed=1)
    assert good.verdict == "consistent", good.to_dict()
    assert good.reach == pytest.approx(1.0)  # the canaries realise the declared Δ = √H
    bad = audit_algorithm(register_agent(wrong), runs=1500, seed=1)
    assert bad.verdict == "violation", bad.to_dict()
    assert bad.pair_mu_allowed == pytest.approx(good.pair_mu_allowed)  # judged against the same declaration


def test_register_agent_refuses_what_is_not_an_agent() -> None:
    with pytest.raises(TypeError, match="AlgorithmSpec or an agent factory"):
        register_agent(42)  # type: ignore[arg-type]


def not_an_agent(name, env, episodes, rng, **kw):  # a factory whose product follows no protocol
    return object()


def test_an_agent_outside_the_protocol_is_named() -> None:
    name = register_agent(not_an_agent)
    try:
        with pytest.raises(TypeError, match="does not follow the protocol"):
            audit_algorithm(name, runs=10)
    finally:
        registry.unregister(name)


def _ldp_as_a_users_agent(name, env, episodes, rng, **kw):
    from dpkit.algorithms.ldp_ucrl_vtr import make_agent

    return make_agent("ldp-ucrl-vtr", env, episodes, rng, **kw)


def test_the_generic_messages_observer_reads_ldp_ucrl_vtr_as_its_own_observer_does() -> None:
    """LDP-UCRL-VTR follows the messages protocol too: audited as a user's agent (the generic observer), its
    canary pair realises exactly the μ its own white-box observer computes, and the same allowance."""
    from dataclasses import replace

    from dpkit.algorithms.observers import local_messages_audit

    spec = registry.get("ldp-ucrl-vtr")
    generic = replace(
        spec,
        name="ldp-as-a-user-agent",
        entry_point=_ldp_as_a_users_agent,
        audit=local_messages_audit(defaults=spec.audit.defaults),
    )
    try:
        as_user = audit_algorithm(register_agent(generic), runs=300, seed=1)
    finally:
        registry.unregister("ldp-as-a-user-agent")
    own = audit_algorithm("ldp-ucrl-vtr", runs=300, seed=1)
    assert as_user.pair_mu == pytest.approx(own.pair_mu, rel=1e-12)
    assert as_user.pair_mu_allowed == pytest.approx(own.pair_mu_allowed, rel=1e-12)
    assert as_user.verdict != "violation"
