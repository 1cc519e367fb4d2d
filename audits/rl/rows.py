"""The row an audited run yields, and where each of its parts lies (:class:`RowLayout`).

An RL audit (:mod:`dpkit.audits.rl`) hands every run to the algorithm's observer, which records what it sees in a
:class:`Trace` and returns :meth:`Trace.row`:

* white-box observers: ``[r (L), a (L), plans (P), P, μ, μ_claim]`` — the whitened residuals r of every release
  that can depend on the changed user and their signals a (the exact log-likelihood ratio's weights), then the
  plans served to the users after her (:meth:`Trace.plan`: policy tables, gain matrices), their count of columns
  P, the run's μ at the σ used and the μ the claim allows;
* black-box observers: ``[view (V), plans (P), P, μ, μ_claim]``.

The plans sit in columns of their own, so that the attacks on the releases read exactly the columns they read
without them (their power is not diluted) and an attack of its own reads the plans (:mod:`dpkit.audits.rl.plans`).
A correct jointly private implementation serves each user a plan computed from the billboard (and her own data):
adding its plans to the view keeps the level of the audit — they are post-processing of what is already read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["PLAN_DECIMALS", "SIGNAL_CAP", "Trace", "Traces", "RowLayout"]

#: Plans are recorded rounded to this many decimals: a plan computed deterministically from the same statistics
#: gives the same columns in every process (a plan made on exact data repeats exactly; one made on noisy data
#: does not), whatever the last bits of the arithmetic.
PLAN_DECIMALS = 10
#: The largest whitened value a row holds: a difference released without noise is seen exactly (an infinite
#: signal), and is recorded as this finite one so that scores stay finite and order the runs the same way.
SIGNAL_CAP = 1e6


@dataclass
class Trace:
    """What one run recorded for the observer; :meth:`row` is the run's row.

    Attributes:
        r: The whitened residuals of each release (white-box).
        a: Their signals: the white-box score's weights.
        a_claim: The signals the claim allows.
        a_used: The pair's signals at the σ used.
        view: What a black-box observer sees.
        plans: The plans served after the changed user.
    """

    r: list[np.ndarray] = field(default_factory=list)
    a: list[np.ndarray] = field(default_factory=list)
    a_claim: list[np.ndarray] = field(default_factory=list)
    a_used: list[np.ndarray] = field(default_factory=list)
    view: list[np.ndarray] = field(default_factory=list)
    plans: list[np.ndarray] = field(default_factory=list)

    def add(self, r: np.ndarray, a: np.ndarray, a_claim: np.ndarray, a_used: np.ndarray | None = None) -> None:
        """Record one release's whitened residuals and their signals.

        Args:
            r: The whitened residuals.
            a: Their signals (the white-box score's weights).
            a_claim: The signals the claim allows.
            a_used: The pair's signals at the σ used (``None``: ``a``).
        """
        self.r.append(np.ravel(r))
        self.a.append(np.ravel(a))
        self.a_claim.append(np.ravel(a_claim))
        self.a_used.append(np.ravel(a if a_used is None else a_used))

    def extra(self, r: np.ndarray) -> None:
        """Record whitened coordinates with no signal of their own.

        The learned attack reads them; the white-box score gives them weight 0: residuals of releases that hold no
        difference, cross projections.

        Args:
            r: The whitened coordinates.
        """
        z = np.zeros(np.size(r))
        self.add(r, z, z, z)

    def read(self, vote: float) -> None:
        """Record the changed user's coin as a deterministic reading gives it.

        One white-box column with signal :data:`SIGNAL_CAP` and residual :data:`SIGNAL_CAP` (D′) or 0 (D): the
        log-likelihood ratio ±SIGNAL_CAP²/2 of a coin seen without noise; residual and signal 0 without a reading
        (the score unchanged). It allows nothing (μ of the run and of the claim unchanged). Under the declared
        noise model a reading is a chance event of the noise alone, a function of what the auditor sees: it costs
        power when wrong, never validity.

        Args:
            vote: The reading (:func:`~dpkit.audits.rl.reused_noise.changed_user_vote`): > 0 D′, < 0 D, 0 no reading.
        """
        a = SIGNAL_CAP * float(vote != 0.0)
        z = np.zeros(1)
        self.add(np.array([a * float(vote > 0.0)]), np.array([a]), z, z)

    def plan(self, policy: object) -> None:
        """Record the plan served to a user after the changed one.

        Every entry is recorded, rounded to :data:`PLAN_DECIMALS` decimals.

        Args:
            policy: the plan as the protocol exposes it — a policy table of actions (H, S) or probabilities
                (H, S, A), gain matrices (H, d, n).
        """
        self.plans.append(np.round(np.ravel(np.asarray(policy, dtype=float)), PLAN_DECIMALS) + 0.0)

    def row(self, white_box: bool) -> np.ndarray:
        """The run's row: [r, a, plans, P, μ, μ_claim] (white-box) or [view, plans, P, μ, μ_claim].

        The plans' P columns are followed by their count, the μ of the run's releases at the σ used and the μ the claim
        allows (:class:`RowLayout`).

        Args:
            white_box: Whether the row holds residuals and signals (else the view).

        Returns:
            The row, one-dimensional.

        Examples:
            >>> import numpy as np
            >>> trace = Trace()
            >>> trace.add(np.array([0.5]), np.array([3.0]), np.array([4.0]))
            >>> trace.row(True).tolist()
            [0.5, 3.0, 0.0, 3.0, 4.0]
        """
        a_claim = np.concatenate(self.a_claim) if self.a_claim else np.zeros(1)
        mu_claim = math.sqrt(float(a_claim @ a_claim))
        used = np.concatenate(self.a_used) if self.a_used else np.zeros(1)
        mu_used = math.sqrt(float(used @ used))
        a = np.concatenate(self.a) if self.a else np.zeros(1)
        if white_box:
            body = np.concatenate([np.concatenate(self.r) if self.r else np.zeros(1), a])
        else:
            body = np.concatenate(self.view) if self.view else np.zeros(1)
        plans = np.concatenate(self.plans) if self.plans else np.zeros(0)
        return np.concatenate([body, plans, [float(plans.size), mu_used, mu_claim]])


class Traces:
    """What R runs recorded, every part with a leading run axis (a batched observer records its runs at once).

    Row i of :meth:`rows` is the :meth:`Trace.row` of a :class:`Trace` given run i's parts in the same order.

    Args:
        runs: R, the number of runs.
    """

    def __init__(self, runs: int) -> None:
        self.runs = runs
        self.r: list[np.ndarray] = []
        self.a: list[np.ndarray] = []
        self.a_claim: list[np.ndarray] = []
        self.a_used: list[np.ndarray] = []
        self.view: list[np.ndarray] = []
        self.plans: list[np.ndarray] = []

    def _runs(self, x: object) -> np.ndarray:
        return np.reshape(np.asarray(x, dtype=float), (self.runs, -1))

    def add(self, r: np.ndarray, a: np.ndarray, a_claim: np.ndarray, a_used: np.ndarray | None = None) -> None:
        """:meth:`Trace.add` of every run.

        Args:
            r: The whitened residuals, (R, …).
            a: Their signals, (R, …).
            a_claim: The signals the claim allows, (R, …).
            a_used: The signals at the σ used, (R, …) (``None``: ``a``).
        """
        self.r.append(self._runs(r))
        self.a.append(self._runs(a))
        self.a_claim.append(self._runs(a_claim))
        self.a_used.append(self._runs(a if a_used is None else a_used))

    def extra(self, r: np.ndarray) -> None:
        """:meth:`Trace.extra` of every run.

        Args:
            r: The whitened coordinates, (R, …).
        """
        z = np.zeros(self._runs(r).shape)
        self.add(r, z, z, z)

    def read(self, votes: np.ndarray) -> None:
        """:meth:`Trace.read` of every run.

        Args:
            votes: One vote per run.
        """
        votes = np.asarray(votes, dtype=float).reshape(self.runs)
        a = SIGNAL_CAP * (votes != 0.0).astype(float)
        z = np.zeros((self.runs, 1))
        self.add((a * (votes > 0.0))[:, None], a[:, None], z, z)

    def plan(self, policies: object) -> None:
        """:meth:`Trace.plan` of every run.

        Args:
            policies: The plans served to a user after the changed one, (R, …).
        """
        self.plans.append(np.round(self._runs(policies), PLAN_DECIMALS) + 0.0)

    def see(self, view: object) -> None:
        """Record a black-box view of every run: what :class:`Trace`'s ``view`` list receives.

        Args:
            view: The views, (R, …).
        """
        self.view.append(self._runs(view))

    def rows(self, white_box: bool) -> np.ndarray:
        """Every run's :meth:`Trace.row`.

        Args:
            white_box: Whether the rows hold residuals and signals (else the views).

        Returns:
            The rows, (R, width).
        """
        zeros = np.zeros((self.runs, 1))
        a_claim = np.concatenate(self.a_claim, axis=1) if self.a_claim else zeros
        used = np.concatenate(self.a_used, axis=1) if self.a_used else zeros
        mu_claim = [math.sqrt(float(x @ x)) for x in a_claim]  # as Trace.row sums them, run by run
        mu_used = [math.sqrt(float(x @ x)) for x in used]
        if white_box:
            body = [*(self.r or [zeros]), *(self.a or [zeros])]
        else:
            body = self.view or [zeros]
        plans = np.concatenate(self.plans, axis=1) if self.plans else np.zeros((self.runs, 0))
        tail = np.column_stack([np.full(self.runs, float(plans.shape[1])), mu_used, mu_claim])
        return np.concatenate([*body, plans, tail], axis=1)


@dataclass(frozen=True)
class RowLayout:
    """Where the parts of an audited run's row lie (:meth:`Trace.row`).

    Attributes:
        width: The row's columns.
        plans: How many of them are the plans.
        white_box: Whether the row holds residuals and signals (``half`` columns each) before the plans, else a view.
    """

    width: int
    plans: int
    white_box: bool

    @classmethod
    def of(cls, rows: np.ndarray, white_box: bool) -> RowLayout:
        """The layout of audited rows (every run of one setting has the same).

        Args:
            rows: (n, width) rows of :meth:`Trace.row`.
            white_box: whether they hold residuals and signals (else a view).

        Returns:
            Where their parts lie.

        Raises:
            ValueError: when they do not follow :meth:`Trace.row`'s layout.
        """
        x = np.asarray(rows, dtype=float)
        if x.ndim != 2 or x.shape[1] < 4 or x.shape[0] == 0:
            raise ValueError(f"audited rows must have shape (n, width >= 4), got {x.shape}")
        counts = x[:, -3]
        plans = int(counts[0]) if counts[0] >= 0 and float(counts[0]).is_integer() else -1
        body = x.shape[1] - 3 - plans
        if plans < 0 or np.any(counts != plans) or body < 1 or (white_box and body % 2):
            raise ValueError(
                f"audited rows must be [r, a, plans, P, μ, μ_claim] (white-box) or [view, plans, P, μ, μ_claim]; "
                f"got width {x.shape[1]} with plan counts {np.unique(counts)[:4].tolist()}"
            )
        return cls(int(x.shape[1]), plans, bool(white_box))

    @property
    def body(self) -> int:
        """The columns before the plans: 2L residuals and signals (white-box) or the view."""
        return self.width - 3 - self.plans

    @property
    def half(self) -> int:
        """L, the residuals (and signals) of a white-box row."""
        if not self.white_box:
            raise ValueError("a black-box row has a view, not residuals and signals")
        return self.body // 2

    @property
    def plan_columns(self) -> slice:
        """The columns of the plans."""
        return slice(self.body, self.body + self.plans)

    @property
    def mu_column(self) -> int:
        """The column of the run's μ at the σ used (the μ the claim allows is the last)."""
        return self.width - 2
