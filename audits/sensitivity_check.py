"""An empirical check of a claimed ℓ2 sensitivity: a search over neighbouring datasets for a larger change.

:func:`check_sensitivity` runs a random search over neighbouring pairs followed by local optimisation (Powell's
method, scipy.optimize). What it finds is a lower bound on the true sensitivity Δ, so a result above the claim refutes
the claim; one below it is evidence, not proof. The closed forms it checks, which bound Δ from above, are in
:mod:`dpkit.accountant.sensitivity`, with the neighbouring relations.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpkit.accountant.sensitivity import Relation, check_relation
from dpkit.accountant.validation import (
    ArgumentTypeError,
    check_count,
    check_index,
    check_nonnegative,
    check_positive,
)

__all__ = ["SensitivityCheck", "check_sensitivity"]

# Budget of the local search in check_sensitivity: function evaluations per start are
# _LOCAL_FEV_BASE + _LOCAL_FEV_PER_DIM * (number of free variables).
_LOCAL_FEV_BASE = 50
_LOCAL_FEV_PER_DIM = 20


def _check_flag(name: str, value: object) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")  # noqa: TRY004 (the package contract)
    return bool(value)


def _check_callable(name: str, value: object) -> None:
    if not callable(value):
        raise ValueError(f"{name} must be callable, got {value!r}")  # noqa: TRY004 (the package contract)


@dataclass(frozen=True, eq=False)
class SensitivityCheck:
    """Result of :func:`check_sensitivity`: the largest change of f found over neighbours.

    ``largest`` is a lower bound on the true sensitivity (it is attained by the reported pair),
    so ``exceeds`` (``largest > claim·(1 + rtol)``) refutes the claim; ``exceeds`` False is
    evidence, not proof. ``user`` is the changed user's data on the D side of the best pair,
    ``replacement`` the D′ side under replace-one (``None`` under add/remove). ``evaluations``
    counts the datasets on which f was evaluated. Compare results through :meth:`to_dict`.

    Attributes:
        relation: The canonical neighbouring relation.
        claim: The claimed sensitivity.
        largest: The largest change of f found (a lower bound on the true sensitivity).
        exceeds: Whether ``largest`` refutes the claim.
        ratio: ``largest / claim``.
        user: The changed user on the D side of the best pair.
        replacement: The D′ side under replace-one, None under add/remove.
        evaluations: The number of datasets f was evaluated on.
    """

    relation: str
    claim: float
    largest: float
    exceeds: bool
    ratio: float
    user: np.ndarray
    replacement: np.ndarray | None
    evaluations: int

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready values (the vectors as lists of floats).

        Returns:
            A dictionary with one entry per field.
        """
        return {
            "relation": self.relation,
            "claim": self.claim,
            "largest": self.largest,
            "exceeds": self.exceeds,
            "ratio": self.ratio,
            "user": [float(v) for v in self.user],
            "replacement": None if self.replacement is None else [float(v) for v in self.replacement],
            "evaluations": self.evaluations,
        }


def _frozen(a: np.ndarray) -> np.ndarray:
    out = np.array(a, dtype=float)
    out.setflags(write=False)
    return out


class _Checker:
    """The state of one :func:`check_sensitivity` run: f, the background and the counters."""

    def __init__(self, f: Callable[..., Any], vectorized: bool, background: np.ndarray, relation: Relation) -> None:
        self.f = f
        self.vectorized = vectorized
        self.background = background
        self.relation = relation
        self.evaluations = 0
        self.shape: tuple[int, ...] | None = None
        self.removed: np.ndarray | None = None  # f(background), the add/remove D′

    def _output(self, value: Any, batch: int | None) -> np.ndarray:
        try:
            out = np.asarray(value, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"f must return an array of real numbers, got {value!r}") from exc
        if batch is not None:
            if out.ndim < 1 or out.shape[0] != batch:
                raise ValueError(
                    f"f (vectorized) must return an array with leading axis {batch}, got shape {out.shape}"
                )
            shape = out.shape[1:]
        else:
            shape = out.shape
        if self.shape is None:
            self.shape = shape
        elif shape != self.shape:
            raise ValueError(f"f returned outputs of different shapes: {self.shape} and {shape}")
        if not np.isfinite(out).all():
            raise ValueError("f returned non-finite values")
        return out

    def evaluate(self, datasets: np.ndarray) -> np.ndarray:
        """f on a stack of datasets (batch, n_users, p): flattened outputs (batch, k)."""
        batch = datasets.shape[0]
        self.evaluations += batch
        if self.vectorized:
            out = self._output(self.f(datasets), batch)
        else:
            out = np.stack([self._output(self.f(d), None) for d in datasets])
        return out.reshape(batch, -1)

    def with_users(self, users: np.ndarray) -> np.ndarray:
        """Datasets background + [u] for each row u of ``users``: shape (n, n_bg + 1, p)."""
        n = users.shape[0]
        bg = np.broadcast_to(self.background, (n, *self.background.shape))
        return np.concatenate([bg, users[:, None, :]], axis=1)

    def removed_value(self) -> np.ndarray:
        if self.removed is None:
            self.removed = self.evaluate(self.background[None])[0]
        return self.removed

    def changes(self, users: np.ndarray, replacements: np.ndarray | None) -> np.ndarray:
        """‖f(D) − f(D′)‖ for each neighbouring pair (one batched call when vectorized)."""
        n = users.shape[0]
        if self.relation == Relation.ADD_REMOVE:
            diff = self.evaluate(self.with_users(users)) - self.removed_value()[None]
        else:
            assert replacements is not None
            both = self.evaluate(self.with_users(np.concatenate([users, replacements], axis=0)))
            diff = both[:n] - both[n:]
        norms: np.ndarray = np.linalg.norm(diff, axis=1)
        return norms


