"""Episodic finite-horizon tabular MDPs with the users made explicit.

An episode is one user. A :class:`User` is the randomness of her episode, drawn from her own seed:
one uniform per step for the transition and one for the reward, so her responses to *any* actions
are fixed (the next state is the inverse-CDF of P_h(·|s, a) at her uniform). Swapping one user
for another (:meth:`Users.replace`) builds a neighbouring dataset while every other user responds
exactly as before. A user may also carry fixed rewards (``rewards``), which is how the audits
build canaries (all 0 against all 1) within the assumption r ∈ [0, 1].

:class:`TabularMDP` holds P_h(s′|s, a) and the mean rewards r_h(s, a) ∈ [0, 1] for h = 0..H−1,
with exact backward induction for the optimal values and for the values of any policy (for
regret). :func:`riverswim` builds seed 000's RiverSwim (homogeneous or inhomogeneous);
:func:`random_tabular` a random MDP.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from dpkit.accountant.validation import check_choice, check_count, check_index, check_positive, check_rng

__all__ = [
    "REWARD_MODELS",
    "User",
    "Users",
    "TabularMDP",
    "riverswim",
    "random_tabular",
    "uniform_tabular",
    "ENVIRONMENTS",
    "make_tabular",
]

#: How a user's reward is paid: ``mean`` r_h(s, a) itself, ``bernoulli`` 1 with probability r_h(s, a), ``transition``
#: R_h(s, a, s′) of the transition she makes (:attr:`TabularMDP.transition_rewards`; r_h(s, a) is its mean).
REWARD_MODELS: tuple[str, ...] = ("mean", "bernoulli", "transition")
_SEED_BOUND = 2**63


@dataclass(frozen=True)
class User:
    """One user's episode: her seed (if drawn from one) and her uniforms; ``rewards`` overrides the
    environment's rewards (NaN where it does not); ``initial_state`` her first state (``None``: the
    environment's — the papers let each episode start anywhere, s_1^k being part of the episode's data);
    ``path`` her next state at every step, whatever the model says (``None``: drawn from her uniforms) — the
    audits' canaries in a user's environment, where dpkit chooses their transitions: a user's data is her
    trajectory, and a privacy guarantee holds for every trajectory."""

    transition_uniforms: np.ndarray
    reward_uniforms: np.ndarray
    rewards: np.ndarray | None = None
    seed: int | None = None
    initial_state: int | None = None
    path: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.initial_state is not None:
            object.__setattr__(self, "initial_state", check_index("initial_state", self.initial_state))
        if self.path is not None:
            path = np.asarray(self.path)
            if path.shape != self.transition_uniforms.shape or not np.issubdtype(path.dtype, np.integer):
                raise ValueError(f"path must hold one next state per step, got {self.path!r}")
            if np.any(path < 0):
                raise ValueError(f"path's states must be >= 0, got {path.tolist()}")
            object.__setattr__(self, "path", path.astype(np.int64))

    @classmethod
    def from_seed(cls, seed: int, horizon: int) -> User:
        """The user drawn from ``seed`` (an integer >= 0): the same seed gives the same user."""
        seed = check_index("seed", seed)
        h = check_count("horizon", horizon)
        u = np.random.default_rng(seed).random((2, h))
        return cls(u[0], u[1], None, seed)

    @classmethod
    def canary(
        cls,
        rewards: Sequence[float] | np.ndarray,
        transition_uniforms: Sequence[float] | np.ndarray,
        *,
        beyond_bounds: bool = False,
        initial_state: int | None = None,
        path: Sequence[int] | np.ndarray | None = None,
    ) -> User:
        """A user with fixed rewards (each in [0, 1]) and the given transition uniforms (each in [0, 1)),
        starting in ``initial_state`` (``None``: the environment's).

        ``beyond_bounds=True`` admits any finite rewards: raw inputs outside the stated assumptions,
        which only an algorithm's own clipping keeps in range (the audits' canaries use them)."""
        r = np.asarray(rewards, dtype=float)
        u = np.asarray(transition_uniforms, dtype=float)
        if r.ndim != 1 or u.shape != r.shape:
            raise ValueError(f"rewards and transition_uniforms must be 1-d of one length, got {r.shape} and {u.shape}")
        if np.any(~np.isfinite(r)) or (not beyond_bounds and np.any((r < 0) | (r > 1))):
            raise ValueError(f"canary rewards must lie in [0, 1], got {r.tolist()}")
        if np.any(~np.isfinite(u)) or np.any((u < 0) | (u >= 1)):
            raise ValueError(f"transition uniforms must lie in [0, 1), got {u.tolist()}")
        return cls(u, np.zeros_like(u), r, None, initial_state, None if path is None else np.asarray(path))


@dataclass(frozen=True)
class Users:
    """K users as arrays of shape (K, H); ``rewards`` is NaN where a user keeps the environment's."""

    transition_uniforms: np.ndarray
    reward_uniforms: np.ndarray
    rewards: np.ndarray
    seeds: tuple[int | None, ...] = field(default=())
    #: each user's first state, −1 where she starts in the environment's (``None``: every user does)
    initial_states: np.ndarray | None = None
    #: each user's next states (K, H), −1 where her uniforms choose them (``None``: every user's do)
    paths: np.ndarray | None = None

    @classmethod
    def from_seeds(cls, seeds: Sequence[int], horizon: int) -> Users:
        """Users drawn each from her own seed."""
        users = [User.from_seed(s, horizon) for s in seeds]
        if not users:
            raise ValueError("seeds must not be empty")
        return cls.stack(users)

    @classmethod
    def draw(cls, count: int, horizon: int, rng: np.random.Generator | int) -> Users:
        """``count`` users whose seeds are drawn from ``rng``."""
        k = check_count("count", count)
        h = check_count("horizon", horizon)
        rng = check_rng("rng", rng)
        seeds = rng.integers(0, _SEED_BOUND, size=k, dtype=np.int64)
        tu = np.empty((k, h))
        ru = np.empty((k, h))
        for i, s in enumerate(seeds):  # one small draw per user keeps each user reproducible from her seed
            u = np.random.default_rng(int(s)).random((2, h))
            tu[i], ru[i] = u[0], u[1]
        return cls(tu, ru, np.full((k, h), np.nan), tuple(int(s) for s in seeds))

    @classmethod
    def stack(cls, users: Sequence[User]) -> Users:
        if not users:
            raise ValueError("users must not be empty")
        tu = np.stack([u.transition_uniforms for u in users])
        ru = np.stack([u.reward_uniforms for u in users])
        r = np.stack([np.full(tu.shape[1], np.nan) if u.rewards is None else u.rewards for u in users])
        starts = np.array([-1 if u.initial_state is None else u.initial_state for u in users])
        paths = np.stack([np.full(tu.shape[1], -1) if u.path is None else u.path for u in users])
        return cls(
            tu,
            ru,
            r,
            tuple(u.seed for u in users),
            None if np.all(starts < 0) else starts,
            None if np.all(paths < 0) else paths,
        )

    def __len__(self) -> int:
        return self.transition_uniforms.shape[0]

    @property
    def horizon(self) -> int:
        return self.transition_uniforms.shape[1]

    def __getitem__(self, k: int) -> User:
        k = check_index("k", k)
        if k >= len(self):
            raise ValueError(f"user index {k} out of range for {len(self)} users")
        r = self.rewards[k]
        seed = self.seeds[k] if self.seeds else None
        start = None if self.initial_states is None or self.initial_states[k] < 0 else int(self.initial_states[k])
        path = None if self.paths is None or np.any(self.paths[k] < 0) else self.paths[k]
        return User(
            self.transition_uniforms[k], self.reward_uniforms[k], None if np.all(np.isnan(r)) else r, seed, start, path
        )

    def replace(self, k: int, user: User) -> Users:
        """The neighbouring dataset with user ``k`` replaced by ``user`` (replace-one)."""
        k = check_index("k", k)
        if k >= len(self):
            raise ValueError(f"user index {k} out of range for {len(self)} users")
        if user.transition_uniforms.shape != (self.horizon,):
            raise ValueError(f"the user's horizon {user.transition_uniforms.shape} differs from {self.horizon}")
        tu, ru, r = self.transition_uniforms.copy(), self.reward_uniforms.copy(), self.rewards.copy()
        tu[k], ru[k] = user.transition_uniforms, user.reward_uniforms
        r[k] = np.nan if user.rewards is None else user.rewards
        seeds: list[int | None] = list(self.seeds) if self.seeds else [None] * len(self)
        seeds[k] = user.seed
        starts = np.full(len(self), -1) if self.initial_states is None else self.initial_states.copy()
        starts[k] = -1 if user.initial_state is None else user.initial_state
        paths = np.full(tu.shape, -1) if self.paths is None else self.paths.copy()
        paths[k] = -1 if user.path is None else user.path
        return Users(
            tu, ru, r, tuple(seeds), None if np.all(starts < 0) else starts, None if np.all(paths < 0) else paths
        )

    def with_initial_states(self, states: Sequence[int] | np.ndarray) -> Users:
        """These users, each starting in ``states[k]`` (−1: the environment's initial state)."""
        starts = np.asarray(states)
        if starts.shape != (len(self),) or not np.issubdtype(starts.dtype, np.integer) or np.any(starts < -1):
            raise ValueError(f"states must be {len(self)} integers >= −1, got {states!r}")
        return Users(
            self.transition_uniforms, self.reward_uniforms, self.rewards, self.seeds, starts.copy(), self.paths
        )

    def remove(self, k: int) -> Users:
        """The neighbouring dataset without user ``k`` (add/remove)."""
        k = check_index("k", k)
        if k >= len(self) or len(self) < 2:
            raise ValueError(f"cannot remove user {k} from {len(self)} users")
        keep = np.arange(len(self)) != k
        seeds = tuple(s for i, s in enumerate(self.seeds) if i != k) if self.seeds else ()
        starts = None if self.initial_states is None else self.initial_states[keep]
        paths = None if self.paths is None else self.paths[keep]
        return Users(
            self.transition_uniforms[keep], self.reward_uniforms[keep], self.rewards[keep], seeds, starts, paths
        )


