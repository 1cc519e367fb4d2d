"""The RL audits' release in batches is the release run by run, for every algorithm dpkit ships (issue 42)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dpkit.audits.rl import default_setting, neighbouring_datasets
from dpkit.audits.rl.registry import audit_spec, audited_algorithms
from dpkit.audits.rl.setting import BATCH_RUNS, _release, positions

#: Every algorithm dpkit registers with an audit.
AUDITED = audited_algorithms()


def test_every_audited_algorithm_simulates_its_runs_in_batches() -> None:
    """An algorithm that loses its batches would make every audit of it an order of magnitude slower, unseen."""
    assert AUDITED
    assert [n for n in AUDITED if audit_spec(n).observe_batch is None] == []


@pytest.mark.parametrize("algorithm", AUDITED)
def test_a_batch_of_runs_is_the_runs_one_by_one(algorithm: str) -> None:
    """Rows of D and D′ at every position a default audit probes, in one batch and run by run, from the same seed:
    equal (to rounding of the batch's linear algebra), every column — the observed view, the whole view's plans, μ."""
    setting = default_setting(algorithm)
    for name in positions(setting):
        positioned = dataclasses.replace(setting, position=name)
        for dataset in neighbouring_datasets(positioned):
            batched = _release(dataset, np.random.default_rng(11), 5)
            alone = _release(dataset, np.random.default_rng(11), 5, batched=False)
            np.testing.assert_allclose(batched, alone, rtol=1e-9, atol=1e-9)


def test_runs_beyond_one_batch_go_in_several() -> None:
    """More runs than :data:`BATCH_RUNS` are several batches: the rows are still the runs one by one."""
    d0, _ = neighbouring_datasets(default_setting("rlsvi"))
    n = BATCH_RUNS + 3
    np.testing.assert_allclose(
        _release(d0, np.random.default_rng(2), n), _release(d0, np.random.default_rng(2), n, batched=False), atol=1e-9
    )
