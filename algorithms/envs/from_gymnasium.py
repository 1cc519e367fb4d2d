"""Tabular environments with a known model, from Gymnasium or from a user's file, as :class:`TabularMDP`.

:func:`tabular_from_model` turns a known model (Gymnasium's toy-text table ``P[s][a]``, or the arrays themselves) into
a finite-horizon :class:`~dpkit.algorithms.envs.tabular.TabularMDP`; :func:`tabular_from_gymnasium` reads it from a
Gymnasium environment, and :func:`load_environment` from a spec, ``gymnasium:ID[,key=value…]`` or ``FILE.py:NAME``.
Gymnasium is an optional dependency (``pip install 'dpkit[gymnasium]'``), imported only here. How terminal states,
rewards and starts are converted: docs/explanation/environments.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from dpkit.accountant.validation import check_count, check_index

from .tabular import TabularMDP

__all__ = ["GYMNASIUM_PREFIX", "is_external", "tabular_from_model", "tabular_from_gymnasium", "load_environment"]

#: An environment spec that names a Gymnasium environment starts with this.
GYMNASIUM_PREFIX = "gymnasium:"


def is_external(spec: str) -> bool:
    """Whether an environment spec names an environment of Gymnasium or of a user's file (not one of dpkit's).

    Args:
        spec: The environment spec.

    Returns:
        True for ``gymnasium:…`` and ``FILE.py:NAME``, False otherwise.

    Examples:
        >>> is_external("riverswim"), is_external("gymnasium:FrozenLake-v1"), is_external("my_env.py:ENV")
        (False, True, True)
    """
    return spec.startswith(GYMNASIUM_PREFIX) or (":" in spec and spec.split(":", 1)[0].endswith(".py"))


def _table(model: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(P (S, A, S), R (S, A, S), terminal (S,)) of a toy-text table ``P[s][a] = [(p, s′, r, terminated), …]``."""
    states = len(model)
    if states == 0:
        raise ValueError("the model's P holds no state")
    actions = {len(model[s]) for s in range(states)}
    if len(actions) != 1 or actions == {0}:
        raise ValueError(f"every state of P must have the same actions, got {sorted(actions)}")
    a_ = actions.pop()
    p = np.zeros((states, a_, states))
    weighted = np.zeros((states, a_, states))
    terminal = np.zeros(states, dtype=bool)
    for s in range(states):
        for a in range(a_):
            entries = model[s][a]
            if not entries:
                raise ValueError(f"P[{s}][{a}] lists no transition")
            for entry in entries:
                if len(entry) < 3:
                    raise ValueError(f"P[{s}][{a}] entries must be (probability, next state, reward[, terminated])")
                prob, nxt, reward = float(entry[0]), int(entry[1]), float(entry[2])
                if not (0 <= nxt < states) or not (0.0 <= prob <= 1.0) or not math.isfinite(reward):
                    raise ValueError(f"P[{s}][{a}] has a bad entry {tuple(entry)!r}")
                p[s, a, nxt] += prob
                weighted[s, a, nxt] += prob * reward
                if len(entry) > 3 and bool(entry[3]):
                    terminal[nxt] = True
    rewards = np.divide(weighted, p, out=np.zeros_like(p), where=p > 0)
    return p, rewards, terminal


