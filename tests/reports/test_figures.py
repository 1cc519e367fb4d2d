"""The report's figures: PNG files, deterministic bytes, reference values of the GDP curve, the audit
figures drawn from a real audit of a Gaussian release (the engine of issue 6), and what the ROC band and the
regret bands draw (the artists of the figure, captured before it is saved)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from dpkit.algorithms.regret_stats import mean_band
from dpkit.audits import Claim, GaussianLikelihoodRatio, audit_pair
from dpkit.audits.estimators import roc_band
from dpkit.reports import figures

PNG = b"\x89PNG\r\n\x1a\n"


def gaussian_release(ds: tuple[float, float], rng: np.random.Generator, n: int) -> np.ndarray:
    value, sigma = ds
    return value + sigma * rng.standard_normal((n, 1))


@pytest.fixture(scope="module")
def gaussian_audit() -> dict:
    """An audit of N(0, 1) against N(1, 1) (μ = 1), as the RL audits report it: the engine's dict and a ROC."""
    attack = GaussianLikelihoodRatio(np.zeros(1), np.ones(1), sigma=1.0)
    result = audit_pair(
        gaussian_release, (0.0, 1.0), (1.0, 1.0), Claim.gaussian(1.0), attack=attack, runs=20_000, seed=1
    )
    rng = np.random.default_rng(2)
    s0, s1 = rng.standard_normal(4000), 1.0 + rng.standard_normal(4000)
    roc = roc_band(s0, s1, points=101, level=0.95).to_dict()
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


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> list:
    """The figures the next calls draw (captured as they are saved)."""
    figs: list = []
    save = figures._save

    def capture(fig: object, path: str | Path) -> Path:
        figs.append(fig)
        return save(fig, path)

    monkeypatch.setattr(figures, "_save", capture)
    return figs


def _legend(ax: object) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]  # type: ignore[attr-defined]


def test_roc_figure_draws_the_band_with_its_level_and_kind(gaussian_audit: dict, tmp_path: Path, drawn: list) -> None:
    from matplotlib.collections import PolyCollection
    from matplotlib.patches import Rectangle

    roc = gaussian_audit["roc"]
    a = figures.roc_figure(roc["fpr"], roc["tpr"], tmp_path / "a.png", mu=1.0, band=roc)
    b = figures.roc_figure(roc["fpr"], roc["tpr"], tmp_path / "b.png", mu=1.0, band=roc)
    assert _png(a) == _png(b)  # deterministic bytes
    figures.roc_figure(roc["fpr"], roc["tpr"], tmp_path / "c.png", mu=1.0)  # an old call: no band
    figures.roc_figure(roc["fpr"], roc["tpr"], tmp_path / "d.png", band=roc, envelope=False, boxes=True)
    with_band, without, boxes = drawn[0].axes[0], drawn[2].axes[0], drawn[3].axes[0]
    polys = [c for c in with_band.collections if isinstance(c, PolyCollection)]
    assert len(polys) == 1 and not [c for c in without.collections if isinstance(c, PolyCollection)]
    assert figures.roc_band_label(0.95, "simultaneous") == "95% simultaneous band (Clopper–Pearson)"
    assert "95% simultaneous band (Clopper–Pearson)" in _legend(with_band)
    assert len(with_band.lines) == 3 and len(without.lines) == 3  # the attack, the μ bound, chance
    # the shaded region spans the band: from the smallest lower TPR to the largest upper TPR, inside [0, 1]²
    vertices = polys[0].get_paths()[0].vertices
    assert vertices[:, 1].min() == 0.0 and vertices[:, 1].max() == 1.0
    assert np.all((vertices >= 0) & (vertices <= 1))
    rects = [p for p in boxes.patches if isinstance(p, Rectangle)]
    assert len(rects) == len(roc["fpr"]) and not boxes.collections
    assert rects[10].get_x() == roc["fpr_lower"][10] and rects[10].get_height() == pytest.approx(
        roc["tpr_upper"][10] - roc["tpr_lower"][10]
    )


