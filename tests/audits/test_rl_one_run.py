"""One-run audits of local-DP RL agents (Steinke, Nasr & Jagielski 2023): every user a canary with a fair coin,
one run, each user's exact log-likelihood-ratio score, guesses with abstention, judged against the declaration's
trade-off curve (the f-DP analysis)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from dpkit.algorithms import registry
from dpkit.audits.claims import Claim
from dpkit.audits.rl import default_setting, register_agent
from dpkit.audits.rl.one_run import OneRunScores, audit_one_run, learned_one_run, one_run_scores
from dpkit.audits.rl.registry import audit_spec
from dpkit.loading import load_object

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ldp_agent.py"


@pytest.fixture
def agent():
    name = register_agent(load_object("--agent", f"{EXAMPLE}:make_agent"))
    yield name, load_object("--agent", f"{EXAMPLE}:make_agent_without_clipping")
    registry.unregister(name)


@pytest.mark.slow
def test_a_users_agent_is_consistent_and_its_bug_a_violation_in_one_run(agent) -> None:
    name, without_clipping = agent
    good = audit_one_run(name, canaries=5000, epsilon=1.0, delta=1e-5, seed=0)
    assert good.verdict == "consistent", good.to_dict()
    assert good.epsilon_lower <= 1.0 and good.mu_lower <= good.claimed_mu
    bad = audit_one_run(name, canaries=5000, epsilon=1.0, delta=1e-5, seed=0, implementation=without_clipping)
    assert bad.verdict == "violation", bad.to_dict()
    assert bad.mu_lower > bad.claimed_mu and bad.p_value <= 0.05
    weak = audit_one_run(name, canaries=500, epsilon=1.0, delta=1e-5, seed=0)
    assert weak.verdict == "inconclusive" and weak.power_ratio < 0.5  # 500 users cannot see a violation of ε = 1


def test_scores_are_reproducible_and_point_the_right_way(agent) -> None:
    name, _ = agent
    a = one_run_scores(name, canaries=500, epsilon=1.0, delta=1e-5, seed=3)
    b = one_run_scores(name, canaries=500, epsilon=1.0, delta=1e-5, seed=3)
    assert np.array_equal(a.coins, b.coins) and np.array_equal(a.scores, b.scores)
    assert a.scores[a.coins == 1].mean() > a.scores[a.coins == 0].mean()


def test_ldp_ucrl_vtr_is_audited_in_one_run() -> None:
    result = audit_one_run("ldp-ucrl-vtr", canaries=300, epsilon=1.0, delta=1e-5, seed=0)
    assert result.verdict != "violation", result.to_dict()
    assert result.to_dict()["canaries"] == 300


def test_one_run_reading_gives_the_claims_epsilon_at_the_informative_delta() -> None:
    from dpkit.accountant import gdp_epsilon

    d = audit_one_run("ldp-ucrl-vtr", canaries=300, epsilon=1.0, delta=0.1, seed=0).to_dict()
    assert d["claimed_epsilon"] == 1.0 and d["delta_informative"] == 1e-5  # LDP: the ledger has no K
    assert d["claimed_epsilon_at_informative_delta"] == pytest.approx(gdp_epsilon(d["claimed_mu"], 1e-5), rel=1e-12)
    assert d["claimed_epsilon_at_informative_delta"] == pytest.approx(3.98, rel=1e-5)  # (1, 0.1) allows μ = 0.9209


def test_an_algorithm_without_a_one_run_scorer_is_refused_with_the_reason() -> None:
    """An algorithm with neither a one_run hook nor a messages-protocol agent (RLSVI without its hook)."""
    spec = registry.get("rlsvi")
    factory = spec.make_agent()
    bare = replace(
        spec,
        name="rlsvi-without-one-run",
        entry_point=lambda _name, *args, **kw: factory("rlsvi", *args, **kw),
        audit=replace(audit_spec(spec.name), one_run=None),
    )
    registry.register(bare)
    try:
        with pytest.raises(TypeError, match="no one-run hook and its agent no message_statistics"):
            audit_one_run(bare.name, canaries=10)
    finally:
        registry.unregister(bare.name)
    with pytest.raises(ValueError, match="canaries must be >= 2"):
        one_run_scores("ldp-ucrl-vtr", canaries=1)


@pytest.mark.slow
def test_rlsvi_one_run_sees_each_user_alone_and_says_inconclusive() -> None:
    """RLSVI's one-run scores read each user's own reward from two consecutive plans (the other users' rewards
    cancel): with the exploration noise a thousandth of the claim's σ, the first users — alone in their cells, so
    seen best — are all guessed right. At the claim's σ a user among 2,000 is seen at a μ of about the claim's
    μ/√K (the declaration allows each of her K − 1 later releases its worst case, n = 1): the reach is far below
    half the claim, so the audit is inconclusive, never consistent."""
    from dpkit.audits.rl import default_setting, setting_claim_sigmas

    tight = setting_claim_sigmas(replace(default_setting("rlsvi"), episodes=2000))["Q-values"]
    sharp = one_run_scores("rlsvi", canaries=2000, seed=1, sigma=tight / 1000)
    assert sharp.observer == "q-values"
    assert np.array_equal(sharp.scores[:20] > 0, sharp.coins[:20] == 1)
    assert sharp.scores[-1] == 0.0  # the last user's rewards are never released
    result = audit_one_run("rlsvi", canaries=2000, seed=1)
    assert result.verdict == "inconclusive", result.to_dict()
    assert result.judged.reach is not None and result.judged.reach < result.claimed_mu / np.sqrt(2000 - 1) * 1.5
    again = one_run_scores("rlsvi", canaries=2000, seed=1)
    assert np.array_equal(again.scores, result.scores.scores)


@pytest.mark.parametrize(("algorithm", "canaries"), [("private-linopt-vi", 300), ("private-ofu-rl", 100)])
def test_joint_dp_algorithms_are_audited_in_one_run_from_their_billboard(algorithm: str, canaries: int) -> None:
    """Every user a canary; each scored from the p-sums of the billboard holding her, the others' coins as noise.
    The scores point the right way; the scorer's reach (what it could show per user at the claim) is computed from
    the declaration and lies below the claim, so a correct run is not a violation and, seeing less than half the
    claim, says inconclusive."""
    a = one_run_scores(algorithm, canaries=canaries, seed=2)
    b = one_run_scores(algorithm, canaries=canaries, seed=2)
    assert a.observer == "billboard" and np.array_equal(a.scores, b.scores) and np.array_equal(a.coins, b.coins)
    assert a.scores[a.coins == 1].mean() > a.scores[a.coins == 0].mean()
    result = audit_one_run(algorithm, canaries=canaries, seed=2)
    assert result.verdict == "inconclusive" and 0 < result.judged.reach < result.claimed_mu, result.to_dict()
    assert result.to_dict()["observer"] == "billboard"


def test_billboard_scores_see_a_user_alone_in_her_leaf() -> None:
    """A counter of 4 users whose items differ by d = 1 along one axis, no noise: the p-sums are the coins' sums
    (users 0 | 0, 1 | 2 | 0 … 3). Centred at coin ½, the leaves show users 0 and 2 alone and with the right sign;
    the p-sums {0, 1} and {0 … 3} hold as many coins 1 as coins ½ would give, so users 1 and 3 (in no leaf)
    score 0."""
    from dpkit.audits.rl.psums import billboard_one_run_scores

    coins = np.array([1, 0, 0, 1])
    items0, items1 = np.zeros((4, 1)), np.ones((4, 1))
    prefixes = np.concatenate([[[0.0]], np.cumsum(coins[:, None].astype(float), axis=0)])
    scores = billboard_one_run_scores({"c": prefixes}, {"c": items0}, {"c": items1}, {"c": 1.0}, {"c": False})
    assert scores[0] > 0 > scores[2]
    assert scores[1] == scores[3] == 0


@pytest.mark.slow
def test_a_learned_one_run_score_keeps_its_level_at_the_claim() -> None:
    """Canaries exactly at the claim (each user's first feature N(±μ/2, 1): μ-GDP per user, the claim's own curve;
    two more features pure noise): the score learned on half of them and judged on the other half is a violation
    for at most about α of the runs (200 runs; P[Binomial(200, 0.05) >= 19] < 0.01), and it learns the signal (a
    mechanism at 3 × the claim is caught in most runs)."""
    setting = default_setting("private-linopt-vi")
    mu, m = 1.0, 2000

    def run(seed: int, shift: float) -> OneRunScores:
        rng = np.random.default_rng(seed)
        coins = rng.integers(0, 2, m)
        features = rng.standard_normal((m, 3))
        features[:, 0] += shift * (coins - 0.5)
        return OneRunScores(setting, seed, coins, np.zeros(m), 0.0, "billboard", None, features)

    alarms = sum(
        learned_one_run(run(seed, mu), Claim.gdp(mu), alpha=0.05).verdict == "violation" for seed in range(200)
    )
    assert alarms <= 18
    caught = sum(
        learned_one_run(run(seed, 3 * mu), Claim.gdp(mu), alpha=0.05).verdict == "violation" for seed in range(10)
    )
    assert caught >= 8
