"""The users of an LQ system: each the noise sequence of her episode, drawn from her own seed (seed 003).

:class:`LQUser` is one user, drawn uniform in the ball of radius C_w or a canary on its bound; :class:`LQUsers` holds
K of them for :class:`~dpkit.algorithms.envs.lq.LQSystem` and builds the replace-one and add/remove neighbours.
Why a user is her noise, and its law: docs/explanation/environments.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from dpkit.accountant.validation import check_count, check_index, check_positive, check_rng

from .lq import NORM_TOL, LQSystem, check_x0, real_array

__all__ = ["LQUser", "LQUsers"]

_SEED_BOUND = 2**63


def _ball_noise(rng: np.random.Generator, horizon: int, n: int, bound: float) -> np.ndarray:
    g = rng.standard_normal((horizon, n))
    u = rng.random(horizon)
    norm = np.linalg.norm(g, axis=1)
    norm[norm == 0.0] = 1.0
    return bound * (u ** (1.0 / n))[:, None] * g / norm[:, None]


def _check_noise(noise: object, bound: float, ndim: int) -> np.ndarray:
    w = real_array("noise", noise, ndim=ndim)
    if w.ndim != ndim:
        raise ValueError(f"noise must have {ndim} dimensions, got shape {w.shape}")
    norms = np.linalg.norm(w, axis=-1)
    if norms.size and float(norms.max()) > bound * (1.0 + NORM_TOL):
        raise ValueError(f"every noise vector must have norm <= C_w = {bound!r}, got {float(norms.max())!r}")
    return w


@dataclass(frozen=True)
class LQUser:
    """One user of an LQ system: the noise of her episode.

    Attributes:
        noise: w_0 … w_{H−1}, shape (H, n).
        seed: Her seed, if she was drawn from one.
        x1: Her own first state, or None for the system's x0.
    """

    noise: np.ndarray
    seed: int | None = None
    x1: np.ndarray | None = None

    @classmethod
    def from_seed(cls, seed: int, horizon: int, state_dim: int, noise_bound: float) -> LQUser:
        """The user drawn from ``seed``: noise uniform in the ball of radius ``noise_bound`` (same seed, same user).

        Args:
            seed: An integer >= 0.
            horizon: H.
            state_dim: n.
            noise_bound: C_w > 0.

        Returns:
            The user.

        Raises:
            ValueError: If ``seed`` is negative, a size is not an integer >= 1 or ``noise_bound`` is not > 0.
        """
        seed = check_index("seed", seed)
        h = check_count("horizon", horizon)
        n = check_count("state_dim", state_dim)
        c_w = check_positive("noise_bound", noise_bound)
        return cls(_ball_noise(np.random.default_rng(seed), h, n, c_w), seed)

    @classmethod
    def canary(
        cls, directions: Sequence[Sequence[float]] | np.ndarray, noise_bound: float, *, x1: object = None
    ) -> LQUser:
        """A user whose noise sits on the bound: w_h = C_w · v_h/‖v_h‖.

        Args:
            directions: v, shape (H, n), every row non-zero.
            noise_bound: C_w > 0.
            x1: Her first state (‖x1‖ <= 1), or None for the system's x0.

        Returns:
            The canary user (no seed).

        Raises:
            ValueError: If ``directions`` is not (H, n) or has a zero row, or ``x1`` has norm above 1.

        Examples:
            >>> LQUser.canary([[1.0, 0.0], [0.0, 2.0]], 0.1).noise.tolist()
            [[0.1, 0.0], [0.0, 0.1]]
        """
        c_w = check_positive("noise_bound", noise_bound)
        v = real_array("directions", directions)
        if v.ndim != 2:
            raise ValueError(f"directions must have shape (H, n), got {v.shape}")
        norm = np.linalg.norm(v, axis=1)
        if np.any(norm == 0.0):
            raise ValueError(f"every direction must be non-zero, got zero rows {np.flatnonzero(norm == 0.0).tolist()}")
        start = None if x1 is None else check_x0(x1, v.shape[1])
        if start is not None and np.linalg.norm(start) > 1.0 + NORM_TOL:
            raise ValueError(f"x1 must have norm <= 1, got ‖x1‖ = {np.linalg.norm(start)!r}")
        return cls(c_w * v / norm[:, None], None, start)


@dataclass(frozen=True)
class LQUsers:
    """K users of an LQ system, checked and read-only.

    Attributes:
        noise: The users' noise, shape (K, H, n), K >= 1, every vector with ‖w‖ <= ``noise_bound``.
        noise_bound: C_w > 0.
        seeds: One seed per user where drawn (None for a user without), or empty.
    """

    noise: np.ndarray
    noise_bound: float
    seeds: tuple[int | None, ...] = field(default=())

    def __post_init__(self) -> None:
        c_w = check_positive("noise_bound", self.noise_bound)
        w = _check_noise(self.noise, c_w, 3)
        if w.shape[0] == 0:
            raise ValueError("users must not be empty")
        if self.seeds and len(self.seeds) != w.shape[0]:
            raise ValueError(f"seeds must name one seed per user: {len(self.seeds)} for {w.shape[0]} users")
        w.setflags(write=False)
        object.__setattr__(self, "noise", w)
        object.__setattr__(self, "noise_bound", c_w)

    @classmethod
    def draw(cls, count: int, system: LQSystem, rng: np.random.Generator | int) -> LQUsers:
        """``count`` users of ``system`` whose seeds are drawn from ``rng`` (each reproducible from her seed).

        Args:
            count: K, an integer >= 1.
            system: The system whose horizon, dimension and noise bound the users have.
            rng: A Generator or an integer seed.

        Returns:
            The users.

        Raises:
            ValueError: If ``count`` is not an integer >= 1 or ``rng`` is not a Generator or seed.

        Examples:
            >>> from dpkit.algorithms.envs.lq import random_lq
            >>> users = LQUsers.draw(3, random_lq(2, 1, 5, rng=0), rng=1)
            >>> users.noise.shape, len(users.remove(0))
            ((3, 5, 2), 2)
        """
        k = check_count("count", count)
        rng = check_rng("rng", rng)
        seeds = rng.integers(0, _SEED_BOUND, size=k, dtype=np.int64)
        return cls.from_seeds([int(s) for s in seeds], system)

    @classmethod
    def from_seeds(cls, seeds: Sequence[int], system: LQSystem) -> LQUsers:
        """Users of ``system`` drawn each from her own seed.

        Args:
            seeds: One integer >= 0 per user.
            system: The system whose horizon, dimension and noise bound the users have.

        Returns:
            The users.

        Raises:
            ValueError: If ``seeds`` is empty or holds a negative seed.
        """
        if len(seeds) == 0:
            raise ValueError("seeds must not be empty")
        users = [LQUser.from_seed(s, system.horizon, system.state_dim, system.noise_bound) for s in seeds]
        return cls.stack(users, system.noise_bound)

    @classmethod
    def stack(cls, users: Sequence[LQUser], noise_bound: float) -> LQUsers:
        """Users stacked into one :class:`LQUsers`.

        Args:
            users: The users, all with noise of the same shape (H, n).
            noise_bound: C_w, which bounds every user's noise.

        Returns:
            The users stacked.

        Raises:
            ValueError: If ``users`` is empty, their shapes differ, or a noise vector exceeds ``noise_bound``.
        """
        if not users:
            raise ValueError("users must not be empty")
        shapes = {u.noise.shape for u in users}
        if len(shapes) != 1:
            raise ValueError(f"users must all have the same noise shape, got {sorted(shapes)}")
        return cls(np.stack([u.noise for u in users]), noise_bound, tuple(u.seed for u in users))

    def __len__(self) -> int:
        return self.noise.shape[0]

    @property
    def horizon(self) -> int:
        return self.noise.shape[1]

    @property
    def state_dim(self) -> int:
        return self.noise.shape[2]

    def _index(self, k: int) -> int:
        k = check_index("k", k)
        if k >= len(self):
            raise ValueError(f"user index {k} out of range for {len(self)} users")
        return k

    def __getitem__(self, k: int) -> LQUser:
        k = self._index(k)
        return LQUser(self.noise[k], self.seeds[k] if self.seeds else None)

    def replace(self, k: int, user: LQUser) -> LQUsers:
        """The neighbouring dataset with user ``k`` replaced by ``user`` (replace-one).

        Args:
            k: The index of the user replaced.
            user: Her replacement, with noise of shape (H, n) within the bound.

        Returns:
            The neighbouring users.

        Raises:
            ValueError: If ``k`` is out of range or the user's noise has the wrong shape or exceeds the bound.
        """
        k = self._index(k)
        w = _check_noise(user.noise, self.noise_bound, 2)
        if w.shape != self.noise.shape[1:]:
            raise ValueError(f"the user's noise has shape {w.shape}, the others {self.noise.shape[1:]}")
        noise = self.noise.copy()
        noise[k] = w
        seeds: list[int | None] = list(self.seeds) if self.seeds else [None] * len(self)
        seeds[k] = user.seed
        return LQUsers(noise, self.noise_bound, tuple(seeds))

    def remove(self, k: int) -> LQUsers:
        """The neighbouring dataset without user ``k`` (add/remove).

        Args:
            k: The index of the user removed.

        Returns:
            The K − 1 other users.

        Raises:
            ValueError: If ``k`` is out of range or she is the only user.
        """
        k = self._index(k)
        if len(self) < 2:
            raise ValueError(f"cannot remove user {k} from {len(self)} users")
        keep = np.arange(len(self)) != k
        seeds = tuple(s for i, s in enumerate(self.seeds) if i != k) if self.seeds else ()
        return LQUsers(self.noise[keep], self.noise_bound, seeds)
