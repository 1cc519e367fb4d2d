"""The audit engine: valid and tight on Gaussian mechanisms, reproducible, executor-independent."""

from __future__ import annotations

import numpy as np
import pytest

from dpkit.audits import Claim, GaussianLikelihoodRatio, audit_pair, audit_pairs, make_executor


def gaussian_release(ds: tuple[float, float], rng: np.random.Generator, n: int) -> np.ndarray:
    """A 3-d Gaussian mechanism: mean (value, 0, 0), noise σ."""
    value, sigma = ds
    out = sigma * rng.standard_normal((n, 3))
    out[:, 0] += value
    return out


def _white_box(sigma: float) -> GaussianLikelihoodRatio:
    return GaussianLikelihoodRatio(np.zeros(3), np.array([1.0, 0.0, 0.0]), sigma=sigma)


@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0])
def test_white_box_audit_is_tight_and_consistent(sigma: float) -> None:
    result = audit_pair(
        gaussian_release,
        (0.0, sigma),
        (1.0, sigma),
        Claim.gaussian(sigma),
        attack=_white_box(sigma),
        runs=40_000,
        seed=3,
    )
    mu = 1.0 / sigma
    assert result.verdict == "consistent"
    assert 0.8 * mu <= result.mu_lower <= mu
    assert result.estimate.mu_interval[0] <= mu <= result.estimate.mu_interval[1]


def test_sigma_30_percent_too_small_is_a_violation() -> None:
    tight, actual = 1.0, 0.7
    result = audit_pair(
        gaussian_release,
        (0.0, actual),
        (1.0, actual),
        Claim.gaussian(tight),
        attack=_white_box(tight),
        runs=40_000,
        seed=4,
    )
    assert result.verdict == "violation" and result.mu_lower > 1.0


def test_learned_attack_audits_a_black_box() -> None:
    ok = audit_pair(
        gaussian_release, (0.0, 1.0), (1.0, 1.0), Claim.gaussian(1.0), attack="logistic", runs=30_000, seed=5
    )
    assert ok.verdict == "consistent" and ok.mu_lower > 0.7 and ok.attack == "logistic"
    bad = audit_pair(
        gaussian_release, (0.0, 0.5), (1.0, 0.5), Claim.gaussian(1.0), attack="logistic", runs=30_000, seed=5
    )
    assert bad.verdict == "violation"


def test_dp_and_zcdp_claims_are_checked_through_epsilon() -> None:
    r = audit_pair(
        gaussian_release, (0.0, 0.3), (1.0, 0.3), Claim.dp(1.0, 1e-5), attack=_white_box(0.3), runs=100_000, seed=6
    )
    assert r.verdict == "violation" and r.claimed_mu is None and r.epsilon_lower > 1.0
    r = audit_pair(
        gaussian_release, (0.0, 1.0), (1.0, 1.0), Claim.zcdp(0.5), attack=_white_box(1.0), runs=20_000, seed=6
    )
    assert r.verdict == "consistent"


def test_same_seed_same_result_any_executor() -> None:
    args = (gaussian_release, (0.0, 1.0), (1.0, 1.0), Claim.gaussian(1.0))
    base = audit_pair(*args, attack=_white_box(1.0), runs=9_000, seed=7, chunk_size=2_000)
    again = audit_pair(*args, attack=_white_box(1.0), runs=9_000, seed=7, chunk_size=2_000)
    with make_executor("processes", workers=2) as pool:
        pooled = audit_pair(*args, attack=_white_box(1.0), runs=9_000, seed=7, chunk_size=2_000, executor=pool)
    assert base.estimate == again.estimate == pooled.estimate
    other = audit_pair(*args, attack=_white_box(1.0), runs=9_000, seed=8, chunk_size=2_000)
    assert other.estimate != base.estimate
    assert pooled.to_dict() == base.to_dict()  # executor and timing are not part of the result
    assert pooled.executor == "processes" and base.executor == "in-process"


def test_audit_pairs_splits_alpha_and_keeps_the_strongest() -> None:
    pairs = [((0.0, 1.0), (0.2, 1.0)), ((0.0, 1.0), (1.0, 1.0))]
    res = audit_pairs(gaussian_release, pairs, Claim.gaussian(1.0), attack=lambda: _white_box(1.0), runs=20_000)
    # α/2 per pair; per pair ¾ of it to the test where the claim breaks, ¼ to the equal-error one (a union bound)
    assert all([e.alpha for e in r.estimates] == pytest.approx([0.025 * 0.75, 0.025 * 0.25]) for r in res.results)
    assert res.strongest is res.results[1] and res.verdict == "consistent"
    assert res.to_dict()["strongest"] == 1


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"claim": "1-GDP"}, "claim"),
        ({"runs": 0}, "runs"),
        ({"runs": 4}, "runs"),
        ({"alpha": 1.0}, "alpha"),
        ({"attack": "oracle"}, "name"),
        ({"attack": 3}, "attack"),
    ],
)
def test_bad_input(kwargs: dict, match: str) -> None:
    args = {"release": gaussian_release, "dataset0": (0.0, 1.0), "dataset1": (1.0, 1.0), "claim": Claim.gaussian(1.0)}
    args.update(kwargs)
    with pytest.raises((ValueError, TypeError), match=match):
        audit_pair(**args)


def test_audit_pairs_bad_input() -> None:
    with pytest.raises(ValueError, match="at least one"):
        audit_pairs(gaussian_release, [], Claim.gaussian(1.0))
    from dpkit.audits import LogisticRegressionAttack

    with pytest.raises(ValueError, match="factory"):
        audit_pairs(
            gaussian_release, [((0.0, 1.0), (1.0, 1.0))], Claim.gaussian(1.0), attack=LogisticRegressionAttack()
        )
