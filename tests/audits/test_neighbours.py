"""Neighbour search for black-box targets: user candidates, random search, and a fresh final audit.

A dataset is a tuple of users, each a scalar or a vector in [0, 1]; the release is the sum of the
users plus N(0, σ²) noise on every coordinate, vectorised over runs (``release(ds, rng, n) -> (n, k)``).
Neighbours replace one user, so a pair's true μ is ‖D′ − D‖/σ summed over users, and the worst case
(a user moved from 0 to 1 on every coordinate) has μ = √k/σ.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest

from dpkit.audits import Claim, LogisticRegressionAttack, ScoreFunction, audit_pair, make_executor
from dpkit.audits.neighbours import NeighbourSearch, audit_searched, final_audit_seed, search_neighbours

SIGMA = 1.0
USERS = 3


def sum_release(ds: tuple, rng: np.random.Generator, n: int) -> np.ndarray:
    """The Gaussian sum query: Σ users + N(0, σ²) per coordinate."""
    total = np.atleast_1d(np.sum(np.asarray(ds, dtype=float), axis=0))
    return total + SIGMA * rng.standard_normal((n, total.size))


def sum_release_bug(ds: tuple, rng: np.random.Generator, n: int) -> np.ndarray:
    """The hidden weakness: the noise is skipped when some user's value exceeds 0.9."""
    total = np.atleast_1d(np.sum(np.asarray(ds, dtype=float), axis=0))
    sigma = 0.0 if np.max(ds) > 0.9 else SIGMA
    return total + sigma * rng.standard_normal((n, total.size))


def sample_pair(rng: np.random.Generator) -> tuple[tuple, tuple]:
    """A random admissible pair: users uniform in [0, 1], one of them replaced by a fresh uniform draw."""
    d0 = rng.uniform(size=USERS)
    d1 = d0.copy()
    d1[rng.integers(USERS)] = rng.uniform()
    return tuple(d0.tolist()), tuple(d1.tolist())


def true_mu(pair: tuple) -> float:
    d0, d1 = (np.asarray(d, dtype=float) for d in pair)
    return float(np.linalg.norm((d1 - d0).sum(axis=0))) / SIGMA


def recording(sampler: Callable) -> tuple[Callable, list]:
    drawn: list = []

    def sample(rng: np.random.Generator) -> tuple:
        pair = sampler(rng)
        drawn.append(pair)
        return pair

    return sample, drawn


# ---------------------------------------------------------------- user candidates and random search


SCALAR_BASE = (0.0, 0.3, 0.6)
VECTOR_BASE = ((0.0, 0.0), (0.5, 0.5), (1.0, 0.2))


@pytest.mark.parametrize(
    ("base", "changes"),
    [
        (SCALAR_BASE, [0.5, 1.0, 0.1]),
        (VECTOR_BASE, [(0.3, 0.0), (1.0, 1.0), (0.5, 0.5)]),
    ],
    ids=["scalars", "vectors"],
)
def test_the_strongest_user_candidate_is_chosen(base: tuple, changes: list) -> None:
    candidates = [(base, (change,) + base[1:]) for change in changes]
    found = search_neighbours(sum_release, candidates=candidates, seed=1)
    assert isinstance(found, NeighbourSearch)
    assert found.index == 1 and found.source == "user" and found.candidates == 3
    assert found.pair == candidates[1]
    mus = [true_mu(pair) for pair in candidates]
    assert np.argsort(found.scores).tolist() == np.argsort(mus).tolist()  # screening ranks all three correctly
    assert found.statistic == max(found.scores) <= mus[1]
    assert found.to_dict() == {
        "index": 1,
        "source": "user",
        "candidates": 3,
        "statistic": found.statistic,
        "scores": list(found.scores),
    }


