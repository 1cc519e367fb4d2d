"""The seed algorithms' privacy declarations and ledgers: paper σ reproduced, σ_tight round-trips, flags."""

from __future__ import annotations

import math

import mpmath
import pytest
import references as ref
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.accountant import ExactAccountant, gdp_epsilon, make_accountant
from dpkit.accountant.algorithm_ledgers import AlgorithmLedger, algorithm_ledger
from dpkit.accountant.declarations import DeclaredRelease, Flag, PrivacyDeclaration
from dpkit.accountant.rlsvi import rlsvi_paper_epsilon, rlsvi_worst_case_mu
from dpkit.algorithms import ldp_ucrl_vtr, linopt, ofu_rl, rlsvi
from dpkit.algorithms.registry import declare, names

mpmath.mp.dps = 40

DOCUMENTED = {
    "ldp-ucrl-vtr": {"horizon": 10},
    "private-linopt-vi": {"episodes": 10_000, "horizon": 10, "dim": 10},
    "private-linopt-po": {"episodes": 1_000, "horizon": 5, "dim": 4},
    "private-ofu-rl": {"episodes": 10_000, "horizon": 10, "gamma": 0.5},
    "rlsvi": {"states": 5, "actions": 2, "horizon": 10, "episodes": 10_000},
}


def codes(led: AlgorithmLedger) -> list[str]:
    return [f.code for f in led.flags]


# ------------------------------------------------------------------ the paper's σ, reproduced


@pytest.mark.parametrize(("h", "eps", "delta"), [(10, 1.0, 0.1), (6, 0.1, 0.1), (20, 5.0, 1e-5)])
def test_ldp_sigma_paper_is_the_papers_formula(h: int, eps: float, delta: float) -> None:
    want = 4 * mpmath.mpf(h) ** 3 * mpmath.sqrt(2 * mpmath.log(mpmath.mpf(2.5) * h / delta)) / eps
    d = ldp_ucrl_vtr.declare_privacy(h, eps, delta)
    assert all(float(r.sigma_paper) == pytest.approx(float(want), rel=1e-14) for r in d.releases)
    # and it is what 2H classic releases of Δ = 2H² at (ε/2H, δ/2H) need (Dwork–Roth)
    classic = 2 * h * h * math.sqrt(2 * math.log(1.25 / (delta / (2 * h)))) / (eps / (2 * h))
    assert d.releases[0].sigma_paper == pytest.approx(classic, rel=1e-13)
    exp = ldp_ucrl_vtr.declare_privacy(h, eps, delta, reading="experiment", states=5)
    assert exp.releases[0].sigma_paper == pytest.approx(float(want) / h**2, rel=1e-13)


@pytest.mark.parametrize(("k", "h", "d", "eps", "delta"), [(10_000, 10, 10, 1.0, 0.1), (1024, 3, 2, 0.5, 1e-5)])
def test_linopt_sigma_paper_is_the_papers_formula(k: int, h: int, d: int, eps: float, delta: float) -> None:
    m = math.ceil(math.log2(k))
    deltas = {"B_{h,p,1}": d * h * h, "B_{h,p,2}": math.sqrt(d) * h * h, "B_{h,r,1}": 1.0, "B_{h,r,2}": 1.0}
    decl = linopt.declare_privacy("private-linopt-vi", k, h, eps, delta, d)
    for r in decl.releases:
        want = mpmath.sqrt(
            32 * m * deltas[r.name] ** 2 * mpmath.log(4 * mpmath.mpf(h) / delta) * h * h / mpmath.mpf(eps) ** 2
        )
        assert r.sigma_paper == pytest.approx(float(want), rel=1e-13)
        assert r.paper_sensitivity == pytest.approx(deltas[r.name], rel=1e-15)
        assert r.count == h * m and r.paper_count == h * m  # before-episode: exact count = ⌈log2 K⌉


