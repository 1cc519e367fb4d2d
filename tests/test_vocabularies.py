"""The string vocabularies of the installed modules: no name means two things.

A vocabulary is a module-level constant that is a tuple of strings, or a string enum (``enum.StrEnum``) defined at
module level. Two modules may define a vocabulary of the same (public) name only with the same values: ``METHODS``
meant the accountants in one module and the DP-SGD calibration methods in another until each meaning got its own
name (:class:`~dpkit.accountant.accountants.AccountingMethod`, :class:`~dpkit.accountant.event_calibration.
CalibrationMethod`). Private names (``_OPTIONS``) stay in their module and are not compared.
"""

from __future__ import annotations

import ast
import enum
import importlib
from collections import defaultdict
from pathlib import Path
from typing import get_args

import pytest
from package_modules import package_modules

#: Clashes in modules other work is rewriting now, each name with the modules that still define it: to be renamed
#: there, and then taken out of this list (the test says so).
PENDING: dict[str, frozenset[str]] = {}


def _defined_names(module: object) -> list[str]:
    """The names a module binds at its top level by assignment or class statement (not by import)."""
    source = Path(getattr(module, "__file__", None) or "").read_text(encoding="utf-8")
    out = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign):
            out += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.append(node.target.id)
        elif isinstance(node, ast.ClassDef):
            out.append(node.name)
    return out


def vocabulary(value: object) -> tuple[str, ...] | None:
    """The strings of a vocabulary (a non-empty tuple of strings, or a string enum's values); None for anything else.

    Args:
        value: a module attribute.

    Returns:
        The vocabulary's strings in order, or None.
    """
    if isinstance(value, type) and issubclass(value, enum.StrEnum):
        return tuple(member.value for member in value)
    if isinstance(value, tuple) and value and all(isinstance(v, str) for v in value):
        return tuple(str(v) for v in value)
    return None


def vocabularies() -> dict[str, dict[str, tuple[str, ...]]]:
    """Every public vocabulary of every module: name -> {module: values}."""
    found: dict[str, dict[str, tuple[str, ...]]] = defaultdict(dict)
    for name in package_modules():
        module = importlib.import_module(name)
        for attr in _defined_names(module):
            if attr.startswith("_"):
                continue
            words = vocabulary(getattr(module, attr, None))
            if words is not None:
                found[attr][name] = words
    return found


VOCABULARIES = vocabularies()


def clashes(found: dict[str, dict[str, tuple[str, ...]]]) -> dict[str, dict[str, tuple[str, ...]]]:
    """The names defined with different values in different modules.

    Args:
        found: name -> {module: values}, as :func:`vocabularies` gives.

    Returns:
        The entries of ``found`` whose values differ.
    """
    return {name: where for name, where in found.items() if len(set(where.values())) > 1}


def test_the_walk_finds_the_vocabularies() -> None:
    assert VOCABULARIES["AccountingMethod"] == {
        "dpkit.accountant.accountants": ("exact", "pld", "rdp", "zcdp", "classic")
    }
    assert VOCABULARIES["CalibrationMethod"] == {"dpkit.accountant.event_calibration": ("pld", "rdp")}
    assert VOCABULARIES["METHODS"] == {"dpkit.accountant.accountants": ("exact", "pld", "rdp", "zcdp", "classic")}
    assert "VERDICTS" in VOCABULARIES and "FAMILIES" in VOCABULARIES


def test_the_clash_check_can_fail() -> None:
    found = {"NOISES": {"a": ("upper", "full"), "b": ("iid", "symmetric")}, "SAME": {"a": ("x",), "b": ("x",)}}
    assert clashes(found) == {"NOISES": found["NOISES"]}


def test_no_vocabulary_name_has_two_meanings() -> None:
    found = clashes(VOCABULARIES)
    unexpected = {name: where for name, where in found.items() if frozenset(where) != PENDING.get(name)}
    assert unexpected == {}, f"one name, different vocabularies: give each meaning its own name: {unexpected}"
    resolved = sorted(name for name in PENDING if name not in found)
    assert resolved == [], f"these clashes are gone: take them out of PENDING: {resolved}"


