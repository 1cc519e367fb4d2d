"""What an observer reads from a billboard of counters: their p-sums, in many-run and in one-run audits.

A jointly private agent publishes noisy prefix sums of counters over the users (binary-tree p-sums, or every prefix
noised afresh). :func:`counter_nodes` recovers the separately noised releases, :class:`CounterLog` collects one
run's prefixes and items, :func:`billboard` (:func:`billboard_runs`: R runs at once) writes the residuals of the
p-sums that hold the changed user into a run's row, and :func:`billboard_one_run_scores` scores every user of a
one-run audit, with :func:`billboard_reach` the μ those scores can show at the claim.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .observers import MAX_COORDINATES, OneRunView, cross_projections_runs, flat, over_sigma, project
from .reused_noise import CounterNodes, changed_user_votes, reused_noise_votes, with_votes
from .rows import Trace, Traces

__all__ = [
    "CounterReading",
    "counter_nodes",
    "billboard",
    "billboard_runs",
    "CounterLog",
    "billboard_reach",
    "billboard_one_run_scores",
    "billboard_one_run_features",
    "one_run_view",
    "one_sigma",
]


@dataclass(frozen=True)
class CounterReading:
    """How the auditor reads each counter of a billboard: what the implementation reports and the claim allows of
    each, by counter name, and the observer's options.

    Attributes:
        sigmas: The σ each counter uses (as the implementation reports it): one, or one per step.
        claim: The σ each counter needs under the claim.
        symmetric: Whether each counter is a matrix noised on its upper triangle.
        sensitivities: The declared Δ of one item of each counter (a p-sum holding her item is allowed at most
            Δ/σ_claim).
        coordinates: Add every whitened coordinate of the p-sums that hold her too (no signal of their own: noise
            shared between counters shows there).
        structure: How the prefixes are built (:func:`counter_nodes`): ``"tree"`` or ``"prefix"``.
        allowance_psums: How many p-sums the changed user's allowance counts (her difference, capped at Δ, in
            that many releases) where the layout is not the auditor's to know; ``None``: those of ``structure``
            that hold her.
    """

    sigmas: Mapping[str, Any]
    claim: Mapping[str, Any]
    symmetric: Mapping[str, bool]
    sensitivities: Mapping[str, Any]
    coordinates: bool = False
    structure: str = "tree"
    allowance_psums: int | None = None


def counter_nodes(prefixes: np.ndarray, structure: str = "tree") -> tuple[np.ndarray, np.ndarray]:
    """The separately noised releases of a counter, from its released prefixes P_0 = 0, P_1 … P_T (axis 0).

    With ``tree`` (the binary mechanism) node t (t = 1..T) covers items t − lowbit(t) … t − 1 (0-based) and equals
    P_t − P_{t − lowbit(t)}; with ``prefix`` (every prefix noised afresh) node t is P_t itself, items 0 … t − 1.

    Args:
        prefixes: The released prefixes P_0 … P_T, (T + 1, …).
        structure: ``"tree"`` or ``"prefix"``.

    Returns:
        (nodes (T, …), starts (T,)): each node and the first item it holds.

    Raises:
        ValueError: ``structure`` is neither.

    Examples:
        >>> import numpy as np
        >>> nodes, starts = counter_nodes(np.array([0.0, 1.0, 3.0, 6.0, 10.0]))
        >>> nodes.tolist(), starts.tolist()
        ([1.0, 3.0, 3.0, 10.0], [0, 0, 2, 0])
    """
    t = np.arange(1, prefixes.shape[0])
    if structure == "prefix":
        return prefixes[1:].copy(), np.zeros_like(t)
    if structure != "tree":
        raise ValueError(f"structure must be 'tree' or 'prefix', got {structure!r}")
    starts = t - (t & -t)
    base = prefixes[starts].copy()
    base[starts == 0] = 0.0  # the empty prefix: 0 in a binary-tree counter, whatever an agent released before user 0
    return prefixes[1:] - base, starts


def billboard(
    trace: Trace,
    prefixes: Mapping[str, np.ndarray],
    items0: Mapping[str, np.ndarray],
    delta_items: Mapping[str, np.ndarray],
    index: int,
    reading: CounterReading,
) -> None:
    """Record into ``trace`` the residuals of every p-sum of every counter of one run's billboard.

    The p-sums that hold the changed user give their projections on her difference
    (:func:`~dpkit.audits.rl.observers.project`); a batch of counters (one per step) adds every step's p-sum on
    every other step's direction. The last column reads her coin from noise values the billboard repeats
    (:meth:`~dpkit.audits.rl.rows.Trace.read`, :func:`~dpkit.audits.rl.reused_noise.changed_user_vote`: each
    counter whitened by the σ the implementation reports). It is :func:`billboard_runs` of one run.

    Args:
        trace: Where the run's row is recorded.
        prefixes: Each counter's prefixes as released, (T + 1, …) with P_0 = 0, by name.
        items0: Each counter's items of D, (T, …), by name.
        delta_items: The changed user's item under D′ minus D, by counter name.
        index: The changed user's index (0-based).
        reading: How each counter is read (its σ, the claim's, its shape and Δ; the observer's options).
    """
    runs = Traces(1)
    billboard_runs(
        runs,
        {n: np.asarray(p)[None] for n, p in prefixes.items()},
        {n: np.asarray(x)[None] for n, x in items0.items()},
        {n: np.asarray(x)[None] for n, x in delta_items.items()},
        index,
        reading,
    )
    for parts in zip(runs.r, runs.a, runs.a_claim, runs.a_used, strict=True):
        trace.add(*(x[0] for x in parts))


def billboard_runs(
    traces: Traces,
    prefixes: Mapping[str, np.ndarray],
    items0: Mapping[str, np.ndarray],
    delta_items: Mapping[str, np.ndarray],
    index: int,
    reading: CounterReading,
) -> None:
    """:func:`billboard` of R runs at once, recorded into ``traces`` (run i on its row i).

    Args:
        traces: Where the R runs' rows are recorded.
        prefixes: Each counter's prefixes, (R, T + 1, …), by name.
        items0: Each counter's items of D, (R, T, …), by name.
        delta_items: The changed user's item under D′ minus D, (R, …), by counter name.
        index: The changed user's index (0-based).
        reading: How each counter is read (its σ, the claim's, its shape and Δ; the observer's options).
    """
    runs = traces.runs
    counters: list[CounterNodes] = []
    for name, p in prefixes.items():
        nodes, starts = counter_nodes(np.moveaxis(p, 0, 1), reading.structure)
        nodes = np.moveaxis(nodes, 0, 1)  # (R, T, …)
        x0 = items0[name]
        cumulative = np.concatenate([np.zeros((runs, 1) + x0.shape[2:]), np.cumsum(x0, axis=1)], axis=1)
        stops = np.arange(1, p.shape[1])
        exact = cumulative[:, stops] - cumulative[:, starts]
        sym = reading.symmetric[name]
        residual = flat(nodes - exact, sym, 3)  # (R, T, batch, m)
        d = np.broadcast_to(flat(delta_items[name], sym, 2)[:, None], residual.shape)
        mine = np.zeros(residual.shape)
        mine[:, index : index + 1] = d[:, index : index + 1]  # her difference, every other user's 0
        magnitude = flat(np.abs(p[:, 1:]) + np.abs(p[:, starts]), sym, 3)
        used = np.asarray(reading.sigmas[name], dtype=float).reshape(-1, 1)  # one σ, or one per step
        counters.append(CounterNodes(flat(nodes, sym, 3), starts, magnitude, flat(x0, sym, 3), mine, used))
        contains = ((starts <= index) & (index < stops)).astype(float)[:, None]
        r, a, a_claim, a_used = project(
            residual, d, reading.sigmas[name], reading.claim[name], reading.sensitivities[name]
        )
        held = float(contains.sum())
        allowed = reading.allowance_psums
        widen = math.sqrt(allowed / held) if allowed is not None and held > 0 else 1.0
        traces.add(r, a * contains, a_claim * contains * widen, a_used * contains)
        whiten = np.where(np.asarray(reading.claim[name], dtype=float) > 0.0, reading.claim[name], reading.sigmas[name])
        holding = np.flatnonzero(contains[:, 0])
        if residual.shape[2] > 1:  # a batch of counters (one per step): every step's p-sum on every step's direction
            off = ~np.eye(residual.shape[2], dtype=bool)
            for t in holding:
                traces.extra(cross_projections_runs(residual[:, t], d[:, t], whiten)[:, off])
        if reading.coordinates and residual.shape[2] * residual.shape[3] <= MAX_COORDINATES:
            scale = np.asarray(whiten, dtype=float).reshape(-1, 1) if np.ndim(whiten) else whiten
            for t in holding:
                traces.extra(over_sigma(residual[:, t], scale))
    traces.read(changed_user_votes(counters))


class CounterLog:
    """The billboard of one run (or of R runs): each counter's released prefixes and the items of D, by release name.

    Args:
        names: The counters' release names.
        batched: Whether each counter already carries a leading step axis (LinOpt's) or gets one (OFU's): one flag for
            every counter, or one per name.
        runs: R, when every array logged has a leading run axis (``None``: one run).
    """

    def __init__(self, names: tuple[str, ...], batched: bool | Mapping[str, bool], *, runs: int | None = None) -> None:
        self.names = names
        self.batched = {n: bool(batched[n] if isinstance(batched, Mapping) else batched) for n in names}
        self.runs = runs
        self.prefixes: dict[str, list[np.ndarray]] = {n: [] for n in names}
        self.items: dict[str, list[np.ndarray]] = {n: [] for n in names}
        self.delta: dict[str, np.ndarray] = {}

    def _batch(self, x: Any, name: str) -> np.ndarray:
        arr = np.asarray(x, dtype=float)
        if self.batched[name]:
            return arr
        return arr[None] if self.runs is None else arr[:, None]

    def released(self, released: Mapping[str, np.ndarray]) -> None:
        """Log the prefixes released before one episode.

        Args:
            released: Each counter's released prefix, by name.
        """
        for n in self.names:
            self.prefixes[n].append(self._batch(released[n], n))

    def episode(self, mine: Mapping[str, np.ndarray], theirs: Mapping[str, np.ndarray] | None, which: int) -> None:
        """Log one episode's items.

        Args:
            mine: The user's items, by counter name.
            theirs: The other canary's items under the same plan, only at the changed user (``None`` elsewhere).
            which: The dataset played: 0 for D, 1 for D′ (which of ``mine`` and ``theirs`` is D's).
        """
        if theirs is not None:
            d0, d1 = (mine, theirs) if which == 0 else (theirs, mine)
            self.delta = {n: self._batch(d1[n], n) - self._batch(d0[n], n) for n in self.names}
            mine = d0
        for n in self.names:
            self.items[n].append(self._batch(mine[n], n))

    def finish(
        self,
        trace: Trace,
        index: int,
        reading: CounterReading,
    ) -> None:
        """Record the run's row into ``trace`` (:func:`billboard`).

        P_0 … P_{K−1} are released (before-episode), so items 0 … K − 2 are in them.

        Args:
            trace: Where the run's row is recorded.
            index: The changed user's index (0-based).
            reading: How each counter is read (its σ, the claim's, its shape and Δ; the observer's options).
        """
        released = len(self.prefixes[self.names[0]])
        billboard(
            trace,
            {n: np.stack(self.prefixes[n]) for n in self.names},
            {n: np.stack(self.items[n][: released - 1]) for n in self.names},
            self.delta,
            index,
            reading,
        )

    def finish_runs(
        self,
        traces: Traces,
        index: int,
        reading: CounterReading,
    ) -> None:
        """:meth:`finish` of a log of R runs, into ``traces`` (run i on its row i).

        It records exactly what a log of run i alone records (:func:`billboard_runs`).

        Args:
            traces: Where the R runs' rows are recorded.
            index: The changed user's index (0-based).
            reading: How each counter is read (its σ, the claim's, its shape and Δ; the observer's options).

        Raises:
            ValueError: The log is not of ``runs`` runs, or ``traces`` not of as many.
        """
        if self.runs is None or traces.runs != self.runs:
            raise ValueError(f"finish_runs needs a log of runs and traces of as many runs, got {traces.runs}")
        released = len(self.prefixes[self.names[0]])
        billboard_runs(
            traces,
            {n: np.stack(self.prefixes[n], axis=1) for n in self.names},
            {n: np.stack(self.items[n][: released - 1], axis=1) for n in self.names},
            self.delta,
            index,
            reading,
        )


def billboard_reach(
    starts: np.ndarray, users: int, sensitivities: Mapping[str, float], claim_sigmas: Mapping[str, float]
) -> float:
    """The median over users of the μ :func:`billboard_one_run_scores` can show per user at the claim.

    Every item differs by its declared Δ and each p-sum's noise has the claim's σ: the μ of a user is
    √(Σ over counters and over the p-sums holding her of Δ²/(σ² + ¼(s − 1)Δ²)), s the p-sum's number of users (the
    others' coins as noise).

    Args:
        starts: The first user of each p-sum (:func:`counter_nodes`).
        users: How many users.
        sensitivities: The declared Δ of one item of each counter (per step: the worst step's), by name.
        claim_sigmas: The σ each counter needs under the claim, by name (one per counter).

    Returns:
        The median μ.
    """
    total = np.zeros(users)
    for name, sensitivity in sensitivities.items():
        # per-step Δ: the worst step's (the counter's declared Δ); a per-step σ has no single reach
        d2, s2 = float(np.max(sensitivity)) ** 2, one_sigma(name, claim_sigmas[name]) ** 2
        for t, lo in enumerate(starts[:users]):
            size = t + 1 - int(lo)
            total[int(lo) : t + 1] += d2 / (s2 + 0.25 * (size - 1) * d2)
    return float(np.median(np.sqrt(total)))


def billboard_one_run_scores(
    prefixes: Mapping[str, np.ndarray],
    items0: Mapping[str, np.ndarray],
    items1: Mapping[str, np.ndarray],
    sigmas: Mapping[str, float],
    symmetric: Mapping[str, bool],
    *,
    structure: str = "tree",
) -> np.ndarray:
    """Every user's score from a billboard of counters, in a run where every user is a canary.

    Each p-sum of a counter holds the items of a block of users plus N(0, σ²) noise; centred at the block's items under
    coin ½ it is, along user k's difference d_k = item1_k − item0_k, (coin_k − ½)·‖d_k‖² plus the noise and the other
    users' coins (each ±½ along d_i). The score sums these projections over every p-sum holding k, each weighted by
    ‖d_k‖² over a bound on its variance, σ²‖d_k‖² + ¼‖d_k‖²·Σ_{i≠k} ‖d_i‖², so that small blocks (where k is almost
    alone) count most. Users in no released p-sum score 0. A user whose coin a repeated noise value reads exactly
    (:mod:`dpkit.audits.rl.reused_noise`: noise reused, or none) comes first on her side
    (:func:`~dpkit.audits.rl.reused_noise.with_votes`).

    Args:
        prefixes: Each counter's released noisy prefixes P_0 = 0, P_1 … (P_t holds items 0 … t − 1), by name.
        items0: User k's item had she been canary 0, given the plan she was served (what the auditor knows), (T, …),
            by counter name.
        items1: Likewise had she been canary 1.
        sigmas: The σ of each counter (one per counter: :func:`one_sigma`).
        symmetric: Whether each counter is a matrix noised on its upper triangle, by name.
        structure: How the prefixes are built (:func:`counter_nodes`): ``"tree"`` or ``"prefix"``.

    Returns:
        One score per user, (T,): higher when canary 1 is the likelier.
    """
    return billboard_one_run_features(prefixes, items0, items1, sigmas, symmetric, structure=structure)[0]


def billboard_one_run_features(
    prefixes: Mapping[str, np.ndarray],
    items0: Mapping[str, np.ndarray],
    items1: Mapping[str, np.ndarray],
    sigmas: Mapping[str, float],
    symmetric: Mapping[str, bool],
    *,
    structure: str = "tree",
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`billboard_one_run_scores` and, beside them, every user's projections split by counter and tree level.

    Column (counter c, level ℓ) sums proj/‖d_k‖² over the p-sums of c that hold 2^ℓ users and user k (0 where she has
    none): the coordinates a score learned on other canaries weighs for itself (an un-noised counter, a level whose
    noise is missing), where the white-box score weighs them by the declared σ. The last column holds the user's votes
    from reused noise (:func:`~dpkit.audits.rl.reused_noise.reused_noise_votes`).

    Args:
        prefixes: Each counter's released noisy prefixes, by name (as :func:`billboard_one_run_scores`).
        items0: User k's item had she been canary 0, by counter name.
        items1: User k's item had she been canary 1, by counter name.
        sigmas: The σ of each counter (one per counter).
        symmetric: Whether each counter is a matrix noised on its upper triangle, by name.
        structure: How the prefixes are built: ``"tree"`` or ``"prefix"``.

    Returns:
        (scores (T,), features (T, counters × L + 1)), L = ⌊log2 T⌋ + 1.
    """
    names = tuple(prefixes)
    t_users = next(iter(items0.values())).shape[0]
    levels = int(math.log2(max(t_users, 1))) + 1
    scores = np.zeros(t_users)
    features = np.zeros((t_users, len(names) * levels))
    counters: list[CounterNodes] = []
    for c, name in enumerate(names):
        sym = symmetric[name]
        p = np.asarray(prefixes[name], dtype=float)
        nodes, starts = counter_nodes(p, structure)
        released = nodes.shape[0]
        x0 = flat(np.asarray(items0[name], dtype=float), sym, 1)[:released]
        d = flat(np.asarray(items1[name], dtype=float), sym, 1)[:released] - x0
        magnitude = flat(np.abs(p[1 : released + 1]) + np.abs(p[starts]), sym, 1)
        counters.append(CounterNodes(flat(nodes, sym, 1), starts, magnitude, x0, d, one_sigma(name, sigmas[name])))
        centre = x0 + 0.5 * d
        cum = np.concatenate([np.zeros((1,) + centre.shape[1:]), np.cumsum(centre, axis=0)])
        norm2 = np.einsum("tm,tm->t", d, d)
        cum_norm2 = np.concatenate([[0.0], np.cumsum(norm2)])
        residual = flat(nodes, sym, 1) - (cum[1 : released + 1] - cum[starts])  # (nodes, m)
        sigma2 = one_sigma(name, sigmas[name]) ** 2
        for t in range(released):
            lo, hi = int(starts[t]), t + 1  # node t (0-based) = p-sum t + 1 covers users lo … t
            proj = d[lo:hi] @ residual[t]
            others = cum_norm2[hi] - cum_norm2[lo] - norm2[lo:hi]
            var = sigma2 * norm2[lo:hi] + 0.25 * norm2[lo:hi] * others
            scores[lo:hi] += np.where(var > 0, norm2[lo:hi] * proj / np.where(var > 0, var, 1.0), 0.0)
            level = c * levels + min(int(math.log2(hi - lo)), levels - 1)
            seen = norm2[lo:hi] > 0
            features[lo:hi, level] += np.where(seen, proj / np.where(seen, norm2[lo:hi], 1.0), 0.0)
    votes = reused_noise_votes(counters, t_users)
    return with_votes(scores, votes), np.column_stack([features, votes])


def one_sigma(name: str, sigma: Any) -> float:
    """The one σ of a release: the one-run scores weigh every p-sum with one σ per counter.

    Args:
        name: The release's name (for the error).
        sigma: Its σ: one, or one per step.

    Returns:
        The σ.

    Raises:
        ValueError: The σ differ between steps (audit such an allocation many-run).

    Examples:
        >>> one_sigma("counts", [2.0, 2.0])
        2.0
    """
    s = np.asarray(sigma, dtype=float)
    if s.ndim and not np.all(s == s.flat[0]):
        raise ValueError(
            f"{name} has one σ per step (the agent's, or the claim's at claim_allocation='optimal'): the one-run "
            "scores take one σ per release; audit this allocation many-run"
        )
    return float(s.flat[0])


def one_run_view(log0: CounterLog, log1: CounterLog, reading: CounterReading) -> OneRunView:
    """A one-run audit's view of a billboard: every user's score and features
    (:func:`billboard_one_run_features`) and the reach at the claim (:func:`billboard_reach`).

    Args:
        log0: The released prefixes, and each user's items had she been canary 0.
        log1: Each user's items had she been canary 1 (its prefixes are not read).
        reading: How each counter is read (its σ, the claim's, its shape and Δ; the layout of its p-sums).

    Returns:
        The scores, the observer (``billboard``), the reach and the features.
    """
    names = log0.names
    prefixes = {n: np.stack(log0.prefixes[n]) for n in names}
    scores, features = billboard_one_run_features(
        prefixes,
        {n: np.stack(log0.items[n]) for n in names},
        {n: np.stack(log1.items[n]) for n in names},
        reading.sigmas,
        reading.symmetric,
        structure=reading.structure,
    )
    starts = counter_nodes(prefixes[names[0]], reading.structure)[1]
    reach = billboard_reach(starts, len(starts), reading.sensitivities, reading.claim)
    return OneRunView(scores, "billboard", reach, features)