@pytest.mark.slow
def test_random_search_finds_a_near_worst_case_pair() -> None:
    sample, drawn = recording(sample_pair)
    found = search_neighbours(sum_release, sample_pair=sample, random_pairs=100, seed=0)
    assert found.source == "random" and found.candidates == 100 and len(drawn) == 100
    assert found.pair == drawn[found.index]
    best = max(true_mu(pair) for pair in drawn)
    assert true_mu(found.pair) >= 0.8 * (1.0 / SIGMA)  # the worst case moves one user from 0 to 1
    assert true_mu(found.pair) >= best - 0.1  # and screening picks (nearly) the best pair drawn
    # User candidates come first and compete with the random ones on the same statistic.
    worst = ((0.0,) * USERS, (1.0,) + (0.0,) * (USERS - 1))
    both = search_neighbours(sum_release, candidates=[worst], sample_pair=sample_pair, random_pairs=100, seed=0)
    assert both.candidates == 101 and both.scores[1:] == found.scores
    assert both.index == int(np.argmax(both.scores)) and both.source == ("user" if both.index == 0 else "random")


def test_a_hidden_weakness_is_found_by_random_search_and_its_correct_twin_passes() -> None:
    claim = Claim.gaussian(SIGMA, 1.0)
    naive = ((0.2, 0.2, 0.2), (0.8, 0.2, 0.2))  # the user's worst case misses the bug (no value above 0.9)
    assert audit_pair(sum_release_bug, *naive, claim, runs=20_000, seed=2).verdict == "consistent"
    options = {"candidates": [naive], "sample_pair": sample_pair, "random_pairs": 20, "seed": 3}
    search, result = audit_searched(sum_release_bug, claim, **options)
    assert search.source == "random" and max(max(search.pair[0]), max(search.pair[1])) > 0.9
    assert search.statistic > search.scores[0] + 2.0
    assert result.verdict == "violation" and result.mu_lower > 3.0
    assert result.seed == final_audit_seed(3) and result.runs == 20_000
    twin_search, twin = audit_searched(sum_release, claim, **options)
    assert twin.verdict == "consistent" and twin.mu_lower <= 1.0 / SIGMA
    assert true_mu(twin_search.pair) > 0.6  # the twin's search still finds a strong pair


# ---------------------------------------------------------------- reproducibility and attacks


@pytest.mark.slow
def test_same_seed_same_result_and_executor_independent() -> None:
    options = {"candidates": [(SCALAR_BASE, (1.0, 0.3, 0.6))], "sample_pair": sample_pair, "random_pairs": 6}
    claim = Claim.gaussian(SIGMA)
    s1, r1 = audit_searched(sum_release, claim, seed=4, screen_runs=1_000, runs=6_000, **options)
    s2, r2 = audit_searched(sum_release, claim, seed=4, screen_runs=1_000, runs=6_000, **options)
    assert s1 == s2 and r1.estimate == r2.estimate and r1.seed == r2.seed
    with make_executor("processes", workers=2) as pool:
        s3, r3 = audit_searched(sum_release, claim, seed=4, screen_runs=1_000, runs=6_000, executor=pool, **options)
    assert s3 == s1 and r3.estimate == r1.estimate and r3.executor == "processes"
    other = search_neighbours(sum_release, seed=5, runs=1_000, **options)
    assert other.scores != s1.scores
    # Candidate i's screening seed does not depend on how many candidates follow it.
    fewer = search_neighbours(sum_release, seed=4, runs=1_000, **{**options, "random_pairs": 3})
    assert fewer.scores == s1.scores[:4]
    # The final audit's seed is derived from, and distinct from, the search seed.
    assert final_audit_seed(4) == final_audit_seed(4) != 4 and final_audit_seed(4) != final_audit_seed(5)


def test_attack_factories_and_white_box_instances() -> None:
    candidates = [(SCALAR_BASE, (v, 0.3, 0.6)) for v in (0.4, 0.9)]
    made: list = []

    def factory() -> LogisticRegressionAttack:
        made.append(LogisticRegressionAttack(l2=1e-3))
        return made[-1]

    search, result = audit_searched(
        sum_release, Claim.gaussian(SIGMA), candidates=candidates, attack=factory, runs=6_000, seed=6
    )
    assert search.index == 1 and len(made) == 3 and len({id(a) for a in made}) == 3  # two screens, one audit
    assert result.attack == "logistic" and result.verdict == "consistent"
    white = ScoreFunction(lambda x: x[:, 0], name="first")
    found = search_neighbours(sum_release, candidates=candidates, attack=white, seed=6)
    assert found.index == 1
    assert search_neighbours(sum_release, candidates=candidates, attack="histogram", seed=6).index == 1


