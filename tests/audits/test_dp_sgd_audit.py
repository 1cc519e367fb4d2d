"""The one-run audit of DP-SGD training: the claim's curve, the reference loop and its zoo, the audit's verdicts and
its refusals (fast tier; the acceptance runs at m = 1,000 and the 100-seed false-alarm count are in the slow tier)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkit.accountant.dp_sgd import SamplingSchedule
from dpkit.accountant.pld_events import pld_epsilon
from dpkit.audits.claims import Claim
from dpkit.audits.dp_sgd_audit import audit_training_run
from dpkit.audits.dp_sgd_canaries import TrainingSet, alignment_scores, alignments, dirac_canaries, jump_scores
from dpkit.audits.dp_sgd_claim import DpSgdClaim
from dpkit.audits.dp_sgd_reference import DpSgdBug, ReferenceDpSgd, logistic_losses, make_task

TASK = make_task(examples=100, features=256, rng=np.random.default_rng(0))
TASK512 = make_task(examples=100, features=512, rng=np.random.default_rng(0))


def test_full_batch_curve_is_the_gaussian_one_never_above() -> None:
    """At q = 1, T steps of DP-SGD are the Gaussian mechanism with μ = √T/σ: the PLD curve lies within 1e-4 of
    its curve and never above it."""
    claim, gauss = DpSgdClaim(3.0, 1.0, 4), Claim.gaussian(3.0, count=4)
    for x in (1e-4, 1e-2, 0.1, 0.3, 0.5, 0.9):
        exact = float(gauss.trade_off(x))
        assert exact - 1e-4 <= claim.trade_off(x) <= exact + 1e-12


def test_claim_epsilon_is_the_accountants() -> None:
    claim = DpSgdClaim(1.1, 0.01, 300)
    assert claim.epsilon_at(1e-5) == pld_epsilon(SamplingSchedule(0.01, 300).event(1.1), 1e-5).epsilon


@pytest.mark.parametrize(
    ("sigma", "q", "steps", "says"),
    [(0.0, 0.1, 10, "noise multiplier"), (float("inf"), 0.1, 10, "noise.multiplier"), (1.0, 0.0, 10, "sampling"),
     (1.0, 1.5, 10, "sampling_rate"), (1.0, 0.1, 0, "steps")],
)  # fmt: skip
def test_a_claim_that_is_not_dp_sgd_is_refused(sigma: float, q: float, steps: int, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        DpSgdClaim(sigma, q, steps)


def test_reference_clips_each_canary_to_c_and_the_bug_does_not() -> None:
    """With (almost) no noise and q = 1, an included Dirac canary moves its coordinate by η·C/batch per step when
    clipped, by η·10C/batch with clipping off."""
    rng = np.random.default_rng(1)
    canaries = dirac_canaries(3, parameters=256, norm=10.0, rng=rng)
    data = TrainingSet(*TASK, canaries)
    for bug, size in ((DpSgdBug.NONE, 1.0), (DpSgdBug.NO_CLIPPING, 10.0)):
        theta = ReferenceDpSgd(1e-9, 1.0, 2, bug=bug)(data, np.random.default_rng(2))
        moved = (theta[0] - theta[1])[canaries.coordinates]
        real = (TASK[0].T @ (0.5 - TASK[1]))[canaries.coordinates]  # the data's own gradient at θ = 0, clipped by 1
        assert np.allclose(moved - real / data.size, size / data.size, atol=1e-6)


def test_reference_is_reproducible_and_exposes_every_iterate() -> None:
    run = ReferenceDpSgd(2.0, 0.2, 5)
    a = run(TrainingSet(*TASK), np.random.default_rng(3))
    assert a.shape == (6, 256) and np.array_equal(a, run(TrainingSet(*TASK), np.random.default_rng(3)))


def test_reused_noise_cancels_from_the_jumps() -> None:
    """One noise draw at every step: an out canary's alignment does not jump (no data on its coordinate)."""
    canaries = dirac_canaries(4, parameters=256, norm=10.0, rng=np.random.default_rng(4))
    empty = TrainingSet(np.zeros((0, 256)), np.zeros(0), canaries.subset(np.array([0, 1])))
    theta = ReferenceDpSgd(2.0, 0.5, 6, bug=DpSgdBug.REUSED_NOISE)(empty, np.random.default_rng(5))
    aligned = alignments(theta, canaries)
    jumps = jump_scores(aligned)
    assert np.allclose(jumps[2:], 0.0, atol=1e-9) and (jumps[:2] > 0).all()
    assert np.allclose(alignment_scores(aligned), aligned.sum(axis=1))


@settings(max_examples=20, deadline=None)
@given(st.floats(-5, 5), st.integers(0, 1))
def test_logistic_losses_are_log1p_exp(z: float, y: int) -> None:
    x = np.array([[1.0]])
    expected = np.log1p(np.exp(-z if y == 1 else z))
    assert np.isclose(logistic_losses(np.array([z]), x, np.array([float(y)]))[0], expected)


def _audit(bug: DpSgdBug, seed: int = 0, **kw: object) -> object:
    args: dict[str, object] = {"parameters": 512, "dataset": TASK512, "canaries": 500, "seed": seed}
    args.update(kw)
    return audit_training_run(ReferenceDpSgd(2.0, 0.5, 8, bug=bug), claim=DpSgdClaim(2.0, 0.5, 8), **args)  # type: ignore[arg-type]


