"""One position per headline: the top-level numbers of an audit of several positions (the JSON, the CLI table, the
report's text and figures) all come from one position — the headline, whose verdict is the audit's — and the largest
bounds over the positions are named as such."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest

import dpkit.audits.rl
from dpkit.audits.rl.fixed import RlAuditResult, RlPositionsResult, audit_positions, position_claim
from dpkit.audits.rl.sequential import RlSequentialResult, SequentialPosition
from dpkit.audits.rl.setting import default_setting
from dpkit.cli import main
from dpkit.reports.verdict_views import headline_view

#: The keys of a positions audit's dictionary that are the whole audit's, not the headline position's.
AUDIT_KEYS = {"claim_verdict", "reason", "diagnosis", "confidence", "alpha", "worst_position", "positions"}


@pytest.fixture(scope="module")
def three_positions() -> tuple[RlAuditResult, ...]:
    """A small real audit of LDP-UCRL-VTR's three positions (white-box: below 100 runs per dataset), their μ lower
    bounds positive and distinct (so that the allowance alone decides which weighs most)."""
    results = audit_positions(default_setting("ldp-ucrl-vtr"), runs=60, seed=4).results
    assert len({r.mu_lower for r in results}) == 3 and min(r.mu_lower for r in results) > 0
    return results


def _with_verdict(r: RlAuditResult, verdict: str) -> RlAuditResult:
    return replace(r, audit=replace(r.audit, judgement=replace(r.audit.judgement, verdict=verdict)))


def _largest_elsewhere(results: tuple[RlAuditResult, ...], verdicts: tuple[str, ...]) -> RlPositionsResult:
    """The positions with ``verdicts``, the one of the largest μ lower bound given so large an allowance that its
    bound weighs least: the headline is another position."""
    big = max(range(len(results)), key=lambda i: results[i].mu_lower)
    changed = [
        _with_verdict(replace(r, pair_mu_allowed=r.pair_mu_allowed * (1e3 if i == big else 1.0)), v)
        for i, (r, v) in enumerate(zip(results, verdicts, strict=True))
    ]
    return RlPositionsResult(tuple(changed), 0.05)


@pytest.mark.parametrize(
    "verdicts",
    [("consistent",) * 3, ("inconclusive", "consistent", "consistent"), ("consistent", "violation", "inconclusive")],
)
def test_every_headline_number_comes_from_the_headline_position(three_positions, verdicts) -> None:  # noqa: ANN001
    audit = _largest_elsewhere(three_positions, verdicts)
    head, strongest = audit.worst, audit.strongest("mu_lower")
    # the headline's verdict is the audit's (violation first, then inconclusive) …
    assert head.verdict == audit.verdict
    # … and here not the position of the largest μ lower bound (the case that mixed them)
    if verdicts == ("consistent",) * 3:
        assert head is not strongest and head.mu_lower < strongest.mu_lower
    out, own = audit.to_dict(), head.to_dict()
    for key, value in own.items():
        if key not in AUDIT_KEYS:
            assert out[key] == value, key
    for key in ("mu_lower", "epsilon_lower", "claimed_mu", "mu_allowed", "pair_mu", "reach", "power_ratio", "verdict"):
        assert out[key] == own[key]
    assert out["position"] == out["worst_position"] == head.setting.position
    assert out["confidence"] == 0.95  # the positions' bounds hold together at 1 − α
    # the largest bounds, named as such, with their positions
    assert out["mu_lower_largest"] == max(r.mu_lower for r in audit.results)
    assert out["mu_lower_largest_position"] == strongest.setting.position
    eps = audit.strongest("epsilon_lower")
    assert out["epsilon_lower_largest"] == max(r.epsilon_lower for r in audit.results)
    assert out["epsilon_lower_largest_position"] == eps.setting.position
    # attributes of the audit read the headline too
    assert audit.mu_lower == head.mu_lower and audit.epsilon_lower == head.epsilon_lower and audit.reach == head.reach
    # the report says where each number is read, and names the largest
    view = headline_view(out)
    assert view["where"].endswith(str(head.setting.position))
    assert f"at {strongest.setting.position}" in view["largest"] and view["largest"].startswith("μ ≥")


def _cli_text(audit: RlPositionsResult, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> str:
    """What ``dpkit audit ldp-ucrl-vtr`` prints when its audit is ``audit``."""
    monkeypatch.setattr(dpkit.audits.rl, "audit_positions", lambda *args, **kwargs: audit)
    monkeypatch.setenv("COLUMNS", "200")
    main(["audit", "ldp-ucrl-vtr", "--runs", "60", "--seed", "4"])
    return capsys.readouterr().out


def test_the_cli_table_reads_the_headline_and_names_the_largest(three_positions, monkeypatch, capsys) -> None:  # noqa: ANN001
    audit = _largest_elsewhere(three_positions, ("consistent",) * 3)
    head, mu, eps = audit.worst, audit.strongest("mu_lower"), audit.strongest("epsilon_lower")
    text = _cli_text(audit, monkeypatch, capsys)
    assert f"The headline position: {head.setting.position}" in text
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in text.splitlines() if line[:1] == "│"}
    assert rows["ε lower bound here"] == f"{head.epsilon_lower:.6g}"
    assert rows["largest ε lower bound of the positions"] == f"{eps.epsilon_lower:.6g} at {eps.setting.position}"
    assert rows["μ lower bound here (÷ pair μ)"].startswith(f"{head.mu_lower:.6g} (")
    assert rows["largest μ lower bound of the positions"] == f"{mu.mu_lower:.6g} at {mu.setting.position}"


def test_one_position_is_its_own_largest(three_positions, monkeypatch, capsys) -> None:  # noqa: ANN001
    audit = RlPositionsResult(three_positions[:1], 0.05)
    head = audit.worst
    text = _cli_text(audit, monkeypatch, capsys)
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in text.splitlines() if line[:1] == "│"}
    assert rows["largest ε lower bound of the positions"] == f"{head.epsilon_lower:.6g} at {head.setting.position}"
    assert headline_view(audit.to_dict()) == {"where": "", "largest": ""}
    assert audit.to_dict()["mu_lower_largest"] == audit.to_dict()["mu_lower"]


def _position(name: str, allowed: float, mu: float, verdict: str | None) -> SequentialPosition:
    result = None
    if verdict is not None:
        result = SimpleNamespace(
            mu_lower=mu,
            epsilon_lower=mu / 2,
            verdict=verdict,
            e_value=1.0,
            stopped_early=False,
            attack="white-box",
            final=None,
        )
    return SequentialPosition(name, 1.0, allowed, allowed, 100, result)  # type: ignore[arg-type]


def test_a_sequential_audit_reads_its_bounds_at_the_headline_too() -> None:
    setting = default_setting("ldp-ucrl-vtr")
    positions = (
        _position("first", 1.0, 0.9, "consistent"),  # the largest ratio of the consistent ones
        _position("middle", 10.0, 2.0, "inconclusive"),  # the audit's verdict
        _position("last", 10.0, 3.0, "inconclusive"),  # the largest bounds, and the largest ratio of the two
        _position("k=4", 1.0, 0.0, None),  # stopped: never the headline
    )
    audit = RlSequentialResult(setting, positions, 100, 130, 0.05, 1.0, position_claim(setting), 0)
    out = audit.to_dict()
    assert audit.verdict == "inconclusive" and out["worst_position"] == "last"
    assert out["mu_lower"] == 3.0 and out["epsilon_lower"] == 1.5 and out["mu_allowed"] == 10.0
    assert out["mu_lower_largest"] == 3.0 and out["mu_lower_largest_position"] == "last"
    moved = replace(audit, positions=(positions[0], replace(positions[1], mu_allowed=1.0), *positions[2:]))
    out = moved.to_dict()  # middle now weighs most: its bounds head, the largest stay named apart
    assert out["worst_position"] == "middle" and out["mu_lower"] == 2.0 and out["mu_allowed"] == 1.0
    assert out["mu_lower_largest"] == 3.0 and out["mu_lower_largest_position"] == "last"
    assert out["epsilon_lower_largest"] == 1.5 and out["epsilon_lower_largest_position"] == "last"
