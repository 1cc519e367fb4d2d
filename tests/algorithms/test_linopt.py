"""LinOpt-VI/-PO and Private-LinOpt-VI/-PO (seed 004): σ = 0 reduces to the non-private algorithm,
the released prefixes carry the declared noise, the agents learn, runs are reproducible."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.accountant.tree import max_psums_per_prefix, prefix_noise_variance, symmetric_noise_norm_bound
from dpkit.algorithms import linopt
from dpkit.algorithms.envs.features import LinearMixture
from dpkit.algorithms.envs.tabular import TabularMDP, Users, random_tabular
from dpkit.algorithms.episodes import resolve_sigmas, run_tabular
from dpkit.algorithms.linopt import (
    RELEASES,
    LinOpt,
    PrivateLinOpt,
    Privatizer,
    confidence_radii,
    make_agent,
    noise_shift,
    paper_eta,
    target_noise_bound,
)

PRIVATE = dict(epsilon=10.0, delta=1e-5)


def two_state(horizon: int = 3) -> TabularMDP:
    """A 2-state, 2-action MDP with Bernoulli rewards where the best action depends on the state."""
    p = np.zeros((horizon, 2, 2, 2))
    p[:, :, 0] = [0.7, 0.3]
    p[:, :, 1] = [0.3, 0.7]
    r = np.zeros((horizon, 2, 2))
    r[:, 0] = [0.2, 0.6]
    r[:, 1] = [0.9, 0.3]
    return TabularMDP(p, r, 0, "bernoulli", "two-state")


def run(name: str, env: TabularMDP, episodes: int, seed: int, *, record: bool = False, **kwargs: object):
    agent = make_agent(name, env, episodes, np.random.default_rng([seed, 1]), **kwargs)
    users = Users.draw(episodes, env.horizon, np.random.default_rng([seed, 2]))
    return agent, run_tabular(agent, env, users, np.random.default_rng([seed, 3]), record=record, sigmas=agent.sigmas)


# ------------------------------------------------------------------ 1. σ = 0 is the non-private algorithm


@pytest.mark.parametrize("variant", ["vi", "po"])
@pytest.mark.parametrize(("states", "env_seed"), [(2, 0), (3, 1)])
def test_sigma_zero_takes_the_non_private_actions(variant: str, states: int, env_seed: int) -> None:
    # the same constants (the tuned preset: λ = 1, as σ = 0 leaves the paper's private λ = 0 singular)
    env = random_tabular(states, 2, 3, env_seed)
    _, plain = run(f"linopt-{variant}", env, 150, 7, preset="tuned")
    agent, private = run(f"private-linopt-{variant}", env, 150, 7, record=True, sigma=0.0, preset="tuned", **PRIVATE)
    assert agent.sigmas == dict.fromkeys(RELEASES, 0.0)
    np.testing.assert_array_equal(private.actions, plain.actions)
    np.testing.assert_array_equal(private.states, plain.states)
    np.testing.assert_array_equal(private.regret, plain.regret)
    # and at σ = 0 the released prefixes are the exact sums: ϕϕᵀ = diag(visits of (s, a) at h), ϕr
    h_, s_, a_ = env.horizon, env.states, env.actions
    visits = np.zeros((h_, s_ * a_))
    rsum = np.zeros((h_, s_ * a_))
    for k in range(private.episodes):
        np.testing.assert_array_equal(private.releases["B_{h,r,1}"][k], np.stack([np.diag(v) for v in visits]))
        np.testing.assert_allclose(private.releases["B_{h,r,2}"][k], rsum, atol=1e-12)
        idx = private.states[k, :-1] * a_ + private.actions[k]
        visits[np.arange(h_), idx] += 1
        rsum[np.arange(h_), idx] += private.rewards[k]


# ------------------------------------------------------------------ 2. what is released


def test_released_prefixes_have_the_declared_shapes_and_symmetric_grams() -> None:
    env = random_tabular(2, 2, 3, 3)
    k_ = 12
    agent, result = run("private-linopt-po", env, k_, 0, record=True, sigma="paper", **PRIVATE)
    d1, d2 = LinearMixture(env).dim, LinearMixture(env).reward_dim
    shapes = {"B_{h,p,1}": (d1, d1), "B_{h,p,2}": (d1,), "B_{h,r,1}": (d2, d2), "B_{h,r,2}": (d2,)}
    assert set(result.releases) == set(RELEASES) == {r.name for r in agent.declaration.releases}
    for name, shape in shapes.items():
        x = result.releases[name]
        assert x.shape == (k_, env.horizon) + shape
        assert np.all(x[0] == 0.0)  # nothing released before the first episode
        assert np.all(np.isfinite(x))
    for name in ("B_{h,p,1}", "B_{h,r,1}"):
        x = result.releases[name]
        np.testing.assert_array_equal(x, np.swapaxes(x, -1, -2))  # exactly symmetric
    assert result.sigmas == agent.sigmas


@pytest.mark.parametrize("sigma", ["paper", "tight"])
def test_the_counters_use_the_declared_sigmas(sigma: str) -> None:
    env = random_tabular(2, 2, 3, 0)
    agent = make_agent("private-linopt-vi", env, 64, 0, sigma=sigma, **PRIVATE)
    want = resolve_sigmas(agent.declaration, sigma)
    assert agent.sigmas == want
    for name, counter in agent.privatizer.counters.items():
        assert counter.sigma == want[name] > 0.0  # never less noise than declared
        assert counter.symmetric == name.endswith(",1}")
    # the shift is 2Σ + λ with Σ the paper's bound at m = the most p-sums in a released prefix
    m = max_psums_per_prefix(64, schedule="before-episode")
    sigma_p = want["B_{h,p,1}"]
    bound = sigma_p * math.sqrt(m) * (4 * math.sqrt(agent.d1) + math.sqrt(8 * math.log(8 * 64 * 3 / agent.alpha)))
    assert agent.noise_shift_p == pytest.approx(bound, rel=1e-12)
    assert agent.shift_p == pytest.approx(agent.regularization + 2 * bound, rel=1e-12)


@pytest.mark.parametrize("t", [1, 6, 7, 8])
def test_prefix_noise_variance_is_popcount_sigma_squared(t: int) -> None:
    """With zero items the prefix is pure noise: each entry N(0, popcount(t)·σ²)."""
    sigmas = {"B_{h,p,1}": 2.0, "B_{h,p,2}": 0.5, "B_{h,r,1}": 3.0, "B_{h,r,2}": 1.0}
    h_, d1, d2 = 400, 6, 4
    priv = Privatizer(h_, d1, d2, 10, sigmas, np.random.default_rng(t))
    for _ in range(t):
        priv.add(np.zeros((h_, d1, d1)), np.zeros((h_, d1)), np.zeros((h_, d2, d2)), np.zeros((h_, d2)))
    prefixes = priv.release()
    for name, x in prefixes.items():
        if x.ndim == 3:
            x = x[:, *np.triu_indices(x.shape[-1])]  # the independent entries of a symmetric matrix
        n = x.size
        var = float(np.mean(x * x))  # the mean is 0
        want = prefix_noise_variance(t, sigmas[name])
        assert var == pytest.approx(want, rel=6 * math.sqrt(2.0 / n)), name  # 6 standard errors
        assert abs(float(np.mean(x))) < 6 * math.sqrt(want / n)


def test_released_reward_prefixes_carry_popcount_noise_in_a_run() -> None:
    """Released minus exact (recomputed from the trajectories), over episodes: variance popcount(k)·σ²."""
    env = random_tabular(2, 2, 3, 5)
    sigma = 3.0
    z2 = []
    for seed in range(3):
        agent, result = run("private-linopt-vi", env, 40, seed, record=True, sigma=sigma, **PRIVATE)
        h_, a_, d2 = env.horizon, env.actions, agent.d2
        gram = np.zeros((h_, d2, d2))
        target = np.zeros((h_, d2))
        iu = np.triu_indices(d2)
        for k in range(1, result.episodes):
            idx = result.states[k - 1, :-1] * a_ + result.actions[k - 1]
            gram[np.arange(h_), idx, idx] += 1.0
            target[np.arange(h_), idx] += result.rewards[k - 1]
            scale = math.sqrt(prefix_noise_variance(k, sigma))
            z2.append(((result.releases["B_{h,r,1}"][k] - gram)[:, *iu] / scale).ravel() ** 2)
            z2.append(((result.releases["B_{h,r,2}"][k] - target) / scale).ravel() ** 2)
    z2 = np.concatenate(z2)
    # prefixes share p-sums, so the draws are correlated; ~3·39·(10 + 4) p-sum entries are independent
    assert float(z2.mean()) == pytest.approx(1.0, abs=0.12)


# ------------------------------------------------------------------ 3. learning


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "options", "ratio"),
    [
        ("linopt-vi", {}, 0.5),
        ("linopt-po", {}, 0.7),
        ("private-linopt-vi", {"sigma": "tight", **PRIVATE}, 0.7),
        # the paper's η = sqrt(2 ln|A|/(H²K)) moves the logits by at most sqrt(2K ln|A|)·ΔQ/H, and the
        # private Q's differences are shrunk by the shift 2Σ: the policy barely leaves uniform ...
        ("private-linopt-po", {"sigma": "tight", **PRIVATE}, 1.0),
        # ... a larger step learns
        ("private-linopt-po", {"sigma": "tight", "eta": 1.0, **PRIVATE}, 0.75),
    ],
)
def test_regret_is_below_the_uniform_policys(name: str, options: dict, ratio: float) -> None:
    # the tuned preset (bonus scale 0.05): with the paper's radii every Q saturates at K = 300
    env = two_state()
    uniform = env.regret(np.full((env.horizon, env.states, env.actions), 1.0 / env.actions))
    regret = [run(name, env, 300, seed, preset="tuned", **options)[1].regret.mean() for seed in range(3)]
    assert max(regret) < uniform
    assert float(np.mean(regret)) < ratio * uniform


# ------------------------------------------------------------------ the recursion against references


def test_last_step_q_is_the_ridge_estimate_plus_bonus() -> None:
    """At h = H (V_{H+1} = 0): Q = clip(Σr/(n + λ) + β_r/sqrt(n + λ), 0, 1) for one-hot ϕ."""
    env = random_tabular(3, 2, 3, 2)
    agent, result = run("linopt-vi", env, 30, 0, bonus_scale=0.3, regularization=2.0)
    h_, s_, a_ = env.horizon, env.states, env.actions
    n = np.zeros((s_, a_))
    total = np.zeros((s_, a_))
    for k in range(result.episodes):
        s, a = result.states[k, h_ - 1], result.actions[k, h_ - 1]
        n[s, a] += 1
        total[s, a] += result.rewards[k, h_ - 1]
    # plan the episode after the last: the agent has seen all 30
    fresh = make_agent("linopt-vi", env, 31, 0, bonus_scale=0.3, regularization=2.0)
    for k in range(result.episodes):
        fresh.plan(k)
        fresh.update(k, result.states[k], result.actions[k], result.rewards[k])
    fresh.plan(result.episodes)
    lam = 2.0
    want = np.clip(total / (n + lam) + fresh.beta_r / np.sqrt(n + lam), 0.0, 1.0)
    np.testing.assert_allclose(fresh.last_q[h_ - 1], want, rtol=1e-12)
    assert fresh.beta_r == pytest.approx(0.3 * confidence_radii(agent.d1, agent.d2, 31, h_, regularization=2.0)[1])


@settings(max_examples=examples(10))
@given(seed=st.integers(0, 2**32 - 1), variant=st.sampled_from(["vi", "po"]), private=st.booleans())
def test_q_is_clipped_and_the_policy_follows_it(seed: int, variant: str, private: bool) -> None:
    env = random_tabular(2, 2, 4, seed % 1000)
    options = {"sigma": 50.0, **PRIVATE} if private else {}
    name = ("private-" if private else "") + f"linopt-{variant}"
    agent = make_agent(name, env, 12, seed, bonus_scale=0.2, **options)
    users = Users.draw(12, env.horizon, seed)
    rng = np.random.default_rng(seed)
    for k in range(12):
        plan = agent.plan(k)
        q = agent.last_q
        caps = (env.horizon - np.arange(env.horizon))[:, None, None]
        assert np.all(q >= 0.0) and np.all(q <= caps)
        if variant == "vi":
            np.testing.assert_array_equal(
                q[np.arange(env.horizon)[:, None], np.arange(env.states), plan.policy], q.max(axis=2)
            )
            np.testing.assert_array_equal(agent.last_v[:-1], q.max(axis=2))
        else:
            np.testing.assert_allclose(plan.policy.sum(axis=2), 1.0, rtol=1e-12)
            np.testing.assert_allclose(agent.last_v[:-1], np.einsum("hsa,hsa->hs", plan.policy, q), rtol=1e-12)
        s = env.initial_state
        states, actions, rewards = [s], [], []
        for h in range(env.horizon):
            a = int(rng.integers(env.actions))
            s, r = env.step(h, s, a, users[k])
            states.append(s)
            actions.append(a)
            rewards.append(r)
        before = agent.policy() if variant == "po" else None
        assert agent.update(k, np.array(states), np.array(actions), np.array(rewards)) == {}
        if variant == "po":  # mirror descent: π^{k+1} ∝ π^k exp(η Q^k)
            want = before * np.exp(agent.eta * q)
            np.testing.assert_allclose(agent.policy(), want / want.sum(axis=2, keepdims=True), rtol=1e-10)


def test_block_inverse_equals_the_dense_inverse() -> None:
    env = random_tabular(3, 2, 3, 4)
    agent, _ = run("linopt-vi", env, 20, 0)
    prefixes = agent.privatizer.release()
    assert not agent.dense
    v_block, q_block, _ = agent._optimistic_values(prefixes)
    agent.dense = True
    v_dense, q_dense, _ = agent._optimistic_values(prefixes)
    np.testing.assert_allclose(q_block, q_dense, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(v_block, v_dense, rtol=1e-10, atol=1e-12)


def test_paper_constants() -> None:
    assert paper_eta(2, 3, 300) == pytest.approx(math.sqrt(2 * math.log(2) / (3 * 300 * 3)))
    assert paper_eta(1, 3, 300) == 0.0
    assert noise_shift(2.0, 3, 5, 100, 4, 0.1) == symmetric_noise_norm_bound(
        2.0, psums=3, dim=5, failure_probability=0.1 / 1600
    )
    assert noise_shift(0.0, 3, 5, 100, 4, 0.1) == 0.0
    assert target_noise_bound(2.0, 3, 5, 100, 4, 0.1) == pytest.approx(
        2.0 * math.sqrt(3) * (math.sqrt(5) + math.sqrt(2 * math.log(1600 / 0.1)))
    )
    # without noise: the fixed-regulariser radii of Lemma 3.1
    bp, br = confidence_radii(8, 4, 100, 3, regularization=1.0, alpha=0.05)
    assert bp == pytest.approx(1.5 * math.sqrt(2 * math.log(60) + 8 * math.log(1 + 900)) + math.sqrt(8))
    assert br == pytest.approx(0.5 * math.sqrt(2 * math.log(60) + 4 * math.log(1 + 25)) + 2.0)
    # with noise: λ_min = Σ + λ, λ_max = 3Σ + λ, ν = ν₀/sqrt(λ_min)
    bp, _ = confidence_radii(8, 4, 100, 3, regularization=1.0, shift_p=10.0, target_noise_p=22.0)
    assert bp == pytest.approx(
        1.5 * math.sqrt(2 * math.log(60) + 8 * math.log(1 + 900 / 11)) + math.sqrt(8 * 31) + 22 / math.sqrt(11)
    )


# ------------------------------------------------------------------ 4. reproducibility and bad inputs


@pytest.mark.parametrize("name", ["private-linopt-vi", "private-linopt-po"])
def test_same_seed_same_run(name: str) -> None:
    env = random_tabular(2, 2, 3, 0)
    _, a = run(name, env, 25, 4, record=True, sigma="paper", **PRIVATE)
    _, b = run(name, env, 25, 4, record=True, sigma="paper", **PRIVATE)
    _, c = run(name, env, 25, 5, record=True, sigma="paper", **PRIVATE)
    np.testing.assert_array_equal(a.actions, b.actions)
    for n in RELEASES:
        np.testing.assert_array_equal(a.releases[n], b.releases[n])
        assert not np.array_equal(a.releases[n][1:], c.releases[n][1:])
    # an integer seed is the same as default_rng(seed)
    x = make_agent(name, env, 25, 3, **PRIVATE).plan(0)
    y = make_agent(name, env, 25, np.random.default_rng(3), **PRIVATE).plan(0)
    np.testing.assert_array_equal(x.policy, y.policy)


def test_make_agent_names_and_attributes() -> None:
    env = random_tabular(2, 2, 3, 0)
    for name in linopt.LINOPT_AGENTS:
        options = PRIVATE if name.startswith("private") else {}
        agent = make_agent(name, env, 10, 0, **options)
        assert agent.name == name
        assert isinstance(agent, PrivateLinOpt if name.startswith("private") else LinOpt)
        if name.startswith("private"):
            assert agent.declaration.algorithm == name and set(agent.sigmas) == set(RELEASES)
        else:
            assert agent.declaration is None and agent.sigmas == {}
        policy = agent.plan(0).policy
        assert policy.shape == ((3, 2) if name.endswith("vi") else (3, 2, 2))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda env: make_agent("linopt-xx", env, 10, 0), "linopt-xx"),
        (lambda env: make_agent("private-linopt-vi", env, 10, 0, epsilon=1.0), "delta = None"),
        (lambda env: make_agent("linopt-vi", env, 10, 0, sigma=1.0), "sigma"),
        (lambda env: make_agent("linopt-vi", env, 10, 0, reading="x"), "reading"),
        (lambda env: make_agent("linopt-vi", env, 10, 0, bonus_scale=-1.0), "bonus_scale"),
        (lambda env: make_agent("linopt-vi", env, 10, 0, eta=0.5), "eta"),
        (lambda env: make_agent("linopt-po", env, 10, 0, eta=0.0), "eta"),
        (lambda env: make_agent("linopt-vi", env, 10, 0, regularization=0.0), "regularization"),
        (
            lambda env: make_agent("private-linopt-vi", env, 10, 0, sigma=0.0, regularization=0.0, **PRIVATE),
            "regularization",
        ),
        (lambda env: make_agent("private-linopt-vi", env, 10, 0, sigma=-1.0, **PRIVATE), "-1"),
        (lambda env: make_agent("private-linopt-vi", env, 10, 0, epsilon=-2.0, delta=1e-5), "epsilon"),
        (lambda env: make_agent("private-linopt-vi", env, 1, 0, **PRIVATE), "episodes"),
        (lambda env: make_agent("linopt-vi", env, 0, 0), "episodes"),
        (lambda env: make_agent("linopt-vi", env, 10, -3), "rng"),
        (lambda env: make_agent("linopt-vi", "env", 10, 0), "TabularMDP"),
        (lambda env: make_agent("linopt-vi", env, 10, 0, alpha=1.5), "alpha"),
    ],
)
def test_bad_parameters_raise_naming_the_value(call, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call(random_tabular(2, 2, 3, 0))


def test_bad_episode_calls_raise() -> None:
    env = random_tabular(2, 2, 3, 0)
    agent = make_agent("linopt-vi", env, 3, 0)
    with pytest.raises(ValueError, match="k = 1"):
        agent.plan(1)
    with pytest.raises(ValueError, match="update"):
        agent.update(0, np.zeros(4, int), np.zeros(3, int), np.zeros(3))
    agent.plan(0)
    with pytest.raises(ValueError, match="states"):
        agent.update(0, np.zeros(3, int), np.zeros(3, int), np.zeros(3))
    with pytest.raises(ValueError, match=r"0\.\.1, got \[0, 2, 0\]"):
        agent.update(0, np.zeros(4, int), np.array([0, 2, 0]), np.zeros(3))
    with pytest.raises(ValueError, match="rewards"):
        agent.update(0, np.zeros(4, int), np.zeros(3, int), np.array([0.0, np.nan, 1.0]))
    agent.update(0, np.zeros(4, int), np.zeros(3, int), np.zeros(3))
    with pytest.raises(ValueError, match="policy"):
        agent.policy()  # VI has no standing policy
    for k in (1, 2):
        agent.plan(k)
        agent.update(k, np.zeros(4, int), np.zeros(3, int), np.ones(3))
    with pytest.raises(ValueError, match="beyond"):
        agent.plan(3)
    with pytest.raises(ValueError, match="sigmas"):
        Privatizer(3, 4, 2, 10, {"B_{h,p,1}": 1.0}, 0)


def test_rewards_outside_the_unit_interval_are_clipped_before_counting() -> None:
    env = random_tabular(2, 2, 3, 0)
    a = make_agent("linopt-vi", env, 3, 0)
    b = make_agent("linopt-vi", env, 3, 0)
    for agent, rewards in ((a, np.array([5.0, -1.0, 0.5])), (b, np.array([1.0, 0.0, 0.5]))):
        agent.plan(0)
        agent.update(0, np.zeros(4, int), np.zeros(3, int), rewards)
    np.testing.assert_array_equal(a.privatizer.release()["B_{h,r,2}"], b.privatizer.release()["B_{h,r,2}"])


# ------------------------------------------------------------------ the constants: the paper's defaults, a tuned preset

SEEDS_DIR = next(
    (
        p
        for p in (Path(__file__).resolve().parents[2].parent / "shared" / "seeds", Path("/work/shared/seeds"))
        if p.is_dir()
    ),
    None,
)
LINOPT_SEED = "004_48563962abb1afcc.txt"


@pytest.mark.skipif(SEEDS_DIR is None, reason="the seed files are not beside the repository")
def test_the_constants_quoted_are_the_seeds() -> None:
    assert SEEDS_DIR is not None
    text = (SEEDS_DIR / LINOPT_SEED).read_text()
    for quote in (
        "Zh,p = Nh,p + 2Σp,1 I, which leads to λmax,p = 3Σp,1 and λmin,p = Σp,1 .",  # private: λ = 0
        "k = λI and z k = 0 for all h, k reduces to the standard non-private value-based",  # λ unstated
        "Γkh,p ← βp (α)[φkh (·, ·)⊤ (Λkh,p )−1 φkh (·, ·)]1/2",  # the radii as they are: scale 1
        "Γkh,r ← βr (α)[ϕ(·, ·)⊤ (Λkh,r )−1 ϕ(·, ·)]1/2",
    ):
        assert quote in text, quote
    assert "λ = 1" not in text and "λ=1" not in text  # the paper states no λ for the non-private algorithms


@pytest.mark.parametrize("variant", ["vi", "po"])
def test_the_defaults_are_the_papers(variant: str) -> None:
    env = random_tabular(2, 2, 3, 0)
    assert linopt.DEFAULT_BONUS_SCALE == 1.0 and linopt.PRIVATE_REGULARIZATION == 0.0
    assert linopt.DEFAULT_REGULARIZATION == 1.0  # the paper states none; the unit ridge
    plain = make_agent(f"linopt-{variant}", env, 40, 0)
    assert plain.bonus_scale == 1.0 and plain.regularization == 1.0 and plain.alpha == 0.05
    assert (plain.beta_p, plain.beta_r) == confidence_radii(plain.d1, plain.d2, 40, env.horizon, regularization=1.0)
    private = make_agent(f"private-linopt-{variant}", env, 40, 0, **PRIVATE)
    # Z = N + 2ΣI: no ridge, the radii of Lemma 3.1 unscaled
    assert private.regularization == 0.0 and private.bonus_scale == 1.0
    assert private.shift_p == 2.0 * private.noise_shift_p and private.shift_r == 2.0 * private.noise_shift_r
    m = max_psums_per_prefix(40, schedule="before-episode")
    sig = private.sigmas
    args = (40, env.horizon, 0.05)
    want = confidence_radii(
        private.d1,
        private.d2,
        40,
        env.horizon,
        regularization=0.0,
        shift_p=private.noise_shift_p,
        shift_r=private.noise_shift_r,
        target_noise_p=target_noise_bound(sig["B_{h,p,2}"], m, private.d1, *args),
        target_noise_r=target_noise_bound(sig["B_{h,r,2}"], m, private.d2, *args),
    )
    assert (private.beta_p, private.beta_r) == want
    if variant == "po":
        assert private.eta == plain.eta == paper_eta(env.actions, env.horizon, 40)
    # at σ = 0 the paper's λ = 0 leaves Λ singular: refused
    with pytest.raises(ValueError, match="regulariser is singular: regularization = 0.0"):
        make_agent(f"private-linopt-{variant}", env, 40, 0, sigma=0.0, **PRIVATE)


def test_the_tuned_preset_is_its_options_and_explicit_options_win() -> None:
    env = random_tabular(2, 2, 3, 0)
    assert dict(linopt.TUNED) == {"regularization": 1.0, "bonus_scale": 0.05}
    tuned = make_agent("private-linopt-vi", env, 40, 0, preset="tuned", **PRIVATE)
    assert tuned.regularization == 1.0 and tuned.bonus_scale == 0.05
    assert tuned.shift_p == 1.0 + 2.0 * tuned.noise_shift_p
    mine = make_agent("linopt-po", env, 40, 0, preset="tuned", bonus_scale=0.3, eta=1.0)
    assert mine.bonus_scale == 0.3 and mine.regularization == 1.0 and mine.eta == 1.0
    with pytest.raises(ValueError, match="preset"):
        make_agent("linopt-vi", env, 40, 0, preset="best")


# Before the defaults became the paper's, dpkit's ``simulate`` gave, at seed 3 of
# Experiment(name, "riverswim", 40, states=3[, epsilon=2, delta=0.1[, sigma="tight"]]), these sums of the regret
# and of the returns.
PREVIOUS_RIVERSWIM = {
    "linopt-vi": ({}, 15.810267416666665, 9.540833333333332),
    "linopt-po": ({}, 21.78249923371225, 4.705833333333333),
    "private-linopt-vi": ({"epsilon": 2.0, "delta": 0.1}, 22.698065325, 2.2366666666666664),
    # σ_tight itself changed since (per-step sensitivities: step h's transition counters carry less; one-hot
    # features: the exact sensitivities of the tabular features), so this run's regret is the one at today's
    # σ_tight (its returns are the same)
    "private-linopt-po": ({"epsilon": 2.0, "delta": 0.1, "sigma": "tight"}, 21.895961439469172, 4.205833333333333),
}


@pytest.mark.parametrize("name", sorted(PREVIOUS_RIVERSWIM))
def test_the_tuned_preset_reproduces_the_previous_runs(name: str) -> None:
    from dpkit.algorithms.simulation import Experiment, simulate

    kwargs, regret, returns = PREVIOUS_RIVERSWIM[name]
    run = simulate(Experiment(name, "riverswim", 40, states=3, options=(("preset", "tuned"),), **kwargs), 3)
    # the same trajectory to the last few bits: BLAS kernels (OPENBLAS_CORETYPE) may differ in the last digit
    assert (float(np.sum(run.regret)), float(np.sum(run.returns))) == pytest.approx((regret, returns), rel=1e-12)
    paper = simulate(Experiment(name, "riverswim", 40, states=3, **kwargs), 3)  # the paper's constants differ
    assert float(np.sum(paper.regret)) != regret
