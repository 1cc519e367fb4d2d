"""The report's figures: PNG files, deterministic bytes, reference values of the GDP curve, and the audit
figures drawn from a real audit of a Gaussian release (the engine of issue 6)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from dpkit.audits import Claim, GaussianLikelihoodRatio, audit
from dpkit.reports import figures

PNG = b"\x89PNG\r\n\x1a\n"


def gaussian_release(ds: tuple[float, float], rng: np.random.Generator, n: int) -> np.ndarray:
    value, sigma = ds
    return value + sigma * rng.standard_normal((n, 1))


@pytest.fixture(scope="module")
def gaussian_audit() -> dict:
    """An audit of N(0, 1) against N(1, 1) (μ = 1), as the RL audits report it: the engine's dict and a ROC."""
    attack = GaussianLikelihoodRatio(np.zeros(1), np.ones(1), sigma=1.0)
    result = audit(gaussian_release, (0.0, 1.0), (1.0, 1.0), Claim.gaussian(1.0), attack=attack, runs=20_000, seed=1)
    rng = np.random.default_rng(2)
    s0, s1 = rng.standard_normal(4000), 1.0 + rng.standard_normal(4000)
    cuts = np.quantile(np.concatenate([s0, s1]), np.linspace(0, 1, 101))
    roc = {
        "fpr": [1.0, *(s0[None, :] > cuts[:, None]).mean(axis=1)],
        "tpr": [1.0, *(s1[None, :] > cuts[:, None]).mean(axis=1)],
    }
    return {"audit": result.to_dict(), "mu_lower": result.mu_lower, "claimed_mu": result.claimed_mu, "roc": roc}


def _png(path: Path) -> bytes:
    data = path.read_bytes()
    assert data[:8] == PNG
    return data


def test_gdp_tradeoff_reference_values() -> None:
    x = np.array([0.0, 0.1, 0.5, 1.0])
    assert np.allclose(figures.gdp_tradeoff(x, 0.0), 1.0 - x)
    assert figures.gdp_tradeoff(0.5, 1.0) == pytest.approx(stats.norm.cdf(-1.0), rel=1e-12)
    assert figures.gdp_tradeoff(0.05, 2.0) == pytest.approx(stats.norm.cdf(stats.norm.ppf(0.95) - 2.0), rel=1e-12)
    assert np.all(np.diff(figures.gdp_tradeoff(np.linspace(0, 1, 50), 1.5)) <= 0)
    with pytest.raises(ValueError, match="mu"):
        figures.gdp_tradeoff(0.5, -1.0)


def test_tradeoff_figure_from_a_gaussian_audit(gaussian_audit: dict, tmp_path: Path) -> None:
    tests = gaussian_audit["audit"]["tests"]
    # the audit is consistent: every Clopper–Pearson corner lies on or above the claimed curve
    for t in tests:
        assert t["fnr_upper"] >= figures.gdp_tradeoff(t["fpr_upper"], gaussian_audit["claimed_mu"]) - 1e-12
    a = figures.tradeoff_figure(
        tests,
        gaussian_audit["claimed_mu"],
        tmp_path / "a.png",
        mu_lower=gaussian_audit["mu_lower"],
        title="Gaussian, μ = 1",
    )
    b = figures.tradeoff_figure(
        tests,
        gaussian_audit["claimed_mu"],
        tmp_path / "b.png",
        mu_lower=gaussian_audit["mu_lower"],
        title="Gaussian, μ = 1",
    )
    assert _png(a) == _png(b)  # deterministic bytes


def test_roc_figure(gaussian_audit: dict, tmp_path: Path) -> None:
    roc = gaussian_audit["roc"]
    _png(figures.roc_figure(roc["fpr"], roc["tpr"], tmp_path / "roc.png", mu=1.0, title="ROC"))
    with pytest.raises(ValueError, match="same length"):
        figures.roc_figure([0.1, 0.2], [0.3], tmp_path / "x.png")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        figures.roc_figure([0.1, 1.2], [0.3, 0.4], tmp_path / "x.png")


@pytest.mark.parametrize(
    ("tests", "match"),
    [
        ([], "at least one"),
        ([{"fpr": 0.2, "fnr": 0.3, "fpr_upper": 0.25}], "fnr_upper"),
        ([{"fpr": 0.2, "fnr": 0.3, "fpr_upper": 0.1, "fnr_upper": 0.4}], "fpr <= fpr_upper"),
    ],
)
def test_tradeoff_figure_rejects_bad_tests(tests: list, match: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=match):
        figures.tradeoff_figure(tests, 1.0, tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()


def test_epsilon_delta_figure(tmp_path: Path) -> None:
    deltas = [1e-8, 1e-5, 1e-2]
    curves = {"exact": [2.0, 1.5, 0.5], "classic": [None, 4.0, 3.0], "zero": [0.0, 5e-324, 0.0]}
    _png(figures.epsilon_delta_figure(deltas, curves, tmp_path / "e.png", title="t", target=(1e-5, 1.5)))
    with pytest.raises(ValueError, match="3 deltas"):
        figures.epsilon_delta_figure(deltas, {"exact": [1.0]}, tmp_path / "x.png")
    with pytest.raises(ValueError, match=r"\(0, 1\)"):
        figures.epsilon_delta_figure([0.0, 0.1], {"exact": [1.0, 0.5]}, tmp_path / "x.png")


def test_tree_and_rlsvi_figures(tmp_path: Path) -> None:
    from dpkit.accountant.tree import psums_per_item

    t = np.arange(1, 65, dtype=np.uint64)
    _png(
        figures.tree_figure(
            np.bitwise_count(t), psums_per_item(64), tmp_path / "tree.png", paper_depth=6, title="T = 64"
        )
    )
    _png(
        figures.rlsvi_figure([10, 100, 1000], {"paper": [1.0, 10.0, 100.0], "run": [0.5, 0.7, 0.0]}, tmp_path / "r.png")
    )
    with pytest.raises(ValueError, match="2 values for 3 episodes"):
        figures.rlsvi_figure([10, 100, 1000], {"paper": [1.0, 10.0]}, tmp_path / "x.png")


def test_regret_figure_at_checkpoints(tmp_path: Path) -> None:
    curves = {"a": np.cumsum(np.ones((3, 5)), axis=1)}
    _png(figures.regret_figure(curves, tmp_path / "r.png", episodes=np.array([1, 2, 10, 50, 100])))
    with pytest.raises(ValueError, match="increasing"):
        figures.regret_figure(curves, tmp_path / "x.png", episodes=np.array([1, 2, 2, 50, 100]))
