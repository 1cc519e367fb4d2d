"""Choosing the neighbouring pair to audit when the target is a black box.

An audit of one pair (D, D′) bounds the privacy loss *of that pair*; to show that a claim is
violated the auditor needs a pair on which the mechanism leaks more than the claim allows. For a
white-box mechanism the worst pair is known from the analysis; for a black box it must be found.
:func:`search_neighbours` screens worst-case candidates supplied by the user and random pairs drawn by the user's
``sample_pair(rng) -> (D, D′)`` with a cheap statistic (:func:`screen_pair`, not a bound) and keeps the strongest;
:func:`audit_searched` then audits the chosen pair afresh with independent seeds, so its bound holds at 1 − α
however the pair was chosen. Why no run is reused, and how the seeds are spawned: see docs/explanation/verdicts.md
("Searching for the pair to audit").
"""

from __future__ import annotations

import enum
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpkit.accountant.validation import check_count, check_probability, enum_values
from dpkit.algorithms.executors import Executor, run_pair, spawn_seeds

from .attacks import ATTACKS, Attack, make_attack
from .claims import Claim
from .engine import AuditResult, audit_pair
from .estimators import estimate, select_threshold

__all__ = [
    "SOURCES",
    "NeighbourSource",
    "NeighbourSearch",
    "audit_searched",
    "final_audit_seed",
    "screen_pair",
    "search_neighbours",
]


class NeighbourSource(enum.StrEnum):
    """Where a searched neighbouring pair came from: the user's candidates or the random search."""

    USER = "user"
    RANDOM = "random"


#: The values of :class:`NeighbourSource`.
SOURCES: tuple[str, ...] = enum_values(NeighbourSource)
"""Where a candidate pair came from: the user's ``candidates`` or ``sample_pair``."""

AttackSpec = Attack | str | Callable[[], Attack]


