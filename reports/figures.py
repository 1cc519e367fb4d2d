"""Figures, drawn with matplotlib's Agg backend (no display needed) and saved as PNG.

Figures only draw what they are given: the numbers come from :mod:`dpkit.algorithms` and
:mod:`dpkit.audits`. PNG output is deterministic for the same input (no timestamps in the metadata).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from scipy import special

__all__ = [
    "RegretBand",
    "regret_figure",
    "regret_legend_title",
    "epsilon_delta_figure",
    "tree_figure",
    "rlsvi_figure",
    "gdp_tradeoff",
    "tradeoff_figure",
    "roc_figure",
    "roc_band_label",
    "evalue_figure",
]


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


@dataclass(frozen=True)
class RegretBand:
    """One regret curve to draw: the mean over ``seeds`` seeds and its ``level`` band, ``lower`` <= ``mean`` <=
    ``upper`` per episode. The numbers come from :func:`dpkit.algorithms.regret_stats.mean_band` (a Student-t
    interval for the mean over seeds): :meth:`from_mean_band` takes what it returns, :meth:`from_curves` calls it.
    A band of NaN (one seed: no spread to estimate) is not drawn."""

    mean: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    seeds: int
    level: float

    def __post_init__(self) -> None:
        arrays = [np.asarray(getattr(self, k), dtype=float) for k in ("mean", "lower", "upper")]
        mean, lower, upper = arrays
        if mean.ndim != 1 or mean.size < 1 or lower.shape != mean.shape or upper.shape != mean.shape:
            raise ValueError(
                f"mean, lower and upper must be 1-d of one length, got shapes {mean.shape}, {lower.shape}, "
                f"{upper.shape}"
            )
        if not np.all(np.isfinite(mean)):
            raise ValueError("mean must be finite")
        band = np.isfinite(lower) & np.isfinite(upper)
        if not (band.all() or not (np.isfinite(lower) | np.isfinite(upper)).any()):
            raise ValueError("lower and upper must be finite everywhere or NaN everywhere (one seed)")
        if np.any(lower[band] > mean[band]) or np.any(mean[band] > upper[band]):
            raise ValueError("the band must have lower <= mean <= upper at every episode")
        if isinstance(self.seeds, bool) or not isinstance(self.seeds, (int, np.integer)) or self.seeds < 1:
            raise ValueError(f"seeds must be an integer >= 1, got {self.seeds!r}")
        if not (isinstance(self.level, (int, float)) and 0.0 < self.level < 1.0):
            raise ValueError(f"level must lie in (0, 1), got {self.level!r}")
        for key, a in zip(("mean", "lower", "upper"), arrays):
            object.__setattr__(self, key, a)

    @property
    def has_band(self) -> bool:
        return bool(np.all(np.isfinite(self.lower)))

    @classmethod
    def from_mean_band(
        cls,
        mean: Sequence[float] | np.ndarray,
        half_width: Sequence[float | None] | np.ndarray,
        *,
        seeds: int,
        level: float,
    ) -> RegretBand:
        """From the mean and the half-width :func:`~dpkit.algorithms.regret_stats.mean_band` returns.

        Args:
            mean: The mean cumulative regret at each episode.
            half_width: The band's half-width at each (None or NaN: one seed, no band).
            seeds: The number of seeds.
            level: The band's level.

        Returns:
            The band.

        Raises:
            ValueError: If ``half_width`` does not have one value per mean value, or is negative.
        """
        m = np.asarray(mean, dtype=float)
        h = np.array([np.nan if v is None else v for v in np.asarray(half_width, dtype=object).ravel()], dtype=float)
        if h.shape != m.shape:
            raise ValueError(f"half_width must have one value per mean value ({m.size}), got {h.size}")
        if np.any(h < 0):
            raise ValueError("half_width must be >= 0")
        from dpkit.algorithms.regret_stats import band_limits

        lower, upper = band_limits(m, h)  # clipped at 0: regret is nonnegative
        return cls(m, np.minimum(lower, m), upper, seeds=seeds, level=level)

    @classmethod
    def from_curves(cls, curves: np.ndarray, *, level: float = 0.95) -> RegretBand:
        """From the cumulative regret of each seed, by ``mean_band``.

        Args:
            curves: Each seed's cumulative regret, shape (seeds, K).
            level: The band's level.

        Returns:
            The band.

        Raises:
            ValueError: If ``curves`` is not of shape (seeds, episodes).
        """
        from dpkit.algorithms.regret_stats import mean_band

        c = np.asarray(curves, dtype=float)
        c = c[None, :] if c.ndim == 1 else c
        if c.ndim != 2 or c.shape[1] < 1:
            raise ValueError(f"curves must have shape (seeds, episodes), got {c.shape}")
        k = c.shape[1]  # mean_band wants two episodes or more; it bands each column alone, so a single one is doubled
        mean, half = mean_band(c if k > 1 else np.repeat(c, 2, axis=1), level=level)
        return cls.from_mean_band(mean[:k], half[:k], seeds=c.shape[0], level=level)


#: Colour, line style and marker of the i-th regret curve: coinciding curves (the tight and the optimal σ
#: often give the same regret) stay visible by their styles, markers and widths.
_REGRET_STYLES: tuple[tuple[str, str, str], ...] = (
    ("tab:blue", "-", "o"),
    ("tab:orange", "--", "s"),
    ("tab:green", ":", "^"),
    ("tab:purple", "-.", "D"),
    ("tab:brown", "-", "v"),
)


def regret_legend_title(bands: Sequence[RegretBand]) -> str:
    """ "mean and 95% band over 20 seeds" (or per label when the curves differ in seeds or level).

    Args:
        bands: The bands drawn.

    Returns:
        The legend's title.
    """
    kinds = {(b.seeds, b.level, b.has_band) for b in bands}
    if len(kinds) != 1:
        return ""
    return _band_words(bands[0])


def _band_words(b: RegretBand) -> str:
    if not b.has_band:
        return f"mean of {b.seeds} seed{'s' if b.seeds != 1 else ''} (no band)"
    return f"mean and {100 * b.level:.3g}% band over {b.seeds} seeds"


def regret_figure(
    curves: Mapping[str, RegretBand | np.ndarray],
    path: str | Path,
    *,
    title: str = "",
    xlabel: str = "episode k",
    episodes: np.ndarray | Sequence[int] | None = None,
    level: float = 0.95,
    baselines: Mapping[str, float] | None = None,
) -> Path:
    """Cumulative regret against episodes, one curve per label, saved to ``path`` (PNG).

    Each label is drawn as its mean with its band shaded, in its own colour, line style and marker; the legend says
    "mean and 95% band over N seeds". An inset repeats the means on log-log axes (where a slope below 1 is sublinear
    regret).

    Args:
        curves: Per label, a :class:`RegretBand` (drawn as given) or an array (seeds, K) of each seed's cumulative
            regret (:meth:`RegretBand.from_curves` at ``level``).
        path: The PNG file written.
        title: The figure's title.
        xlabel: The x axis's label.
        episodes: The episode of each column (increasing, >= 1) when the curves hold checkpoints only; by default
            column i is episode i + 1.
        level: The band's level for curves given as arrays.
        baselines: Per name, a policy's regret per episode, drawn as the grey line k ↦ rate·k (e.g. the uniform
            policy's); a line ending above 3× the highest curve is left out (it would flatten the curves).

    Returns:
        ``path``, as a :class:`~pathlib.Path`.

    Raises:
        ValueError: If ``curves`` is empty, an array is not of shape (seeds, episodes), or a baseline's rate is not
            a finite number >= 0.
    """
    if not curves:
        raise ValueError("curves must not be empty")
    bands: dict[str, RegretBand] = {}
    for label, c in curves.items():
        if isinstance(c, RegretBand):
            bands[label] = c
            continue
        a = np.asarray(c, dtype=float)
        if a.ndim not in (1, 2) or a.shape[-1] < 1:
            raise ValueError(f"curve {label!r} must have shape (seeds, episodes), got {a.shape}")
        bands[label] = RegretBand.from_curves(a, level=level)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.0, 4.5), dpi=110)
    inset = ax.inset_axes((0.08, 0.5, 0.36, 0.42))
    legend_title = regret_legend_title(list(bands.values()))
    n = len(bands)
    for i, (label, b) in enumerate(bands.items()):
        size = b.mean.size
        k = np.arange(1, size + 1) if episodes is None else _episodes(np.asarray(episodes), size, label)
        color, ls, marker = _REGRET_STYLES[i % len(_REGRET_STYLES)]
        style = {"color": color, "ls": ls, "marker": marker, "markevery": (i, max(1, size // 8)), "ms": 4}
        name = label if legend_title else f"{label}: {_band_words(b)}"
        ax.plot(k, b.mean, label=name, lw=1.2 + 1.2 * (n - 1 - i) / max(n - 1, 1), **style)
        if b.has_band:
            ax.fill_between(k, b.lower, b.upper, color=color, alpha=0.18, lw=0)
        positive = b.mean > 0
        if positive.any():
            inset.loglog(k[positive], b.mean[positive], color=color, ls=ls, lw=1.0)
    top = max(float(np.max(b.mean)) for b in bands.values())
    for j, (name, rate) in enumerate((baselines or {}).items()):
        if not isinstance(rate, (int, float)) or not np.isfinite(rate) or rate < 0:
            raise ValueError(f"baseline {name!r} must be a finite regret per episode >= 0, got {rate!r}")
        k = np.arange(1, bands[next(iter(bands))].mean.size + 1) if episodes is None else np.asarray(episodes)
        if rate * float(k[-1]) > 3.0 * top:
            continue
        dash = ((0, (4, 2)), (0, (1, 1)))[j % 2]
        ax.plot(k, rate * k, color="0.45", ls=dash, lw=1.0, label=f"{name} policy")
        if rate > 0:
            inset.loglog(k, rate * k, color="0.45", ls=dash, lw=0.8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("cumulative regret")
    if title:
        ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8, title=legend_title or None, title_fontsize=8)
    ax.grid(alpha=0.3)
    inset.set_title("log-log", fontsize=7)
    inset.tick_params(labelsize=6)
    return _save(fig, path)


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

    Args:
        deltas: The δ values, in (0, 1).
        epsilons: Per method, its ε at each δ, or None where it refuses; refusals and values <= 1e-12 (a mechanism
            already (0, δ)-DP, or 0 rounded up) are not drawn.
        path: The PNG file written.
        title: The figure's title.
        target: (δ, ε) of the target guarantee, marked, or None.

    Returns:
        ``path``, as a :class:`~pathlib.Path`.

    Raises:
        ValueError: If a δ lies outside (0, 1), ``epsilons`` is empty, or a method has not one value per δ.
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

    Args:
        prefix_psums: popcount(t) of each released prefix t = 1 … T′ (left: its variance in units of σ²).
        item_psums: The number of released p-sums that contain item k (right: how many Gaussian releases see one
            user).
        path: The PNG file written.
        paper_depth: The paper's depth m = ⌈log2 T⌉, drawn beside, or None.
        title: The figure's title.

    Returns:
        ``path``, as a :class:`~pathlib.Path`.
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

    Args:
        episodes: The K values, >= 1.
        series: Per reading (the paper's closed form, the worst case over runs, one run's exact ε), its value at
            each K; values <= 0 are not drawn.
        path: The PNG file written.
        title: The figure's title.
        ylabel: The y axis's label.

    Returns:
        ``path``, as a :class:`~pathlib.Path`.

    Raises:
        ValueError: If a K is below 1, ``series`` is empty, or a reading has not one value per K.
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
    """The μ-GDP trade-off curve f(x) = Φ(Φ⁻¹(1 − x) − μ): the smallest FNR at FPR x.

    Args:
        fpr: The FPR values x.
        mu: The μ, finite and >= 0.

    Returns:
        f at each x.

    Raises:
        ValueError: If ``mu`` is not a finite number >= 0.
    """
    if not (isinstance(mu, (int, float)) and np.isfinite(mu) and mu >= 0):
        raise ValueError(f"mu must be a finite number >= 0, got {mu!r}")
    x = np.asarray(fpr, dtype=float)
    tpr: np.ndarray = special.ndtr(special.ndtri(1.0 - x) - mu)
    return tpr


def tradeoff_figure(
    tests: Sequence[Mapping[str, float]],
    mu: float,
    path: str | Path,
    *,
    mu_lower: float | None = None,
    title: str = "",
) -> Path:
    """The audit's tests over the exact μ-GDP trade-off curve, saved to ``path`` (PNG).

    Each test is drawn as its empirical point and its Clopper–Pearson box [fpr, fpr_upper] × [fnr, fnr_upper]: at
    the audit's confidence the true rates lie below and left of the box's upper corner, so a corner below the curve
    f of the claimed ``mu`` is a violation.

    Args:
        tests: Mappings with ``fpr``, ``fnr``, ``fpr_upper``, ``fnr_upper`` (as ``AuditEstimate.to_dict()``).
        mu: The claimed μ.
        path: The PNG file written.
        mu_lower: The audit's μ lower bound, whose curve is added, or None.
        title: The figure's title.

    Returns:
        ``path``, as a :class:`~pathlib.Path`.

    Raises:
        ValueError: If there is no test, a test lacks a key, or its rates are not ordered in [0, 1].
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


