"""Sequential, anytime-valid audits: valid under optional stopping, early on clear violations, the fixed audit's
verdict (at <= 1.3× its runs) on correct targets, generic over how batches are produced."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.audits import Claim, ScoreFunction, audit_pair
from dpkit.audits import mechanisms as m
from dpkit.audits.betting import EProcess, choose_bet, claim_tangents
from dpkit.audits.mechanisms import at_the_claim
from dpkit.audits.sequential import (
    SEQUENTIAL_SHARE,
    audit_sequential,
    audit_sequential_batches,
    plan_sequential,
    release_source,
)
from dpkit.audits.verdicts import power_bound


def first_column(outputs: np.ndarray) -> np.ndarray:
    return np.asarray(outputs)[:, 0]


IDENTITY = ScoreFunction(first_column, name="identity")
CLAIMS = [Claim.gdp(0.5), Claim.dp(1.0, 1e-5), Claim.dp(1.0, 0.0), Claim.zcdp(0.125), Claim.dp(1.0, 0.05)]


# -- the claim's profile: the tangents the bets use ------------------------------------------------------------


@pytest.mark.parametrize("claim", CLAIMS + [Claim.gaussian(2.0), Claim.rdp([2, 4, 8], [0.25, 0.5, 1.0])], ids=str)
def test_profile_lies_on_or_above_every_tangent_of_the_curve(claim: Claim) -> None:
    """δ(ε) >= 1 − f(a) − e^ε a at every FPR a (sound: no test of a mechanism meeting the claim beats it), and for
    dp and GDP claims it is the tangent itself (the largest such value, to within the grid)."""
    a = np.concatenate([np.logspace(-12, -1, 400), np.linspace(0.1, 1.0, 400)])
    f = claim.trade_off(a)
    for eps in (0.0, 0.3, 1.0, 2.5, 6.0):
        delta = float(claim.profile(eps))
        worst = float(np.max(1.0 - f - math.exp(eps) * a))
        assert delta >= worst - 1e-9, (eps, delta, worst)
        if claim.kind in ("dp", "gdp", "gaussian") and delta > 1e-6:
            assert delta <= worst + 2e-3 * max(1.0, delta), (eps, delta, worst)


def test_profile_refuses_a_negative_epsilon() -> None:
    with pytest.raises(ValueError, match="epsilon must be >= 0"):
        Claim.gdp(1.0).profile([-0.5])


# -- validity under optional stopping (the false alarms at the claim: tests/audits/test_verdicts.py) -----------


def test_bets_chosen_on_the_pairs_they_are_played_on_would_not_be_valid() -> None:
    """Why the bets are chosen on past batches only: chosen on the very pairs they are played on (not
    predictable), the e-process of a mechanism at its claim crosses 1/α' for most seeds; chosen on the previous
    batch, for fewer than α'."""
    claim = Claim.gdp(0.5)
    tangents, level, seeds = claim_tangents(claim), math.log(10.0), 60
    in_sample = predictable = 0
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        prev = (rng.normal(0, 1, 100), rng.normal(0.5, 1, 100))
        cheat, fair, used = EProcess(claim, None), EProcess(claim, None), 0
        for size in (100, 200, 400, 800, 1600):
            s0, s1 = rng.normal(0, 1, size), rng.normal(0.5, 1, size)
            cheat.start(choose_bet(s0, s1, tangents))
            cheat.play(s0, s1, start=used, log_level=level)
            fair.start(choose_bet(*prev, tangents))
            fair.play(s0, s1, start=used, log_level=level)
            prev, used = (s0, s1), used + size
        in_sample += cheat.crossed_at is not None
        predictable += fair.crossed_at is not None
    assert in_sample / seeds > 0.3 and predictable / seeds <= 0.1


# -- early stops on violations, the fixed verdict on correct targets --------------------------------------------


def half_sigma_gaussian(dataset: object, rng: np.random.Generator, n: int) -> np.ndarray:
    """The zoo's Gaussian mechanism run at half the σ it claims."""
    return float(np.sum(np.asarray(dataset, dtype=float))) + m.GAUSSIAN_SIGMA / 2 * rng.standard_normal((n, 1))


