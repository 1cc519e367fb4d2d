"""Choosing the neighbouring pair to audit when the target is a black box.

An audit of one pair (D, D′) bounds the privacy loss *of that pair*; to show that a claim is
violated the auditor needs a pair on which the mechanism leaks more than the claim allows. For a
white-box mechanism the worst pair is known from the analysis; for a black box it must be found.
:func:`search_neighbours` takes

* worst-case **candidates** supplied by the user (the pairs the analysis says are extreme), and
* **random search** over the admissible datasets: ``random_pairs`` pairs drawn by the user's
  ``sample_pair(rng) -> (D, D′)``, which knows the admissible set and the neighbouring relation,

screens every candidate with a cheap audit-like statistic (the in-sample μ lower bound of a
freshly fitted attack, :func:`screen_pair`) and keeps the pair with the largest one.
:func:`audit_searched` then audits the chosen pair afresh with :func:`dpkit.audits.audit`.

**Validity.** The screening statistic is not a bound: the threshold is chosen on the runs it is
computed from, and the maximum over many candidates is biased upward (the winner's curse). So
the screening runs are *never reused* for the final bound: the chosen pair is a function of the
screening randomness only, and the final audit runs the mechanism again with independent seeds.
Conditionally on the chosen pair the final audit is an ordinary audit of one fixed pair, so its
bound holds at confidence 1 − α however the pair was chosen; no union bound over the candidates
is needed (only one pair is ever bounded).

**Seeds.** With ``children = spawn_seeds(seed, 3)``: the random pairs are drawn from
``np.random.default_rng(children[0])`` in order; user candidate i is screened with
``run_pair(..., seed=c[0][i])`` and random pair j with ``c[1][j]``, where ``c[s] =
spawn_seeds(spawn_seeds(children[1], 2)[s], ·)``; and :func:`audit_searched` seeds its final
audit with the integer ``children[2].generate_state(1)[0]`` (:func:`final_audit_seed`). The same
seed therefore gives the same search and the same audit (on any executor), and a candidate's
score does not change when candidates are added to either list.
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
from .engine import AuditResult, audit
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
        """A JSON-ready summary; the datasets themselves are left out (they may be large)."""
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

    ``release`` is run ``runs`` times on each dataset (:func:`~dpkit.algorithms.executors.run_pair` with
    ``seed``). A learned ``attack`` is fitted on the first ``runs // 2`` runs of each and scores
    the rest; a white-box one scores every run. :func:`select_threshold` (objective μ, α = 0.05)
    picks the threshold on the scored runs, and the statistic is the Clopper–Pearson μ lower
    bound at that threshold on the *same* runs (:attr:`AuditEstimate.mu_lower`): the largest such
    bound over thresholds, so it is optimistic and is not a valid bound. It is 0 when the attack
    does not distinguish the pair.

    Why not a point estimate Φ⁻¹(1 − FPR) − Φ⁻¹(FNR) with smoothed rates: on the same runs the
    selected threshold often sits in a tail (no false positives, almost all false negatives),
    where the point estimate is very noisy; ranking by it picked pairs of μ 0.3 over pairs of
    μ 0.85 in testing, while the penalised bound ranks pairs by what the final audit can show.
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

    ``candidates`` are (D, D′) pairs from the user (the worst cases the analysis suggests);
    ``sample_pair(rng) -> (D, D′)`` draws a random admissible neighbouring pair and is called
    ``random_pairs`` times with one :class:`numpy.random.Generator` seeded from ``seed``. There
    must be at least one candidate in all. Each candidate is screened by :func:`screen_pair` with
    ``runs`` runs per dataset and a fresh ``attack``: a name for :func:`~dpkit.audits.attacks.make_attack`,
    a zero-argument factory returning an :class:`~dpkit.audits.attacks.Attack`, or a white-box attack
    instance (one that needs no fitting; it then scores every candidate, so it must suit them
    all, e.g. a :class:`~dpkit.audits.attacks.ScoreFunction`). The candidate with the largest statistic
    is kept (the first on ties); random pairs are drawn one at a time, so only the chosen pair is
    held in memory.

    The screening statistic is biased upward (threshold fitted on the scored runs, maximum over
    candidates) and its runs must not be reused for a bound: audit the chosen pair afresh with
    :func:`dpkit.audits.audit` and a different seed, as :func:`audit_searched` does (see the module
    docstring). Same arguments and seed, same result.
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
    """The integer seed :func:`audit_searched` gives its final audit: independent of the search's streams."""
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

    The search is :func:`search_neighbours` with ``screen_runs`` runs per candidate and ``seed``;
    the chosen pair is then audited by :func:`dpkit.audits.audit` with ``runs`` new runs per dataset,
    seeded with :func:`final_audit_seed` (``seed``), so no screening run enters the bound and the
    bound is valid at 1 − α for the chosen pair. ``attack`` is as for :func:`search_neighbours`;
    the final audit gets the name, the white-box instance or a new instance from the factory.
    ``audit_options`` go to :func:`dpkit.audits.audit` (``alpha``, ``delta``, ``objective``,
    ``executor``, ``chunk_size``, ``progress``); ``executor`` also runs the screening.
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
    result = audit(
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
