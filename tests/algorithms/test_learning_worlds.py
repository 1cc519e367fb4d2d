"""The worlds and presets in which every seed algorithm learns (docs/explanation/seed-algorithms.md, "Worlds where
they learn"): the named LQ worlds, the ``learning`` presets, and — fast — each non-private learner beating the
policy that ignores its data at small K; slow: the sublinear claims and the private agents below the uniform
policy at the default report's sizes."""

from __future__ import annotations

import numpy as np
import pytest

from dpkit.algorithms.envs.lq import LQ_WORLDS, make_lq_world, random_lq
from dpkit.algorithms.regret_stats import slope_interval
from dpkit.algorithms.simulation import Experiment, baseline_regrets, check_options, simulate_seeds

LEARNING = (("preset", "learning"),)


def _finals(e: Experiment, seeds: int) -> tuple[np.ndarray, np.ndarray, dict[str, float]]:
    runs = simulate_seeds(e, list(range(seeds)))
    curves = np.stack([r.cumulative_regret for r in runs])
    return curves, curves[:, -1], {k: v * e.episodes for k, v in baseline_regrets(e).items()}


def test_an_lq_world_is_random_lq_with_its_constants() -> None:
    for name, constants in LQ_WORLDS.items():
        system = make_lq_world(name, 2, 1, 5, np.random.default_rng(3))
        reference = random_lq(2, 1, 5, np.random.default_rng(3), **constants)
        assert system.name == name
        np.testing.assert_array_equal(system.A, reference.A)
        np.testing.assert_array_equal(system.R, reference.R)
        assert float(np.sqrt(np.sum(system.A**2) + np.sum(system.B**2))) <= 1.0 + 1e-12  # Assumption 1(a)
    with pytest.raises(ValueError, match="lq-learning"):
        make_lq_world("lq-nowhere", 2, 1, 5, 0)


def test_an_lq_world_is_for_the_lq_algorithms_only() -> None:
    assert Experiment("ofu-rl", "lq-learning", 3).steps_per_episode == 10
    with pytest.raises(ValueError, match="runs on a tabular environment"):
        Experiment("linopt-vi", "lq-learning", 3)
    with pytest.raises(ValueError, match="runs on an LQ world"):
        Experiment("ofu-rl", "riverswim", 3)


def test_check_options_names_a_bad_preset_or_option() -> None:
    e = Experiment("private-linopt-po", "riverswim", 5, states=2, epsilon=1.0, delta=0.1, options=LEARNING)
    assert check_options(e) is e
    with pytest.raises(ValueError, match="preset"):
        check_options(Experiment("linopt-vi", "riverswim", 5, states=2, options=(("preset", "fast"),)))
    with pytest.raises(ValueError, match="radius"):
        check_options(Experiment("linopt-vi", "riverswim", 5, states=2, options=(("radius_scale", 0.1),)))


def test_the_learning_preset_gives_eta_to_po_only() -> None:
    from dpkit.algorithms.envs.tabular import riverswim
    from dpkit.algorithms.linopt import LEARNING as LINOPT_LEARNING
    from dpkit.algorithms.linopt import make_agent

    vi = make_agent("linopt-vi", riverswim(2), 10, 0, preset="learning")
    po = make_agent("linopt-po", riverswim(2), 10, 0, preset="learning")
    assert vi.eta is None and po.eta == LINOPT_LEARNING["eta"]
    assert vi.bonus_scale == po.bonus_scale == LINOPT_LEARNING["bonus_scale"]


def test_radius_scale_scales_the_confidence_radius() -> None:
    from dpkit.algorithms.ofu_rl import make_agent

    system = make_lq_world("lq-learning", 2, 1, 2, 0)
    one = make_agent("private-ofu-rl", system, 20, 0, epsilon=10.0, delta=0.1, sigma="tight")
    tenth = make_agent("private-ofu-rl", system, 20, 0, epsilon=10.0, delta=0.1, sigma="tight", preset="learning")
    assert tenth.radius_scale == 0.1
    assert tenth.ellipsoid().radius == pytest.approx(0.1 * one.ellipsoid().radius, rel=1e-12)
    with pytest.raises(ValueError, match="radius_scale"):
        make_agent("ofu-rl", system, 20, 0, radius_scale=-1.0)


@pytest.mark.parametrize("name", ["linopt-vi", "linopt-po"])
def test_linopt_learning_beats_the_uniform_policy_at_small_k(name: str) -> None:
    _, finals, baselines = _finals(Experiment(name, "riverswim", 300, states=2, options=LEARNING), 2)
    assert finals.mean() < 0.8 * baselines["uniform"]


def test_ofu_rl_in_lq_learning_beats_no_control_at_small_k() -> None:
    e = Experiment("ofu-rl", "lq-learning", 100, horizon=2, options=LEARNING)
    runs = simulate_seeds(e, [0, 1])
    no_control = baseline_regrets(e)["no control"] * e.episodes
    assert np.mean([r.cumulative_regret[-1] for r in runs]) < 0.8 * no_control
    assert np.mean([np.abs(r.gains[50:]).mean() for r in runs]) > 0.05  # its gains leave 0


