"""Reused noise read in many-run audits (dpkit.audits.rl.reused_noise.changed_user_vote): every run of a billboard
(the seeds' counters, a user's billboard agent) or of a local-DP agent's messages carries one white-box column that
reads the changed user's coin where a noise value repeats. Two releases drawn from one stream give it away in every
run, whatever σ; a correct implementation's runs carry no reading."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from rl_counter_mutants import counters_noise_reused, ofu_b2_seeded_as_b1
from rl_mutants import ldp_one_stream_twice

from dpkit.audits.rl import default_setting, neighbouring_datasets, register_agent, rl_release
from dpkit.audits.rl.observers import SIGNAL_CAP
from dpkit.audits.rl.rows import RowLayout

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import jdp_agent  # noqa: E402


def _readings(algorithm: str, runs: int, **overrides: object) -> tuple[np.ndarray, np.ndarray]:
    """The reading column (+1: D′, −1: D, 0: none) of ``runs`` runs on D and on D′ at the first position."""
    d0, d1 = neighbouring_datasets(default_setting(algorithm, position="first", **overrides))
    out = []
    for which, d in enumerate((d0, d1)):
        rows = rl_release(d, np.random.default_rng(which), runs)
        half = RowLayout.of(rows, True).half  # the reading is the last white-box column, before the plans
        r, a = rows[:, half - 1], rows[:, 2 * half - 1]
        assert set(np.unique(a)) <= {0.0, SIGNAL_CAP}
        out.append(np.where(a == 0.0, 0, np.where(r > 0.0, 1, -1)))
    return out[0], out[1]


def _jdp(name: str) -> str:
    return register_agent(getattr(jdp_agent, name), name=f"jdp-reused-{name.lower()}")


@pytest.mark.parametrize(
    ("algorithm", "overrides"),
    [
        ("private-ofu-rl", {"implementation": ofu_b2_seeded_as_b1}),
        ("private-ofu-rl", {"implementation": ofu_b2_seeded_as_b1, "sigma": 1e4}),  # any σ
        ("private-linopt-vi", {"implementation": counters_noise_reused}),
        ("ldp-ucrl-vtr", {"implementation": ldp_one_stream_twice}),
        ("SharedNoise", {"sigma": "paper"}),
    ],
    ids=[
        "ofu-b2-seeded-as-b1",
        "ofu-b2-seeded-as-b1-at-sigma-1e4",
        "linopt-noise-reused",
        "ldp-one-stream-twice",
        "jdp-shared-noise",
    ],
)
def test_noise_drawn_twice_gives_the_coin_away_in_every_run(algorithm: str, overrides: dict) -> None:
    name = _jdp(algorithm) if algorithm == "SharedNoise" else algorithm
    on_d, on_d_prime = _readings(name, 12, **overrides)
    assert (on_d == -1).all() and (on_d_prime == 1).all()


@pytest.mark.parametrize(
    ("algorithm", "overrides"),
    [
        ("private-ofu-rl", {}),
        ("private-linopt-vi", {}),
        ("private-linopt-vi", {"sigma": "optimal"}),  # step H released without noise (its Δ is 0)
        ("ldp-ucrl-vtr", {}),
        ("CountingAgent", {"sigma": "paper"}),
    ],
    ids=["ofu", "linopt", "linopt-optimal", "ldp", "jdp"],
)
def test_a_correct_implementation_carries_no_reading(algorithm: str, overrides: dict) -> None:
    name = _jdp(algorithm) if algorithm == "CountingAgent" else algorithm
    on_d, on_d_prime = _readings(name, 40, **overrides)
    assert not on_d.any() and not on_d_prime.any()