# ---------------------------------------------------------------- bad input


def _fitted() -> LogisticRegressionAttack:
    return LogisticRegressionAttack().fit(np.zeros((4, 1)), np.ones((4, 1)))


PAIR = (SCALAR_BASE, (1.0, 0.3, 0.6))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({}, "at least one candidate"),
        ({"candidates": [PAIR], "random_pairs": -1}, "random_pairs must be an integer >= 0, got -1"),
        ({"candidates": [PAIR], "random_pairs": 1.5}, "random_pairs must be an integer >= 0, got 1.5"),
        ({"candidates": [PAIR], "runs": 3}, "runs must be >= 4 .*got 3"),
        ({"candidates": [PAIR], "runs": 0}, "runs must be an integer >= 1, got 0"),
        ({"random_pairs": 2}, "sample_pair must be callable .*got None"),
        ({"random_pairs": 2, "sample_pair": "uniform"}, "sample_pair must be callable .*got 'uniform'"),
        ({"candidates": [PAIR], "sample_pair": sample_pair}, "random_pairs must be >= 1 when sample_pair is given"),
        ({"candidates": [PAIR], "attack": _fitted()}, re.escape("LogisticRegressionAttack(l2=0.0001")),
        ({"candidates": [PAIR], "attack": LogisticRegressionAttack()}, "learned attack instance"),
        ({"candidates": [PAIR], "attack": "oracle"}, "attack must be .*got 'oracle'"),
        ({"candidates": [PAIR], "attack": "gaussian-lr"}, "'gaussian-lr' cannot be built from its name"),
        ({"candidates": [PAIR], "attack": 3}, "attack must be .*got 3"),
        ({"candidates": [PAIR], "attack": lambda: "logistic"}, "must return an audits.Attack, got 'logistic'"),
        (
            {"candidates": [(1.0, 2.0, 3.0)]},
            re.escape("candidates[0] must be a (dataset0, dataset1) pair, got a tuple of length 3"),
        ),
        ({"candidates": "ab"}, "candidates must be a sequence of .* pairs, got 'ab'"),
        ({"random_pairs": 1, "sample_pair": lambda rng: rng.uniform()}, "sample_pair's draw 0 .*must be a .*pair"),
        ({"candidates": [PAIR], "seed": -1}, "seed must be .*got -1"),
    ],
)
def test_bad_input(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        search_neighbours(sum_release, **kwargs)


def test_audit_searched_bad_input_fails_before_searching() -> None:
    calls: list = []

    def sample(rng: np.random.Generator) -> tuple:
        calls.append(1)
        return sample_pair(rng)

    options = {"sample_pair": sample, "random_pairs": 2}
    with pytest.raises(ValueError, match="claim must be an audits.Claim, got str"):
        audit_searched(sum_release, "1-GDP", **options)
    with pytest.raises(ValueError, match="runs must be >= 6 .*got 5"):
        audit_searched(sum_release, Claim.gaussian(SIGMA), runs=5, **options)
    with pytest.raises(ValueError, match="alpha must lie in the open interval"):
        audit_searched(sum_release, Claim.gaussian(SIGMA), alpha=1.0, **options)
    with pytest.raises(ValueError, match="learned attack instance"):
        audit_searched(sum_release, Claim.gaussian(SIGMA), attack=LogisticRegressionAttack(), **options)
    with pytest.raises(ValueError, match="screen_runs must be >= 4 .*got 2"):
        audit_searched(sum_release, Claim.gaussian(SIGMA), screen_runs=2, **options)
    assert calls == []