def test_roc_band_envelope_is_the_staircase_through_the_corners() -> None:
    """A rising curve through the boxes lies below tpr_upper[j] left of fpr_lower[j] and above tpr_lower[j]
    right of fpr_upper[j]: the two staircases."""
    x, y = np.array([0.2, 0.5, 1.0]), np.array([0.4, 0.7, 1.0])
    top = figures._staircase(x, y, upper=True)
    assert top.tolist() == [[0, 0.4], [0.2, 0.4], [0.2, 0.7], [0.5, 0.7], [0.5, 1], [1, 1]]
    bottom = figures._staircase(x, y, upper=False)
    assert bottom.tolist() == [[0, 0], [0.2, 0], [0.2, 0.4], [0.5, 0.4], [0.5, 0.7], [1, 0.7], [1, 1], [1, 1]]


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"tpr_upper": None}, "lacks 'tpr_upper'"),
        ({"fpr_lower": [0.0]}, "one value per ROC point"),
        ({"tpr_lower": [0.5, 0.5]}, "lower <= rate <= upper"),
        ({"level": 1.0}, r"\(0, 1\)"),
    ],
)
def test_roc_figure_rejects_a_bad_band(change: dict, match: str, tmp_path: Path) -> None:
    band = {"fpr_lower": [0.9, 0.1], "fpr_upper": [1.0, 0.3], "tpr_lower": [0.9, 0.2], "tpr_upper": [1.0, 0.6]}
    band |= {"level": 0.95, "kind": "pointwise"}
    band = {k: v for k, v in (band | change).items() if v is not None}
    with pytest.raises(ValueError, match=match):
        figures.roc_figure([1.0, 0.2], [1.0, 0.4], tmp_path / "x.png", band=band)


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


def _regret_curves(seeds: int) -> np.ndarray:
    rng = np.random.default_rng(7)
    return np.cumsum(1.0 / np.sqrt(np.arange(1, 41)) + 0.3 * rng.random((seeds, 40)), axis=1)


def test_regret_figure_draws_given_bands_for_three_sigmas(tmp_path: Path, drawn: list) -> None:
    from matplotlib.collections import PolyCollection

    paper, tight = _regret_curves(5), 0.5 * _regret_curves(5)
    bands = {
        label: figures.RegretBand.from_mean_band(*mean_band(c, level=0.95), seeds=5, level=0.95)
        for label, c in (("σ paper", paper), ("σ tight", tight), ("σ optimal", tight))  # tight = optimal
    }
    a = figures.regret_figure(bands, tmp_path / "a.png", title="regret")
    b = figures.regret_figure(bands, tmp_path / "b.png", title="regret")
    assert _png(a) == _png(b)  # deterministic bytes
    ax = drawn[0].axes[0]
    (inset,) = ax.child_axes  # the log-log inset
    assert ax.get_legend().get_title().get_text() == "mean and 95% band over 5 seeds"
    assert _legend(ax) == ["σ paper", "σ tight", "σ optimal"]
    assert len(ax.lines) == 3 and len(inset.lines) == 3  # the means, and again in the log-log inset
    styles = {(line.get_color(), line.get_linestyle(), line.get_marker()) for line in ax.lines}
    assert len({s[1] for s in styles}) == 3 and len({s[2] for s in styles}) == 3  # coinciding curves stay visible
    assert np.array_equal(ax.lines[1].get_ydata(), ax.lines[2].get_ydata())  # drawn as given
    polys = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(polys) == 3
    mean, half = mean_band(paper, level=0.95)
    y = polys[0].get_paths()[0].vertices[:, 1]
    assert y.min() == pytest.approx((mean - half).min()) and y.max() == pytest.approx((mean + half).max())