def _farthest_pair(outputs: np.ndarray, a: int, b: int) -> tuple[int, int, float]:
    """Alternately replace each side of the pair (a, b) by the pool member farthest from the other.

    Each step can only increase ‖outputs[a] − outputs[b]‖, so this stops (at most 32 rounds).
    """
    for _ in range(32):
        b2 = int(np.argmax(np.linalg.norm(outputs - outputs[a], axis=1)))
        a2 = int(np.argmax(np.linalg.norm(outputs - outputs[b2], axis=1)))
        if (a2, b2) == (a, b):
            break
        a, b = a2, b2
    return a, b, float(np.linalg.norm(outputs[a] - outputs[b]))


def _as_user(name: str, value: Any, p: int) -> np.ndarray:
    if value is None:
        raise ValueError(f"{name} must be a vector of {p} real numbers, got None")
    try:
        u = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a vector of {p} real numbers, got {value!r}") from exc
    if u.shape != (p,):
        raise ValueError(f"{name} must be a vector of {p} real numbers, got shape {u.shape}")
    if not np.all(np.isfinite(u)):
        raise ValueError(f"{name} must be finite, got {u.tolist()!r}")
    return u


def _draw(sample: Callable[..., Any], rng: np.random.Generator, n: int, p: int | None) -> np.ndarray:
    value = sample(rng, n)
    try:
        users = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"sample must return an array of real numbers, got {value!r}") from exc
    if users.ndim != 2 or users.shape[0] != n or users.shape[1] < 1 or (p is not None and users.shape[1] != p):
        want = f"({n}, {p})" if p is not None else f"({n}, p) with p >= 1"
        raise ValueError(f"sample(rng, {n}) must return an array of shape {want}, got shape {users.shape}")
    if not np.all(np.isfinite(users)):
        raise ValueError(f"sample(rng, {n}) returned non-finite values")
    return users


def _make_rng(rng: object) -> np.random.Generator:
    if rng is None or isinstance(rng, np.random.Generator):
        return np.random.default_rng(rng)
    if isinstance(rng, (bool, np.bool_)) or not isinstance(rng, numbers.Integral):
        raise ArgumentTypeError(f"rng must be a numpy Generator, a seed (integer >= 0) or None, got {rng!r}")
    if int(rng) < 0:
        raise ValueError(f"rng must be a numpy Generator, a seed (integer >= 0) or None, got {rng!r}")
    return np.random.default_rng(int(rng))


