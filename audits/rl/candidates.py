"""The candidate attacks of an RL audit on its runs' rows (:class:`~dpkit.audits.rl.rows.RowLayout`): the exact
white-box test, Gaussians fitted on the whitened releases, the attacks on the plans served after the changed user
(:mod:`dpkit.audits.rl.plans`) and, for a black-box view, a logistic regression; :func:`rl_attacks` gives the ones
an audit chooses among."""

from __future__ import annotations

import enum

import numpy as np

from dpkit.accountant.validation import enum_values

from ..attacks import Attack, FittedGaussianLikelihoodRatio
from ..learned_attacks import AtomAttack, LogisticRegressionAttack
from .rows import RowLayout
from .setting import RlSetting

__all__ = [
    "RL_ATTACKS",
    "RlAttack",
    "AUTO_SPLITS",
    "AUTO_MIN_RUNS",
    "MAX_FITTED_COLUMNS",
    "WhiteBoxRuns",
    "SignalColumns",
    "ColumnsAttack",
    "plan_attacks",
    "view_attack",
    "rl_attacks",
]


class RlAttack(enum.StrEnum):
    """The attacks of an algorithm's audit.

    ``auto``: the white-box test, a Gaussian fitted on the projections that carry a signal, one fitted on every
    whitened coordinate and the attacks on the plans served after the changed user, chosen on a selection split
    (white-box observers; a black-box observer's ``auto`` is ``learned``); ``white-box``: the exact log-likelihood
    ratio at the claim's noise; ``learned``: a Gaussian with fitted mean and covariance on every whitened coordinate
    and the attacks on the plans (white-box observers) or a logistic regression (black-box ones).
    """

    AUTO = "auto"
    WHITE_BOX = "white-box"
    LEARNED = "learned"


#: The values of :class:`RlAttack`.
RL_ATTACKS: tuple[str, ...] = enum_values(RlAttack)
#: The shares of training, selection and evaluation runs of an ``auto`` audit (the learned candidate is fitted on
#: the first; the white-box test, which needs no fit, loses only these runs).
AUTO_SPLITS: tuple[float, float, float] = (0.2, 0.1, 0.7)
#: Below this many runs per dataset ``auto`` is the white-box test alone (too few runs to fit the learned ones).
AUTO_MIN_RUNS = 100
#: The most columns a learned attack fits a covariance over (beyond, ``auto`` leaves that candidate out, saying so).
MAX_FITTED_COLUMNS = 4096


class WhiteBoxRuns(Attack):
    """The exact log-likelihood ratio Σ a·r − ½Σ a² of a white-box row [r (L), a (L), …] (``half`` = L; without it,
    the row is [r (L), a (L), μ, μ_claim])."""

    name = "white-box"
    needs_fit = False

    def __init__(self, half: int | None = None) -> None:
        self.half = half

    def score(self, outputs: np.ndarray) -> np.ndarray:
        x = np.asarray(outputs, dtype=float)
        if self.half is None and (x.ndim != 2 or x.shape[1] < 4 or (x.shape[1] - 2) % 2):
            raise ValueError(f"white-box rows must have shape (n, 2L + 2), got {x.shape}")
        half = (x.shape[1] - 2) // 2 if self.half is None else self.half
        if x.ndim != 2 or x.shape[1] < 2 * half:
            raise ValueError(f"white-box rows must hold {half} residuals and signals, got shape {x.shape}")
        r, a = x[:, :half], x[:, half : 2 * half]
        scores: np.ndarray = np.einsum("nl,nl->n", a, r) - 0.5 * np.einsum("nl,nl->n", a, a)
        return scores


class SignalColumns(Attack):
    """A Gaussian fitted on the whitened projections that carry a signal (a white-box row's r where its a is not 0 on
    the training runs): the log-likelihood ratio with the weights and correlations the runs show rather than the
    claim's — a release with less noise than declared (a wrong σ, an un-noised coordinate) or noise shared between
    releases moves them — in few dimensions, so that it is fitted well on a few hundred runs."""

    name = "gaussian-lr-signals"
    needs_fit = True

    def __init__(self, half: int) -> None:
        self.half = half
        self.inner = FittedGaussianLikelihoodRatio()
        self.columns: np.ndarray | None = None

    @property
    def fitted(self) -> bool:
        return self.columns is not None and self.inner.fitted

    def fit(self, outputs0: np.ndarray, outputs1: np.ndarray) -> SignalColumns:
        signals = np.concatenate([outputs0, outputs1])[:, self.half : 2 * self.half]
        columns = np.flatnonzero(np.any(signals != 0.0, axis=0))
        if columns.size == 0:
            raise ValueError("no whitened projection carries a signal on the training runs")
        self.inner.fit(outputs0[:, columns], outputs1[:, columns])
        self.columns = columns
        return self

    def score(self, outputs: np.ndarray) -> np.ndarray:
        self._require_fitted()
        assert self.columns is not None
        return self.inner.score(np.asarray(outputs)[:, self.columns])


