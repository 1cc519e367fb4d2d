"""The RL mutant zoo: wrong implementations of LDP-UCRL-VTR and RLSVI are violations of what the
registered algorithm declares; the correct ones are consistent (with power, not inconclusive)."""

from __future__ import annotations

from typing import Any

import pytest
from rl_mutants import (
    add_remove_accounting,
    counters_sigma_halved,
    counters_tree_one_level_short,
    counters_unnoised,
    ldp_add_remove,
    ldp_no_clipping,
    ldp_one_stream_twice,
    ldp_sigma_halved,
    ldp_target_unnoised,
    linopt_no_reward_clipping,
    rlsvi_no_clipping,
)

from dpkit.audits.rl.fixed import audit_setting, declared_mu
from dpkit.audits.rl.setting import default_setting, implementation_declaration

#: the statistical audits of the mutant zoo run in the second tier (make test-all)
pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    "mutant",
    [ldp_no_clipping, ldp_sigma_halved, ldp_target_unnoised, ldp_add_remove, ldp_one_stream_twice],
    ids=lambda f: f.__name__,
)
def test_ldp_mutants_are_violations(mutant, pool) -> None:
    result = audit_setting(default_setting("ldp-ucrl-vtr", implementation=mutant), runs=2000, seed=3, executor=pool)
    assert result.verdict == "violation", result.to_dict()


def test_rlsvi_without_reward_clipping_is_a_violation(pool) -> None:
    result = audit_setting(default_setting("rlsvi", implementation=rlsvi_no_clipping), runs=2000, seed=3, executor=pool)
    assert result.verdict == "violation", result.to_dict()


def test_exceeded_sensitivity_is_not_allowed_more_than_the_declaration(pool) -> None:
    """The defect this zoo guards: the allowance never exceeds the declared worst case, whatever the
    implementation's own statistics do (LDP without clipping realises far more than it declares)."""
    setting = default_setting("ldp-ucrl-vtr", implementation=ldp_no_clipping)
    result = audit_setting(setting, runs=1000, seed=4, executor=pool)
    correct = default_setting("ldp-ucrl-vtr", sigma="tight")
    declaration, _ = implementation_declaration(correct)
    from dpkit.audits.rl import setting_claim_sigmas

    declared = declared_mu(declaration, setting_claim_sigmas(correct), "replace_one")
    assert result.pair_mu_allowed <= declared * (1 + 1e-9)
    assert result.mu_lower > result.pair_mu_allowed


@pytest.mark.parametrize("algorithm", ["ldp-ucrl-vtr", "rlsvi"])
def test_correct_algorithms_are_consistent_with_power(algorithm: str, pool) -> None:
    result = audit_setting(default_setting(algorithm), runs=2000, seed=3, executor=pool)
    assert result.verdict == "consistent", result.to_dict()


COUNTER_ALGORITHMS = ("private-linopt-vi", "private-linopt-po", "private-ofu-rl")


@pytest.mark.parametrize("algorithm", COUNTER_ALGORITHMS)
@pytest.mark.parametrize(
    "mutant", [counters_sigma_halved, counters_unnoised, counters_tree_one_level_short], ids=lambda f: f.__name__
)
def test_counter_mutants_are_violations(algorithm: str, mutant, pool) -> None:
    runs = 1000 if mutant is counters_tree_one_level_short else 600  # one level short: σ/√2, a smaller excess
    result = audit_setting(default_setting(algorithm, implementation=mutant), runs=runs, seed=3, executor=pool)
    assert result.verdict == "violation", result.to_dict()


@pytest.mark.parametrize("algorithm", ["private-linopt-vi", "private-linopt-po"])
def test_linopt_without_reward_clipping_exceeds_its_declaration(algorithm: str, pool) -> None:
    """The canaries' raw rewards (2) lie beyond [0, 1]: only LinOpt's own clipping keeps its reward
    counters at their declared sensitivity; without it the runs realise more than the declaration allows."""
    result = audit_setting(
        default_setting(algorithm, implementation=linopt_no_reward_clipping), runs=1000, seed=3, executor=pool
    )
    assert result.verdict == "violation", result.to_dict()
    assert result.pair_mu > result.pair_mu_allowed


@pytest.mark.parametrize("algorithm", COUNTER_ALGORITHMS)
def test_add_remove_accounting_of_replace_one_neighbours_is_a_violation(algorithm: str, pool) -> None:
    """σ calibrated for the add/remove sensitivities (1/√2 to 1/2 of replace-one's) while a user is replaced."""
    result = audit_setting(
        default_setting(algorithm, implementation=add_remove_accounting), runs=600, seed=3, executor=pool
    )
    assert result.verdict == "violation", result.to_dict()


def test_rlsvi_has_no_add_remove_accounting_to_get_wrong() -> None:
    """RLSVI's relation changes one user's rewards (her visits stay): its declaration defines replace-one
    only, so the add/remove mutant cannot be built — the ledger refuses the relation."""
    with pytest.raises(ValueError, match="defined only under replace_one"):
        add_remove_accounting("rlsvi", *_rlsvi_world(), 0, beta=0.05)


def _rlsvi_world() -> tuple[Any, int]:
    from dpkit.audits.rl import setting_world

    setting = default_setting("rlsvi")
    return setting_world(setting)[0], setting.episodes