@pytest.mark.parametrize(
    ("release", "d0", "d1", "claim"),
    [
        (m.laplace_mechanism, (), (1.0,), Claim.dp(0.5, 0.0)),  # claimed at half its ε
        (half_sigma_gaussian, (), (1.0,), Claim.gaussian(m.GAUSSIAN_SIGMA, 1.0)),  # at half its σ
        (m.lattice_gaussian, (), (0.7,), Claim.dp(1.0, 1e-5)),  # disjoint supports
    ],
    ids=["laplace-half-epsilon", "gaussian-half-sigma", "lattice"],
)
def test_clear_violations_stop_with_a_twentieth_of_the_runs(release, d0, d1, claim: Claim) -> None:
    r = audit_sequential(release, d0, d1, claim, runs=100_000, seed=3)
    assert r.verdict == "violation" and r.stopped_early and r.final is None
    assert r.runs_used * 20 <= 100_000
    # the bound the e-values certify is at least the claim (its unit's): the claim itself was rejected
    claimed = claim.mu if claim.unit == "mu" else claim.epsilon_at(r.delta)
    assert (r.mu_lower if claim.unit == "mu" else r.epsilon_lower) >= claimed
    d = r.to_dict()
    assert d["runs_used"] == r.runs_used < d["runs"] == r.plan.budget and d["stopped_early"] is True
    assert d["evidence"]["e_value_max"] >= d["evidence"]["threshold"] == 2 / 0.05


@pytest.mark.slow
def test_a_correct_target_runs_its_budget_and_gets_the_fixed_verdict() -> None:
    case = next(c for c in m.leak_zoo() if c.name == "binary-rr")
    runs = 50_000
    fixed = audit_pair(case.release, case.dataset0, case.dataset1, case.claim, runs=runs, seed=0, chunk_size=250_000)
    seq = audit_sequential(case.release, case.dataset0, case.dataset1, case.claim, runs=runs, seed=0)
    assert fixed.verdict == seq.verdict == "consistent"
    assert seq.runs_used == seq.runs <= 1.3 * runs and not seq.stopped_early
    assert seq.final is not None and seq.power_ratio >= 0.5  # the power of the final test, at its α share
    assert seq.final.alpha == pytest.approx(0.05 * (1 - SEQUENTIAL_SHARE))
    assert seq.epsilon_lower <= case.claim.epsilon


@given(
    st.sampled_from(CLAIMS + [Claim.gaussian(3.73)]),
    st.integers(200, 2_000_000),
    st.booleans(),
    st.sampled_from([0.01, 0.05, 0.1]),
)
@settings(max_examples=examples(15), deadline=None)
def test_the_budget_keeps_the_fixed_power_at_most_1_3_times_the_runs(claim, runs, needs_fit, alpha) -> None:
    plan = plan_sequential(claim, runs=runs, alpha=alpha, needs_fit=needs_fit)
    assert plan.budget <= 1.3 * runs and sum(plan.learning) + plan.fixed_evaluation == runs
    delta = claim.default_delta()  # where the plan reads the claim (an (ε, δ) claim at its own δ)
    fixed = power_bound(claim, n0=plan.fixed_evaluation, n1=plan.fixed_evaluation, alpha=alpha, delta=delta)
    final = power_bound(
        claim, n0=plan.evaluation, n1=plan.evaluation, alpha=alpha * (1 - SEQUENTIAL_SHARE), delta=delta
    )
    assert final >= fixed or plan.evaluation >= math.ceil(1.3 * plan.fixed_evaluation)


# -- generic over how batches are produced; reproducible; progress ----------------------------------------------


