"""A user's own agent as dpkit knows it: the :class:`~dpkit.algorithms.spec.AlgorithmSpec` of an agent factory that
follows one of the two protocols (the local-DP messages protocol of :mod:`dpkit.audits.rl.observers`, the joint-DP
billboard protocol of :mod:`dpkit.audits.rl.billboard`), told apart by what its agents offer.

The spec registers the agent's own declaration — read from an agent built for the ledger's sizes on a tabular
environment of those sizes — so a user's agent has a ledger, an audit and a report like the seed algorithms; its
audit reads the declaration of the agent it runs, and judges it at dpkit's σ_tight of the registered one
(``dpkit.audits.rl``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpkit.accountant.declarations import PrivacyDeclaration
from dpkit.algorithms.envs.tabular import uniform_tabular
from dpkit.algorithms.spec import AlgorithmSpec, ReportSpec

from .billboard import agent_protocol, billboard_audit
from .observers import local_messages_audit

__all__ = ["AgentDeclaration", "agent_ledger_parameters", "agent_spec"]

#: The parameters of a user's agent's declaration (a tabular agent's sizes).
AGENT_PARAMETERS: tuple[str, ...] = ("episodes", "horizon", "states", "actions")


@dataclass(frozen=True)
class AgentDeclaration:
    """The declaration entry point of a user's agent: ``(ε, δ, parameters) -> PrivacyDeclaration``.

    It is the declaration of the agent ``factory`` builds for K = ``episodes`` users on a tabular environment of
    ``states``, ``actions`` and ``horizon`` (uniform transitions: the declaration depends on the sizes, not on the
    model).

    Attributes:
        factory: The agent factory.
        name: The agent's name.

    Raises:
        TypeError: When called, if the agent built has no PrivacyDeclaration as ``declaration``.
    """

    factory: Callable[..., Any]
    name: str

    def __call__(self, epsilon: float, delta: float, parameters: Mapping[str, Any]) -> PrivacyDeclaration:
        env = uniform_tabular(int(parameters["states"]), int(parameters["actions"]), int(parameters["horizon"]))
        agent = self.factory(
            self.name, env, int(parameters["episodes"]), np.random.default_rng(0), epsilon=epsilon, delta=delta
        )
        declaration = getattr(agent, "declaration", None)
        if not isinstance(declaration, PrivacyDeclaration):
            raise TypeError(
                f"the agent {self.name!r} builds ({type(agent).__name__}) has no PrivacyDeclaration as declaration"
            )
        return declaration


def agent_ledger_parameters(sizes: Any, env_seed: int) -> dict[str, Any]:
    """The parameters of a user's agent's declaration for a regret run: its sizes (H = 2S unless given).

    Args:
        sizes: The report's algorithm entry (``episodes``, ``states``, ``actions``, ``horizon`` or ``None``).
        env_seed: The seed of the environment the run faces (unused: the declaration depends on the sizes only).

    Returns:
        ``episodes``, ``horizon``, ``states`` and ``actions``.

    Examples:
        >>> from types import SimpleNamespace
        >>> agent_ledger_parameters(SimpleNamespace(episodes=10, states=3, actions=2, horizon=None), 0)
        {'episodes': 10, 'horizon': 6, 'states': 3, 'actions': 2}
    """
    horizon = sizes.horizon if sizes.horizon is not None else 2 * sizes.states
    return {"episodes": sizes.episodes, "horizon": horizon, "states": sizes.states, "actions": sizes.actions}


def agent_spec(agent: AlgorithmSpec | Callable[..., Any], *, name: str | None = None) -> AlgorithmSpec:
    """The spec of a user's agent: ``agent`` itself when it is an AlgorithmSpec, else the agent factory's.

    A factory's spec is audited through the protocol its agents follow
    (:func:`~dpkit.audits.rl.billboard.agent_protocol`) and declared through :class:`AgentDeclaration`.

    Args:
        agent: An :class:`~dpkit.algorithms.spec.AlgorithmSpec`, or an agent factory.
        name: The spec's name (default: the factory's ``__name__``).

    Returns:
        The spec.

    Raises:
        TypeError: ``agent`` is neither, or its agents follow neither protocol (the error names both).
    """
    if isinstance(agent, AlgorithmSpec):
        return agent
    if not callable(agent):
        raise TypeError(f"agent must be an AlgorithmSpec or an agent factory, got {type(agent).__name__}")
    protocol = agent_protocol(agent)
    label = name or getattr(agent, "__name__", "") or "agent"
    return AlgorithmSpec(
        name=label,
        entry_point=agent,
        summary=f"a user's agent (the {'joint-DP billboard' if protocol == 'billboard' else 'local-DP messages'} "
        "protocol)",
        declaration=AgentDeclaration(agent, label),
        required=AGENT_PARAMETERS,
        ledger_parameters=agent_ledger_parameters,
        audit=billboard_audit() if protocol == "billboard" else local_messages_audit(),
        report=ReportSpec(
            assumptions=(
                "Its releases, their sensitivities and σ are those its own declaration states (the agent's code); "
                "the audit checks the implementation against that declaration, at dpkit's σ_tight of it.",
                "The protocol's statistics (billboard_items or message_statistics) are what its releases hold "
                "before their noise; an agent that misreports them is seen only by the learned attack.",
            )
        ),
    )
