"""Figures, drawn with matplotlib's Agg backend (no display needed) and saved as PNG.

Figures only draw what they are given: the numbers come from :mod:`dpkit.algorithms` and
:mod:`dpkit.audits`. PNG output is deterministic for the same input (no timestamps in the metadata).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import special

__all__ = [
    "regret_figure",
    "epsilon_delta_figure",
    "tree_figure",
    "rlsvi_figure",
    "gdp_tradeoff",
    "tradeoff_figure",
    "roc_figure",
]


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def regret_figure(
    curves: Mapping[str, np.ndarray],
    path: str | Path,
    *,
    title: str = "",
    xlabel: str = "episode k",
    episodes: np.ndarray | None = None,
) -> Path:
    """Cumulative regret against episodes, one curve per label, saved to ``path`` (PNG).

    ``curves[label]`` has shape (seeds, K): the cumulative regret of each seed. Each curve is
    drawn as its mean with a band of ± one standard deviation over seeds; an inset repeats the
    means on log-log axes (where a slope below 1 is sublinear regret). ``episodes`` gives the
    episode of each column (increasing, >= 1) when the curves hold checkpoints only; by default
    column i is episode i + 1.
    """
    if not curves:
        raise ValueError("curves must not be empty")
    arrays = {}
    for label, c in curves.items():
        a = np.asarray(c, dtype=float)
        if a.ndim == 1:
            a = a[None, :]
        if a.ndim != 2 or a.shape[1] < 1:
            raise ValueError(f"curve {label!r} must have shape (seeds, episodes), got {a.shape}")
        arrays[label] = a
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.0, 4.5), dpi=110)
    inset = ax.inset_axes((0.08, 0.5, 0.36, 0.42))
    for label, a in arrays.items():
        k = np.arange(1, a.shape[1] + 1) if episodes is None else _episodes(episodes, a.shape[1], label)
        mean, std = a.mean(axis=0), a.std(axis=0)
        (line,) = ax.plot(k, mean, label=label, lw=1.6)
        ax.fill_between(k, mean - std, mean + std, color=line.get_color(), alpha=0.2, lw=0)
        positive = mean > 0
        if positive.any():
            inset.loglog(k[positive], mean[positive], color=line.get_color(), lw=1.2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("cumulative regret")
    if title:
        ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(alpha=0.3)
    inset.set_title("log-log", fontsize=7)
    inset.tick_params(labelsize=6)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, format="png", metadata={"Software": None})
    plt.close(fig)
    return out


_ZERO_EPSILON = 1e-12  # ε at or below this is drawn as zero (not at all, on log axes)


def _episodes(episodes: np.ndarray, columns: int, label: str) -> np.ndarray:
    k = np.asarray(episodes, dtype=float)
    if k.shape != (columns,) or np.any(k < 1) or np.any(np.diff(k) <= 0):
        raise ValueError(f"episodes must be {columns} increasing values >= 1 (the columns of {label!r}), got {k!r}")
    return k


def _save(fig: Any, path: str | Path) -> Path:
    plt = _pyplot()
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, format="png", metadata={"Software": None})
    plt.close(fig)
    return out


def _finite_array(name: str, values: object) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d sequence, got shape {arr.shape}")
    return arr


def epsilon_delta_figure(
    deltas: Sequence[float],
    epsilons: Mapping[str, Sequence[float | None]],
    path: str | Path,
    *,
    title: str = "",
    target: tuple[float, float] | None = None,
) -> Path:
    """ε(δ) of several accounting methods on log-log axes, saved to ``path`` (PNG).

    ``epsilons[label][i]`` is the method's ε at ``deltas[i]``, or ``None`` where the method
    refuses. Refusals and values <= 1e-12 (a mechanism that is already (0, δ)-DP; an accountant
    may round 0 up to the smallest float) are not drawn.
    ``target`` = (δ, ε) marks the target guarantee.
    """
    d = _finite_array("deltas", deltas)
    if np.any(d <= 0) or np.any(d >= 1):
        raise ValueError(f"deltas must lie in (0, 1), got {d.tolist()}")
    if not epsilons:
        raise ValueError("epsilons must not be empty")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9.0, 4.5), dpi=110)
    order = np.argsort(d)
    styles = ("-", "--", "-.", ":")
    markers = ("o", "s", "^", "v", "D", "x", "+")
    n = len(epsilons)
    for i, (label, values) in enumerate(epsilons.items()):
        if len(values) != d.size:
            raise ValueError(f"epsilons[{label!r}] has {len(values)} values for {d.size} deltas")
        e = np.array([np.nan if v is None else float(v) for v in values])[order]
        keep = np.isfinite(e) & (e > _ZERO_EPSILON)
        if keep.any():  # earlier curves wider, so that a method equal to an earlier one leaves it visible
            ax.loglog(
                d[order][keep],
                e[keep],
                marker=markers[i % len(markers)],
                ms=3.5,
                ls=styles[i % len(styles)],
                lw=1.2 + 2.0 * (n - 1 - i) / max(n - 1, 1),
                label=label,
            )
    if target is not None:
        ax.plot(
            [target[0]],
            [target[1]],
            marker="*",
            ms=12,
            color="black",
            ls="none",
            label=f"target (δ, ε) = ({target[0]:.3g}, {target[1]:.3g})",
        )
    ax.set_xlabel("δ")
    ax.set_ylabel("ε(δ)")
    if title:
        ax.set_title(title)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the axes: no curve hidden
    return _save(fig, path)


def tree_figure(
    prefix_psums: Sequence[int],
    item_psums: Sequence[int],
    path: str | Path,
    *,
    paper_depth: int | None = None,
    title: str = "",
) -> Path:
    """The binary counter of T items: noise and exposure, saved to ``path`` (PNG).

    Left: the variance of each released prefix t = 1 … T′, popcount(t)·σ², in units of σ²
    (``prefix_psums[t − 1]`` = popcount(t)). Right: the number of released p-sums that contain
    item k (``item_psums[k − 1]``), i.e. how many Gaussian releases see one user, beside the
    paper's depth m = ⌈log2 T⌉ when given.
    """
    pre = _finite_array("prefix_psums", prefix_psums)
    item = _finite_array("item_psums", item_psums)
    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.0, 3.8), dpi=110)
    t = np.arange(1, pre.size + 1)
    left.plot(t, pre, ls="none", marker=".", ms=2, color="tab:blue", label="popcount(t)")
    left.plot(t, np.maximum.accumulate(pre), lw=1.2, color="tab:orange", label="largest so far")
    left.set_xscale("log")
    left.set_xlabel("released prefix t")
    left.set_ylabel("noise variance / σ²")
    left.set_title("noise of each released prefix", fontsize=9)
    left.legend(fontsize=7)
    left.grid(alpha=0.3)
    k = np.arange(1, item.size + 1)
    right.plot(k, item, ls="none", marker=".", ms=2, color="tab:green", label="p-sums containing user k")
    if paper_depth is not None:
        right.axhline(paper_depth, color="tab:red", ls="--", lw=1.2, label=f"paper's m = {paper_depth}")
    right.set_xscale("log")
    right.set_xlabel("user (episode) k")
    right.set_ylabel("noisy p-sums per user")
    right.set_title("releases that see one user", fontsize=9)
    right.legend(fontsize=7)
    right.grid(alpha=0.3)
    if title:
        fig.suptitle(title, fontsize=10)
    return _save(fig, path)


def rlsvi_figure(
    episodes: Sequence[int],
    series: Mapping[str, Sequence[float]],
    path: str | Path,
    *,
    title: str = "",
    ylabel: str = "ε",
) -> Path:
    """RLSVI's ε against the number of episodes K, one line per reading, on log-log axes (PNG).

    ``series[label][i]`` is the reading's ε at ``episodes[i]`` (e.g. the paper's closed form, the
    worst case over runs, one run's exact ε); values <= 0 are not drawn.
    """
    k = _finite_array("episodes", episodes)
    if np.any(k < 1):
        raise ValueError(f"episodes must be >= 1, got {k.tolist()}")
    if not series:
        raise ValueError("series must not be empty")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.0, 4.5), dpi=110)
    for label, values in series.items():
        v = _finite_array(f"series[{label!r}]", values)
        if v.size != k.size:
            raise ValueError(f"series[{label!r}] has {v.size} values for {k.size} episodes")
        keep = v > 0
        if keep.any():
            ax.loglog(k[keep], v[keep], marker="o", ms=4, lw=1.4, label=label)
    ax.set_xlabel("episodes K")
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    return _save(fig, path)


def gdp_tradeoff(fpr: np.ndarray | float, mu: float) -> np.ndarray:
    """The μ-GDP trade-off curve f(x) = Φ(Φ⁻¹(1 − x) − μ): the smallest FNR at FPR x."""
    if not (isinstance(mu, (int, float)) and np.isfinite(mu) and mu >= 0):
        raise ValueError(f"mu must be a finite number >= 0, got {mu!r}")
    x = np.asarray(fpr, dtype=float)
    return special.ndtr(special.ndtri(1.0 - x) - mu)


def tradeoff_figure(
    tests: Sequence[Mapping[str, float]],
    mu: float,
    path: str | Path,
    *,
    mu_lower: float | None = None,
    title: str = "",
) -> Path:
    """The audit's tests over the exact μ-GDP trade-off curve, saved to ``path`` (PNG).

    Each test (a mapping with ``fpr``, ``fnr``, ``fpr_upper``, ``fnr_upper``, as
    ``AuditEstimate.to_dict()`` gives) is drawn as its empirical point and its Clopper–Pearson box
    [fpr, fpr_upper] × [fnr, fnr_upper]: at the audit's confidence the true rates lie below and
    left of the box's upper corner, so a corner below the curve f of the claimed ``mu`` is a
    violation. ``mu_lower`` adds the curve of the audit's μ lower bound.
    """
    if not tests:
        raise ValueError("tests must hold at least one test")
    rows = []
    for i, test in enumerate(tests):
        try:
            fpr, fnr, fpr_up, fnr_up = (float(test[k]) for k in ("fpr", "fnr", "fpr_upper", "fnr_upper"))
        except KeyError as err:
            raise ValueError(f"tests[{i}] lacks {err.args[0]!r}") from None
        if not (0 <= fpr <= fpr_up <= 1 and 0 <= fnr <= fnr_up <= 1):
            raise ValueError(
                f"tests[{i}] must have 0 <= fpr <= fpr_upper <= 1 and 0 <= fnr <= fnr_upper <= 1, got {dict(test)!r}"
            )
        rows.append((fpr, fnr, fpr_up, fnr_up))
    plt = _pyplot()
    from matplotlib.patches import Rectangle

    fig, ax = plt.subplots(figsize=(5.6, 5.2), dpi=110)
    x = np.concatenate([np.geomspace(1e-6, 1e-2, 60), np.linspace(1e-2, 1.0, 200)])
    ax.plot(
        x,
        gdp_tradeoff(x, mu),
        color="tab:blue",
        lw=1.8,
        label=f"claimed μ = {mu:.4g}: $f(x) = \\Phi(\\Phi^{{-1}}(1 - x) - \\mu)$",
    )
    if mu_lower is not None and mu_lower > 0:
        ax.plot(
            x, gdp_tradeoff(x, mu_lower), color="tab:orange", lw=1.2, ls="--", label=f"μ lower bound = {mu_lower:.4g}"
        )
    ax.plot([0, 1], [1, 0], color="grey", lw=0.8, ls=":", label="no information (μ = 0)")
    for i, (fpr, fnr, fpr_up, fnr_up) in enumerate(rows):
        ax.add_patch(
            Rectangle(
                (fpr, fnr), fpr_up - fpr, fnr_up - fnr, facecolor="tab:red", alpha=0.25, edgecolor="tab:red", lw=1.0
            )
        )
        ax.plot(
            [fpr], [fnr], marker="o", ms=4, color="tab:red", ls="none", label="empirical (FPR, FNR)" if i == 0 else None
        )
        ax.plot(
            [fpr_up],
            [fnr_up],
            marker="x",
            ms=6,
            color="darkred",
            ls="none",
            label="Clopper–Pearson corner (FPR⁺, FNR⁺)" if i == 0 else None,
        )
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel("false positive rate (type I error)")
    ax.set_ylabel("false negative rate (type II error)")
    if title:
        ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper right")
    return _save(fig, path)


def roc_figure(
    fpr: Sequence[float],
    tpr: Sequence[float],
    path: str | Path,
    *,
    mu: float | None = None,
    title: str = "",
) -> Path:
    """The attack's ROC curve (evaluation split), with the μ-GDP bound 1 − f(x) when ``mu`` is given (PNG).

    The points are drawn in the order given (that of the thresholds). An empirical ROC is not a
    confidence statement: with few runs it may cross the bound by chance.
    """
    x = _finite_array("fpr", fpr)
    y = _finite_array("tpr", tpr)
    if x.shape != y.shape:
        raise ValueError(f"fpr and tpr must have the same length, got {x.size} and {y.size}")
    if np.any((x < 0) | (x > 1) | (y < 0) | (y > 1)):
        raise ValueError("fpr and tpr must lie in [0, 1]")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.6, 5.2), dpi=110)
    ax.plot(x, y, color="tab:red", lw=1.6, label="attack (evaluation split)")  # in threshold order
    if mu is not None:
        g = np.linspace(0.0, 1.0, 400)
        ax.plot(
            g, 1.0 - gdp_tradeoff(g, mu), color="tab:blue", lw=1.2, ls="--", label=f"largest TPR under μ = {mu:.4g}"
        )
    ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls=":", label="chance")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    if title:
        ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    return _save(fig, path)