def test_any_source_of_batches_and_what_it_is_asked_for() -> None:
    """The driver asks a source for fresh batches (new indices, the plan's sizes), raw while it still learns
    attacks from them, scored by a transform afterwards; on_look sees the evidence grow."""
    claim = Claim.gdp(0.5)
    release, d0, d1 = at_the_claim(claim)
    inner = release_source(release, d0, d1, seed=1)
    asked: list[tuple[int, int, bool]] = []

    def source(n: int, index: int, transform):  # noqa: ANN001
        asked.append((n, index, transform is None))
        return inner(n, index, transform)

    looks = []
    r = audit_sequential_batches(source, claim, runs=4_000, attack="gaussian-lr-fitted", on_look=looks.append)
    assert [i for _, i, _ in asked] == list(range(len(asked)))
    assert sum(n for n, _, _ in asked) == r.runs_used == r.runs == r.plan.budget
    assert asked[0][2] and not asked[-1][2]  # raw outputs to learn from first, scores in the final batches
    assert [look.runs_used for look in looks] == list(np.cumsum([n for n, _, _ in asked]))
    assert r.verdict in ("consistent", "inconclusive") and r.looks == tuple(looks)


@pytest.mark.slow
def test_same_seed_same_result_on_any_executor(pool) -> None:  # noqa: ANN001
    args = (m.laplace_mechanism, (), (1.0,), Claim.dp(1.0, 0.0))
    here = audit_sequential(*args, runs=3_000, seed=5, chunk_size=500)
    there = audit_sequential(*args, runs=3_000, seed=5, chunk_size=500, executor=pool)
    assert here.to_dict() == there.to_dict() and there.executor == "processes"
    assert audit_sequential(*args, runs=3_000, seed=6, chunk_size=500).to_dict() != here.to_dict()


def test_several_pairs_take_turns_and_all_stop_at_the_first_violation() -> None:
    from dpkit.audits import audit_pairs

    pairs = [((), (0.0,)), ((), (0.0,)), ((), (1.0,))]  # only the last pair differs
    r = audit_pairs(m.laplace_mechanism, pairs, Claim.dp(0.5, 0.0), runs=50_000, sequential=True)
    assert r.verdict == "violation" and len(r.results) == 1 and r.results[0].stopped_early
    assert r.results[0].seed == 2 and r.results[0].runs_used * 20 < 50_000  # pair 2, at α/3
    assert r.runs_used < 3 * r.results[0].runs_used + 3_000  # the other pairs stopped with it


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"runs": 199}, ValueError, "runs >= 200"),
        ({"alpha": 1.5}, ValueError, "alpha"),
        ({"attack": 3}, TypeError, "attack must be"),
    ],
)
def test_bad_input_is_refused_by_name(kwargs, error, message) -> None:  # noqa: ANN001
    with pytest.raises(error, match=message):
        audit_sequential(m.laplace_mechanism, (), (1.0,), Claim.dp(1.0, 0.0), **kwargs)


def test_a_source_must_be_callable() -> None:
    with pytest.raises(TypeError, match="source must be callable"):
        audit_sequential_batches(3, Claim.gdp(1.0))  # type: ignore[arg-type]


@pytest.mark.slow
def test_an_attack_without_fitting_bets_from_the_second_batch_and_stays_valid() -> None:
    """An attack that needs no fit (a white-box test, a score function) is scored on the first batch, whose scores
    choose the second batch's bet — still predictable: at the claim's strongest mechanism the audit is a violation
    for at most about α of the seeds (100 seeds; the bound holds under any stopping), while a clear violation stops
    within the second batch."""
    release, d0, d1 = at_the_claim(Claim.gdp(0.5))
    alarms = 0
    for seed in range(100):
        r = audit_sequential(release, d0, d1, Claim.gdp(0.5), runs=1000, seed=seed, attack=IDENTITY)
        assert r.looks[0].attack is None and r.looks[1].attack == "identity"  # the second batch already bets
        alarms += r.verdict == "violation"
    assert alarms <= 12  # P[Binomial(100, 0.05) >= 13] < 0.002
    loud = audit_sequential(m.laplace_mechanism, (), (1.0,), Claim.dp(0.25, 0.0), runs=100_000, seed=1, attack=IDENTITY)
    assert loud.verdict == "violation" and loud.runs_used <= 2 * loud.plan.learning[0]
