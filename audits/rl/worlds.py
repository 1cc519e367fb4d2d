"""An RL audit's world, and what its worlds, observers and positions read of the audit's setting.

Every audited algorithm's world hook (``AuditSpec.world``) gives an :class:`AuditWorld`: the environment, the users
of D and the two canaries, one of which replaces the changed user in D′. :class:`AuditedSetting` is what those hooks,
the observers and the positions hooks read of a setting — the fields of
:class:`~dpkit.audits.rl.setting.RlSetting`, which sits above them (it reads the registered audits) and is the one
setting every audit hands them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

__all__ = ["AuditWorld", "AuditedSetting"]


class AuditWorld(NamedTuple):
    """An audit's world: the environment (a tabular MDP or an LQ system), the K users of D and the two canaries.

    Attributes:
        env: The environment every user plays.
        users: The users of D (``Users`` or ``LQUsers``: one per episode).
        canaries: Canary 0 (the changed user in D) and canary 1 (in D′).
    """

    env: Any
    users: Any
    canaries: tuple[Any, Any]


class AuditedSetting(Protocol):
    """The fields of an RL audit's setting (:class:`~dpkit.audits.rl.setting.RlSetting`) that its world, observers
    and positions hooks read."""

    @property
    def algorithm(self) -> str: ...
    @property
    def observer(self) -> str: ...
    @property
    def episodes(self) -> int: ...
    @property
    def position(self) -> str | int: ...
    @property
    def epsilon(self) -> float: ...
    @property
    def delta(self) -> float: ...
    @property
    def sigma(self) -> str | float: ...
    @property
    def relation(self) -> str: ...
    @property
    def claim_allocation(self) -> str | None: ...
    @property
    def states(self) -> int: ...
    @property
    def actions(self) -> int: ...
    @property
    def horizon(self) -> int: ...
    @property
    def state_dim(self) -> int: ...
    @property
    def control_dim(self) -> int: ...
    @property
    def env_seed(self) -> int: ...
    @property
    def users_seed(self) -> int: ...
    @property
    def options(self) -> tuple[tuple[str, Any], ...]: ...
    @property
    def implementation(self) -> Callable[..., Any] | None: ...
    @property
    def env(self) -> str: ...
    @property
    def world(self) -> str: ...
    @property
    def index(self) -> int: ...
    def __hash__(self) -> int: ...