# 12 parameters: the public keyword API (docs/explanation/neighbours.md), checked once into a frozen _Search
def check_sensitivity(
    f: Callable[[np.ndarray], Any],
    *,
    sample: Callable[[np.random.Generator, int], Any],
    claim: float,
    relation: Relation | str,
    rng: np.random.Generator | int | None = None,
    project: Callable[[np.ndarray], Any] | None = None,
    candidates: Sequence[tuple[Any, Any]] = (),
    background: int = 0,
    n_random: int = 2000,
    n_local: int = 10,
    rtol: float = 1e-9,
    vectorized: bool = False,
) -> SensitivityCheck:
    """Search for neighbouring datasets on which f changes by more than ``claim``.

    A user is a flat float vector of length p and a dataset an array (n_users, p).
    ``sample(rng, n)`` draws n admissible users, shape (n, p). ``f(dataset)`` returns an array
    of any (fixed) shape; the change between neighbours is the ℓ2 norm of the flattened
    difference. With ``vectorized=True``, f takes a stack (batch, n_users, p) and returns
    (batch, ...), and the random search makes one batched call per relation.

    ``background`` other users, drawn once from ``sample``, are in both datasets:
    add/remove compares D = background + [u] with D′ = background (the empty dataset, shape
    (0, p), when ``background`` is 0 — f must accept it); replace-one compares
    D = background + [u] with D′ = background + [u′].

    The search:

    1. random: ``n_random`` users u (and as many u′ for replace-one) from ``sample``, which
       are taken as admissible as drawn. Under replace-one any two of the 2·``n_random``
       evaluated datasets are neighbours, so each of the best pairs is then improved without
       further evaluations by alternately moving each side to the pool member whose output is
       farthest from the other side's (this escapes the local optima where one side sits at
       zero);
    2. local: from the ``n_local`` best random pairs and from every pair of ``candidates``
       (user-supplied worst cases (u, u′), with u′ ``None`` under add/remove), maximise
       ‖f(D(project(z))) − f(D′(project(z′)))‖ over z (and z′) with Powell's method (bounded
       number of evaluations). ``project`` maps any vector of R^p to an admissible user
       (default: the identity, right only when f itself enforces the bounds, e.g. by clipping;
       with an unbounded f and no ``project`` the search runs off to infinity). The reported
       pair is the projected one, and ``largest`` is re-evaluated at it.

    ``exceeds`` is ``largest > claim·(1 + rtol)``. The result depends only on the arguments and
    the seed (``rng`` as an integer or a Generator in a given state).

    Args:
        f: The statistic: a dataset (n_users, p) to an array of fixed shape (a stack to a stack when
            ``vectorized``).
        sample: ``sample(rng, n)`` draws n admissible users, shape (n, p).
        claim: The claimed sensitivity (> 0).
        relation: ``"add_remove"`` or ``"replace_one"`` (or their hyphenated CLI spellings).
        rng: A numpy Generator, a seed (integer >= 0) or None.
        project: Maps a vector of R^p to an admissible user; None for the identity.
        candidates: User-supplied worst cases (u, u′) to start the local search from.
        background: The number of users drawn once and put in both datasets.
        n_random: The number of random pairs (>= 1).
        n_local: The number of best random pairs the local search starts from (>= 0).
        rtol: The relative tolerance of ``exceeds`` (>= 0).
        vectorized: Whether f takes a stack of datasets.

    Returns:
        The largest change found, the pair attaining it and the number of evaluations.

    Raises:
        ValueError: An argument out of its range, a callable returning the wrong shape or non-finite values.
        ArgumentTypeError: ``rng`` of the wrong type.
    """
    _check_callable("f", f)
    _check_callable("sample", sample)
    search = _Search(  # checked once, in this order (the first bad value is the one reported)
        f=f,
        sample=sample,
        claim=check_positive("claim", claim),
        relation=check_relation(relation),
        gen=_make_rng(rng),
        project=_optional_callable("project", project),
        background=check_index("background", background),
        n_random=check_count("n_random", n_random),
        n_local=check_index("n_local", n_local),
        rtol=check_nonnegative("rtol", rtol),
        vectorized=_check_flag("vectorized", vectorized),
        candidates=_candidate_list(candidates),
    )
    # 1. random search, then 2. local search from the best random pairs and the candidates
    users = _draw(sample, search.gen, search.n_random, None)
    p = users.shape[1]
    replacements = _draw(sample, search.gen, search.n_random, p) if search.relation == Relation.REPLACE_ONE else None
    bg = _draw(sample, search.gen, search.background, p) if search.background else np.empty((0, p))
    starts = _candidate_starts(search.candidates, search.relation, p)
    checker = _Checker(f, search.vectorized, bg, search.relation)
    pool, ranked = _ranked_pairs(checker, users, replacements, search.n_local)
    second = ranked[0][1]
    best = _Best(ranked[0][2], pool[ranked[0][0]], None if second is None else pool[second])
    for first, other, _ in ranked[: search.n_local]:
        starts.append((pool[first], None if other is None else pool[other]))
    _local_search(search, checker, starts, p, best)
    return SensitivityCheck(
        relation=search.relation,
        claim=search.claim,
        largest=best.value,
        exceeds=bool(best.value > search.claim * (1.0 + search.rtol)),
        ratio=best.value / search.claim,
        user=_frozen(best.user),
        replacement=None if best.replacement is None else _frozen(best.replacement),
        evaluations=checker.evaluations,
    )


@dataclass(frozen=True, kw_only=True)
class _Search:
    """The checked options of one :func:`check_sensitivity` run (the generator ``gen`` is consumed by it)."""

    f: Callable[..., Any]
    sample: Callable[..., Any]
    claim: float
    relation: Relation
    gen: np.random.Generator
    project: Callable[[np.ndarray], Any] | None
    background: int
    n_random: int
    n_local: int
    rtol: float
    vectorized: bool
    candidates: list[Any]


