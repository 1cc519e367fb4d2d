"""The RL audits reach the declared worst case at every position they probe: each canary pair's exact μ is at least
95% of the declared μ of the releases that hold the changed user there (at σ_tight and at the optimal allocation),
and never above it; the positions are the ones the declaration makes matter."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from dpkit.audits.rl.fixed import _equal_error_mu, declared_mu
from dpkit.audits.rl.observers import tree_positions
from dpkit.audits.rl.registry import audited_algorithms
from dpkit.audits.rl.setting import (
    default_setting,
    neighbouring_datasets,
    positions,
    registered_declaration,
    rl_release,
    setting_claim_sigmas,
)

SEEDS = ("ldp-ucrl-vtr", "private-linopt-vi", "private-linopt-po", "private-ofu-rl", "rlsvi")


def _reach(setting) -> tuple[float, float]:  # noqa: ANN001
    """(pair μ, declared μ at the setting's position) at the claim's σ, from a few runs of each dataset."""
    d0, d1 = neighbouring_datasets(setting)
    runs = 4 if setting.algorithm in ("private-ofu-rl", "private-linopt-vi", "private-linopt-po") else 6
    mus = np.concatenate([rl_release(d, np.random.default_rng(i), runs)[:, -2] for i, d in enumerate((d0, d1))])
    declared = declared_mu(registered_declaration(setting), setting_claim_sigmas(setting), setting.relation)
    return _equal_error_mu(mus), declared * math.sqrt(setting.share)


@pytest.mark.parametrize("allocation", ["tight", "optimal"])
@pytest.mark.parametrize("algorithm", SEEDS)
def test_every_probed_position_reaches_the_declared_worst_case(algorithm: str, allocation: str) -> None:
    setting = default_setting(algorithm, sigma=allocation)
    assert setting.algorithm in audited_algorithms()
    for name, (index, share) in positions(setting).items():
        at = replace(setting, position=name)
        assert at.index == index and at.share == share
        pair, declared = _reach(at)
        assert declared > 0
        assert 0.95 * declared <= pair <= declared * (1 + 1e-9), (name, pair, declared)


def test_the_tree_positions_are_the_first_middle_last_and_the_powers_of_two() -> None:
    setting = default_setting("private-linopt-vi", episodes=8)
    named = tree_positions(setting)
    # users 0 … 6 are released (before-episode); user k is in psums_per_item(8)[k] p-sums of the 3 the first is in
    assert named == {
        "first": (0, 1.0),
        "k=1": (1, 2 / 3),
        "k=2": (2, 2 / 3),
        "middle": (3, 1 / 3),
        "k=4": (4, 2 / 3),
        "last": (6, 1 / 3),
    }
    assert tree_positions(setting, 5) == 1 / 3  # any user's share
    # the default settings probe every released user of their K = 4 (the tree counters) or the first, middle and
    # last user (LDP: every user's messages; RLSVI: the releases after her)
    assert [v[0] for v in positions(default_setting("private-ofu-rl")).values()] == [0, 1, 2]
    assert [v[0] for v in positions(default_setting("ldp-ucrl-vtr")).values()] == [0, 2, 3]
    assert [v[0] for v in positions(default_setting("rlsvi")).values()] == [0, 1, 2]


def test_a_position_by_index_or_name_is_the_same_user() -> None:
    setting = default_setting("private-linopt-vi", episodes=8)
    assert replace(setting, position="k=4").index == replace(setting, position=4).index == 4
    assert replace(setting, position=5).share == pytest.approx(1 / 3)