def tabular_from_model(
    model: Any,
    *,
    horizon: int,
    initial_state: int | None = None,
    initial_distribution: Sequence[float] | np.ndarray | None = None,
    name: str = "tabular",
) -> TabularMDP:
    """A :class:`TabularMDP` of ``horizon`` steps from a known model (docs/explanation/environments.md).

    Terminal states become absorbing and pay 0; rewards outside [0, 1] are mapped affinely into it (the name says
    so); a user is paid the reward of the transition she makes (``reward_model="transition"``).

    Args:
        model: A toy-text table ``P`` (``P[s][a]`` = [(probability, next state, reward, terminated), …]), a mapping
            with ``P``, or a mapping with ``transitions`` (S, A, S) and ``rewards`` (S, A) or (S, A, S), and
            optionally ``terminal`` (S,).
        horizon: H.
        initial_state: The first state; None for the one state of ``initial_distribution``, else 0.
        initial_distribution: The model's initial distribution (Gymnasium's ``initial_state_distrib``), which must
            put probability 1 on one state; or None.
        name: The environment's name.

    Returns:
        The MDP.

    Raises:
        ValueError: If the model is malformed (shapes, probabilities, entries), or the start is out of range or
            random.

    Examples:
        >>> model = {"transitions": [[[0.5, 0.5]], [[0.0, 1.0]]], "rewards": [[0.0], [-1.0]]}
        >>> env = tabular_from_model(model, horizon=3)
        >>> env.name, env.states, env.actions, env.rewards[0].tolist()
        ('tabular[rewards (r + 1)/1]', 2, 1, [[1.0], [0.0]])
    """
    h_ = check_count("horizon", horizon)
    if isinstance(model, Mapping) and "transitions" in model:
        p = np.asarray(model["transitions"], dtype=float)
        raw = np.asarray(model.get("rewards"), dtype=float)
        if p.ndim != 3 or p.shape[0] != p.shape[2]:
            raise ValueError(f"transitions must have shape (S, A, S), got {p.shape}")
        if raw.shape == p.shape[:2]:
            raw = np.broadcast_to(raw[..., None], p.shape).copy()
        if raw.shape != p.shape:
            raise ValueError(f"rewards must have shape {p.shape[:2]} or {p.shape}, got {raw.shape}")
        terminal = np.asarray(model.get("terminal", np.zeros(p.shape[0], dtype=bool)), dtype=bool)
    else:
        source = model["P"] if isinstance(model, Mapping) and "P" in model else model
        p, raw, terminal = _table(source)
    if np.any(~np.isfinite(p)) or np.any(p < 0) or np.any(np.abs(p.sum(axis=2) - 1.0) > 1e-9):
        raise ValueError("the model's transition probabilities must sum to 1 for every state and action")
    s_, a_ = p.shape[:2]
    p, raw = p.copy(), raw.copy()
    for s in np.flatnonzero(terminal):  # absorbing, paying 0
        p[s], raw[s] = 0.0, 0.0
        p[s, :, s] = 1.0
    lo, hi = min(0.0, float(raw[p > 0].min())), max(0.0, float(raw[p > 0].max()))
    scaled = (raw - lo) / (hi - lo) if (lo < 0.0 or hi > 1.0) and hi > lo else raw
    label = name if scaled is raw else f"{name}[rewards (r {'+' if lo < 0 else '−'} {abs(lo):g})/{hi - lo:g}]"
    start = _start(s_, initial_state, initial_distribution)
    transitions = np.broadcast_to(p, (h_, s_, a_, s_)).copy()
    transition_rewards = np.broadcast_to(np.where(p > 0, scaled, 0.0), (h_, s_, a_, s_)).copy()
    means = np.einsum("hsat,hsat->hsa", transitions, transition_rewards)
    return TabularMDP(transitions, means, start, "transition", label, transition_rewards)


def _start(states: int, initial_state: int | None, distribution: Any) -> int:
    if initial_state is not None:
        start = check_index("initial_state", initial_state)
        if start >= states:
            raise ValueError(f"initial_state must be < {states}, got {start}")
        return start
    if distribution is None:
        return 0
    d = np.asarray(distribution, dtype=float).ravel()
    if d.shape != (states,) or not np.isclose(d.sum(), 1.0):
        raise ValueError(f"the initial distribution must be {states} probabilities, got {d.tolist()}")
    support = np.flatnonzero(d > 0)
    if support.size != 1:
        raise ValueError(
            f"the environment starts in a random state (over {support.size} states): dpkit's tabular MDPs start in "
            "one state; give initial_state"
        )
    return int(support[0])


