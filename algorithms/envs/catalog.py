"""Every tabular environment an algorithm can run on, by name: dpkit's own (RiverSwim, random MDPs) and a user's
(a Gymnasium environment with a known model, or one from her file: :mod:`dpkit.algorithms.envs.from_gymnasium`)."""

from __future__ import annotations

import functools

import numpy as np

from dpkit.accountant.validation import check_choice, check_count

from .from_gymnasium import GYMNASIUM_PREFIX, is_external, load_environment
from .lq import LQ_WORLDS
from .tabular import ENVIRONMENTS, TabularMDP, make_tabular

__all__ = ["EXTERNAL_FORMS", "check_environment", "make_environment", "external_sizes"]

#: How a user's environment is named, beside dpkit's own names.
EXTERNAL_FORMS: tuple[str, ...] = (f"{GYMNASIUM_PREFIX}ID[,key=value…]", "FILE.py:NAME")


def check_environment(name: object, *, lq: bool = False) -> str:
    """``name`` when it names an environment: one of dpkit's (an LQ world for the LQ algorithms), or a user's.

    Args:
        name: The name to check.
        lq: Whether the environment is for an LQ algorithm (then only a world of
            :data:`~dpkit.algorithms.envs.lq.LQ_WORLDS` is accepted).

    Returns:
        ``name``.

    Raises:
        ValueError: If ``name`` names no environment: neither one of dpkit's nor of :data:`EXTERNAL_FORMS`.

    Examples:
        >>> check_environment("riverswim"), check_environment("gymnasium:FrozenLake-v1")
        ('riverswim', 'gymnasium:FrozenLake-v1')
    """
    if isinstance(name, str) and not lq and is_external(name):
        return name
    choices = tuple(LQ_WORLDS) if lq else ENVIRONMENTS
    try:
        return check_choice("env", name, choices)
    except ValueError:
        if lq:
            raise
        raise ValueError(
            f"env must be one of {', '.join(ENVIRONMENTS)}, or {' or '.join(EXTERNAL_FORMS)}, got {name!r}"
        ) from None


@functools.lru_cache(maxsize=32)
def _external(name: str, horizon: int) -> TabularMDP:
    return load_environment(name, horizon=horizon)


def external_sizes(name: str, horizon: int) -> tuple[int, int]:
    """(S, A) of a user's environment (loaded once per name and horizon).

    Args:
        name: The environment spec (:data:`EXTERNAL_FORMS`).
        horizon: H.

    Returns:
        The numbers of states and actions.

    Raises:
        ValueError: If ``horizon`` is not an integer >= 1 or the environment cannot be loaded.
    """
    env = _external(name, check_count("horizon", horizon))
    return env.states, env.actions


def make_environment(
    name: str, states: int, rng: np.random.Generator | int, *, actions: int = 2, horizon: int | None = None
) -> TabularMDP:
    """The tabular environment ``name``: dpkit's, or a user's, whose own model fixes S and A.

    Args:
        name: One of dpkit's environments or a user's (:func:`check_environment`).
        states: S of dpkit's environments (:func:`~dpkit.algorithms.envs.tabular.make_tabular`).
        rng: A Generator or an integer seed, for dpkit's environments.
        actions: A of dpkit's random MDP.
        horizon: H; None for 2S.

    Returns:
        The environment.

    Raises:
        ValueError: If ``name`` names no environment, or a size is invalid.

    Examples:
        >>> make_environment("riverswim", 3, rng=0).horizon
        6
    """
    name = check_environment(name)
    if not is_external(name):
        return make_tabular(name, states, rng, actions=actions, horizon=horizon)
    if horizon is None:
        probe = _external(name, 1)
        horizon = 2 * probe.states
    return _external(name, check_count("horizon", horizon))
