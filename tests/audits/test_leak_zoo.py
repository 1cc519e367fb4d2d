"""The leak zoo (issue 15's acceptance): reference mechanisms whose leak is not a Gaussian mean shift.

Each violating mechanism of :func:`dpkit.audits.mechanisms.leak_zoo` must be a ``violation`` and each
correct one ``consistent``, with at most 10⁶ trials. The first set names the attack built for the
leak; the second uses ``attack="auto"`` (fit every candidate on a training split, choose on a
selection split, evaluate the chosen one), which becomes the engine's default.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpkit.audits import audit_pair
from dpkit.audits import mechanisms as m
from dpkit.audits.mechanisms import leak_zoo

CASES = {case.name: case for case in leak_zoo()}


# case: (the attack built for its leak, runs per dataset)
NAMED = {
    "gaussian": ("density-ratio", 200_000),
    "laplace": ("density-ratio", 200_000),
    "laplace-as-gdp": ("density-ratio", 20_000),
    "skipped-noise": ("atoms", 300_000),
    "lattice": ("atoms", 3_000),
    "lattice-aligned": ("atoms", 100_000),
    "binary-rr": ("atoms", 50_000),
    "kary-rr": ("atoms", 20_000),
}

# case: runs per dataset with attack="auto" (it spends more runs on fitting and choosing)
AUTO = {
    "gaussian": 200_000,
    "laplace": 200_000,
    "laplace-as-gdp": 50_000,
    "skipped-noise": 1_000_000,
    "lattice": 20_000,
    "lattice-aligned": 100_000,
    "binary-rr": 50_000,
    "kary-rr": 50_000,
}


def _param(name: str, *values: object) -> object:
    return pytest.param(name, *values, id=name)


def test_the_zoo_is_the_documented_one() -> None:
    assert list(CASES) == list(NAMED) == list(AUTO)
    assert {n for n, c in CASES.items() if c.violates} == {"laplace-as-gdp", "skipped-noise", "lattice", "kary-rr"}


def test_the_mechanisms_are_what_they_say() -> None:
    rng = np.random.default_rng(0)
    n = 400_000

    def se(p: float) -> float:  # five standard errors of a frequency p over n draws
        return 5 * math.sqrt(p * (1 - p) / n)

    x = m.gaussian_mechanism((0.25, 0.5), rng, n)
    assert x.shape == (n, 1) and abs(x.mean() - 0.75) < 0.05 and x.std() == pytest.approx(m.GAUSSIAN_SIGMA, rel=0.01)
    assert m.laplace_mechanism((), rng, n).var() == pytest.approx(2.0, rel=0.02)  # the matched σ is √2
    skipped = m.skipped_noise_gaussian((1.0,), rng, n)
    assert abs(np.mean(skipped == 1.0) - m.SKIP_PROBABILITY) < se(m.SKIP_PROBABILITY)
    for bit in (0, 1):
        kept = np.mean(m.binary_randomized_response(bit, rng, n) == bit)
        assert abs(kept - math.e / (1 + math.e)) < se(0.73)
    out = m.kary_randomized_response(2, rng, n)
    freq = np.bincount(out[:, 0].astype(int), minlength=4) / n
    assert np.all(np.abs(freq - [1 / 7, 1 / 7, 4 / 7, 1 / 7]) < se(4 / 7))
    assert math.log(freq[2] / freq[0]) == pytest.approx(math.log(4), abs=0.05)  # ε = ln 4 ≈ 1.386
    fractions = {}
    for name, release, d in [
        ("lattice0", m.lattice_gaussian, ()),
        ("lattice1", m.lattice_gaussian, (0.7,)),
        ("aligned1", m.lattice_aligned, (0.7,)),
    ]:
        u = release(d, rng, 1_000)[:, 0] / m.LATTICE_STEP
        fractions[name] = np.unique(np.round(u - np.floor(u), 6) % 1.0)
    assert fractions["lattice0"].tolist() == [0.0] == fractions["aligned1"].tolist()
    assert fractions["lattice1"].tolist() == [pytest.approx(0.2, abs=1e-6)]  # 0.7·2²⁰ = 734003.2: disjoint


@pytest.mark.parametrize(("name", "attack", "runs"), [_param(n, *NAMED[n]) for n in NAMED])
def test_named_attack_verdicts(name: str, attack: str, runs: int) -> None:
    case = CASES[name]
    for seed in (0, 1):
        r = audit_pair(
            case.release,
            case.dataset0,
            case.dataset1,
            case.claim,
            attack=attack,
            runs=runs,
            seed=seed,
            chunk_size=250_000,
        )
        assert r.verdict == ("violation" if case.violates else "consistent"), (name, seed, r.to_dict())
        if case.violates:  # the bound clears the claim by a margin, not by a hair
            assert r.epsilon_lower > 1.2 * r.claimed_epsilon or r.mu_lower > 1.2 * r.claimed_mu


def test_disjoint_supports_reach_large_epsilon() -> None:
    # the lattice's supports are disjoint: every evaluation output is classified correctly, so the
    # bound is the largest these runs can certify, ln((1 − δ − FNR⁺)/FPR⁺) with FPR⁺ ≈ 4.8/1500
    case = CASES["lattice"]
    r = audit_pair(case.release, case.dataset0, case.dataset1, case.claim, attack="atoms", runs=3_000, seed=2)
    assert r.estimate.false_positives == r.estimate.false_negatives == 0
    assert r.epsilon_lower > 5.0


@pytest.mark.parametrize(("name", "runs"), [_param(n, AUTO[n]) for n in AUTO])
@pytest.mark.slow
def test_default_attack_verdicts(name: str, runs: int) -> None:
    """The issue's acceptance: with the default attack (auto) and <= 10^6 runs, every violating mechanism
    is a violation and every correct one consistent (not inconclusive: the runs give power)."""
    case = CASES[name]
    r = audit_pair(case.release, case.dataset0, case.dataset1, case.claim, runs=runs, seed=0, chunk_size=250_000)
    assert r.verdict == ("violation" if case.violates else "consistent"), (name, r.to_dict())