@dataclass(frozen=True)
class NeighbourSearch:
    """The outcome of :func:`search_neighbours`: the chosen pair and the screening statistics.

    ``scores[i]`` is the screening statistic (:func:`screen_pair`) of candidate ``i``, user
    candidates first, then the random ones in the order drawn; ``index`` is the chosen one
    (the first of any ties) and ``candidates`` their number.
    """

    pair: tuple[Any, Any]
    index: int
    scores: tuple[float, ...]
    candidates: int
    source: str

    @property
    def statistic(self) -> float:
        """The screening statistic of the chosen pair (``scores[index]``; not a bound)."""
        return self.scores[self.index]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary; the datasets themselves are left out (they may be large).

        Returns:
            The chosen index, its source, the number of candidates, its statistic and every candidate's score.
        """
        return {
            "index": self.index,
            "source": self.source,
            "candidates": self.candidates,
            "statistic": self.statistic,
            "scores": list(self.scores),
        }


# --------------------------------------------------------------------------- validation


def _check_pair(name: str, pair: object) -> tuple[Any, Any]:
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        shown = f"a {type(pair).__name__} of length {len(pair)}" if isinstance(pair, (tuple, list)) else repr(pair)
        raise ValueError(f"{name} must be a (dataset0, dataset1) pair, got {shown}")
    return pair[0], pair[1]


def _check_random_pairs(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < 0:
        raise ValueError(f"random_pairs must be an integer >= 0, got {value!r}")
    return int(value)


def _check_runs(name: str, value: object, minimum: int, why: str) -> int:
    runs = check_count(name, value)
    if runs < minimum:
        raise ValueError(f"{name} must be >= {minimum} ({why}), got {runs}")
    return runs


def _attack_factory(attack: object) -> Callable[[], Attack]:
    """A function returning the attack to screen one candidate with (a fresh one if it learns)."""
    if isinstance(attack, Attack):
        if attack.needs_fit:
            raise ValueError(
                f"attack {attack!r} is a learned attack instance: one instance cannot be fitted afresh for every "
                "candidate; pass its name or a factory (e.g. lambda: LogisticRegressionAttack(...))"
            )
        return lambda: attack
    if isinstance(attack, str):
        if attack not in ATTACKS:
            raise ValueError(
                f"attack must be an audits.Attack, a factory or one of {', '.join(ATTACKS)}; got {attack!r}"
            )
        try:
            make_attack(attack)
        except TypeError:
            raise ValueError(
                f"attack {attack!r} cannot be built from its name alone (it needs arguments): pass an instance or a "
                "factory"
            ) from None
        return lambda: make_attack(attack)
    if callable(attack):

        def build() -> Attack:
            made = attack()
            if not isinstance(made, Attack):
                raise ValueError(f"the attack factory {attack!r} must return an audits.Attack, got {made!r}")
            return made

        return build
    raise ValueError(f"attack must be an audits.Attack, a factory returning one or an attack name, got {attack!r}")


# --------------------------------------------------------------------------- screening


def screen_pair(
    release: Callable[..., np.ndarray],
    dataset0: Any,
    dataset1: Any,
    attack: Attack,
    runs: int,
    seed: int | np.random.SeedSequence,
    *,
    executor: Executor | None = None,
) -> float:
    """The screening statistic of one pair: the in-sample μ lower bound (a score, not a bound).

    :func:`select_threshold` (objective μ, α = 0.05) picks the threshold on the scored runs, and the statistic is
    the Clopper–Pearson μ lower bound at that threshold on the *same* runs: optimistic, not a valid bound (why not
    a point estimate: see docs/explanation/verdicts.md, "Searching for the pair to audit").

    Args:
        release: The release function, ``release(dataset, rng, n) -> array (n, …)``.
        dataset0: The dataset D.
        dataset1: The neighbouring dataset D′.
        attack: The attack; a learned one is fitted on the first ``runs // 2`` runs of each dataset and scores
            the rest, a white-box one scores every run.
        runs: Runs per dataset.
        seed: The seed of :func:`~dpkit.algorithms.executors.run_pair`.
        executor: Where the runs are made (None: in-process).

    Returns:
        The in-sample μ lower bound; 0 when the attack does not distinguish the pair.
    """
    out0, out1 = run_pair(release, dataset0, dataset1, runs, seed, executor=executor)
    if attack.needs_fit:
        half = runs // 2
        attack.fit(out0[:half], out1[:half])
        out0, out1 = out0[half:], out1[half:]
    s0, s1 = attack.score(out0), attack.score(out1)
    threshold = select_threshold(s0, s1, "mu")
    return estimate(s0, s1, threshold).mu_lower


def search_neighbours(
    release: Callable[..., np.ndarray],
    *,
    candidates: Sequence[tuple[Any, Any]] = (),
    sample_pair: Callable[[np.random.Generator], tuple[Any, Any]] | None = None,
    random_pairs: int = 0,
    attack: AttackSpec = "logistic",
    runs: int = 2_000,
    seed: int = 0,
    executor: Executor | None = None,
) -> NeighbourSearch:
    """Screen user-supplied and random neighbouring pairs; return the one with the strongest attack.

    The candidate with the largest statistic is kept (the first on ties); random pairs are drawn one at a time,
    so only the chosen pair is held in memory. The statistic is biased upward and its runs must not be reused for a
    bound: audit the chosen pair afresh, as :func:`audit_searched` does. Same arguments and seed, same result.

    Args:
        release: The release function, ``release(dataset, rng, n) -> array (n, …)``.
        candidates: (D, D′) pairs from the user (the worst cases the analysis suggests).
        sample_pair: ``sample_pair(rng) -> (D, D′)`` draws a random admissible neighbouring pair.
        random_pairs: How many times ``sample_pair`` is called (one generator seeded from ``seed``).
        attack: A name for :func:`~dpkit.audits.attacks.make_attack`, a zero-argument factory returning an
            :class:`~dpkit.audits.attacks.Attack`, or a white-box attack instance that suits every candidate.
        runs: Runs per dataset for each candidate's screening (at least 4).
        seed: The seed of the draws and of the screening.
        executor: Where the runs are made (None: in-process).

    Returns:
        The chosen pair, its index and source, and every candidate's statistic.

    Raises:
        ValueError: If ``release`` is not callable, there is no candidate in all, a candidate is not a pair,
            ``sample_pair`` and ``random_pairs`` do not go together, ``runs`` < 4, or ``attack`` is a learned
            instance, an unknown name or a factory that returns no attack.
    """
    if not callable(release):
        raise ValueError(f"release must be callable, got {release!r}")
    if isinstance(candidates, (str, bytes)) or not isinstance(candidates, Sequence):
        raise ValueError(f"candidates must be a sequence of (dataset0, dataset1) pairs, got {candidates!r}")
    user = [_check_pair(f"candidates[{i}]", pair) for i, pair in enumerate(candidates)]
    random_pairs = _check_random_pairs(random_pairs)
    if random_pairs > 0 and not callable(sample_pair):
        raise ValueError(
            f"sample_pair must be callable (rng -> (dataset0, dataset1)) when random_pairs > 0, got {sample_pair!r}"
        )
    if sample_pair is not None and random_pairs == 0:
        raise ValueError("random_pairs must be >= 1 when sample_pair is given (it would never be called), got 0")
    total = len(user) + random_pairs
    if total == 0:
        raise ValueError(
            "search_neighbours needs at least one candidate: give candidates or sample_pair with "
            "random_pairs >= 1, got 0 candidates and random_pairs=0"
        )
    runs = _check_runs("runs", runs, 4, "training and selection halves")
    new_attack = _attack_factory(attack)
    sample_seed, screen_seed, _ = spawn_seeds(seed, 3)
    rng = np.random.default_rng(sample_seed)
    user_seeds, random_seeds = spawn_seeds(screen_seed, 2)
    screen_seeds = spawn_seeds(user_seeds, len(user)) if user else []
    if random_pairs:
        screen_seeds += spawn_seeds(random_seeds, random_pairs)

    scores: list[float] = []
    best: tuple[Any, Any] | None = None
    best_index = 0
    for i in range(total):
        if i < len(user):
            pair = user[i]
        else:
            j = i - len(user)
            pair = _check_pair(f"sample_pair's draw {j} (returned value)", sample_pair(rng))  # type: ignore[misc]
        score = screen_pair(release, pair[0], pair[1], new_attack(), runs, screen_seeds[i], executor=executor)
        scores.append(score)
        if best is None or score > scores[best_index]:
            best, best_index = pair, i
    assert best is not None
    return NeighbourSearch(
        pair=best,
        index=best_index,
        scores=tuple(scores),
        candidates=total,
        source=SOURCES[0] if best_index < len(user) else SOURCES[1],
    )


# --------------------------------------------------------------------------- search, then audit


def final_audit_seed(seed: int | np.random.SeedSequence) -> int:
    """The integer seed :func:`audit_searched` gives its final audit: independent of the search's streams.

    Args:
        seed: The search's seed.

    Returns:
        The final audit's seed.
    """
    return int(spawn_seeds(seed, 3)[2].generate_state(1)[0])


def audit_searched(
    release: Callable[..., np.ndarray],
    claim: Claim,
    *,
    candidates: Sequence[tuple[Any, Any]] = (),
    sample_pair: Callable[[np.random.Generator], tuple[Any, Any]] | None = None,
    random_pairs: int = 0,
    screen_runs: int = 2_000,
    runs: int = 20_000,
    seed: int = 0,
    attack: AttackSpec = "logistic",
    **audit_options: Any,
) -> tuple[NeighbourSearch, AuditResult]:
    """Search for the strongest neighbouring pair, then audit it afresh against ``claim``.

    No screening run enters the bound, so the bound is valid at 1 − α for the chosen pair.

    Args:
        release: The release function, ``release(dataset, rng, n) -> array (n, …)``.
        claim: The privacy claim audited.
        candidates: (D, D′) pairs from the user, as for :func:`search_neighbours`.
        sample_pair: Draws a random neighbouring pair, as for :func:`search_neighbours`.
        random_pairs: How many random pairs are drawn.
        screen_runs: Runs per dataset for each candidate's screening (at least 4).
        runs: New runs per dataset of the final audit (at least 6), seeded with :func:`final_audit_seed`.
        seed: The seed of the search and, through :func:`final_audit_seed`, of the final audit.
        attack: As for :func:`search_neighbours`; the final audit gets the name, the white-box instance or a new
            instance from the factory.
        **audit_options: Passed to :func:`dpkit.audits.audit_pair` (``alpha``, ``delta``, ``objective``, ``executor``,
            ``chunk_size``, ``progress``); ``executor`` also runs the screening.

    Returns:
        The search and the final audit's result.

    Raises:
        ValueError: If ``claim`` is not a :class:`~dpkit.audits.claims.Claim`, ``screen_runs`` < 4, ``runs`` < 6,
            ``alpha`` is not a probability, or the search's arguments are invalid (as in
            :func:`search_neighbours`).
    """
    if not isinstance(claim, Claim):
        raise ValueError(f"claim must be an audits.Claim, got {type(claim).__name__}")
    screen_runs = _check_runs("screen_runs", screen_runs, 4, "training and selection halves")
    runs = _check_runs("runs", runs, 6, "train, selection and evaluation splits")
    if "alpha" in audit_options:
        check_probability("alpha", audit_options["alpha"])
    new_attack = _attack_factory(attack)
    search = search_neighbours(
        release,
        candidates=candidates,
        sample_pair=sample_pair,
        random_pairs=random_pairs,
        attack=attack,
        runs=screen_runs,
        seed=seed,
        executor=audit_options.get("executor"),
    )
    final_attack: Attack | str = attack if isinstance(attack, (str, Attack)) else new_attack()
    result = audit_pair(
        release,
        search.pair[0],
        search.pair[1],
        claim,
        attack=final_attack,
        runs=runs,
        seed=final_audit_seed(seed),
        **audit_options,
    )
    return search, result
