"""Episodic finite-horizon tabular MDPs with the users made explicit.

A :class:`User` is the randomness of her episode, drawn from her own seed, so her responses to any actions are fixed;
:class:`Users` holds K of them and builds neighbouring datasets. :class:`TabularMDP` holds P_h(s′|s, a) and the mean
rewards r_h(s, a) ∈ [0, 1] and computes exact values and regret. :func:`riverswim`, :func:`random_tabular` and
:func:`uniform_tabular` build environments, :func:`make_tabular` one by name. How users, rewards and starts are
modelled: docs/explanation/environments.md.
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
    """One user's episode: the randomness that fixes her responses to any actions.

    Attributes:
        transition_uniforms: One uniform in [0, 1) per step, choosing her next state (shape (H,)).
        reward_uniforms: One uniform per step, drawing her Bernoulli rewards (shape (H,)).
        rewards: Rewards that override the environment's (NaN where they do not), or None.
        seed: Her seed, if she was drawn from one.
        initial_state: Her first state, or None for the environment's.
        path: Her next state at every step whatever the model says (an audit's canary), or None to draw them
            from her uniforms.

    Raises:
        ValueError: If ``initial_state`` is negative, or ``path`` is not one state >= 0 per step.
    """

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
        """The user drawn from ``seed``: the same seed gives the same user.

        Args:
            seed: An integer >= 0.
            horizon: H, the steps of her episode.

        Returns:
            The user, with uniforms drawn from ``seed``.

        Raises:
            ValueError: If ``seed`` is negative or ``horizon`` is not an integer >= 1.
        """
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
        """A user with fixed rewards and the given transition uniforms: an audit's canary.

        Args:
            rewards: Her reward at every step, each in [0, 1] (any finite value with ``beyond_bounds``).
            transition_uniforms: Her uniform at every step, each in [0, 1).
            beyond_bounds: Whether to admit rewards outside [0, 1]: raw inputs beyond the stated assumptions,
                which only an algorithm's own clipping keeps in range.
            initial_state: Her first state, or None for the environment's.
            path: Her next state at every step, or None to draw them from her uniforms.

        Returns:
            The canary user (no seed).

        Raises:
            ValueError: If the arrays are not 1-d of one length, a reward is out of range or a uniform outside
                [0, 1).

        Examples:
            >>> user = User.canary([1.0, 0.0], [0.5, 0.5])
            >>> user.rewards.tolist(), user.transition_uniforms.tolist()
            ([1.0, 0.0], [0.5, 0.5])
        """
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
    """K users as arrays of shape (K, H).

    Attributes:
        transition_uniforms: Each user's transition uniforms, shape (K, H).
        reward_uniforms: Each user's reward uniforms, shape (K, H).
        rewards: Each user's own rewards, NaN where she keeps the environment's, shape (K, H).
        seeds: One seed per user where drawn (None for a user without), or empty.
        initial_states: Each user's first state, −1 where she starts in the environment's (None: every user does).
        paths: Each user's next states (K, H), −1 where her uniforms choose them (None: every user's do).
    """

    transition_uniforms: np.ndarray
    reward_uniforms: np.ndarray
    rewards: np.ndarray
    seeds: tuple[int | None, ...] = field(default=())
    initial_states: np.ndarray | None = None
    paths: np.ndarray | None = None

    @classmethod
    def from_seeds(cls, seeds: Sequence[int], horizon: int) -> Users:
        """Users drawn each from her own seed.

        Args:
            seeds: One integer >= 0 per user.
            horizon: H.

        Returns:
            The users.

        Raises:
            ValueError: If ``seeds`` is empty or holds a negative seed.
        """
        users = [User.from_seed(s, horizon) for s in seeds]
        if not users:
            raise ValueError("seeds must not be empty")
        return cls.stack(users)

    @classmethod
    def draw(cls, count: int, horizon: int, rng: np.random.Generator | int) -> Users:
        """``count`` users whose seeds are drawn from ``rng`` (each reproducible from her seed).

        Args:
            count: K, an integer >= 1.
            horizon: H.
            rng: A Generator or an integer seed.

        Returns:
            The users.

        Raises:
            ValueError: If ``count`` or ``horizon`` is not an integer >= 1, or ``rng`` is not a Generator or seed.

        Examples:
            >>> users = Users.draw(3, 4, rng=0)
            >>> len(users), users.horizon, len(users.remove(1))
            (3, 4, 2)
        """
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
        """Users stacked into one :class:`Users`.

        Args:
            users: The users, all of the same horizon.

        Returns:
            The users stacked.

        Raises:
            ValueError: If ``users`` is empty.
        """
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
        """H, the steps of each user's episode."""
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
        """The neighbouring dataset with user ``k`` replaced by ``user`` (replace-one).

        Args:
            k: The index of the user replaced.
            user: Her replacement, of the same horizon.

        Returns:
            The neighbouring users.

        Raises:
            ValueError: If ``k`` is out of range or the user's horizon differs.
        """
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
        """These users, each starting in her own state.

        Args:
            states: One first state per user, −1 for the environment's initial state.

        Returns:
            The users with their first states.

        Raises:
            ValueError: If ``states`` is not one integer >= −1 per user.

        Examples:
            >>> Users.draw(3, 4, rng=0).with_initial_states([0, -1, 1]).initial_states.tolist()
            [0, -1, 1]
        """
        starts = np.asarray(states)
        if starts.shape != (len(self),) or not np.issubdtype(starts.dtype, np.integer) or np.any(starts < -1):
            raise ValueError(f"states must be {len(self)} integers >= −1, got {states!r}")
        return Users(
            self.transition_uniforms, self.reward_uniforms, self.rewards, self.seeds, starts.copy(), self.paths
        )

    def remove(self, k: int) -> Users:
        """The neighbouring dataset without user ``k`` (add/remove).

        Args:
            k: The index of the user removed.

        Returns:
            The K − 1 other users.

        Raises:
            ValueError: If ``k`` is out of range or she is the only user.
        """
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
    """A finite-horizon tabular MDP: P_h(s′|s, a) and mean rewards r_h(s, a) in [0, 1], checked.

    Attributes:
        transitions: P_h(s′|s, a) as ``transitions[h, s, a, s′]``, shape (H, S, A, S).
        rewards: The mean rewards ``rewards[h, s, a]`` in [0, 1], shape (H, S, A).
        initial_state: Where every episode starts (a user may start elsewhere: :attr:`User.initial_state`).
        reward_model: How a reward is paid (:data:`REWARD_MODELS`): ``"mean"`` r_h(s, a) itself,
            ``"bernoulli"`` 1 with probability r_h(s, a) (seed 004's random rewards), ``"transition"``
            ``transition_rewards[h, s, a, s′]`` of the transition made.
        name: The environment's name in runs and reports.
        transition_rewards: The rewards of the transitions (H, S, A, S) in [0, 1], whose means under the
            transitions are ``rewards``; only with ``reward_model="transition"``.

    Raises:
        ValueError: If a shape is wrong, a transition is not a probability vector, a reward is outside [0, 1],
            ``initial_state`` is out of range, or ``transition_rewards`` does not go with ``reward_model``.
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
        """H, the steps of an episode."""
        return self.transitions.shape[0]

    @property
    def states(self) -> int:
        """S, the number of states."""
        return self.transitions.shape[1]

    @property
    def actions(self) -> int:
        """A, the number of actions."""
        return self.transitions.shape[2]

    def step_runs(self, h: int, s: np.ndarray, a: np.ndarray, user: User | Users) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`step` in R runs at once: run i's next state and reward are exactly ``step(h, s[i], a[i], user)``.

        Args:
            h: The step.
            s: The runs' states, shape (R,).
            a: The runs' actions, shape (R,).
            user: One user for every run, or R users, one per run (:class:`Users` of length R: run i's step is
                then ``step(h, s[i], a[i], user[i])``).

        Returns:
            The next states (R,) and the rewards (R,).

        Raises:
            ValueError: If a user's path leads beyond the states, or ``user`` holds not one user per run.

        Examples:
            >>> import numpy as np
            >>> env = riverswim(2)
            >>> env.step_runs(0, np.array([0, 1]), np.array([1, 1]), User.from_seed(0, env.horizon))
            (array([1, 1]), array([0.  , 0.25]))
        """
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
        """User ``user``'s next state and reward at step ``h`` in state ``s`` under action ``a``: :meth:`step_runs` of
        one run.

        Args:
            h: The step.
            s: The state.
            a: The action.
            user: The user, whose uniforms (or path) choose the next state and whose rewards override the model's.

        Returns:
            The next state and the reward.

        Raises:
            ValueError: If the user's path leads beyond the states.

        Examples:
            >>> uniform_tabular(3, 2, 2).step(0, 0, 1, User.canary([1.0, 1.0], [0.7, 0.1]))
            (2, 1.0)
        """
        s_next, reward = self.step_runs(h, np.array([s]), np.array([a]), user)
        return int(s_next[0]), float(reward[0])

    def optimal_values(self) -> tuple[np.ndarray, np.ndarray]:
        """The optimal values by backward induction.

        Returns:
            Q*[h, s, a] of shape (H, S, A) and V*[h, s] of shape (H + 1, S), with V*[H] = 0.
        """
        h_, s_, a_ = self.rewards.shape
        v = np.zeros((h_ + 1, s_))
        q = np.empty((h_, s_, a_))
        for h in range(h_ - 1, -1, -1):
            q[h] = self.rewards[h] + self.transitions[h] @ v[h + 1]
            v[h] = q[h].max(axis=1)
        return q, v

    def policy_values(self, policy: np.ndarray) -> np.ndarray:
        """V^π[..., h, s] of a policy, leading batch axes evaluated together (one backward pass for all).

        Args:
            policy: Actions ``policy[..., h, s]`` (integers) or probabilities ``policy[..., h, s, a]``.

        Returns:
            V^π, shape (..., H + 1, S).

        Raises:
            ValueError: If ``policy`` has the wrong shape, an action out of range, or rows that are not probability
                vectors.
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
        """V*_0(s_1) − V^π_0(s_1): the expected regret of one episode played with ``policy``.

        Args:
            policy: Actions ``policy[..., h, s]`` or probabilities ``policy[..., h, s, a]`` (:meth:`policy_values`).

        Returns:
            The regret per leading batch axis of ``policy``; a float when there are none.

        Raises:
            ValueError: If ``policy`` is not a valid policy (:meth:`policy_values`).

        Examples:
            >>> import numpy as np
            >>> env = riverswim(2)
            >>> round(env.regret(np.zeros((env.horizon, 2), dtype=int)), 6)  # always left
            0.717251
        """
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
    """Seed 000's RiverSwim: ``states`` states in a row, actions 0 (left) and 1 (right).

    Left moves one state left (staying at 0) and pays 5/(1000H) in state 0. Right moves one state
    right with probability p and stays otherwise (at the right end it stays), and pays 1/H in
    the rightmost state. Rewards are divided by H as in seed 000 §6, so every return lies in [0, 1].

    Args:
        states: S >= 2.
        horizon: H; None for 2S.
        inhomogeneous: Whether p_h ~ U(0.8, 1) is drawn per step from ``rng`` (else p = ``success`` at every step).
        success: p of the homogeneous RiverSwim, in (0, 1].
        rng: A Generator or an integer seed; required for the inhomogeneous RiverSwim.

    Returns:
        The RiverSwim MDP, named ``riverswim`` or ``riverswim-inhomogeneous``.

    Raises:
        ValueError: If ``states`` < 2, ``success`` is not in (0, 1], or the inhomogeneous RiverSwim has no ``rng``.

    Examples:
        >>> env = riverswim(2)
        >>> env.horizon, env.states, env.actions, env.name
        (4, 2, 2, 'riverswim')
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
    """A random MDP: P_h(·|s, a) ~ Dirichlet(concentration), mean rewards ~ U(0, 1)/H (returns in [0, 1]).

    Args:
        states: S.
        actions: A.
        horizon: H.
        rng: A Generator or an integer seed.
        concentration: The Dirichlet's parameter, > 0.
        reward_model: How rewards are paid (:data:`REWARD_MODELS`); Bernoulli by default (seed 004's random-reward
            model).

    Returns:
        The MDP, named ``tabular``.

    Raises:
        ValueError: If a size is not an integer >= 1, ``concentration`` is not > 0 or ``reward_model`` is unknown.
    """
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
    """An environment of :data:`ENVIRONMENTS` by name: ``riverswim``, ``riverswim-inhomogeneous``, ``tabular``.

    Args:
        env: The name.
        states: S.
        rng: A Generator or an integer seed (the inhomogeneous RiverSwim's p_h, the random MDP).
        actions: A, for the random MDP (RiverSwim has 2).
        horizon: H; None for 2S.

    Returns:
        The environment.

    Raises:
        ValueError: If ``env`` is unknown or a size is invalid.

    Examples:
        >>> make_tabular("riverswim", 3, rng=0).horizon
        6
    """
    env = check_choice("env", env, ENVIRONMENTS)
    if env == "tabular":
        s_ = check_count("states", states)
        return random_tabular(s_, actions, 2 * s_ if horizon is None else horizon, rng)
    return riverswim(states, horizon=horizon, inhomogeneous=env == "riverswim-inhomogeneous", rng=rng)


def uniform_tabular(states: int, actions: int, horizon: int, *, reward: float = 1.0) -> TabularMDP:
    """The audits' environment: every P_h(·|s, a) uniform over the S states, every mean reward ``reward``.

    A user's own uniforms choose her next state (a uniform u leads to state ⌊uS⌋ whatever the action), so a canary
    can be steered anywhere: the audits' canaries walk disjoint states.

    Args:
        states: S.
        actions: A.
        horizon: H.
        reward: The mean reward of every step, in [0, 1].

    Returns:
        The MDP, named ``uniform``.

    Raises:
        ValueError: If a size is not an integer >= 1 or ``reward`` is outside [0, 1].
    """
    s_, a_, h_ = check_count("states", states), check_count("actions", actions), check_count("horizon", horizon)
    if not isinstance(reward, (int, float)) or not 0.0 <= reward <= 1.0:
        raise ValueError(f"reward must lie in [0, 1], got {reward!r}")
    transitions = np.full((h_, s_, a_, s_), 1.0 / s_)
    return TabularMDP(transitions, np.full((h_, s_, a_), float(reward)), 0, "mean", "uniform")
