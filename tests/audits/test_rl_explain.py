"""The why and the diagnosis of an RL audit of several positions (dpkit.audits.rl.explain), on audits whose numbers
are set: what each points to, and that nothing is diagnosed beside consistent."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from dpkit.audits.rl.explain import (
    rl_diagnosis,
    rl_reason,
    rl_sequential_diagnosis,
    rl_sequential_reason,
    sigma_shortfalls,
    verdict_meanings,
)


def _position(name: str, verdict: str, **kw: Any) -> SimpleNamespace:
    """One position's audit with the numbers the explanation reads (defaults: a correct pair)."""
    judgement = SimpleNamespace(reason=kw.pop("reason", "some reason"), diagnosis=kw.pop("diagnosis", None), shape=None)
    audit = SimpleNamespace(judgement=judgement, power_ratio=kw.pop("power_ratio", 0.9))
    values: dict[str, Any] = {
        "position_name": name,
        "verdict": verdict,
        "attack": "white-box",
        "mu_lower": 1.0,
        "pair_mu_allowed": 1.5,
        "pair_mu": 1.5,
        "declared_mu_at_position": 1.5,
        "reach": 1.0,
        "probe": None,
        "note": None,
        "sigmas": {"visits": 2.0, "rewards": [2.0, 2.0]},
        "sigmas_claim": {"visits": 2.0, "rewards": [2.0, 2.0]},
        "exact_mu": 1.5,
        "claim_mu": 1.5,
        "audit": audit,
    }
    return SimpleNamespace(**(values | kw))


def _audit(*results: SimpleNamespace, verdict: str) -> SimpleNamespace:
    rank = {"consistent": 0, "inconclusive": 1, "violation": 2}
    return SimpleNamespace(results=results, verdict=verdict, worst=max(results, key=lambda r: rank[r.verdict]))


def test_consistent_says_why_and_never_diagnoses() -> None:
    audit = _audit(
        _position("first", "consistent", power_ratio=0.71), _position("last", "consistent"), verdict="consistent"
    )
    assert "0.71 of the allowance" in rl_reason(audit) and "0.5 needed" in rl_reason(audit)
    assert rl_diagnosis(audit) is None


def test_a_violation_names_its_position_attack_and_bounds() -> None:
    bad = _position("last", "violation", mu_lower=3.775, pair_mu_allowed=1.178)
    reason = rl_reason(_audit(_position("first", "consistent"), bad, verdict="violation"))
    assert reason.startswith("1 of 2 position(s) violate the declaration; at last the white-box attack")
    assert "μ ≥ 3.775" in reason and "allows the pair 1.178" in reason


def test_an_inconclusive_gives_the_headline_positions_reason_or_its_views_note() -> None:
    weak = _position("middle", "inconclusive", reason="too few runs: …")
    assert rl_reason(_audit(weak, verdict="inconclusive")) == "at middle: too few runs: …"
    blind = _position("middle", "inconclusive", note="the actions view was the same in every run")
    assert rl_reason(_audit(blind, verdict="inconclusive")).endswith("the same in every run")


def test_a_sigma_short_of_the_targets_is_named_with_its_ratio() -> None:
    short = _position(
        "first",
        "violation",
        sigmas={"visits": 2.0, "rewards": [2.0, 1.0]},
        sigmas_claim={"visits": 2.0, "rewards": [2.0, 2.0]},
    )
    text = rl_diagnosis(_audit(short, verdict="violation"))
    assert text is not None and text.startswith("σ below what the target needs (rewards 1 (0.5×) of it)")
    assert sigma_shortfalls({"a": 1.0}, {"a": 1.0}) == []


def test_a_reach_above_one_is_a_sensitivity_exceeded() -> None:
    over = _position("first", "violation", reach=1.41, pair_mu=2.1, declared_mu_at_position=1.5)
    text = rl_diagnosis(_audit(over, verdict="violation"))
    assert text is not None and "reach 1.41 > 1" in text and "not clipped" in text


@pytest.mark.parametrize(("attack", "probe", "blamed"), [("plans-atoms", None, True), ("white-box", "p", True)])
def test_the_plans_are_blamed_when_they_alone_carry_the_signal(attack: str, probe: Any, blamed: bool) -> None:
    plans = _position("plans, low-first", "violation", attack=attack, probe=probe)
    text = rl_diagnosis(_audit(_position("first", "consistent"), plans, verdict="violation"))
    assert (text is not None and text.startswith("the plans served after the changed user")) == blamed


def test_the_plans_are_not_blamed_when_the_billboard_violates_too() -> None:
    """A plan probe's pair also sees the billboard: its violation beside the billboard's is the billboard's."""
    plans = _position("plans, low-first", "violation", probe="p", diagnosis="the measured μ is 3× …")
    audit = _audit(_position("first", "violation", diagnosis="the measured μ is 3× …"), plans, verdict="violation")
    text = rl_diagnosis(audit)
    assert text is not None and "plans" not in text.split(",")[0] and "the measured μ is 3×" in text


def test_each_verdict_says_what_it_is_judged_against() -> None:
    declaration, claim = verdict_meanings()
    assert declaration.startswith("against the declaration") and "σ_tight" in declaration
    assert claim.startswith("against the paper's claim") and "claimed ε" in claim


def _sequential(verdict: str, *, stopped_early: bool = True, sigma: float = 2.0) -> SimpleNamespace:
    """A sequential audit of one position with the numbers its explanation reads."""
    final = None if stopped_early else SimpleNamespace(judgement=SimpleNamespace(reason="too few runs: …"))
    result = SimpleNamespace(e_value=522.3, mu_lower=1.9, stopped_early=stopped_early, final=final)
    position = SimpleNamespace(position="last", verdict=verdict, result=result, mu_allowed=1.178)
    claim = SimpleNamespace(sigmas={"visits": sigma}, sigmas_claim={"visits": 2.0}, exact_mu=2.356, claim_mu=1.666)
    return SimpleNamespace(positions=(position,), worst=position, verdict=verdict, threshold=120.0, claim=claim)


def test_a_sequential_audit_says_how_its_violation_was_certified() -> None:
    crossed = rl_sequential_reason(_sequential("violation"))
    assert crossed == (
        "1 of 1 position(s) violate the declaration; at last its e-value 522.3 crossed 120 (a correct "
        "implementation crosses with probability ≤ α/2)"
    )
    final = rl_sequential_reason(_sequential("violation", stopped_early=False))
    assert final.endswith("its final test certifies μ ≥ 1.9, the declaration allowing 1.178")
    assert rl_sequential_reason(_sequential("inconclusive", stopped_early=False)) == "at last: too few runs: …"
    assert rl_sequential_reason(_sequential("consistent", stopped_early=False)).startswith("no position's e-value")


def test_a_sequential_audit_diagnoses_a_short_sigma_and_nothing_beside_consistent() -> None:
    text = rl_sequential_diagnosis(_sequential("violation", sigma=1.414))
    assert text is not None and text.startswith("σ below what the target needs (visits 1.414 (0.707×) of it)")
    assert rl_sequential_diagnosis(_sequential("consistent", sigma=1.414)) is None
    assert rl_sequential_diagnosis(_sequential("violation")) is None