def test_regret_figure_turns_seed_curves_into_the_mean_band(tmp_path: Path, drawn: list) -> None:
    """An array (seeds, K) is drawn as RegretBand.from_curves gives it (mean_band's Student-t band), not as ± std."""
    curves = _regret_curves(4)
    a = figures.regret_figure({"run": curves}, tmp_path / "a.png")
    b = figures.regret_figure({"run": figures.RegretBand.from_curves(curves)}, tmp_path / "b.png")
    assert _png(a) == _png(b)
    band = figures.RegretBand.from_curves(curves, level=0.9)
    mean, half = mean_band(curves, level=0.9)
    assert np.array_equal(band.mean, mean) and np.array_equal(band.upper, mean + half) and band.seeds == 4
    single = figures.RegretBand.from_curves(curves[:, :1])  # one episode: its column's band, as mean_band's
    assert np.array_equal(single.upper, figures.RegretBand.from_curves(curves[:, :2]).upper[:1])
    one = figures.regret_figure({"one seed": curves[:1]}, tmp_path / "c.png")
    assert _png(one)
    ax = drawn[2].axes[0]
    assert not ax.collections and ax.get_legend().get_title().get_text() == "mean of 1 seed (no band)"


def test_regret_figure_labels_differing_bands_per_curve(tmp_path: Path, drawn: list) -> None:
    figures.regret_figure({"a": _regret_curves(3), "b": _regret_curves(6)}, tmp_path / "r.png")
    assert _legend(drawn[0].axes[0]) == ["a: mean and 95% band over 3 seeds", "b: mean and 95% band over 6 seeds"]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"mean": [1.0, 2.0], "lower": [1.0], "upper": [1.0, 2.0]}, "one length"),
        ({"mean": [1.0, 2.0], "lower": [1.5, 2.0], "upper": [2.0, 2.0]}, "lower <= mean <= upper"),
        ({"mean": [1.0, 2.0], "lower": [np.nan, 2.0], "upper": [1.0, 2.0]}, "NaN everywhere"),
        ({"mean": [1.0, 2.0], "lower": [1.0, 2.0], "upper": [1.0, 2.0], "seeds": 0}, "seeds"),
        ({"mean": [1.0, 2.0], "lower": [1.0, 2.0], "upper": [1.0, 2.0], "level": 95}, "level"),
    ],
)
def test_regret_band_rejects_bad_values(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        figures.RegretBand(**({"seeds": 3, "level": 0.95} | kwargs))


def test_evalue_figure_draws_each_position_against_the_stopping_line(tmp_path: Path, drawn: list) -> None:
    """A sequential audit's evidence: one curve per position on a log scale, the threshold dashed, a crossing starred;
    an e-value that is not finite (null in report.json) is left out."""
    curves = {
        "position first": ([12, 24, 48], [1.0, 39.0, 1.1e5]),  # crosses 40
        "position last": ([12, 24], [1.0, None]),
    }
    a = figures.evalue_figure(curves, tmp_path / "a.png", threshold=40.0, title="sequential")
    b = figures.evalue_figure(curves, tmp_path / "b.png", threshold=40.0, title="sequential")
    assert _png(a) == _png(b)  # deterministic bytes
    ax = drawn[0].axes[0]
    assert ax.get_yscale() == "log" and ax.get_xlabel() == "runs per dataset used"
    assert _legend(ax) == ["position first", "position last", "stop (violation): e-value ≥ 40"]
    first, star, last, line = ax.lines
    assert list(first.get_xdata()) == [12, 24, 48] and list(last.get_xdata()) == [12]  # the null e-value not drawn
    assert list(star.get_xdata()) == [48] and star.get_marker() == "*"
    assert list(line.get_ydata()) == [40.0, 40.0] and ax.get_ylim()[1] >= 1.1e5


@pytest.mark.parametrize(
    ("curves", "threshold", "match"),
    [
        ({}, 40.0, "curves must not be empty"),
        ({"p": ([12, 24], [1.0, 2.0])}, 0.0, "threshold must be a finite number > 0"),
        ({"p": ([24, 12], [1.0, 2.0])}, 40.0, "must increase"),
        ({"p": ([12, 24], [1.0])}, 40.0, "1 e-values for 2 runs"),
    ],
)
def test_evalue_figure_rejects_bad_input(curves: dict, threshold: float, match: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=match):
        figures.evalue_figure(curves, tmp_path / "x.png", threshold=threshold)