@dataclass(frozen=True)
class TabularMDP:
    """P_h(s′|s, a) as ``transitions[h, s, a, s′]`` and mean rewards ``rewards[h, s, a]`` in [0, 1].

    ``reward_model`` ``"mean"`` pays r_h(s, a) itself; ``"bernoulli"`` pays 1 with probability
    r_h(s, a) (seed 004's random rewards with mean ⟨ϕ(s, a), θ_r,h⟩); ``"transition"`` pays
    ``transition_rewards[h, s, a, s′]`` for the transition made (a Gymnasium toy-text model's rewards), whose
    mean under P_h(·|s, a) must be ``rewards``. Every episode starts in ``initial_state`` (a user may start
    elsewhere: :attr:`User.initial_state`).
    """

    transitions: np.ndarray
    rewards: np.ndarray
    initial_state: int = 0
    reward_model: str = "mean"
    name: str = "tabular"
    transition_rewards: np.ndarray | None = None

    def __post_init__(self) -> None:
        p = np.asarray(self.transitions, dtype=float)
        r = np.asarray(self.rewards, dtype=float)
        if p.ndim != 4 or p.shape[1] != p.shape[3]:
            raise ValueError(f"transitions must have shape (H, S, A, S), got {p.shape}")
        if r.shape != p.shape[:3]:
            raise ValueError(f"rewards must have shape {p.shape[:3]}, got {r.shape}")
        if np.any(~np.isfinite(p)) or np.any(p < 0) or np.any(np.abs(p.sum(axis=3) - 1.0) > 1e-9):
            raise ValueError("transitions must be probability vectors over the next state")
        if np.any(~np.isfinite(r)) or np.any((r < 0) | (r > 1)):
            raise ValueError("rewards must lie in [0, 1]")
        check_index("initial_state", self.initial_state)
        if self.initial_state >= p.shape[1]:
            raise ValueError(f"initial_state {self.initial_state} out of range for {p.shape[1]} states")
        check_choice("reward_model", self.reward_model, REWARD_MODELS)
        if (self.reward_model == "transition") != (self.transition_rewards is not None):
            raise ValueError("transition_rewards go with reward_model='transition' (and only with it)")
        if self.transition_rewards is not None:
            tr = np.asarray(self.transition_rewards, dtype=float)
            if tr.shape != p.shape or np.any(~np.isfinite(tr)) or np.any((tr < 0) | (tr > 1)):
                raise ValueError(f"transition_rewards must have shape {p.shape} with values in [0, 1]")
            if np.any(np.abs(np.einsum("hsat,hsat->hsa", p, tr) - r) > 1e-9):
                raise ValueError("rewards must be the means of transition_rewards under the transitions")
            object.__setattr__(self, "transition_rewards", tr)
        object.__setattr__(self, "transitions", p)
        object.__setattr__(self, "rewards", r)
        cdf = np.cumsum(p, axis=3)
        cdf[..., -1] = 1.0
        object.__setattr__(self, "_cdf", cdf)

    @property
    def horizon(self) -> int:
        return self.transitions.shape[0]

    @property
    def states(self) -> int:
        return self.transitions.shape[1]

    @property
    def actions(self) -> int:
        return self.transitions.shape[2]

    def step_runs(self, h: int, s: np.ndarray, a: np.ndarray, user: User | Users) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`step` of ``user`` in R runs at once: states ``s`` (R,) and actions ``a`` (R,) → next states (R,)
        and rewards (R,), run i's exactly what ``step(h, s[i], a[i], user)`` returns. ``user`` may also be R users,
        one per run (:class:`Users` of length R: run i's is ``step(h, s[i], a[i], user[i])``)."""
        s = np.asarray(s, dtype=np.int64)
        a = np.asarray(a, dtype=np.int64)
        if isinstance(user, Users):
            return self._step_users(h, s, a, user)
        if user.path is not None:
            s_next = np.full(s.shape, int(user.path[h]), dtype=np.int64)
            if s_next.size and s_next[0] >= self.states:
                raise ValueError(f"the user's path leads to state {int(s_next[0])}, beyond the {self.states} states")
        else:
            u = user.transition_uniforms[h]
            cdf: np.ndarray = self._cdf  # type: ignore[attr-defined]  # set in __post_init__ (frozen dataclass)
            # searchsorted(side="right") of u in each run's row: the number of entries <= u
            s_next = np.minimum(np.count_nonzero(cdf[h, s, a] <= u, axis=-1), self.states - 1).astype(np.int64)
        if user.rewards is not None and not np.isnan(user.rewards[h]):
            return s_next, np.full(s.shape, float(user.rewards[h]))
        if self.transition_rewards is not None:
            return s_next, np.array(self.transition_rewards[h, s, a, s_next], dtype=float)
        mean = self.rewards[h, s, a]
        if self.reward_model == "bernoulli":
            return s_next, (user.reward_uniforms[h] < mean).astype(float)
        return s_next, np.array(mean, dtype=float)

    def _step_users(self, h: int, s: np.ndarray, a: np.ndarray, users: Users) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`step_runs` with run i's own user ``users[i]``."""
        if len(users) != s.shape[0]:
            raise ValueError(f"one user per run: {len(users)} users for {s.shape[0]} runs")
        cdf: np.ndarray = self._cdf  # type: ignore[attr-defined]  # set in __post_init__ (frozen dataclass)
        u = users.transition_uniforms[:, h, None]
        s_next = np.minimum(np.count_nonzero(cdf[h, s, a] <= u, axis=-1), self.states - 1).astype(np.int64)
        if users.paths is not None:
            fixed = np.all(users.paths >= 0, axis=1)  # a user with a whole path follows it (User.path)
            path = users.paths[:, h]
            if np.any(path[fixed] >= self.states):
                raise ValueError(
                    f"a user's path leads to state {int(path[fixed].max())}, beyond the {self.states} states"
                )
            s_next = np.where(fixed, path, s_next).astype(np.int64)
        if self.transition_rewards is not None:
            r = np.array(self.transition_rewards[h, s, a, s_next], dtype=float)
        elif self.reward_model == "bernoulli":
            r = (users.reward_uniforms[:, h] < self.rewards[h, s, a]).astype(float)
        else:
            r = np.array(self.rewards[h, s, a], dtype=float)
        own = users.rewards[:, h]
        return s_next, np.where(np.isnan(own), r, own)

    def step(self, h: int, s: int, a: int, user: User) -> tuple[int, float]:
        """User ``user``'s next state and reward at step ``h`` in state ``s`` under action ``a``."""
        if user.path is not None:
            s_next = int(user.path[h])
            if s_next >= self.states:
                raise ValueError(f"the user's path leads to state {s_next}, beyond the {self.states} states")
        else:
            u = user.transition_uniforms[h]
            cdf: np.ndarray = self._cdf  # type: ignore[attr-defined]  # set in __post_init__ (frozen dataclass)
            s_next = int(np.searchsorted(cdf[h, s, a], u, side="right"))
            s_next = min(s_next, self.states - 1)
        if user.rewards is not None and not np.isnan(user.rewards[h]):
            return s_next, float(user.rewards[h])
        if self.transition_rewards is not None:
            return s_next, float(self.transition_rewards[h, s, a, s_next])
        mean = self.rewards[h, s, a]
        if self.reward_model == "bernoulli":
            return s_next, float(user.reward_uniforms[h] < mean)
        return s_next, float(mean)

    def optimal_values(self) -> tuple[np.ndarray, np.ndarray]:
        """Q*[h, s, a] and V*[h, s] (V*[H] = 0) by backward induction."""
        h_, s_, a_ = self.rewards.shape
        v = np.zeros((h_ + 1, s_))
        q = np.empty((h_, s_, a_))
        for h in range(h_ - 1, -1, -1):
            q[h] = self.rewards[h] + self.transitions[h] @ v[h + 1]
            v[h] = q[h].max(axis=1)
        return q, v

    def policy_values(self, policy: np.ndarray) -> np.ndarray:
        """V^π[..., h, s] of a policy: ``policy[..., h, s]`` actions, or ``policy[..., h, s, a]`` probabilities.

        Leading batch axes are evaluated together (one backward pass for all of them).
        """
        pi = np.asarray(policy)
        h_, s_, a_ = self.rewards.shape
        if pi.shape[-2:] == (h_, s_) and np.issubdtype(pi.dtype, np.integer):
            if np.any((pi < 0) | (pi >= a_)):
                raise ValueError(f"policy actions must lie in 0..{a_ - 1}")
            probs = np.eye(a_)[pi]
        elif pi.shape[-3:] == (h_, s_, a_):
            probs = pi.astype(float)
            if np.any(probs < -1e-12) or np.any(np.abs(probs.sum(axis=-1) - 1.0) > 1e-6):
                raise ValueError("a stochastic policy must give probability vectors over the actions")
        else:
            raise ValueError(
                f"policy must have shape (..., {h_}, {s_}) of ints or (..., {h_}, {s_}, {a_}), got {pi.shape}"
            )
        batch = probs.shape[:-3]
        v = np.zeros(batch + (h_ + 1, s_))
        for h in range(h_ - 1, -1, -1):
            q = self.rewards[h] + np.einsum("sat,...t->...sa", self.transitions[h], v[..., h + 1, :])
            v[..., h, :] = np.einsum("...sa,...sa->...s", probs[..., h, :, :], q)
        return v

    def regret(self, policy: np.ndarray) -> np.ndarray | float:
        """V*_0(s_1) − V^π_0(s_1): the expected regret of one episode played with ``policy``."""
        _, v_star = self.optimal_values()
        v = self.policy_values(policy)
        r = v_star[0, self.initial_state] - v[..., 0, self.initial_state]
        return float(r) if np.ndim(r) == 0 else r


def riverswim(
    states: int,
    *,
    horizon: int | None = None,
    inhomogeneous: bool = False,
    success: float = 0.9,
    rng: np.random.Generator | int | None = None,
) -> TabularMDP:
    """Seed 000's RiverSwim: ``states`` states in a row, actions 0 (left) and 1 (right), H = 2S.

    Left moves one state left (staying at 0) and pays 5/(1000H) in state 0. Right moves one state
    right with probability p and stays otherwise (at the right end it stays), and pays 1/H in
    the rightmost state. Rewards are divided by H as in seed 000 §6, so every return lies in
    [0, 1]. Homogeneous: p = ``success`` at every step; inhomogeneous: p_h ~ U(0.8, 1) drawn per
    step from ``rng`` (required then).
    """
    s_ = check_count("states", states)
    if s_ < 2:
        raise ValueError(f"RiverSwim needs states >= 2, got {s_}")
    h_ = 2 * s_ if horizon is None else check_count("horizon", horizon)
    if inhomogeneous:
        if rng is None:
            raise ValueError("the inhomogeneous RiverSwim draws p_h ~ U(0.8, 1): give rng")
        p = check_rng("rng", rng).uniform(0.8, 1.0, size=h_)
    else:
        success = check_positive("success", success)
        if success > 1.0:
            raise ValueError(f"success must be a probability in (0, 1], got {success}")
        p = np.full(h_, success)
    trans = np.zeros((h_, s_, 2, s_))
    idx = np.arange(s_)
    trans[:, idx, 0, np.maximum(idx - 1, 0)] = 1.0
    right = np.minimum(idx + 1, s_ - 1)
    for h in range(h_):
        trans[h, idx, 1, right] += p[h]
        trans[h, idx, 1, idx] += 1.0 - p[h]
    rewards = np.zeros((h_, s_, 2))
    rewards[:, 0, 0] = 5.0 / (1000.0 * h_)
    rewards[:, s_ - 1, 1] = 1.0 / h_
    name = "riverswim-inhomogeneous" if inhomogeneous else "riverswim"
    return TabularMDP(trans, rewards, 0, "mean", name)


def random_tabular(
    states: int,
    actions: int,
    horizon: int,
    rng: np.random.Generator | int,
    *,
    concentration: float = 1.0,
    reward_model: str = "bernoulli",
) -> TabularMDP:
    """A random MDP: P_h(·|s, a) ~ Dirichlet(concentration), mean rewards ~ U(0, 1) divided by H
    (so returns lie in [0, 1]); Bernoulli rewards by default (seed 004's random-reward model)."""
    s_ = check_count("states", states)
    a_ = check_count("actions", actions)
    h_ = check_count("horizon", horizon)
    concentration = check_positive("concentration", concentration)
    rng = check_rng("rng", rng)
    trans = rng.dirichlet(np.full(s_, concentration), size=(h_, s_, a_))
    rewards = rng.random((h_, s_, a_)) / h_
    return TabularMDP(trans, rewards, 0, reward_model, "tabular")


ENVIRONMENTS: tuple[str, ...] = ("riverswim", "riverswim-inhomogeneous", "tabular")


def make_tabular(
    env: str, states: int, rng: np.random.Generator | int, *, actions: int = 2, horizon: int | None = None
) -> TabularMDP:
    """An environment by name: ``riverswim`` (H = 2S), ``riverswim-inhomogeneous``, ``tabular``."""
    env = check_choice("env", env, ENVIRONMENTS)
    if env == "tabular":
        s_ = check_count("states", states)
        return random_tabular(s_, actions, 2 * s_ if horizon is None else horizon, rng)
    return riverswim(states, horizon=horizon, inhomogeneous=env == "riverswim-inhomogeneous", rng=rng)


def uniform_tabular(states: int, actions: int, horizon: int, *, reward: float = 1.0) -> TabularMDP:
    """Every P_h(·|s, a) uniform over the S states and every mean reward ``reward``: a user's own
    uniforms choose her next state (a uniform u leads to state ⌊uS⌋ whatever the action), so a
    canary can be steered anywhere. The audits' environment: their canaries walk disjoint states.
    """
    s_, a_, h_ = check_count("states", states), check_count("actions", actions), check_count("horizon", horizon)
    if not isinstance(reward, (int, float)) or not 0.0 <= reward <= 1.0:
        raise ValueError(f"reward must lie in [0, 1], got {reward!r}")
    transitions = np.full((h_, s_, a_, s_), 1.0 / s_)
    return TabularMDP(transitions, np.full((h_, s_, a_), float(reward)), 0, "mean", "uniform")