def tabular_from_gymnasium(env: Any, *, horizon: int, initial_state: int | None = None) -> TabularMDP:
    """A :class:`TabularMDP` from a Gymnasium environment with a known model, named by its id.

    Args:
        env: A Gymnasium environment exposing ``env.unwrapped.P``, as the toy-text environments do.
        horizon: H.
        initial_state: The first state; None for the environment's (which must be one state).

    Returns:
        The MDP (:func:`tabular_from_model`).

    Raises:
        ValueError: If the environment exposes no model, or its model or start is not one dpkit can read.
    """
    inner = getattr(env, "unwrapped", env)
    table = getattr(inner, "P", None)
    if table is None:
        raise ValueError(
            f"{type(inner).__name__} exposes no model (env.unwrapped.P): dpkit's tabular algorithms need P[s][a] = "
            "[(probability, next state, reward, terminated), …], as Gymnasium's toy-text environments give it"
        )
    spec = getattr(env, "spec", None)
    name = getattr(spec, "id", None) or type(inner).__name__
    distribution = getattr(inner, "initial_state_distrib", None)
    return tabular_from_model(
        table, horizon=horizon, initial_state=initial_state, initial_distribution=distribution, name=name
    )


def _kwargs(parts: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in parts:
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"environment options must be key=value, got {part!r}")
        text = value.strip()
        lowered = text.lower()
        parsed: Any = {"true": True, "false": False, "none": None}.get(lowered, text)
        if parsed is text:
            try:
                parsed = int(text)
            except ValueError:
                try:
                    parsed = float(text)
                except ValueError:
                    parsed = text
        out[key.strip()] = parsed
    return out


def load_environment(spec: str, *, horizon: int, initial_state: int | None = None) -> TabularMDP:
    """The :class:`TabularMDP` an environment spec names, of ``horizon`` steps.

    Args:
        spec: ``gymnasium:ID`` with keyword arguments after commas (``gymnasium:FrozenLake-v1,is_slippery=false``),
            or ``FILE.py:NAME`` naming a Gymnasium environment, a callable that returns one (or a model), a
            :class:`TabularMDP`, or a model (a mapping with ``P``, or with ``transitions`` and ``rewards``).
        horizon: H.
        initial_state: The first state; None for the environment's.

    Returns:
        The MDP.

    Raises:
        ValueError: If ``spec`` is not such a spec, Gymnasium is missing or refuses it, the object it names is of
            another kind, or a :class:`TabularMDP` it names has another horizon.
    """
    if not isinstance(spec, str) or not is_external(spec):
        raise ValueError(f"an environment spec is gymnasium:ID[,key=value…] or FILE.py:NAME, got {spec!r}")
    if spec.startswith(GYMNASIUM_PREFIX):
        env_id, *options = spec[len(GYMNASIUM_PREFIX) :].split(",")
        try:
            import gymnasium
        except ImportError:
            raise ValueError(
                f"{spec!r} needs Gymnasium, an optional dependency: pip install 'dpkit[gymnasium]'"
            ) from None
        try:
            env = gymnasium.make(env_id.strip(), **_kwargs(options))
        except Exception as err:  # gymnasium's errors: unknown id, bad keyword (one line, naming the spec)
            raise ValueError(f"{spec!r}: {type(err).__name__}: {err}") from None
        return tabular_from_gymnasium(env, horizon=horizon, initial_state=initial_state)
    from dpkit.loading import load_object

    obj = load_object("env", spec)
    if callable(obj) and not isinstance(obj, TabularMDP):
        obj = obj()
    if isinstance(obj, TabularMDP):
        if obj.horizon != horizon:
            raise ValueError(f"{spec!r} has horizon {obj.horizon}, not the {horizon} asked for")
        return obj
    if hasattr(obj, "unwrapped") or hasattr(obj, "P"):
        return tabular_from_gymnasium(obj, horizon=horizon, initial_state=initial_state)
    if isinstance(obj, Mapping):
        return tabular_from_model(obj, horizon=horizon, initial_state=initial_state, name=spec.rsplit(":", 1)[1])
    raise ValueError(
        f"{spec!r} gives a {type(obj).__name__}: expected a Gymnasium environment, a TabularMDP or a model "
        "(a mapping with P, or with transitions and rewards)"
    )
