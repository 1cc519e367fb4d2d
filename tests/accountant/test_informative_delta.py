"""ε at an informative δ: every ledger gives the ε of the paper's σ and of σ_tight at δ = min(10⁻⁵, 1/K) beside
the ε at the paper's δ (where it is often 0), with the ledger's own accountant, and the μ of both σ."""

from __future__ import annotations

import math

import pytest

from dpkit.accountant import gdp_epsilon, make_accountant
from dpkit.accountant.algorithm_ledgers import algorithm_ledger
from dpkit.accountant.declarations import (
    INFORMATIVE_DELTA,
    DeclaredRelease,
    PrivacyDeclaration,
    declared_users,
    informative_delta,
)
from dpkit.accountant.validation import ArgumentTypeError
from dpkit.algorithms.ldp_ucrl_vtr import paper_sigma
from dpkit.algorithms.registry import declare

NEW_KEYS = (
    "users",
    "delta_informative",
    "epsilon_at_informative_delta_by_paper_sigma",
    "epsilon_at_informative_delta_by_tight_sigma",
    "mu_at_tight_sigma",
)


def _toy(parameters: dict, *, releases: tuple[DeclaredRelease, ...] | None = None) -> PrivacyDeclaration:
    if releases is None:
        releases = (DeclaredRelease("sum", "a noisy sum", 4, 1.0, 2.0, 2.0, 30.0),)
    return PrivacyDeclaration("toy", "JDP", "a paper", "replace_one", 1.0, 0.1, releases, parameters)


@pytest.mark.parametrize(
    ("parameters", "users", "delta"),
    [
        ({}, None, 1e-5),  # K unknown: 10⁻⁵
        ({"episodes": 1000}, 1000, 1e-5),  # 1/K = 10⁻³ is larger: 10⁻⁵
        ({"episodes": 100_000}, 100_000, 1e-5),
        ({"episodes": 200_000}, 200_000, 5e-6),  # 1/K
        ({"episodes": 4e6}, 4_000_000, 2.5e-7),  # an integral float counts
        ({"users": 10**7, "episodes": 10}, 10**7, 1e-7),  # users before episodes
        ({"episodes": True}, None, 1e-5),  # not a count: K unknown
        ({"episodes": 0}, None, 1e-5),
        ({"episodes": 2.5}, None, 1e-5),
        ({"episodes": "many"}, None, 1e-5),
        ({"episodes": float("inf")}, None, 1e-5),
    ],
)
def test_informative_delta_is_min_of_1e5_and_one_over_k(parameters: dict, users: int | None, delta: float) -> None:
    decl = _toy(parameters)
    assert declared_users(decl) == users
    assert informative_delta(decl) == pytest.approx(delta, rel=1e-15)
    assert informative_delta(decl) <= INFORMATIVE_DELTA == 1e-5


def test_informative_delta_takes_a_declaration() -> None:
    with pytest.raises(ArgumentTypeError, match="PrivacyDeclaration"):
        informative_delta({"episodes": 10})  # type: ignore[arg-type]


@pytest.mark.parametrize("episodes", [1_000, 200_000])
def test_ledger_epsilon_at_informative_delta_is_the_accountants(episodes: int) -> None:
    decl = declare("private-ofu-rl", 1.0, 0.1, episodes=episodes, horizon=5, gamma=0.5)
    led = algorithm_ledger(decl)
    d = led.to_dict()
    delta_inf = min(1e-5, 1 / episodes)  # recomputed here, not read from the code under test
    assert d["users"] == episodes
    assert d["delta_informative"] == pytest.approx(delta_inf, rel=1e-15)
    acc = make_accountant("exact")
    paper = decl.ledger(relation=led.relation)
    # the declaration's own ledger at σ_tight (its releases, or its joint groups where it declares one)
    tight = decl.ledger(relation=led.relation, sigmas={r.name: s for r, s in zip(decl.releases, led.sigmas_tight)})
    assert d["epsilon_at_informative_delta_by_paper_sigma"] == acc.epsilon(paper, delta_inf).epsilon
    assert d["epsilon_at_informative_delta_by_tight_sigma"] == acc.epsilon(tight, delta_inf).epsilon
    assert d["mu_at_paper_sigma"] == paper.mu and d["mu_at_tight_sigma"] == tight.mu
    # exact accounting: ε(δ) = the μ-GDP curve's
    assert d["epsilon_at_informative_delta_by_tight_sigma"] == pytest.approx(gdp_epsilon(tight.mu, delta_inf), rel=1e-9)
    # a smaller δ costs ε: above the ε at the paper's δ = 0.1, and σ_tight (less noise) above the paper's σ
    assert d["epsilon_at_informative_delta_by_paper_sigma"] > d["epsilon_achieved_by_paper_sigma"]
    assert d["epsilon_at_informative_delta_by_tight_sigma"] > d["epsilon"] >= d["epsilon_achieved_by_paper_sigma"]
    assert d["epsilon_at_informative_delta_by_tight_sigma"] >= d["epsilon_at_informative_delta_by_paper_sigma"]