@pytest.mark.parametrize(("k", "h", "gamma", "eps", "delta"), [(10_000, 10, 0.5, 1.0, 0.1), (64, 2, 1.0, 0.3, 1e-6)])
def test_ofu_sigma_paper_is_the_papers_formula(k: int, h: int, gamma: float, eps: float, delta: float) -> None:
    m = math.ceil(math.log2(k))
    decl = ofu_rl.declare_privacy(k, h, eps, delta, gamma)
    for r, paper_delta in zip(decl.releases, (h * (1 + gamma) ** 2, h * (1 + gamma))):
        want = mpmath.sqrt(8 * m * mpmath.mpf(paper_delta) ** 2 * mpmath.log(2 / mpmath.mpf(delta))) / eps
        assert r.sigma_paper == pytest.approx(float(want), rel=1e-13)
        assert r.paper_sensitivity == pytest.approx(paper_delta, rel=1e-15)
        assert r.sensitivity_add_remove < paper_delta  # the paper bounds ‖[x; u]‖ by 1 + γ, not sqrt(1 + γ²)
    b1, b2 = decl.releases
    assert b1.sensitivity_add_remove == pytest.approx(h * math.sqrt(1 + gamma**2 + gamma**4), rel=1e-14)
    assert b2.sensitivity_add_remove == pytest.approx(h * math.sqrt(1 + gamma**2), rel=1e-14)
    assert b2.sensitivity_replace_one == pytest.approx(2 * h * math.sqrt(1 + gamma**2), rel=1e-14)


def test_rlsvi_declaration_carries_the_worst_case_mu_and_the_papers_epsilon() -> None:
    decl = rlsvi.declare_privacy(5, 2, 10, 10_000, 1.0, 1e-5)
    (r,) = decl.releases
    mu = math.sqrt(r.count) * r.sensitivity_replace_one / r.sigma_paper
    assert mu == pytest.approx(rlsvi_worst_case_mu(states=5, actions=2, horizon=10, episodes=10_000), rel=1e-12)
    assert decl.paper_epsilon == rlsvi_paper_epsilon(states=5, actions=2, horizon=10, episodes=10_000, delta=1e-5)
    assert r.paper_count == 10_000 * 10 * 5 * 2 and r.count == 9_999 * 10
    led = algorithm_ledger(declare("rlsvi", None, 1e-5, **DOCUMENTED["rlsvi"]))
    assert led.declaration.epsilon == decl.paper_epsilon
    assert led.epsilon_achieved_by_paper_sigma < decl.paper_epsilon / 5  # the worst case is far below the claim


# ------------------------------------------------------------------ σ_tight and the achieved ε


@pytest.mark.parametrize("name", names(private=True))
@pytest.mark.parametrize(("eps", "delta"), [(1.0, 0.1), (0.5, 1e-5), (4.0, 1e-6)])
def test_sigma_tight_round_trips_through_exact(name: str, eps: float, delta: float) -> None:
    led = algorithm_ledger(declare(name, eps, delta, **DOCUMENTED[name]))
    exact = ExactAccountant()
    tight = led.declaration.ledger(relation=led.relation, scale=led.scale)
    assert exact.epsilon(tight, delta).epsilon <= eps
    # 1e-9 less noise misses the target: σ_tight is the smallest
    assert (
        exact.epsilon(led.declaration.ledger(relation=led.relation, scale=led.scale * (1 - 1e-9)), delta).epsilon > eps
    )
    for r, s in zip(led.declaration.releases, led.sigmas_tight):
        assert s >= r.sigma_paper * led.scale
    assert led.noise_ratio == pytest.approx(1 / led.scale)
    # the optimal allocation meets the target too, with no more total noise variance than σ_tight
    optimal = led.declaration.ledger(
        relation=led.relation, sigmas={r.name: s for r, s in zip(led.declaration.releases, led.sigmas_optimal)}
    )
    assert exact.epsilon(optimal, delta).epsilon <= eps
    assert led.noise_variance("optimal") <= led.noise_variance("tight") * (1 + 1e-9)