_BAND_KEYS: tuple[str, ...] = ("fpr_lower", "fpr_upper", "tpr_lower", "tpr_upper")


class _RocBand(NamedTuple):
    fpr_lower: np.ndarray
    fpr_upper: np.ndarray
    tpr_lower: np.ndarray
    tpr_upper: np.ndarray
    level: float
    kind: str


def _roc_band(band: Mapping[str, Any], x: np.ndarray, y: np.ndarray) -> _RocBand:
    """The band's four arrays, checked against the curve (lower <= rate <= upper, in [0, 1])."""
    try:
        arrays = tuple(np.asarray(band[k], dtype=float) for k in _BAND_KEYS)
        level, kind = float(band["level"]), str(band["kind"])
    except KeyError as err:
        raise ValueError(f"band lacks {err.args[0]!r}") from None
    for key, a in zip(_BAND_KEYS, arrays):
        if a.shape != x.shape:
            raise ValueError(f"band[{key!r}] must have one value per ROC point ({x.size}), got shape {a.shape}")
    fl, fu, tl, tu = arrays
    if not (
        np.all((0 <= fl) & (fl <= x) & (x <= fu) & (fu <= 1)) and np.all((0 <= tl) & (tl <= y) & (y <= tu) & (tu <= 1))
    ):
        raise ValueError("band must have 0 <= lower <= rate <= upper <= 1 at every ROC point")
    if not 0.0 < level < 1.0:
        raise ValueError(f"band['level'] must lie in (0, 1), got {level!r}")
    return _RocBand(fl, fu, tl, tu, level, kind)


