"""When runs may go in one batch (the class as shipped) and how many at a time (parts that fit in memory)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpkit.algorithms.batches import ShippedClass, batch_parts
from dpkit.algorithms.ldp_ucrl_vtr import LdpUcrlVtr
from dpkit.algorithms.linopt.agent import PrivateLinOpt


@given(runs=st.integers(0, 50), per_run=st.floats(0.0, 1e4), budget=st.floats(1.0, 1e5))
def test_parts_cover_the_runs_in_order_within_the_budget(runs: int, per_run: float, budget: float) -> None:
    parts = batch_parts(list(range(runs)), per_run, budget=budget)
    assert [i for part in parts for i in part] == list(range(runs))
    assert all(len(part) >= 1 and (len(part) == 1 or len(part) * per_run <= budget) for part in parts)


@pytest.mark.parametrize(("cls", "method"), [(LdpUcrlVtr, "privatize"), (LdpUcrlVtr, "plan"), (PrivateLinOpt, "items")])
def test_a_class_patched_in_place_is_no_longer_as_shipped(
    monkeypatch: pytest.MonkeyPatch, cls: type, method: str
) -> None:
    """A test's monkeypatch of a method (of the class or of a dpkit class it derives from) makes the batched
    observers play the runs one by one, through the patched method."""
    shipped = ShippedClass(cls)
    assert shipped.intact()
    monkeypatch.setattr(cls, method, lambda self, *a: None)
    assert not shipped.intact()
    monkeypatch.undo()
    assert shipped.intact()


def test_an_audit_of_a_patched_agent_goes_run_by_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The batch reads the agent's own methods: patched, each run is observed alone (its rows those of observe)."""
    from dpkit.audits.rl import default_setting

    calls: list[int] = []
    shipped = LdpUcrlVtr.privatize

    def privatize(self, *args):  # noqa: ANN001, ANN202
        calls.append(getattr(self, "runs", None) or 1)
        return shipped(self, *args)

    monkeypatch.setattr(LdpUcrlVtr, "privatize", privatize)
    from dpkit.audits.rl.setting import _release, neighbouring_datasets

    d0, _ = neighbouring_datasets(default_setting("ldp-ucrl-vtr"))
    rows = _release(d0, np.random.default_rng(0), 3)
    assert rows.shape[0] == 3 and calls and set(calls) == {1}