@pytest.mark.parametrize("name", names(private=True))
def test_achieved_epsilon_is_exact_gdp_of_the_releases(name: str) -> None:
    led = algorithm_ledger(declare(name, 1.0, 1e-5, **DOCUMENTED[name]))
    d = led.declaration
    separate = [r for r in d.releases if d.joint_group(r.name) is None]
    # a joint group (releases that cannot all reach their Δ together) composes its own μ per mechanism
    joint = [
        d.releases[0].count
        * g.mu(led.relation, tuple(next(r.sigma_paper for r in d.releases if r.name == n) for n in g.releases)) ** 2
        for g in d.joint
    ]
    mu = math.sqrt(
        math.fsum(
            [r.count_per_step * (s / r.sigma_paper) ** 2 for r in separate for s in r.step_sensitivities(led.relation)]
            + joint
        )
    )
    assert led.mu_at_paper_sigma == pytest.approx(mu, rel=1e-12)
    # never above the separate composition of every release's Δ
    every = math.fsum(
        r.count_per_step * (s / r.sigma_paper) ** 2 for r in d.releases for s in r.step_sensitivities(led.relation)
    )
    assert led.mu_at_paper_sigma <= math.sqrt(every) * (1 + 1e-12)
    assert led.epsilon_achieved_by_paper_sigma == pytest.approx(gdp_epsilon(mu, 1e-5), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("method", ["rdp", "zcdp", "classic"])
def test_looser_methods_need_more_noise(method: str) -> None:
    decl = declare("private-ofu-rl", 1.0, 1e-5, **DOCUMENTED["private-ofu-rl"])
    exact = algorithm_ledger(decl)
    other = algorithm_ledger(decl, method=method)
    assert other.scale >= exact.scale
    assert other.epsilon_achieved_by_paper_sigma >= exact.epsilon_achieved_by_paper_sigma
    assert make_accountant(method).epsilon(decl.ledger(scale=other.scale), 1e-5).epsilon <= 1.0


def test_ldp_paper_sigma_is_an_order_of_magnitude_too_large() -> None:
    # The example: H = 10, (ε, δ) = (1, 0.1). Step h's releases have Δ ∝ (H − h)² (V_{h+1} <= H − h):
    # μ² = Σ_h (2 + 4)(H − h)⁴/σ² under replace-one (√2·b² for φφᵀ on i <= j, 2·b·v for φ·V), σ from the exact μ.
    led = algorithm_ledger(declare("ldp-ucrl-vtr", 1.0, 0.1, horizon=10))
    mu = mpmath.findroot(lambda m: ref.gdp_delta(1.0, m) - mpmath.mpf("0.1"), 1.0)
    sigma = mpmath.sqrt(6 * sum(mpmath.mpf(j) ** 4 for j in range(1, 10))) / mu
    assert float(sigma) <= led.sigma_tight <= float(sigma) * (1 + 1e-9)
    assert led.sigma_tight <= 340  # from 841 with one bound for every step
    assert 40 < led.noise_ratio < 41
    # the optimal allocation: σ_h ∝ sqrt(Δ_h), same μ, less total noise variance than one common σ
    assert led.mu_at_optimal_sigma == pytest.approx(led.mu_at_tight_sigma, rel=1e-9)
    assert led.noise_variance("optimal") < 0.52 * led.noise_variance("tight")


# ------------------------------------------------------------------ flags


def test_linopt_sensitivities_hold_only_for_add_remove() -> None:
    decl = declare("private-linopt-vi", 1.0, 0.1, **DOCUMENTED["private-linopt-vi"])
    ro = algorithm_ledger(decl)
    assert ro.relation == "replace_one"
    assert codes(ro).count("paper-sensitivity-too-small") == 4
    assert all("add/remove" in f.message for f in ro.flags if f.code == "paper-sensitivity-too-small")
    ar = algorithm_ledger(decl, relation="add-remove")
    assert "paper-sensitivity-too-small" not in codes(ar)
    assert ar.scale < ro.scale


def test_paper_claims_slightly_above_their_own_budget() -> None:
    for name in ("private-linopt-po", "private-ofu-rl"):
        led = algorithm_ledger(declare(name, 1.0, 0.1, **DOCUMENTED[name]))
        (flag,) = [f for f in led.flags if f.code == "paper-claim-approximate"]
        assert flag.severity == "warning"


def test_tree_depth_flag_with_after_each_schedule_and_power_of_two() -> None:
    led = algorithm_ledger(
        declare("private-ofu-rl", 1.0, 0.1, episodes=1024, horizon=4, gamma=0.5, schedule="after-each")
    )
    (flag,) = [f for f in led.flags if f.code == "tree-depth-mismatch"]
    assert flag.severity == "error" and "10" in flag.message and "11" in flag.message
    assert "count-mismatch" not in codes(led)
    ok = algorithm_ledger(
        declare("private-ofu-rl", 1.0, 0.1, episodes=1000, horizon=4, gamma=0.5, schedule="after-each")
    )
    assert "tree-depth-mismatch" not in codes(ok)
    ok = algorithm_ledger(declare("private-ofu-rl", 1.0, 0.1, episodes=1024, horizon=4, gamma=0.5))
    assert "tree-depth-mismatch" not in codes(ok)


def test_classic_bound_at_large_epsilon_is_flagged() -> None:
    led = algorithm_ledger(declare("ldp-ucrl-vtr", 8.0, 0.1, horizon=2))  # ε/2H = 2
    assert "classic-bound-at-large-epsilon" in codes(led)
    led = algorithm_ledger(declare("ldp-ucrl-vtr", 1.0, 0.1, horizon=2))
    assert "classic-bound-at-large-epsilon" not in codes(led)


def test_insufficient_paper_sigma_is_flagged() -> None:
    # The experiment reading's σ accounts Δ = 2 but the one-hot sensitivities are larger: at a
    # small δ the paper's σ misses its own target.
    led = algorithm_ledger(declare("ldp-ucrl-vtr", 1.0, 1e-6, horizon=10, states=50, reading="experiment"))
    assert "paper-sigma-insufficient" in codes(led)
    assert led.epsilon_achieved_by_paper_sigma > 1.0 and led.noise_ratio < 1.0
    assert codes(led).count("paper-sensitivity-too-small") == 2


def test_json_shape() -> None:
    d = algorithm_ledger(declare("private-linopt-vi", 1.0, 0.1, **DOCUMENTED["private-linopt-vi"])).to_dict()
    for key in ("releases", "sigma_paper", "sigma_tight", "noise_ratio", "epsilon_achieved_by_paper_sigma", "flags"):
        assert key in d
    assert isinstance(d["sigma_paper"], dict) and set(d["sigma_paper"]) == {r["name"] for r in d["releases"]}
    for r in d["releases"]:
        assert {
            "name",
            "statistic",
            "count",
            "sensitivity_add_remove",
            "sensitivity_replace_one",
            "paper_sensitivity",
            "sigma_paper",
            "sigma_tight",
        } <= set(r)
    ldp = algorithm_ledger(declare("ldp-ucrl-vtr", 1.0, 0.1, horizon=10)).to_dict()
    assert isinstance(ldp["sigma_paper"], float) and isinstance(ldp["sigma_tight"], float)


@settings(max_examples=examples(40), deadline=None)
@given(h=st.integers(1, 50), eps=st.floats(0.05, 20), delta=st.floats(1e-10, 0.5))
def test_ldp_ledger_properties(h: int, eps: float, delta: float) -> None:
    led = algorithm_ledger(ldp_ucrl_vtr.declare_privacy(h, eps, delta))
    # The theorem's σ is always sufficient (its Δ's are >= ours) and never below σ_tight.
    assert led.epsilon_achieved_by_paper_sigma <= eps
    assert led.noise_ratio >= 1.0
    assert ("classic-bound-at-large-epsilon" in codes(led)) == (eps / (2 * h) >= 1)


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: declare("dp-sgd", 1.0, 0.1), "algorithm"),
        (lambda: declare("rlsvi", 1.0, 0.1, states=0, actions=2, horizon=2, episodes=3), "states"),
        (lambda: declare("rlsvi", 1.0, 0.1, states=2, actions=0, horizon=2, episodes=3), "actions"),
        (lambda: declare("rlsvi", 1.0, 0.1, states=2, actions=2, horizon=0, episodes=3), "horizon"),
        (lambda: declare("rlsvi", 1.0, 0.1, states=2, actions=2, horizon=2, episodes=0), "episodes"),
        (lambda: declare("rlsvi", 1.0, 0.1, states=2, actions=2, horizon=2, episodes=1), "episodes must be >= 2"),
        (lambda: declare("private-ofu-rl", 1.0, 0.1, episodes=1, horizon=2, gamma=1.0), "episodes must be >= 2"),
        (lambda: declare("private-ofu-rl", 1.0, 0.1, episodes=10, horizon=2), "needs gamma"),
        (lambda: declare("private-ofu-rl", 1.0, 0.1, episodes=10, horizon=2, gamma=1.0, dim=3), "does not use dim"),
        (lambda: declare("private-ofu-rl", None, 0.1, episodes=10, horizon=2, gamma=1.0), "target epsilon"),
        (lambda: declare("private-ofu-rl", 1.0, 0.1, episodes=10, horizon=2, gamma=-1.0), "gamma"),
        (lambda: declare("private-linopt-vi", 1.0, 0.1, episodes=10, horizon=2, dim=0), "d1"),
        (lambda: declare("private-linopt-vi", 1.0, 0.1, episodes=10, horizon=2, dim=2, reading="x"), "reading"),
        (lambda: declare("ldp-ucrl-vtr", 1.0, 1.5, horizon=2), "delta"),
        (lambda: declare("ldp-ucrl-vtr", -1.0, 0.1, horizon=2), "epsilon"),
        (lambda: declare("ldp-ucrl-vtr", 1.0, 0.1, horizon=2, reading="experiment"), "states"),
        (lambda: algorithm_ledger(declare("ldp-ucrl-vtr", 1.0, 0.1, horizon=2), relation="add_remove"), "replace_one"),
        (lambda: algorithm_ledger(declare("ldp-ucrl-vtr", 1.0, 0.1, horizon=2), relation="neighbours"), "relation"),
        (lambda: algorithm_ledger("ledger"), "PrivacyDeclaration"),
        (lambda: Flag("x", "y", "fatal"), "severity"),
        (lambda: DeclaredRelease("r", "s", 0, 1.0, 1.0, 1.0, 1.0), "count"),
        (lambda: DeclaredRelease("r", "s", 1, 1.0, 1.0, 1.0, 1.0, noise="full"), "noise"),
        (lambda: PrivacyDeclaration("a", "DP", "p", "replace_one", 1.0, 0.1, ()), "at least one"),
    ],
)
def test_bad_input_names_the_value(call, match: str) -> None:  # noqa: ANN001
    with pytest.raises(ValueError, match=match):
        call()