def roc_band_label(level: float, kind: str) -> str:
    """The legend's name of a ROC band: e.g. "95% simultaneous band (Clopper–Pearson)".

    Args:
        level: The band's level.
        kind: ``"simultaneous"`` or ``"pointwise"``.

    Returns:
        The name.
    """
    return f"{100 * level:.3g}% {kind} band (Clopper–Pearson)"


def _staircase(x: np.ndarray, y: np.ndarray, *, upper: bool) -> np.ndarray:
    """Vertices of the step curve through the corners (``x``, ``y``), both non-decreasing: the upper envelope
    stays at y[i] on (x[i − 1], x[i]] (starting at x = 0), the lower one on [x[i], x[i + 1]) (ending at x = 1)."""
    if upper:
        xs = np.concatenate([[0.0], np.repeat(x, 2)[:-1]])
        ys = np.repeat(y, 2)
    else:
        xs = np.concatenate([[0.0], np.repeat(x, 2), [1.0]])
        ys = np.concatenate([[0.0, 0.0], np.repeat(y, 2)])
    return np.column_stack([xs, ys])


def roc_figure(
    fpr: Sequence[float],
    tpr: Sequence[float],
    path: str | Path,
    *,
    mu: float | None = None,
    title: str = "",
    band: Mapping[str, Any] | None = None,
    envelope: bool = True,
    boxes: bool = False,
) -> Path:
    """The attack's ROC curve (evaluation split), with the μ-GDP bound 1 − f(x) when ``mu`` is given (PNG).

    The points are drawn in the order given. An empirical ROC is not a confidence statement: with few runs it may
    cross the bound by chance; ``band`` says how far. The envelope is the region every ROC curve through the
    intervals lies in: a ROC curve rises, so the true curve lies at or below tpr_upper[j] left of fpr_lower[j], and
    at or above tpr_lower[j] right of fpr_upper[j].

    Args:
        fpr: The false-positive rate of each point.
        tpr: The true-positive rate of each point.
        path: The PNG file written.
        mu: The claimed μ, whose bound is drawn, or None.
        title: The figure's title.
        band: ``fpr_lower``, ``fpr_upper``, ``tpr_lower``, ``tpr_upper`` (one value per point, as
            :meth:`dpkit.audits.estimators.RocBand.to_dict` gives), ``level`` and ``kind``, or None.
        envelope: Whether to shade the band's envelope.
        boxes: Whether to draw each point's box too, as :func:`tradeoff_figure` draws its tests.

    Returns:
        ``path``, as a :class:`~pathlib.Path`.

    Raises:
        ValueError: If ``fpr`` and ``tpr`` differ in length or leave [0, 1].
    """
    x = _finite_array("fpr", fpr)
    y = _finite_array("tpr", tpr)
    if x.shape != y.shape:
        raise ValueError(f"fpr and tpr must have the same length, got {x.size} and {y.size}")
    if np.any((x < 0) | (x > 1) | (y < 0) | (y > 1)):
        raise ValueError("fpr and tpr must lie in [0, 1]")
    checked = None if band is None else _roc_band(band, x, y)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.6, 5.2), dpi=110)
    if checked is not None:
        _draw_roc_band(ax, checked, envelope=envelope, boxes=boxes)
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


