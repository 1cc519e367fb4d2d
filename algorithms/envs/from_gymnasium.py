"""Tabular environments with a known model, from Gymnasium or from a user's file, as :class:`TabularMDP`.

dpkit's tabular algorithms run on any finite MDP whose model they can read: Gymnasium's toy-text environments
expose it as ``env.unwrapped.P`` — ``P[s][a]`` a list of ``(probability, next state, reward, terminated)`` — and a
user may give the same table, or the arrays themselves. :func:`tabular_from_model` turns such a model into a
finite-horizon :class:`~dpkit.algorithms.envs.tabular.TabularMDP`:

* **horizon**: the episode is H steps (Gymnasium's episodes end at a terminal state or a time limit); a
  terminal next state becomes absorbing, paying the reward 0 (in the model's units) at every later step, so every
  episode has H steps and values are unchanged;
* **rewards**: the algorithms assume rewards in [0, 1] per step; rewards outside it are mapped affinely, r ↦
  (r − lo)/(hi − lo) with lo, hi the least and largest reward of the model (0 included), which keeps the order
  of the policies (every episode pays H steps) — the environment's name says so (``…[rewards (r + 1)/21]``);
* the reward of a transition is paid as the model pays it (``reward_model="transition"``): a user's reward is
  R(s, a, s′) of the next state she reaches; the mean r(s, a) = Σ P R is what the planners read;
* **start**: the model's initial state (one state with probability 1), or ``initial_state``.

:func:`load_environment` reads an environment spec: ``gymnasium:ID`` with keyword arguments after commas
(``gymnasium:FrozenLake-v1,is_slippery=false``), or ``FILE.py:NAME`` naming a Gymnasium environment, a callable
that returns one (or a model), a :class:`TabularMDP`, or a model (a mapping with ``P``, or with ``transitions`` and
``rewards``). Gymnasium is an optional dependency (``pip install 'dpkit[gymnasium]'``), imported only here.
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
    """Whether an environment spec names an environment of Gymnasium or of a user's file (not one of dpkit's)."""
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
    """A :class:`TabularMDP` of ``horizon`` steps from a known model (see the module docstring).

    ``model``: a toy-text table ``P`` (``P[s][a]`` = [(probability, next state, reward, terminated), …]), or a
    mapping with ``transitions`` (S, A, S) and ``rewards`` (S, A) or (S, A, S), and optionally ``terminal`` (S,).
    The start is ``initial_state``, else the one state of ``initial_distribution`` (Gymnasium's
    ``initial_state_distrib``), else 0."""
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
    """A :class:`TabularMDP` from a Gymnasium environment with a known model (``env.unwrapped.P``, as the toy-text
    environments expose it), named by its id."""
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
    """The :class:`TabularMDP` an environment spec names (see the module docstring), of ``horizon`` steps."""
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
