"""Figures, drawn with matplotlib's Agg backend (no display needed) and saved as PNG.

Figures only draw what they are given: the numbers come from :mod:`algorithms` and
:mod:`audits`. PNG output is deterministic for the same input (no timestamps in the metadata).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

__all__ = ["regret_figure"]


def _pyplot():  # type: ignore[no-untyped-def]
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def regret_figure(
    curves: Mapping[str, np.ndarray], path: str | Path, *, title: str = "", xlabel: str = "episode k"
) -> Path:
    """Cumulative regret against episodes, one curve per label, saved to ``path`` (PNG).

    ``curves[label]`` has shape (seeds, K): the cumulative regret of each seed. Each curve is
    drawn as its mean with a band of ± one standard deviation over seeds; an inset repeats the
    means on log-log axes (where a slope below 1 is sublinear regret).
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
        k = np.arange(1, a.shape[1] + 1)
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