def test_ofu_rl_in_lq_plays_gains_near_zero_at_the_papers_constants() -> None:
    """The world ``lq`` (R = I): the optimal gains themselves are small; the report's world has larger ones."""
    small = make_lq_world("lq", 2, 1, 10, np.random.default_rng(0)).optimal_gains()
    large = make_lq_world("lq-learning", 2, 1, 2, np.random.default_rng(0)).optimal_gains()
    assert np.abs(small).mean() < 0.1 < np.abs(large).mean()


@pytest.mark.slow
@pytest.mark.parametrize(
    "experiment",
    [
        Experiment("linopt-vi", "riverswim", 2000, states=2, options=LEARNING),
        Experiment("linopt-po", "riverswim", 2000, states=2, options=LEARNING),
        Experiment("ofu-rl", "lq-learning", 3000, horizon=2, options=LEARNING),
        Experiment("rlsvi", "riverswim", 5000, states=2, delta=1e-5, sigma="tight"),
    ],
    ids=lambda e: e.algorithm,
)
def test_the_non_private_learner_is_shown_sublinear(experiment: Experiment) -> None:
    curves, _, _ = _finals(experiment, 5)
    assert slope_interval(curves, 0).high < 1.0


REPORT_WORLDS = [
    Experiment(
        "private-linopt-vi", "riverswim", 2000, states=2, epsilon=1.0, delta=0.1, sigma="tight", options=LEARNING
    ),
    Experiment(
        "private-linopt-po", "riverswim", 2000, states=2, epsilon=1.0, delta=0.1, sigma="tight", options=LEARNING
    ),
    Experiment("rlsvi", "riverswim", 5000, states=2, delta=1e-5, sigma="tight"),
    Experiment("ldp-ucrl-vtr", "riverswim", 2000, states=2, epsilon=1.0, delta=0.1, sigma="tight"),
]


@pytest.mark.slow
@pytest.mark.parametrize("experiment", REPORT_WORLDS, ids=lambda e: e.algorithm)
def test_the_private_agent_at_the_tight_sigma_beats_the_uniform_policy(experiment: Experiment) -> None:
    """The default report's worlds and sizes: R(K) below 0.8 × the uniform policy's (exact) regret over 5 seeds."""
    _, finals, baselines = _finals(experiment, 5)
    assert finals.mean() < 0.8 * baselines["uniform"]


@pytest.mark.slow
def test_private_ofu_rl_in_the_report_world_controls_and_beats_no_control() -> None:
    """lq-learning, H = 2, K = 6,000, ε = 10, σ tight, the learning preset: gains leave 0 (mean |gain| over the last
    half > 0.05) and R(K) is below the no-control policy's, and below 0.8 × the uniform controls'."""
    e = Experiment(
        "private-ofu-rl", "lq-learning", 6000, horizon=2, epsilon=10.0, delta=0.1, sigma="tight", options=LEARNING
    )
    runs = simulate_seeds(e, list(range(5)))
    final = np.mean([r.cumulative_regret[-1] for r in runs])
    baselines = {k: v * e.episodes for k, v in baseline_regrets(e).items()}
    assert np.mean([np.abs(r.gains[3000:]).mean() for r in runs]) > 0.05
    assert final < baselines["no control"] and final < 0.8 * baselines["uniform"]


PAPER_CONSTANTS = [  # (experiment, baseline, R(K) ÷ baseline as the default report's regret_note states it)
    (
        Experiment("private-linopt-vi", "riverswim", 2000, states=2, epsilon=1.0, delta=0.1, sigma="tight"),
        "uniform",
        1.31,
    ),
    (
        Experiment("private-linopt-po", "riverswim", 2000, states=2, epsilon=1.0, delta=0.1, sigma="tight"),
        "uniform",
        1.00,
    ),
    (Experiment("rlsvi", "riverswim", 5000, states=3, delta=1e-5, sigma="tight"), "uniform", 0.920),
    (Experiment("rlsvi", "riverswim", 5000, states=3, delta=1e-5, sigma="paper"), "uniform", 0.956),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("experiment", "baseline", "stated"), PAPER_CONSTANTS, ids=lambda x: getattr(x, "algorithm", None)
)
def test_the_papers_constants_give_what_the_report_says(experiment: Experiment, baseline: str, stated: float) -> None:
    """The numbers of reports/default.toml's regret notes and of docs/explanation/seed-algorithms.md (3 seeds)."""
    _, finals, baselines = _finals(experiment, 3)
    assert round(finals.mean() / baselines[baseline], 2) == pytest.approx(stated, abs=0.011)


@pytest.mark.slow
def test_private_ofu_rl_at_the_papers_radius_does_not_beat_no_control() -> None:
    """lq-learning, H = 2, K = 6,000, ε = 10, σ tight, the paper's constants: gains of either sign, R ≈ no control."""
    e = Experiment("private-ofu-rl", "lq-learning", 6000, horizon=2, epsilon=10.0, delta=0.1, sigma="tight")
    _, finals, baselines = _finals(e, 3)
    assert finals.mean() / baselines["no control"] == pytest.approx(1.017, abs=0.005)