@pytest.mark.parametrize("name", ["METHODS", "NOISES", "VERDICTS"])
def test_the_clashing_names_of_issue_44_have_one_meaning(name: str) -> None:
    assert len(set(VOCABULARIES.get(name, {}).values())) <= 1


def test_the_string_vocabularies_are_enums_where_they_have_their_home() -> None:
    from dpkit.accountant import accountants, event_calibration, sensitivity
    from dpkit.algorithms import regret_stats
    from dpkit.audits import learned_attacks, verdicts

    homes = [
        (accountants.AccountingMethod, accountants.METHODS),
        (sensitivity.Relation, sensitivity.RELATIONS),
        (verdicts.Verdict, verdicts.VERDICTS),
    ]
    for enum_class, constant in homes:  # the constants kept for their many callers are the enums' values
        assert constant == tuple(enum_class) and all(type(v) is str for v in constant)
    for enum_class in (
        event_calibration.CalibrationMethod,
        sensitivity.SensitivityNoise,
        sensitivity.ReleaseNoise,
        regret_stats.RegretVerdict,
        learned_attacks.AttackFeatures,
        learned_attacks.Binning,
    ):
        assert issubclass(enum_class, enum.StrEnum)
        assert all(member == member.value and str(member) == member.value for member in enum_class)


def test_the_report_models_spell_the_audit_verdicts() -> None:
    """The report's pydantic models keep a Literal (mypy reads it); it must list the audit's verdicts."""
    from dpkit.accountant.sensitivity import Relation as RelationEnum
    from dpkit.audits.verdicts import Verdict
    from dpkit.reports.model_types import Relation
    from dpkit.reports.model_types import Verdict as VerdictLiteral

    assert get_args(VerdictLiteral) == tuple(Verdict)
    assert get_args(Relation) == tuple(RelationEnum)


def test_the_regret_verdicts_are_what_verdict_gives() -> None:
    from dpkit.algorithms.regret_stats import RegretVerdict, SlopeInterval, verdict

    given = {
        verdict(SlopeInterval(0.5, low, high, 0.95, 10))
        for low, high in [(0.4, 0.9), (0.4, 0.99), (0.96, 1.1), (0.5, 1.2), (0.5, float("inf"))]
    }
    assert given == set(RegretVerdict)


def _literal_strings(annotation: object) -> tuple[str, ...]:
    """The strings of a Literal annotation, optional or not."""
    for arm in (annotation, *get_args(annotation)):
        words = get_args(arm)
        if words and all(isinstance(w, str) for w in words):
            return words
    return ()


def test_the_report_json_literals_spell_the_vocabularies() -> None:
    """report.json's models spell their choices as Literals (their schema inline); each is its vocabulary's values."""
    from dpkit.accountant.flags import Severity
    from dpkit.accountant.sensitivity import ReleaseNoise
    from dpkit.accountant.tree_counts import Schedule
    from dpkit.algorithms.regret_stats import RegretVerdict
    from dpkit.reports import models
    from dpkit.reports.config import AUDIT_MODES, LEDGER_KINDS

    expected = {
        ("WorstFlag", "severity"): tuple(Severity),
        ("LedgerFlag", "severity"): tuple(Severity),
        ("AssessmentFlag", "severity"): tuple(Severity),
        ("SummaryRow", "audit_mode"): AUDIT_MODES,
        ("LedgerRelease", "noise"): tuple(ReleaseNoise),
        ("LedgerSection", "kind"): LEDGER_KINDS,
        ("LedgerEntryRecord", "kind"): LEDGER_KINDS,
        ("TreeSection", "schedule"): tuple(Schedule),
        ("RegretAtSigma", "growth"): tuple(RegretVerdict),
    }
    for (model, field), words in expected.items():
        annotation = getattr(models, model).model_fields[field].annotation
        assert _literal_strings(annotation) == words, (model, field)
