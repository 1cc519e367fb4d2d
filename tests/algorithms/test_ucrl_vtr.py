"""UCRL-VTR and LDP-UCRL-VTR (seed 000, Algorithm 1) on tabular MDPs in their linear-mixture view.

σ = 0 reproduces UCRL-VTR action for action; the recorded releases are what the declaration
says (shapes, exact symmetry, noise of std σ on i <= j, mirrored); features and values are
clipped to the declared bounds; both agents beat the uniform policy on 2-state MDPs; runs are
reproducible and bad inputs are refused by name.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats
from tiers import examples

from dpkit.accountant.tree import symmetric_noise_norm_bound
from dpkit.algorithms import ldp_ucrl_vtr, ucrl_vtr
from dpkit.algorithms.envs.features import LinearMixture
from dpkit.algorithms.envs.tabular import TabularMDP, Users, random_tabular, riverswim
from dpkit.algorithms.episodes import run_tabular
from dpkit.algorithms.ldp_ucrl_vtr import GRAM, TARGET, LdpUcrlVtr
from dpkit.algorithms.ucrl_vtr import (
    BlockModel,
    DenseModel,
    UcrlVtr,
    block_solve,
    default_regularizer,
    diagonal_blocks,
    optimistic_plan,
    return_caps,
)

CHI2_TAIL = 1e-6  # two-sided tail of the variance checks


def ldp(env: TabularMDP, episodes: int, seed: int = 0, **kw: object) -> LdpUcrlVtr:
    kw.setdefault("epsilon", 1.0)
    kw.setdefault("delta", 0.1)
    return LdpUcrlVtr(env, episodes, seed, **kw)  # type: ignore[arg-type]


def uniform_regret(env: TabularMDP) -> float:
    return float(env.regret(np.full((env.horizon, env.states, env.actions), 1.0 / env.actions)))


def assert_variance(noise: np.ndarray, sigma: float) -> None:
    """Σ x² / σ² of n i.i.d. N(0, σ²) draws is χ²_n: check it within the two-sided 1e-6 quantiles."""
    n = noise.size
    stat = float(np.sum(noise.astype(float) ** 2)) / sigma**2
    lo, hi = stats.chi2.ppf(CHI2_TAIL / 2, n), stats.chi2.ppf(1 - CHI2_TAIL / 2, n)
    assert lo <= stat <= hi, f"estimated σ = {np.sqrt(stat / n) * sigma:.4g} vs declared {sigma} (n = {n})"


# ------------------------------------------------------------------ building blocks (reference values)


def test_optimistic_plan_with_true_theta_and_no_bonus_is_backward_induction() -> None:
    env = random_tabular(3, 2, 5, 4)
    theta = LinearMixture(env).theta()
    zeros = np.zeros((env.horizon, env.states * env.actions, env.states, env.states))
    policy, q, v = optimistic_plan(env.rewards, BlockModel(theta, zeros, 3, 2), np.zeros(5), return_caps(env.rewards))
    q_star, v_star = env.optimal_values()
    np.testing.assert_allclose(q, q_star, rtol=0, atol=1e-14)
    np.testing.assert_allclose(v, v_star, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(policy, q_star.argmax(axis=2))


def test_return_caps_and_default_regularizer_on_riverswim() -> None:
    env = riverswim(4)  # H = 8, rewards divided by H: c_h = (H − h)/H, λ = 1/H²
    np.testing.assert_allclose(return_caps(env.rewards), (8 - np.arange(9)) / 8, rtol=1e-14)
    assert default_regularizer(env.rewards) == pytest.approx(1 / 64, rel=1e-14)


def test_block_and_dense_models_agree_on_a_block_diagonal_gram() -> None:
    rng = np.random.default_rng(1)
    s_, a_, h_ = 3, 2, 4
    sa, d = s_ * a_, s_ * s_ * a_
    x = rng.standard_normal((h_, sa, s_, s_))
    blocks = x @ x.transpose(0, 1, 3, 2) + 0.5 * np.eye(s_)
    dense = np.zeros((h_, sa, s_, sa, s_))
    dense[:, np.arange(sa), :, np.arange(sa), :] = blocks.transpose(1, 0, 2, 3)
    dense = dense.reshape(h_, d, d)
    np.testing.assert_array_equal(diagonal_blocks(dense, s_, a_), blocks)
    u = rng.standard_normal((h_, d))
    theta, inverse_blocks, logdet = block_solve(blocks, u)
    block_model, dense_model = BlockModel(theta, inverse_blocks, s_, a_), DenseModel(dense, u, s_, a_)
    np.testing.assert_allclose(theta, dense_model.theta(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(logdet, dense_model.logdet(), rtol=1e-12)
    inv = np.linalg.inv(dense)
    for h in range(h_):
        v = rng.uniform(0, 1, s_)
        mean_b, quad_b = block_model(h, v)
        mean_d, quad_d = dense_model(h, v)
        phi = LinearMixture(random_tabular(s_, a_, h_, 0)).phi_v(v)  # (S, A, d)
        np.testing.assert_allclose(mean_b, phi @ theta[h], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(quad_b, np.einsum("sai,ij,saj->sa", phi, inv[h], phi), rtol=1e-9)
        np.testing.assert_allclose(mean_d, mean_b, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(quad_d, quad_b, rtol=1e-9)


# ------------------------------------------------------------------ 1. σ = 0 is UCRL-VTR


@pytest.mark.parametrize("env", [riverswim(3), random_tabular(3, 2, 6, 7)], ids=["riverswim-3", "random-3x2"])
def test_sigma_zero_takes_exactly_the_actions_of_ucrl_vtr(env: TabularMDP) -> None:
    k_ = 200
    users = Users.draw(k_, env.horizon, 11)
    base = run_tabular(UcrlVtr(env, k_), env, users, 0)
    private = ldp(env, k_, 5, sigma=0.0)
    run = run_tabular(private, env, users, 0, record=True)
    np.testing.assert_array_equal(run.actions, base.actions)
    np.testing.assert_array_equal(run.regret, base.regret)
    assert private.sigmas == {GRAM: 0.0, TARGET: 0.0} and private.shift == 0.0
    # the messages are then exactly φφᵀ and φ·V: rank one, supported on one S×S block
    gram = run.releases[GRAM]
    assert np.all(np.linalg.matrix_rank(gram.reshape(-1, *gram.shape[2:])) <= 1)
    assert np.unique(base.actions).size == 2  # the agents explored both actions


@settings(max_examples=examples(6))
@given(
    bonus_scale=st.sampled_from([0.03, 0.1, 0.5]),
    regularizer=st.sampled_from([None, 0.05, 1.0]),
    seed=st.integers(0, 2**16),
)
def test_sigma_zero_matches_ucrl_vtr_for_any_bonus_and_regularizer(
    bonus_scale: float, regularizer: float | None, seed: int
) -> None:
    env = riverswim(3)
    users = Users.draw(40, env.horizon, seed)
    base = run_tabular(UcrlVtr(env, 40, bonus_scale=bonus_scale, regularizer=regularizer), env, users, 0)
    run = run_tabular(ldp(env, 40, seed, sigma=0, bonus_scale=bonus_scale, regularizer=regularizer), env, users, 0)
    np.testing.assert_array_equal(run.actions, base.actions)


# ------------------------------------------------------------------ 2. the releases


def test_recorded_releases_have_the_declared_shapes_and_are_what_the_server_adds() -> None:
    env = riverswim(2)
    k_, h_, d = 40, env.horizon, LinearMixture(env).dim
    agent = ldp(env, k_, 3, epsilon=10.0, sigma=0.7)
    run = run_tabular(agent, env, Users.draw(k_, h_, 2), 1, record=True, sigmas=agent.sigmas)
    assert set(run.releases) == {GRAM, TARGET} == {r.name for r in agent.declaration.releases}
    gram, target = run.releases[GRAM], run.releases[TARGET]
    assert gram.shape == (k_, h_, d, d) and target.shape == (k_, h_, d)
    np.testing.assert_array_equal(gram, gram.transpose(0, 1, 3, 2))  # exactly symmetric
    np.testing.assert_allclose(agent.gram(), agent.regularizer * np.eye(d) + gram.sum(axis=0), rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(agent.target(), target.sum(axis=0), rtol=1e-12, atol=1e-9)
    assert run.sigmas == {GRAM: 0.7, TARGET: 0.7}


def test_noise_has_the_declared_std_on_i_le_j_mirrored_and_fresh() -> None:
    env = riverswim(3)
    h_, s_, a_ = env.horizon, 3, 2
    d = s_ * s_ * a_
    sig = {GRAM: 0.5, TARGET: 2.0}
    agent = ldp(env, 10, 9, sigma=sig)
    clean = ldp(env, 10, 9, sigma=0.0)
    rng = np.random.default_rng(0)
    blocks = np.arange(h_) % (s_ * a_)
    values = rng.uniform(0.0, 0.5, (h_, s_))
    targets = values[np.arange(h_), rng.integers(0, s_, h_)]
    reference = clean.privatize(blocks, values, targets)
    draws = 300
    gram_noise = np.empty((draws, h_, d, d))
    target_noise = np.empty((draws, h_, d))
    for i in range(draws):
        m = agent.privatize(blocks, values, targets)
        gram_noise[i] = m[GRAM] - reference[GRAM]
        target_noise[i] = m[TARGET] - reference[TARGET]
    np.testing.assert_array_equal(gram_noise, gram_noise.transpose(0, 1, 3, 2))  # i < j mirrored to j > i
    iu, ju = np.triu_indices(d, 1)
    off = gram_noise[:, :, iu, ju]
    diag = np.diagonal(gram_noise, axis1=2, axis2=3)
    assert_variance(off, sig[GRAM])
    assert_variance(diag, sig[GRAM])  # the diagonal is not doubled: σ², not 2σ²
    assert_variance(target_noise, sig[TARGET])
    # fresh: no draw reused across steps, entries or the two releases
    n = draws * d
    for a, b in [(diag[:, 0], diag[:, 1]), (diag[:, 0], target_noise[:, 0]), (off[:, 0, :d], off[:, 0, d : 2 * d])]:
        rho = np.corrcoef(a.ravel(), b.ravel())[0, 1]
        assert abs(rho) < 6 / np.sqrt(n)


def test_the_shift_keeps_the_noisy_gram_positive_definite() -> None:
    env = riverswim(2)
    k_, d = 60, LinearMixture(env).dim
    agent = ldp(env, k_, 4, epsilon=10.0, sigma="tight")
    run_tabular(agent, env, Users.draw(k_, env.horizon, 4), 0)
    sig = agent.sigmas[GRAM]
    want = 2.0 * symmetric_noise_norm_bound(
        sig, psums=k_ - 1, dim=d, failure_probability=agent.failure_probability / (env.horizon * k_)
    )
    assert agent.shift == want  # r before the last user: 2Υ_{K−1}
    r_next = 2.0 * symmetric_noise_norm_bound(
        sig, psums=k_, dim=d, failure_probability=agent.failure_probability / (env.horizon * k_)
    )
    assert np.linalg.eigvalsh(agent.gram() + r_next * np.eye(d)).min() > 0.0


# ------------------------------------------------------------------ 3. clipping


def test_features_and_values_beyond_the_theorem_bounds_are_clipped() -> None:
    env = riverswim(2)  # H = 4, S = 2: ‖φ_V‖ = ‖V‖ up to ~1 > 0.3
    agent = ldp(env, 30, 0, reading="theorem", feature_bound=0.3, value_bound=0.5, sigma=0.0)
    share = (4 - np.arange(1, 5)) / 4  # step h's bounds: (H − h)/H of the whole range (V_{H+1} = 0)
    values = np.array([[0.9, 0.8], [-0.2, 0.7], [0.1, 0.05], [2.0, -1.0]])
    targets = np.array([0.9, -0.2, 0.05, 2.0])
    blocks = np.array([0, 3, 1, 2])
    m = agent.privatize(blocks, values, targets)
    v = np.clip(values, 0.0, 0.5 * share[:, None])
    norms = np.linalg.norm(v, axis=1)
    phi = v * np.minimum(1.0, 0.3 * share / np.where(norms > 0, norms, 1.0))[:, None]
    dense = np.zeros((4, 4, 2))
    dense[np.arange(4), blocks] = phi
    dense = dense.reshape(4, 8)
    np.testing.assert_allclose(m[GRAM], dense[:, :, None] * dense[:, None, :], rtol=1e-12, atol=0)
    np.testing.assert_allclose(m[TARGET], dense * np.clip(targets, 0, 0.5 * share)[:, None], rtol=1e-12, atol=0)
    assert not m[GRAM][-1].any() and not m[TARGET][-1].any()  # step H: V_{H+1} = 0, the same for every user
    # in a run: every message obeys its step's bounds, and the clip is active
    run = run_tabular(agent, env, Users.draw(30, env.horizon, 1), 0, record=True)
    norms = np.sqrt(np.trace(run.releases[GRAM], axis1=2, axis2=3))  # (K, H)
    assert np.all(norms <= 0.3 * share) and norms[:, 0].max() > 0.3 * share[0] * (1 - 1e-9)
    assert np.all(np.linalg.norm(run.releases[TARGET], axis=2) <= 0.3 * 0.5 * share**2 * (1 + 1e-12))


@settings(max_examples=examples(25))
@given(
    values=hnp.arrays(float, (4, 2), elements=st.floats(-2.0, 3.0)),
    feature_bound=st.floats(0.05, 3.0),
    value_bound=st.floats(0.05, 3.0),
)
def test_clipped_messages_respect_any_declared_bounds(
    values: np.ndarray, feature_bound: float, value_bound: float
) -> None:
    agent = ldp(riverswim(2), 5, 0, reading="theorem", feature_bound=feature_bound, value_bound=value_bound, sigma=0)
    share = (4 - np.arange(1, 5)) / 4
    targets = values[:, 0]
    m = agent.privatize(np.array([0, 1, 2, 3]), values, targets)
    phi_norm = np.sqrt(np.trace(m[GRAM], axis1=1, axis2=2))
    assert np.all(phi_norm <= feature_bound * share)
    assert np.all(np.linalg.norm(m[TARGET], axis=1) <= feature_bound * value_bound * share**2 * (1 + 1e-12))
    assert np.all(m[TARGET] >= 0) and np.all(m[GRAM] >= 0)  # V clipped to [0, B_V]: φ_V >= 0
    # the declared per-step sensitivities cover every step's messages (add/remove: the message itself, the Gram
    # update on its upper triangle, where its noise is)
    gram, target = agent.declaration.releases
    rows, cols = np.triu_indices(m[GRAM].shape[-1])
    upper = np.linalg.norm(m[GRAM][:, rows, cols], axis=1)
    assert np.all(upper <= np.array(gram.step_sensitivities("add_remove")) * (1 + 1e-12))
    assert np.all(np.linalg.norm(m[TARGET], axis=1) <= np.array(target.step_sensitivities("add_remove")) * (1 + 1e-12))


def test_ucrl_vtr_paper_radius_is_seed_000s_form_as_read() -> None:
    # β_h = c·sqrt(SA) + B_h·sqrt(2 ln K + ln(det Λ_h/λ^d)): at Λ = λI the log-det term vanishes; it grows with it
    env = riverswim(3)
    agent = UcrlVtr(env, 50, bonus="paper", bonus_scale=0.7)
    assert UcrlVtr(env, 50).bonus == "confidence"  # the default form is unchanged
    _, beta = agent._solve(0)
    lam, b = agent.regularizer, agent.caps[1:]
    np.testing.assert_allclose(beta, 0.7 * np.sqrt(6) + b * np.sqrt(2 * np.log(50)), rtol=1e-12)
    d = agent.dim
    grown = ucrl_vtr.paper_radius(
        np.full(env.horizon, d * np.log(lam) + 3.0), b, dim=d, pairs=6, regularizer=lam, episodes=50, scale=0.7
    )
    np.testing.assert_allclose(grown, 0.7 * np.sqrt(6) + b * np.sqrt(2 * np.log(50) + 3.0), rtol=1e-12)


def test_ldp_paper_bonus_is_seed_000s_beta() -> None:
    # §6: β_h = c·d^{3/4}(H − h + 1)^{3/2}k^{1/4}, user k = 1, 2, ... (the plan of episode k uses k + 1 users' count)
    env = riverswim(2)
    agent = ldp(env, 20, 0, bonus="paper", bonus_scale=0.03)
    _, beta = agent._solve(4)
    steps_left = env.horizon - np.arange(env.horizon)
    np.testing.assert_allclose(np.reshape(beta, -1), 0.03 * agent.dim**0.75 * steps_left**1.5 * 5**0.25, rtol=1e-12)


# ------------------------------------------------------------------ 4. regret


@pytest.mark.parametrize("env", [riverswim(2), random_tabular(2, 2, 4, 0)], ids=["riverswim-2", "random-2x2"])
def test_both_agents_beat_the_uniform_policy_on_two_state_mdps(env: TabularMDP) -> None:
    k_ = 300
    users = Users.draw(k_, env.horizon, 1)
    uniform = uniform_regret(env) * k_
    assert uniform > 10.0
    base = run_tabular(UcrlVtr(env, k_), env, users, 0)
    private = run_tabular(ldp(env, k_, 0, epsilon=10.0, delta=0.1, sigma="tight"), env, users, 0)
    assert base.cumulative_regret[-1] < 0.5 * uniform
    assert private.cumulative_regret[-1] < 0.5 * uniform


# ------------------------------------------------------------------ 5. reproducibility and validation


def test_same_seed_same_run_other_seed_other_noise() -> None:
    env = riverswim(2)
    users = Users.draw(25, env.horizon, 8)

    def once(seed: int) -> object:
        return run_tabular(ldp(env, 25, seed, sigma=1.0), env, users, 0, record=True)

    a, b, c = once(3), once(3), once(4)
    for field in ("regret", "returns", "states", "actions", "rewards"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    for name in (GRAM, TARGET):
        np.testing.assert_array_equal(a.releases[name], b.releases[name])
        assert not np.array_equal(a.releases[name], c.releases[name])


def test_factories_build_the_agents_with_their_attributes() -> None:
    env = riverswim(2)
    plain = ucrl_vtr.make_agent("ucrl-vtr", env, 10, 0, epsilon=3.0, delta=0.1, bonus_scale=0.2)
    assert plain.name == "ucrl-vtr" and plain.sigmas == {} and plain.declaration is None and plain.bonus_scale == 0.2
    private = ldp_ucrl_vtr.make_agent("ldp-ucrl-vtr", env, 10, np.random.default_rng(0), epsilon=3.0, delta=0.1)
    assert private.name == "ldp-ucrl-vtr" and private.declaration is not None
    paper = ldp_ucrl_vtr.paper_sigma(4, 3.0, 0.1, "experiment")
    assert private.sigmas == {GRAM: paper, TARGET: paper}


@pytest.mark.parametrize(
    ("build", "fragment"),
    [
        (lambda: ldp(riverswim(2), 5, epsilon=0.0), "0.0"),
        (lambda: ldp(riverswim(2), 5, epsilon=-1.0), "-1.0"),
        (lambda: ldp(riverswim(2), 5, sigma="loose"), "'loose'"),
        (lambda: ldp(riverswim(2), 5, sigma=-0.5), "-0.5"),
        (lambda: ldp(riverswim(2), 5, reading="folklore"), "'folklore'"),
        (lambda: ldp(riverswim(2), 5, bonus="ucb"), "'ucb'"),
        (lambda: ldp(riverswim(2), 5, shift_scale=-2.0), "-2.0"),
        (lambda: ldp("riverswim", 5), "str"),  # type: ignore[arg-type]
        (lambda: UcrlVtr("riverswim", 5), "str"),  # type: ignore[arg-type]
        (lambda: UcrlVtr(riverswim(2), 5, bonus_scale=0.0), "0.0"),
        (lambda: UcrlVtr(riverswim(2), 5, bonus="ucb"), "'ucb'"),
        (lambda: UcrlVtr(riverswim(2), 0), "0"),
        (lambda: ucrl_vtr.make_agent("ucrl-vtr", riverswim(2), 5, 0, sigma=1.0), "1.0"),
        (lambda: ucrl_vtr.make_agent("ucrl-vtr", riverswim(2), 5, 0, beta=1.0), "beta"),
        (lambda: ucrl_vtr.make_agent("ldp-ucrl-vtr", riverswim(2), 5, 0), "'ldp-ucrl-vtr'"),
        (lambda: ldp_ucrl_vtr.make_agent("ldp-ucrl-vtr", riverswim(2), 5, 0, delta=0.1), "None"),
        (lambda: ldp_ucrl_vtr.make_agent("ldp-ucrl-vtr", riverswim(2), 5, -1, epsilon=1.0, delta=0.1), "-1"),
    ],
)
def test_bad_inputs_raise_value_errors_naming_the_value(build: object, fragment: str) -> None:
    with pytest.raises(ValueError) as info:
        build()  # type: ignore[operator]
    assert fragment in str(info.value)


def test_privatize_refuses_malformed_inputs() -> None:
    agent = ldp(riverswim(2), 5, sigma=0.0)
    ok_values = np.zeros((4, 2))
    with pytest.raises(ValueError, match="shapes"):
        agent.privatize(np.zeros(3, int), ok_values, np.zeros(4))
    with pytest.raises(ValueError, match=r"0\.\.3"):
        agent.privatize(np.array([0, 1, 2, 4]), ok_values, np.zeros(4))
    with pytest.raises(ValueError, match="finite"):
        agent.privatize(np.zeros(4, int), np.full((4, 2), np.nan), np.zeros(4))


def test_update_needs_a_plan_for_the_same_episode() -> None:
    env = riverswim(2)
    agent = UcrlVtr(env, 5)
    with pytest.raises(ValueError, match="without a plan"):
        agent.update(0, np.zeros(5, int), np.zeros(4, int), np.zeros(4))
    agent.plan(0)
    with pytest.raises(ValueError, match="actions"):
        agent.update(0, np.zeros(5, int), np.full(4, 2), np.zeros(4))
    with pytest.raises(ValueError, match="beyond"):
        agent.plan(5)
