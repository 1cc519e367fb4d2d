"""The audit engine's acceptance figures: tight on the Gaussian mechanism, few false alarms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpkit.accountant import calibrate_sigma
from dpkit.accountant.gdp import gdp_epsilon
from dpkit.audits import Claim, GaussianLikelihoodRatio, audit_pair

SIGMA_1 = calibrate_sigma(1.0, 1e-5).sigma  # (1, 1e-5) exactly: 3.7306…


def scalar_gaussian(ds: tuple[float, float], rng: np.random.Generator, n: int) -> np.ndarray:
    value, sigma = ds
    return value + sigma * rng.standard_normal((n, 1))


def test_million_trials_reach_the_true_mu() -> None:
    mu = 1.0 / SIGMA_1
    lr = GaussianLikelihoodRatio(np.zeros(1), np.ones(1), sigma=SIGMA_1)
    r = audit_pair(
        scalar_gaussian,
        (0.0, SIGMA_1),
        (1.0, SIGMA_1),
        Claim.dp(1.0, 1e-5),
        attack=lr,
        runs=1_000_000,
        seed=0,
        chunk_size=250_000,
    )
    assert r.verdict == "consistent"
    assert 0.95 * mu <= r.mu_lower <= mu
    assert r.epsilon_gdp_reading is None  # a dp claim implies no GDP: its μ bound is not read as μ-GDP's ε
    assert r.epsilon_estimate == pytest.approx(gdp_epsilon(mu, 1e-5), rel=0.05)  # the Gaussian shape's ε at δ
    halved = audit_pair(
        scalar_gaussian,
        (0.0, SIGMA_1 / 2),
        (1.0, SIGMA_1 / 2),
        Claim.gaussian(SIGMA_1),
        attack=lr,
        runs=1_000_000,
        seed=1,
        chunk_size=250_000,
    )
    assert halved.verdict == "violation"


@pytest.mark.slow
def test_false_alarms_on_correct_mechanisms() -> None:
    # 200 audits (fixed seeds) of correct mechanisms at 95% confidence: at most 5% + binomial slack are violations.
    audits_run, alarms = 200, 0
    for seed in range(audits_run):
        sigma = 0.5 + 0.01 * seed
        claim = Claim.gaussian(sigma) if seed % 2 else Claim.dp(calibrate_sigma(1.0, 1e-3).epsilon, 1e-3)
        if seed % 2 == 0:
            sigma = calibrate_sigma(1.0, 1e-3).sigma
        attack = GaussianLikelihoodRatio(np.zeros(1), np.ones(1), sigma=sigma) if seed % 4 < 2 else "gaussian-lr-fitted"
        r = audit_pair(scalar_gaussian, (0.0, sigma), (1.0, sigma), claim, attack=attack, runs=4_000, seed=seed)
        alarms += r.verdict == "violation"
    slack = 3 * math.sqrt(audits_run * 0.05 * 0.95)
    assert alarms <= 0.05 * audits_run + slack
