"""The default RL audit (every position that matters, the attack chosen on a selection split) catches bugs confined to
one position of the user, noise shared where the declaration says it is fresh, and one release with less noise than
declared — with a margin: the certified μ is at least 10% above what the declaration allows."""

from __future__ import annotations

import pytest
from rl_mutants import (
    ldp_diagonal_unnoised,
    ldp_last_user_half_noise,
    ldp_target_sigma_halved,
    linopt_last_released_twice,
    linopt_middle_user_twice,
    linopt_noise_shared_across_steps,
    linopt_power_of_two_twice,
    rlsvi_noise_reused_across_plans,
)

from dpkit.audits.rl import audit_positions, default_setting

pytestmark = pytest.mark.slow

CONFINED = [
    ("private-linopt-vi", linopt_middle_user_twice, "middle"),
    ("private-linopt-vi", linopt_last_released_twice, "last"),
    ("private-linopt-vi", linopt_power_of_two_twice, "last"),  # K = 4: user 2, the first after a completed block
    ("ldp-ucrl-vtr", ldp_last_user_half_noise, "last"),
]


@pytest.mark.parametrize(("algorithm", "mutant", "where"), CONFINED, ids=lambda x: getattr(x, "__name__", x))
def test_a_bug_confined_to_one_position_is_a_violation_there(algorithm: str, mutant, where: str, pool) -> None:  # noqa: ANN001
    audit = audit_positions(default_setting(algorithm, implementation=mutant), runs=600, seed=3, executor=pool)
    assert audit.verdict == "violation", audit.to_dict()
    verdicts = {r.position_name: r.verdict for r in audit.results}  # the plan probe's pair has a name of its own
    assert verdicts[where] == "violation"
    # the other positions hold a correct algorithm's users: never a violation there
    assert all(v != "violation" for p, v in verdicts.items() if p != where), verdicts
    assert audit.worst.setting.position == where


@pytest.mark.parametrize(
    ("algorithm", "mutant"),
    [("rlsvi", rlsvi_noise_reused_across_plans), ("private-linopt-vi", linopt_noise_shared_across_steps)],
    ids=lambda x: getattr(x, "__name__", x),
)
def test_noise_shared_across_plans_or_steps_is_a_violation(algorithm: str, mutant, pool) -> None:  # noqa: ANN001
    # the white-box projections assume fresh noise and cannot see it; a Gaussian fitted on the whitened coordinates
    # (all of them, or the projections that carry a signal, correlated where steps share a direction) can, and so
    # can the white-box score where its reused-noise column reads the coin from a repeated noise value (a billboard
    # whose steps share one draw: dpkit.audits.rl.reused_noise.changed_user_vote)
    audit = audit_positions(default_setting(algorithm, implementation=mutant), runs=600, seed=3, executor=pool)
    assert audit.verdict == "violation", audit.to_dict()
    billboard = audit.worst.setting.observer == "billboard"
    seen_by = {"gaussian-lr-fitted", "gaussian-lr-signals"} | ({"white-box"} if billboard else set())
    assert audit.worst.attack in seen_by


@pytest.mark.parametrize("mutant", [ldp_target_sigma_halved, ldp_diagonal_unnoised], ids=lambda f: f.__name__)
def test_less_noise_on_one_release_is_a_violation_by_a_margin(mutant, pool) -> None:  # noqa: ANN001
    audit = audit_positions(default_setting("ldp-ucrl-vtr", implementation=mutant), runs=1500, seed=3, executor=pool)
    assert audit.verdict == "violation", audit.to_dict()
    worst = audit.worst
    assert worst.mu_lower >= 1.1 * worst.pair_mu_allowed, audit.position_rows()