def _draw_roc_band(ax: Any, band: _RocBand, *, envelope: bool, boxes: bool) -> None:
    """Shade the band's envelope (a PolyCollection) and/or draw its boxes (Rectangles) on ``ax``."""
    from matplotlib.collections import PolyCollection
    from matplotlib.patches import Rectangle

    fl, fu, tl, tu = band.fpr_lower, band.fpr_upper, band.tpr_lower, band.tpr_upper
    label = roc_band_label(band.level, band.kind)
    if envelope:  # the corners by rising FPR (the points come in threshold order: falling), ties by rising TPR
        order = np.lexsort((tu, fl))
        top = _staircase(fl[order], tu[order], upper=True)
        order = np.lexsort((tl, fu))
        bottom = _staircase(fu[order], tl[order], upper=False)
        region = np.concatenate([top, bottom[::-1]])
        ax.add_collection(PolyCollection([region], facecolors="tab:red", alpha=0.18, edgecolors="none", label=label))
    if boxes:
        for i in range(fl.size):
            ax.add_patch(
                Rectangle(
                    (fl[i], tl[i]),
                    fu[i] - fl[i],
                    tu[i] - tl[i],
                    facecolor="none",
                    edgecolor="darkred",
                    alpha=0.5,
                    lw=0.6,
                    label=(f"boxes: {label}" if not envelope else None) if i == 0 else None,
                )
            )


