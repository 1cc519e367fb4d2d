"""A mutant marked :func:`~dpkit.algorithms.batches.plays_runs` is audited in batches, and each of its batched runs is
the run it plays alone: its overrides keep the agent's run axis, or the batch would audit another implementation."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import rl_counter_mutants
import rl_mutants

from dpkit.algorithms.batches import batchable
from dpkit.audits.rl import default_setting, neighbouring_datasets
from dpkit.audits.rl.setting import _release, positions

#: The algorithms a mutant of each name's family is audited on.
_FAMILIES = {
    "ldp_": ("ldp-ucrl-vtr",),
    "rlsvi_": ("rlsvi",),
    "linopt_": ("private-linopt-vi",),
    "ofu_": ("private-ofu-rl",),
    "counters_": ("private-linopt-po", "private-ofu-rl"),
    "add_remove_": ("private-linopt-vi", "private-ofu-rl"),
}


def _marked() -> list[tuple[str, Callable[..., Any]]]:
    """Every marked mutant of the zoo, with each algorithm its family is audited on."""
    out = []
    for module in (rl_mutants, rl_counter_mutants):
        for name, factory in inspect.getmembers(module, inspect.isfunction):
            if getattr(factory, "dpkit_plays_runs", False) and factory.__module__ == module.__name__:
                family = next(prefix for prefix in _FAMILIES if name.startswith(prefix))
                out += [(algorithm, factory) for algorithm in _FAMILIES[family]]
    return out


MARKED = _marked()


def _unmarked(factory: Callable[..., Any]) -> Callable[..., Any]:
    """The same factory without the mark: the audit builds and plays it one run at a time."""

    def alone(*args: Any, **kwargs: Any) -> Any:
        return factory(*args, **kwargs)

    return alone


def test_the_zoo_marks_its_mutants_that_keep_the_run_axis() -> None:
    assert len({f for _, f in MARKED}) >= 20


@pytest.mark.parametrize(("algorithm", "mutant"), MARKED, ids=lambda x: getattr(x, "__name__", x))
def test_a_marked_mutants_batch_is_its_runs_one_by_one(algorithm: str, mutant: Callable[..., Any]) -> None:
    """Rows of D and D′ at every position the default audit probes: the marked mutant in one batch against the same
    mutant unmarked, run by run, from the same seed — equal (to the rounding of batched linear algebra)."""
    setting = default_setting(algorithm, implementation=mutant)
    assert batchable(setting.implementation, ())
    assert not batchable(dataclasses.replace(setting, implementation=_unmarked(mutant)).implementation, ())
    for name in positions(setting):
        for dataset in neighbouring_datasets(dataclasses.replace(setting, position=name)):
            batched = _release(dataset, np.random.default_rng(11), 4)
            alone_setting = dataclasses.replace(dataset.setting, implementation=_unmarked(mutant))
            alone = _release(dataclasses.replace(dataset, setting=alone_setting), np.random.default_rng(11), 4)
            np.testing.assert_allclose(batched, alone, rtol=1e-9, atol=1e-9)