@dataclass
class _Best:
    """The largest change found so far, and the pair attaining it (``replacement`` None under add/remove)."""

    value: float
    user: np.ndarray
    replacement: np.ndarray | None


def _optional_callable(name: str, value: object) -> Any:
    if value is not None:
        _check_callable(name, value)
    return value


def _candidate_list(candidates: object) -> list[Any]:
    try:
        return list(candidates)  # type: ignore[call-overload]
    except TypeError as exc:
        raise ValueError(f"candidates must be a sequence of (u, u') pairs, got {candidates!r}") from exc


def _candidate_starts(pairs: list[Any], relation: Relation, p: int) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """The user's candidates (u, u′) as starts of the local search, each checked (u′ None under add/remove)."""
    starts: list[tuple[np.ndarray, np.ndarray | None]] = []
    for i, pair in enumerate(pairs):
        if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
            raise ValueError(f"candidates[{i}] must be a pair (u, u'), got {pair!r}")
        u = _as_user(f"candidates[{i}][0]", pair[0], p)
        if relation == Relation.ADD_REMOVE:
            if pair[1] is not None:
                raise ValueError(f"candidates[{i}][1] must be None under add_remove, got {pair[1]!r}")
            starts.append((u, None))
        else:
            starts.append((u, _as_user(f"candidates[{i}][1]", pair[1], p)))
    return starts


def _ranked_pairs(
    checker: _Checker, users: np.ndarray, replacements: np.ndarray | None, n_local: int
) -> tuple[np.ndarray, list[tuple[int, int | None, float]]]:
    """The random search: the pool of evaluated users and its best pairs (index, index or None, change), best
    first."""
    ranked: list[tuple[int, int | None, float]]  # (index in pool, index in pool or None, change)
    if replacements is None:
        outputs = checker.evaluate(checker.with_users(users))
        values = np.linalg.norm(outputs - checker.removed_value()[None], axis=1)
        ranked = [(int(i), None, float(values[i])) for i in np.argsort(-values, kind="stable")[: max(n_local, 1)]]
        return users, ranked
    # Both sides are draws from `sample`, so any two of the 2·n_random evaluated datasets
    # form a neighbouring pair: improve the best pairs over this pool before going local.
    n_random = users.shape[0]
    pool = np.concatenate([users, replacements], axis=0)
    outputs = checker.evaluate(checker.with_users(pool))
    values = np.linalg.norm(outputs[:n_random] - outputs[n_random:], axis=1)
    seen: set[tuple[int, int]] = set()
    ranked = []
    for i in np.argsort(-values, kind="stable")[: max(n_local, 1)]:
        a, b, value = _farthest_pair(outputs, int(i), n_random + int(i))
        if (a, b) not in seen:
            seen.add((a, b))
            ranked.append((a, b, value))
    ranked.sort(key=lambda r: -r[2])  # stable: ties keep the random order
    return pool, ranked


def _local_search(
    search: _Search, checker: _Checker, starts: list[tuple[np.ndarray, np.ndarray | None]], p: int, best: _Best
) -> None:
    """Powell's method from every start, over the projected pair; ``best`` is raised to the largest change found."""
    project = search.project

    def admissible(name: str, z: np.ndarray) -> np.ndarray:
        if project is None:
            return z
        return _as_user(f"project(...) (for {name})", project(z.copy()), p)

    def pair_of(z: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        u = admissible("user", z[:p])
        return u, (admissible("replacement", z[p:]) if search.relation == Relation.REPLACE_ONE else None)

    def change(u: np.ndarray, v: np.ndarray | None) -> float:
        return float(checker.changes(u[None], None if v is None else v[None])[0])

    def objective(z: np.ndarray) -> float:
        return -change(*pair_of(z))

    for u0, v0 in starts:
        z0 = u0 if v0 is None else np.concatenate([u0, v0])
        scale = float(np.max(np.abs(z0))) or 1.0
        from scipy import optimize  # imported here: it costs 0.3 s at startup

        res = optimize.minimize(
            objective,
            z0,
            method="Powell",
            options={
                "direc": np.eye(z0.size) * scale,
                "maxfev": _LOCAL_FEV_BASE + _LOCAL_FEV_PER_DIM * z0.size,
                "xtol": 1e-4,
                "ftol": 1e-8,
            },
        )
        # Powell only accepts improvements, but keep the start in case it returned a worse point.
        for z in (np.asarray(res.x, dtype=float), z0):
            u, v = pair_of(z)
            value = change(u, v)
            if value > best.value:
                best.value, best.user, best.replacement = value, u, v
