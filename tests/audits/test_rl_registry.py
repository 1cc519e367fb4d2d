"""The audits' side of a registration (dpkit.audits.rl.registry): every private built-in is audited from there, none
of them carries its audit in its algorithm spec, and a spec that brings its own audit is read first."""

from __future__ import annotations

import dataclasses

import pytest
import toy_algorithm

from dpkit.algorithms import registry
from dpkit.audits.rl.observers import local_messages_audit
from dpkit.audits.rl.registry import BUILTIN_AUDITS, audit_of, audit_spec, audited, audited_algorithms


def test_every_private_builtin_is_audited_and_its_spec_names_no_audit() -> None:
    """The algorithms never name an observer or a world: the built-ins' audits are registered here, by name."""
    builtins = [n for n in registry.names(private=True) if not registry.is_runtime(n)]
    assert sorted(BUILTIN_AUDITS) == sorted(builtins)
    assert [n for n in builtins if registry.get(n).audit is not None] == []
    assert set(builtins) <= set(audited_algorithms())
    assert audit_spec("rlsvi").observers == ("q-values", "policies")
    assert audit_spec("private-linopt-vi") is audit_spec("private-linopt-po")


def test_a_baseline_or_an_unknown_name_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match="ALGORITHM must be one of .*got 'ucrl-vtr'"):
        audited("ucrl-vtr", what="ALGORITHM")
    with pytest.raises(ValueError, match="did you mean 'rlsvi'"):
        audit_spec("rlsv")
    with pytest.raises(TypeError, match="algorithm must be a string"):
        audited(3)  # type: ignore[arg-type]


def test_a_spec_that_brings_its_own_audit_is_read_first() -> None:
    """A plugin's (or a user's agent's) spec carries its audit; a runtime twin of a built-in without one keeps the
    built-in's."""
    assert audit_of(toy_algorithm.SPEC) is toy_algorithm.SPEC.audit
    spec = registry.get("ldp-ucrl-vtr")
    own = local_messages_audit()
    assert audit_of(dataclasses.replace(spec, audit=own)) is own
    assert audit_of(dataclasses.replace(spec, entry_point=toy_algorithm.make_agent)) is BUILTIN_AUDITS["ldp-ucrl-vtr"]
    assert audit_of(registry.get("ucrl-vtr")) is None