class ColumnsAttack(Attack):
    """An attack that reads some columns of each row: ``inner`` fitted and scored on ``columns``, under ``name``
    (default: the inner attack's); ``max_columns`` caps how many it may fit on (a covariance's)."""

    def __init__(self, inner: Attack, columns: slice, *, name: str | None = None, max_columns: int | None = None):
        self.inner, self.columns, self.max_columns = inner, columns, max_columns
        self.name = inner.name if name is None else name
        self.needs_fit = inner.needs_fit  # type: ignore[misc]  # per instance: as the wrapped attack

    @property
    def fitted(self) -> bool:
        return self.inner.fitted

    def fit(self, outputs0: np.ndarray, outputs1: np.ndarray) -> ColumnsAttack:
        """Fit the inner attack on the columns of the training rows of D and D′.

        Args:
            outputs0: The training rows of D.
            outputs1: The training rows of D′.

        Returns:
            ``self``, fitted.

        Raises:
            ValueError: When the columns are more than ``max_columns``.
        """
        width = len(range(*self.columns.indices(np.shape(outputs0)[1])))
        if self.max_columns is not None and width > self.max_columns:
            raise ValueError(
                f"{width} whitened coordinates are too many to fit a covariance on (at most {self.max_columns})"
            )
        self.inner.fit(np.asarray(outputs0)[:, self.columns], np.asarray(outputs1)[:, self.columns])
        return self

    def score(self, outputs: np.ndarray) -> np.ndarray:
        return self.inner.score(np.asarray(outputs)[:, self.columns])


def plan_attacks(layout: RowLayout) -> list[Attack]:
    """The candidate attacks on the plans of rows of ``layout``, each on the plans alone.

    Args:
        layout: The rows' layout.

    Returns:
        Atoms (plan configurations and entries seen under one dataset only) and a logistic regression; none when
        the rows hold no plan.
    """
    if layout.plans == 0:
        return []
    columns = layout.plan_columns
    return [
        ColumnsAttack(AtomAttack(), columns, name="plans-atoms"),
        ColumnsAttack(LogisticRegressionAttack(), columns, name="plans-logistic"),
    ]


def view_attack(layout: RowLayout) -> Attack:
    """The learned attack on a black-box view (a logistic regression on its columns).

    Args:
        layout: The rows' layout.

    Returns:
        The attack.
    """
    return ColumnsAttack(LogisticRegressionAttack(), slice(0, layout.body))


def _attack(setting: RlSetting, kind: RlAttack, layout: RowLayout) -> Attack | list[Attack]:
    if not setting.white_box:
        if kind == RlAttack.WHITE_BOX:
            raise ValueError(f"the {setting.observer!r} observer is black-box: use attack 'learned'")
        return view_attack(layout)
    half = layout.half
    gaussian = ColumnsAttack(FittedGaussianLikelihoodRatio(), slice(0, half), max_columns=MAX_FITTED_COLUMNS)
    if kind == RlAttack.AUTO:
        return [WhiteBoxRuns(half), SignalColumns(half), gaussian, *plan_attacks(layout)]
    if kind == RlAttack.WHITE_BOX:
        return WhiteBoxRuns(half)
    plans = plan_attacks(layout)
    return [gaussian, *plans] if plans else gaussian


def rl_attacks(setting: RlSetting, attack: RlAttack, *, layout: RowLayout, runs: int) -> Attack | list[Attack]:
    """The attack (or the candidates ``auto`` chooses among) of an audit of ``setting``.

    A black-box observer's ``white-box`` is ``learned``; ``auto`` below :data:`AUTO_MIN_RUNS` runs is the white-box
    test alone (``learned`` for a black-box observer). A white-box observer's ``auto`` and ``learned`` add the
    attacks on the plans served after the changed user (:func:`~dpkit.audits.rl.plans.plan_attacks`).

    Args:
        setting: The audit's setting.
        attack: ``auto``, ``white-box`` or ``learned``.
        layout: The columns of the runs' rows.
        runs: Runs per dataset.

    Returns:
        The attack, or the candidates.
    """
    if attack == RlAttack.AUTO and runs < AUTO_MIN_RUNS:
        attack = RlAttack.WHITE_BOX
    if not setting.white_box and attack == RlAttack.WHITE_BOX:
        attack = RlAttack.LEARNED
    return _attack(setting, attack, layout)