def test_extreme_parameters_give_a_clear_error_or_a_sound_ledger() -> None:
    with pytest.raises(ValueError, match=r"horizon = 1\.000e\+200 is above the limit of 10,000"):  # before any work
        declare("ldp-ucrl-vtr", 1.0, 0.1, horizon=10**200)
    with pytest.raises(ValueError, match="gamma=1e\\+300"):
        declare("private-ofu-rl", 1.0, 0.1, episodes=100, horizon=10, gamma=1e300)
    for name in ("private-ofu-rl", "private-linopt-po"):
        params = {"episodes": 100, "horizon": 10} | ({"gamma": 1.0} if name == "private-ofu-rl" else {"dim": 3})
        led = algorithm_ledger(declare(name, 1e-300, 0.1, **params))  # ε ≈ 0 at δ = 0.1 is still meetable
        assert ExactAccountant().epsilon(led.declaration.ledger(scale=led.scale), 0.1).epsilon <= 1e-300


# ------------------------------------------------------------------ per-step σ at the boundary


def test_per_step_sigmas_are_validated_naming_the_bad_value() -> None:
    import numpy as np

    (gram, _) = declare("ldp-ucrl-vtr", 1.0, 0.1, horizon=4).releases
    assert gram.step_sigmas(np.float32(2.0)) == (2.0,) * 4  # a numpy scalar is one σ
    assert gram.step_sigmas(np.array([1.0, 2.0, 3.0, 0.0])) == (1.0, 2.0, 3.0, 0.0)
    with pytest.raises(TypeError, match="'tight'"):
        gram.step_sigmas("tight")
    with pytest.raises(ValueError, match="sigma"):
        gram.step_sigmas(-1.0)
    with pytest.raises(ValueError, match="one per step \\(4\\)"):
        gram.step_sigmas([1.0, 2.0])
    with pytest.raises(ValueError, match="step_factors"):
        DeclaredRelease("x", "s", 4, 1.0, 2.0, 2.0, 1.0, step_factors=(0.5, 0.25))  # largest must be 1
    with pytest.raises(ValueError, match="multiple"):
        DeclaredRelease("x", "s", 3, 1.0, 2.0, 2.0, 1.0, step_factors=(1.0, 0.5))
    assert DeclaredRelease("x", "s", 2, 1.0, 2.0, 2.0, 1.0, step_factors=np.array([1.0, 0.5])).steps == 2