def evalue_figure(
    curves: Mapping[str, tuple[Sequence[int], Sequence[float | None]]],
    path: str | Path,
    *,
    threshold: float,
    title: str = "",
) -> Path:
    """A sequential audit's evidence: each position's e-value against the runs it had used, on a log scale (PNG).

    A curve that ends at or above the threshold ends with a star.

    Args:
        curves: Per position, (runs used, e-values) after every piece of a batch, as the audit recorded them
            (:class:`dpkit.audits.sequential.Look`): runs increasing and >= 0; an e-value None or <= 0 is not drawn.
        path: The PNG file written.
        threshold: The e-value at which the audit stops with a violation, drawn beside.
        title: The figure's title.

    Returns:
        ``path``, as a :class:`~pathlib.Path`.

    Raises:
        ValueError: If ``curves`` is empty, ``threshold`` is not a finite number > 0, or a curve's runs do not
            increase from >= 0 or do not match its e-values.
    """
    if not curves:
        raise ValueError("curves must not be empty")
    if not (isinstance(threshold, (int, float)) and np.isfinite(threshold) and threshold > 0):
        raise ValueError(f"threshold must be a finite number > 0, got {threshold!r}")
    drawn: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for label, (runs, values) in curves.items():
        n = _finite_array(f"runs of {label!r}", runs)
        if np.any(n < 0) or np.any(np.diff(n) <= 0):
            raise ValueError(f"the runs of {label!r} must increase from >= 0, got {n.tolist()}")
        if len(values) != n.size:
            raise ValueError(f"{label!r} has {len(values)} e-values for {n.size} runs")
        drawn[label] = (n, np.array([np.nan if v is None else float(v) for v in values]))
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.0, 4.5), dpi=110)
    count = len(drawn)
    for i, (label, (n, e)) in enumerate(drawn.items()):
        color, ls, marker = _REGRET_STYLES[i % len(_REGRET_STYLES)]
        keep = np.isfinite(e) & (e > 0)
        # earlier curves wider, so that coinciding ones (e = 1 before any bet) stay visible
        width = 1.2 + 1.2 * (count - 1 - i) / max(count - 1, 1)
        ax.plot(n[keep], e[keep], color=color, ls=ls, marker=marker, ms=3.5, lw=width, label=label)
        if keep.any() and e[keep][-1] >= threshold:
            ax.plot([n[keep][-1]], [e[keep][-1]], marker="*", ms=12, color=color, ls="none")
    ax.axhline(threshold, color="tab:red", ls="--", lw=1.2, label=f"stop (violation): e-value ≥ {threshold:.4g}")
    ax.set_yscale("log")
    highest = max([threshold, *(float(np.nanmax(e[e > 0])) for _, e in drawn.values() if np.any(e > 0))])
    ax.set_ylim(top=highest * 5)  # room above the line and the highest point
    ax.set_xlabel("runs per dataset used")
    ax.set_ylabel("e-value of the claim")
    if title:
        ax.set_title(title)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="best")
    return _save(fig, path)
