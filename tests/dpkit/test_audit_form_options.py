"""The ``dpkit audit`` forms' options as the command builds them (:func:`form_options`): both ``--target`` forms hold
the claim's options as one :class:`ClaimOptions`, built from the same parameters, read into the same claim."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import click
import pytest

from dpkit.audits.claims import Claim
from dpkit.commands.audit.form_options import (
    AlgorithmOptions,
    ClaimOptions,
    OneRunTargetOptions,
    TargetOptions,
    form_options,
)
from dpkit.commands.audit.target_inputs import target_claim

#: Every parameter of ``dpkit audit`` a form below reads, as click gives them (no claim).
PARAMS: dict[str, Any] = {
    "algorithm": "rlsvi", "target": "f.py:release", "neighbours": "f.py:PAIRS", "canary_records": "f.py:RECORDS",
    "canaries": None, "dataset": None, "score": None, "epsilon": None, "delta": None, "mu": None, "rho": None,
    "rdp_orders": None, "rdp_values": None, "claim_file": None, "confidence": 0.95, "attack": "auto",
    "executor": "auto", "workers": None, "scheduler": None, "seed": 0, "sequential": False, "as_json": False,
    "trials": 4000, "chunk_size": 1000, "sigma": "paper", "observer": None, "runs": None, "episodes": None,
    "position": None, "env": None, "horizon": None, "max_time": 60.0,
}  # fmt: skip


@pytest.mark.parametrize("kind", [TargetOptions, OneRunTargetOptions])
def test_both_target_forms_hold_the_claim_once(kind: type[Any]) -> None:
    options = form_options(kind, PARAMS | {"mu": 1.5, "delta": 1e-5})
    assert options.claim == ClaimOptions(
        epsilon=None, delta=1e-5, mu=1.5, rho=None, rdp_orders=None, rdp_values=None, claim_file=None
    )
    assert {f.name for f in fields(kind)}.isdisjoint(f.name for f in fields(ClaimOptions))  # listed once
    assert target_claim(options.claim) == Claim.gdp(1.5)


def test_the_algorithm_form_keeps_its_target_epsilon_and_delta() -> None:
    options = form_options(AlgorithmOptions, PARAMS | {"epsilon": 2.0, "delta": 1e-6})
    assert (options.epsilon, options.delta) == (2.0, 1e-6)


@pytest.mark.parametrize(
    ("given", "needle"),
    [({}, "got none"), ({"mu": 1.0, "rho": 0.5}, "got --mu, --rho"), ({"epsilon": 1.0}, "--epsilon needs --delta")],
)
def test_the_claim_is_exactly_one_form(given: dict[str, Any], needle: str) -> None:
    with pytest.raises(click.UsageError, match=needle):
        target_claim(form_options(ClaimOptions, PARAMS | given))