def test_ldp_ucrl_vtr_reference_reading() -> None:
    """The README's example: at the paper's δ = 0.1 the paper's σ gives ε = 0; at δ = 10⁻⁵ (no K) it does not."""
    decl = declare("ldp-ucrl-vtr", 1.0, 0.1, horizon=10)
    d = algorithm_ledger(decl).to_dict()
    assert d["users"] is None and d["delta_informative"] == 1e-5
    assert d["epsilon_achieved_by_paper_sigma"] == 0.0
    # per-step sensitivities √2·j² (Gram, upper triangle) and 2·j² (target), j = H − h = 9 … 0: μ² = 6·Σ j⁴/σ²
    sigma = paper_sigma(10, 1.0, 0.1)
    assert d["mu_at_paper_sigma"] == pytest.approx(math.sqrt(6 * sum(j**4 for j in range(10))) / sigma, rel=1e-12)
    assert d["mu_at_paper_sigma"] == pytest.approx(0.0228185, rel=1e-5)
    assert d["epsilon_at_informative_delta_by_paper_sigma"] == pytest.approx(gdp_epsilon(d["mu_at_paper_sigma"], 1e-5))
    assert d["epsilon_at_informative_delta_by_paper_sigma"] == pytest.approx(0.0677870, rel=1e-5)
    assert d["mu_at_tight_sigma"] == pytest.approx(0.920914, rel=1e-5)  # the μ that (1, 0.1) allows
    assert d["epsilon_at_informative_delta_by_tight_sigma"] == pytest.approx(3.98, rel=1e-5)


def test_at_the_papers_delta_the_informative_reading_agrees() -> None:
    """RLSVI's rows already use δ = 10⁻⁵: the informative ε of the paper's σ is its ε at the paper's δ."""
    decl = declare("rlsvi", None, 1e-5, states=5, actions=2, horizon=10, episodes=10_000)
    d = algorithm_ledger(decl).to_dict()
    assert d["delta_informative"] == d["delta"] == 1e-5
    assert d["epsilon_at_informative_delta_by_paper_sigma"] == d["epsilon_achieved_by_paper_sigma"]


@pytest.mark.parametrize("method", ["pld", "rdp", "zcdp", "classic"])
@pytest.mark.slow
def test_the_informative_reading_uses_the_ledgers_method(method: str) -> None:
    decl = declare("private-ofu-rl", 1.0, 0.1, episodes=500_000, horizon=5, gamma=0.5)
    led = algorithm_ledger(decl, method=method)
    acc = make_accountant(method)
    assert led.method == acc.label
    paper = decl.ledger(relation=led.relation)
    assert led.delta_informative == pytest.approx(2e-6, rel=1e-15)
    assert led.epsilon_at_informative_delta_by_paper_sigma == acc.epsilon(paper, 2e-6).epsilon
    assert led.epsilon_at_informative_delta_by_paper_sigma >= led.epsilon_achieved_by_paper_sigma


def test_a_ledger_of_events_has_no_mu_but_an_informative_epsilon() -> None:
    releases = (
        DeclaredRelease("gram", "a noisy Gram matrix", 10, 1.0, 2.0, 1.0, 20.0),
        DeclaredRelease("count", "a Laplace count", 3, 1.0, 2.0, 1.0, 10.0, mechanism="laplace"),
    )
    decl = _toy({"episodes": 1_000_000}, releases=releases)
    led = algorithm_ledger(decl)  # pld by default
    d = led.to_dict()
    assert d["mu_at_paper_sigma"] is None and d["mu_at_tight_sigma"] is None
    assert d["delta_informative"] == pytest.approx(1e-6, rel=1e-15)
    want = make_accountant("pld").epsilon(decl.ledger(), 1e-6).epsilon
    assert d["epsilon_at_informative_delta_by_paper_sigma"] == pytest.approx(want, rel=1e-12)
    assert d["epsilon_at_informative_delta_by_paper_sigma"] >= d["epsilon_achieved_by_paper_sigma"]


def test_to_dict_keeps_the_old_keys_and_adds_the_new() -> None:
    d = algorithm_ledger(declare("ldp-ucrl-vtr", 1.0, 0.1, horizon=10)).to_dict()
    for key in ("epsilon_achieved_by_paper_sigma", "mu_at_paper_sigma", "noise_ratio", "sigma_tight", *NEW_KEYS):
        assert key in d
