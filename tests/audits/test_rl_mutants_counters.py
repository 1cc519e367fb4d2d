"""The counter algorithms' mutant zoo (Private-LinOpt-VI/-PO, Private-OFU-RL): wrong implementations are
violations of what the registered algorithm declares. σ from a wrong formula, items without clipping and the
correct algorithms at σ = tight are tested in tests/audits/test_rl_mutants.py and test_rl.py; this file adds one
statistic un-noised, noise reused across p-sums, OFU-RL without its clipping of the states, and OFU-RL with B2 seeded
as B1 (each counter's noise right, the two drawn from one stream: the many-run reading of reused noise sees it)."""

from __future__ import annotations

import pytest
from rl_counter_mutants import (
    counters_noise_reused,
    linopt_target_r_unnoised,
    ofu_b2_seeded_as_b1,
    ofu_b2_unnoised,
    ofu_items_no_clipping,
)

from dpkit.audits.rl import audit_positions, audit_setting, default_setting

#: the statistical audits of the mutant zoo run in the second tier (make test-all)
pytestmark = pytest.mark.slow

LINOPT = ("private-linopt-vi", "private-linopt-po")
ALL = (*LINOPT, "private-ofu-rl")


def test_ofu_items_without_clipping_is_a_violation(pool) -> None:
    """The audit's LQ canaries push the state beyond the unit ball (noise at 2·C_w): only OFU-RL's own
    clipping of x keeps B1 and B2 at their declared sensitivities; without it the runs realise more."""
    result = audit_setting(
        default_setting("private-ofu-rl", implementation=ofu_items_no_clipping), runs=1000, seed=5, executor=pool
    )
    assert result.verdict == "violation", result.to_dict()
    assert result.pair_mu > result.pair_mu_allowed


@pytest.mark.parametrize(
    ("algorithm", "mutant"), [(a, linopt_target_r_unnoised) for a in LINOPT] + [("private-ofu-rl", ofu_b2_unnoised)]
)
def test_one_statistic_unnoised_is_a_violation(algorithm: str, mutant, pool) -> None:
    result = audit_setting(default_setting(algorithm, implementation=mutant), runs=1000, seed=5, executor=pool)
    assert result.verdict == "violation", result.to_dict()


@pytest.mark.parametrize("algorithm", ALL)
def test_noise_reused_across_psums_is_a_violation(algorithm: str, pool) -> None:
    result = audit_setting(
        default_setting(algorithm, implementation=counters_noise_reused),
        runs=1000,
        seed=5,
        attack="learned",
        executor=pool,
    )
    assert result.verdict == "violation", result.to_dict()


def test_ofu_with_b2_seeded_as_b1_is_a_violation_in_the_default_audit(pool) -> None:
    """Each counter's noise is N(0, σ²) at its declared σ, but B2 draws the same standard normals as B1: the pair's μ
    is unbounded. The default audit (every position, the default runs and attack) reads the changed user's coin from
    the repeated values in every run, at every position."""
    audit = audit_positions(default_setting("private-ofu-rl", implementation=ofu_b2_seeded_as_b1), executor=pool)
    assert audit.verdict == "violation", audit.position_rows()
    assert all(r.verdict == "violation" and r.attack == "white-box" for r in audit.results), audit.position_rows()