def test_correct_run_is_not_a_violation_and_clipping_off_is() -> None:
    good, bad = _audit(DpSgdBug.NONE), _audit(DpSgdBug.NO_CLIPPING)
    assert good.verdict != "violation" and good.p_value > 0.05  # type: ignore[attr-defined]
    assert bad.verdict == "violation" and bad.epsilon_lower > good.claimed_epsilon  # type: ignore[attr-defined]
    said = bad.to_dict()  # type: ignore[attr-defined]
    assert said["threat_model"] == "white-box" and "every iterate" in said["threat_statement"]


def test_reused_noise_is_caught_by_the_jumps_test() -> None:
    result = _audit(DpSgdBug.REUSED_NOISE)
    assert result.verdict == "violation"  # type: ignore[attr-defined]
    assert min(result.tests, key=lambda t: t[2])[0] == "jumps"  # type: ignore[attr-defined]


def test_black_box_is_never_consistent() -> None:
    result = _audit(DpSgdBug.NONE, threat="black-box", parameters=None, loss=logistic_losses)
    assert result.verdict == "inconclusive" and "black-box" in result.reason  # type: ignore[attr-defined]


def test_audit_is_reproducible() -> None:
    a, b = _audit(DpSgdBug.NONE, seed=3), _audit(DpSgdBug.NONE, seed=3)
    assert np.array_equal(a.scores, b.scores) and a.correct == b.correct  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("kw", "says"),
    [
        ({"canaries": 0}, "canaries"),
        ({"canaries": 1}, "canaries"),
        ({"parameters": None}, "parameters"),
        ({"parameters": 100}, "at least as many parameters"),
        ({"loss": logistic_losses}, "loss applies to a black-box"),
        ({"threat": "grey-box"}, "grey-box"),
    ],
)
def test_bad_input_is_refused(kw: dict[str, object], says: str) -> None:
    args: dict[str, object] = {"claim": DpSgdClaim(2.0, 0.5, 8), "parameters": 256, "dataset": TASK, "canaries": 200}
    args.update(kw)
    with pytest.raises(ValueError, match=says):
        audit_training_run(ReferenceDpSgd(2.0, 0.5, 8), **args)  # type: ignore[arg-type]


def test_wrong_shape_is_named() -> None:
    with pytest.raises(ValueError, match=r"<lambda> must return every iterate .*\(9, 256\).*got \(256,\)"):
        audit_training_run(
            lambda data, rng: ReferenceDpSgd(2.0, 0.5, 8)(data, rng)[-1],
            claim=DpSgdClaim(2.0, 0.5, 8),
            parameters=256,
            dataset=TASK,
            canaries=50,
        )


def test_claim_must_be_a_dp_sgd_claim() -> None:
    with pytest.raises(TypeError, match="DpSgdClaim"):
        audit_training_run(ReferenceDpSgd(2.0, 0.5, 8), claim=Claim.dp(1.0, 1e-5), parameters=256)  # type: ignore[arg-type]


def test_the_command_lines_threat_models_are_the_audits() -> None:
    from dpkit.audits.dp_sgd_canaries import THREAT_MODELS
    from dpkit.commands.audit.training_options import THREAT_MODELS as OFFERED

    assert OFFERED == THREAT_MODELS


def test_the_front_door_audits_a_training_run() -> None:
    """``dpkit.audit_training`` states the claim in DP-SGD's terms and reaches the same result as the module."""
    import dpkit

    run = ReferenceDpSgd(2.0, 0.5, 8)
    door = dpkit.audit_training(
        run, noise_multiplier=2.0, sampling_rate=0.5, steps=8, parameters=512, dataset=TASK512, canaries=500, seed=1
    )
    direct = _audit(DpSgdBug.NONE, seed=1)
    assert door.correct == direct.correct and door.p_value == direct.p_value  # type: ignore[attr-defined]
    assert door.claim == DpSgdClaim(2.0, 0.5, 8)


def test_a_training_run_ends_its_data_as_a_release_run_does() -> None:
    """A DP-SGD run's ``to_dict`` and a release's one-run ``to_dict`` end with the same keys (``run_counts``),
    each the run's own count."""
    from dpkit.audits.one_run import audit_one_run_target, run_counts

    def release(dataset: object, rng: np.random.Generator, n: int) -> np.ndarray:
        total = np.sum(np.asarray(dataset, dtype=float).reshape(-1, 4), axis=0)
        return total + rng.normal(0.0, 1.0, (n, 4))

    training = _audit(DpSgdBug.NONE, canaries=100)
    one_run = audit_one_run_target(release, canaries=list(np.eye(4)[np.arange(40) % 4]), claim=Claim.gdp(1.0), seed=1)
    for result in (training, one_run):
        said = result.to_dict()  # type: ignore[attr-defined]
        counts = run_counts(result)  # type: ignore[arg-type]
        assert list(said)[-len(counts) :] == list(counts) == [
            "confidence", "canaries", "included", "guesses", "correct", "seed", "seconds",
        ]  # fmt: skip
        coins = result.coins  # type: ignore[attr-defined]
        assert counts["canaries"] == len(coins) and counts["included"] == int(coins.sum()) == said["included"]
        assert counts["confidence"] == 1.0 - result.alpha  # type: ignore[attr-defined]
