"""Audits of the RL algorithms (audits/rl/fixed.py): neighbours, residuals, acceptance, wrong implementations."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

import dpkit.algorithms.linopt.agent as linopt_module
import dpkit.algorithms.ofu_rl.agent as ofu_module
from dpkit.accountant.tree import BinaryCounter
from dpkit.algorithms.ldp_ucrl_vtr import GRAM, LdpUcrlVtr
from dpkit.algorithms.rlsvi import Rlsvi
from dpkit.audits import make_executor
from dpkit.audits.rl import (
    RlSetting,
    audit_setting,
    audited_algorithms,
    default_setting,
    neighbouring_datasets,
    observers,
    positions,
    registered_declaration,
    rl_release,
    setting_claim_sigmas,
    setting_world,
)
from dpkit.audits.rl.psums import counter_nodes
from dpkit.audits.rl.rows import RowLayout

ALGORITHMS = audited_algorithms()


def below_tight(setting: RlSetting, factor: float = 0.7) -> RlSetting:
    """The same setting with every σ at ``factor`` × the σ the claim needs."""
    from dataclasses import replace

    def scaled(v: float | tuple[float, ...]) -> float | tuple[float, ...]:
        return tuple(x * factor for x in v) if isinstance(v, tuple) else v * factor

    return replace(setting, sigma={k: scaled(v) for k, v in setting_claim_sigmas(setting).items()})


# ------------------------------------------------------------------------------ neighbours


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("position", ["first", "middle", "last"])
def test_neighbours_differ_in_exactly_the_changed_user(algorithm: str, position: str) -> None:
    setting = default_setting(algorithm, position=position)
    env, users, canaries = setting_world(setting)
    j = setting.index
    assert j == positions(setting)[position][0]
    if algorithm == "private-ofu-rl":
        w0, w1 = canaries[0].noise, canaries[1].noise
        norms = np.linalg.norm(np.concatenate([w0, w1]), axis=1)
        assert np.allclose(norms, 2 * env.noise_bound)  # beyond the bound C_w: only clipping helps
        assert np.linalg.norm(canaries[0].x1) == np.linalg.norm(canaries[1].x1) == 1.0  # her own first state
        # orthogonal trajectories, or one trajectory against itself with alternating signs
        assert np.allclose(np.sum(w0 * w1, axis=1), 0.0) or np.allclose(np.abs(np.sum(w0 * w1, axis=1)), 3.24)
    else:
        c0, c1 = canaries
        if algorithm == "rlsvi":  # rewards only: same transitions, raw rewards beyond [0, 1] on both sides
            assert np.array_equal(c0.transition_uniforms, c1.transition_uniforms)
            assert c0.initial_state == c1.initial_state == 0
            assert np.all(c0.rewards < 0.0) and np.all(c1.rewards > 1.0)
            # no other user walks her state: her cells keep n = 1
            assert all(users[k].initial_state == setting.states - 1 for k in range(len(users)))
        else:
            assert (c0.initial_state, c1.initial_state) == (0, setting.states - 1)  # disjoint from the first step
            assert env.step(0, 0, 0, c0)[0] == 0 and env.step(0, 0, 0, c1)[0] == setting.states - 1
        d0 = users.replace(j, c0)
        d1 = users.replace(j, c1)
        differs = [
            k
            for k in range(setting.episodes)
            if not np.array_equal(d0.transition_uniforms[k], d1.transition_uniforms[k])
            or not np.array_equal(d0.rewards[k], d1.rewards[k], equal_nan=True)
            or d0[k].initial_state != d1[k].initial_state
        ]
        assert differs == [j]
    assert setting.to_dict()["relation"] == "replace_one"


def test_setting_rejects_bad_values() -> None:
    with pytest.raises(ValueError, match="observer"):
        RlSetting("ldp-ucrl-vtr", "billboard")
    with pytest.raises(ValueError, match="relation"):
        RlSetting("private-linopt-vi", "billboard", relation="add_remove")
    with pytest.raises(ValueError, match="episodes"):
        RlSetting("rlsvi", "q-values", episodes=1)
    with pytest.raises(ValueError, match="position"):
        RlSetting("rlsvi", "q-values", position="second")
    with pytest.raises(ValueError, match="position"):
        RlSetting("rlsvi", "q-values", episodes=4, position=4)
    with pytest.raises(ValueError, match="position"):
        RlSetting("rlsvi", "q-values", episodes=4, position="k=9")
    with pytest.raises(TypeError, match="position"):
        RlSetting("rlsvi", "q-values", position=1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"sigma.* must be > 0"):
        audit_setting(default_setting("ldp-ucrl-vtr", sigma=0.0), runs=10)


# ------------------------------------------------------------------------------ p-sums


@pytest.mark.parametrize("steps", [1, 5, 16])
def test_counter_nodes_are_the_noisy_psums(steps: int) -> None:
    rng = np.random.default_rng(steps)
    counter = BinaryCounter((3,), sigma=2.0, rng=rng)
    items = rng.standard_normal((steps, 3))
    prefixes, noise = [counter.prefix()], []
    for x in items:
        counter.add(x)
        level = (counter.t & -counter.t).bit_length() - 1
        noise.append(counter._noisy[level] - counter._exact[level])
        prefixes.append(counter.prefix())
    nodes, starts = counter_nodes(np.stack(prefixes))
    t = np.arange(1, steps + 1)
    exact = np.stack([items[a:b].sum(axis=0) for a, b in zip(starts, t)])
    assert np.allclose(nodes - exact, np.stack(noise), atol=1e-9)
    assert (starts == t - (t & -t)).all()


# ------------------------------------------------------------------------------ residuals


@pytest.mark.parametrize(
    "algorithm", [a if i == 0 else pytest.param(a, marks=pytest.mark.slow) for i, a in enumerate(ALGORITHMS)]
)
def test_white_box_residuals_are_standard_normal_under_d_and_shifted_under_d_prime(algorithm: str) -> None:
    """A correct implementation's whitened residuals are N(0, 1) on D and N(a, 1) on D′."""
    setting = default_setting(algorithm)
    d0, d1 = neighbouring_datasets(setting)
    n = 60 if algorithm in ("private-ofu-rl", "private-linopt-vi", "private-linopt-po") else 150
    out0 = rl_release(d0, np.random.default_rng(1), n)
    out1 = rl_release(d1, np.random.default_rng(2), n)
    half = RowLayout.of(out0, True).half
    for out, shifted in ((out0, False), (out1, True)):
        r, a = out[:, :half], out[:, half : 2 * half]
        # whitened at the claim's σ (= the σ used at tight): every coordinate N(0, 1) on D; on D′ the projections
        # that carry a signal are N(a, 1) (the other coordinates of her messages move with her too)
        # (a cross projection is exactly 0 where two steps' directions coincide: no noise to test there)
        z = (r - a)[:, np.any(a != 0, axis=0)] if shifted else r[r != 0.0]
        assert abs(z.mean()) < 4.0 / np.sqrt(z.size)
        assert stats.kstest(z.ravel()[:20_000], "norm").pvalue > 1e-3
        assert np.allclose(np.sqrt((a * a).sum(axis=1)), out[:, -2])  # μ of the run at the σ used (= the claim's)
    assert out0[:, -2].max() > 0  # the changed user is in the releases


def test_release_is_reproducible() -> None:
    setting = default_setting("private-linopt-vi", episodes=4)
    d0, _ = neighbouring_datasets(setting)
    a = rl_release(d0, np.random.default_rng(7), 5)
    b = rl_release(d0, np.random.default_rng(7), 5)
    assert np.array_equal(a, b)


def test_last_user_of_a_billboard_is_never_released() -> None:
    """Schedule before-episode: the last user's item enters no released prefix, so her pair's μ is 0 (the positions
    an audit probes end at the last user a release holds)."""
    setting = default_setting("private-linopt-vi", episodes=4, position=3)
    assert positions(setting)["last"][0] == 2
    d0, _ = neighbouring_datasets(setting)
    out = rl_release(d0, np.random.default_rng(0), 3)
    assert (out[:, -2] == 0).all()


# ------------------------------------------------------------------------------ acceptance


@pytest.fixture(scope="module")
def pool():
    with make_executor("processes", workers=2) as executor:
        yield executor


@pytest.mark.slow
@pytest.mark.parametrize("allocation", ["tight", "optimal"])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_tight_audit_certifies_most_of_the_declared_mu(algorithm: str, allocation: str, pool) -> None:
    """σ = tight, and the optimal allocation: at the first user (the most releases hold her) the canaries reach the
    declared μ and 2,000 runs certify at least 0.85 of it; consistent."""
    result = audit_setting(default_setting(algorithm, sigma=allocation), runs=2000, seed=1, executor=pool)
    assert result.verdict == "consistent"
    assert result.reach >= 0.95
    assert result.mu_lower >= 0.85 * result.declared_mu_at_position, result.to_dict()
    assert result.pair_mu <= result.exact_mu * (1 + 1e-9)  # the pair never exceeds the declaration
    assert result.sigmas == result.sigmas_claim


@pytest.mark.slow
@pytest.mark.parametrize("allocation", ["tight", "optimal"])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_fifteen_percent_below_tight_is_a_violation(algorithm: str, allocation: str, pool) -> None:
    below = below_tight(default_setting(algorithm, sigma=allocation), 0.85)
    assert below.claim_allocation == allocation  # the claim stays at the allocation the σ was cut from
    result = audit_setting(below, runs=2000, seed=2, executor=pool)
    assert result.verdict == "violation", result.to_dict()
    assert result.exact_mu > result.pair_mu_allowed


@pytest.mark.slow
def test_audit_is_the_same_in_process_and_in_a_pool(pool) -> None:
    setting = default_setting("rlsvi")
    a = audit_setting(setting, runs=300, seed=5)
    b = audit_setting(setting, runs=300, seed=5, executor=pool)
    assert a.to_dict() == b.to_dict()


@pytest.mark.parametrize("algorithm", ["ldp-ucrl-vtr", "private-ofu-rl"])
def test_reading_gives_the_claims_epsilon_at_the_informative_delta(algorithm: str) -> None:
    """At the paper's δ = 0.1 the claim is ε = 1; beside it the claim's μ and its ε at min(1e-5, 1/K) — the
    ledger's reading of the registered declaration at σ_tight — and the exact ε of the releases at the σ used."""
    from dpkit.accountant import gdp_epsilon
    from dpkit.accountant.algorithm_ledgers import algorithm_ledger

    setting = default_setting(algorithm, sigma="paper", epsilon=1.0, delta=0.1)
    d = audit_setting(setting, runs=60, seed=3).to_dict()
    delta_inf = min(1e-5, 1 / setting.episodes)
    assert d["delta"] == 0.1 and d["claimed_epsilon"] == 1.0 and d["delta_informative"] == delta_inf
    assert d["claimed_epsilon_at_informative_delta"] == pytest.approx(gdp_epsilon(d["claim_mu"], delta_inf), rel=1e-12)
    assert d["exact_epsilon_at_informative_delta"] == pytest.approx(gdp_epsilon(d["exact_mu"], delta_inf), rel=1e-12)
    led = algorithm_ledger(registered_declaration(setting), relation="replace_one")
    assert d["claim_mu"] == pytest.approx(led.mu_at_tight_sigma, rel=1e-9)
    assert d["claimed_epsilon_at_informative_delta"] == pytest.approx(
        led.epsilon_at_informative_delta_by_tight_sigma, rel=1e-9
    )
    assert d["claimed_epsilon_at_informative_delta"] > d["claimed_epsilon"]  # δ = 1e-5 costs ε
    assert d["exact_epsilon_at_informative_delta"] >= d["exact_epsilon"]


# ------------------------------------------------------------------------------ wrong implementations


def _privatize_without_target_noise(self, blocks, values, targets):
    messages = self.statistics(blocks, values, targets)
    gram = messages[GRAM]
    rows, cols = np.triu_indices(self.dim)
    noise = np.zeros_like(gram)
    noise[:, rows, cols] = noise[:, cols, rows] = self.rng.standard_normal((self.horizon, rows.size)) * self.sigma_gram
    messages[GRAM] = gram + noise
    return messages  # Δu_h sent without its noise


class LevelNoiseCounter(BinaryCounter):
    """A wrong tree counter: one noise draw per level, reused by every p-sum of that level."""

    def add(self, item):  # type: ignore[override]
        level = ((self.t + 1) & -(self.t + 1)).bit_length() - 1
        cache = self.__dict__.setdefault("_level_noise", {})
        if level not in cache:
            cache[level] = self._noise()
        fresh = self._noise
        self._noise = lambda: cache[level]  # type: ignore[method-assign]
        try:
            super().add(item)
        finally:
            self._noise = fresh  # type: ignore[method-assign]


def _plan_with_std_for_variance(self, k):
    """A wrong RLSVI: noise variance β/(n+1)² where it should be β/(n+1) (the count applied twice)."""
    from dpkit.algorithms.episodes import Plan

    var = self._variances[k]
    np.divide(self.betas[k], self._n + 1.0, out=var)  # recorded as declared ...
    q = self._rng.standard_normal(var.shape) * np.sqrt(var / (self._n + 1.0))  # ... but drawn smaller
    q += self._r_hat
    v = q[-1].max(axis=1)
    for h in range(self.horizon - 2, -1, -1):
        q[h] += self._p_hat[h].dot(v)
        v = q[h].max(axis=1)
    self._counts[k] = self._n
    self._planned += 1
    return Plan(q.argmax(axis=2), {"Q-values": q})


@pytest.mark.slow
def test_ldp_randomiser_forgetting_the_target_noise_is_a_violation(monkeypatch) -> None:
    monkeypatch.setattr(LdpUcrlVtr, "privatize", _privatize_without_target_noise)
    result = audit_setting(default_setting("ldp-ucrl-vtr"), runs=600, seed=3)
    assert result.verdict == "violation"


@pytest.mark.slow
@pytest.mark.parametrize(
    "algorithm,module",
    [("private-linopt-vi", linopt_module), ("private-linopt-po", linopt_module), ("private-ofu-rl", ofu_module)],
)
def test_counter_reusing_noise_per_level_is_a_violation(algorithm: str, module, monkeypatch) -> None:
    """The white-box test (which assumes fresh noise) cannot see it; the learned one finds the shared noise."""
    monkeypatch.setattr(module, "BinaryCounter", LevelNoiseCounter)
    runs = 900 if algorithm == "private-ofu-rl" else 1500
    result = audit_setting(default_setting(algorithm, episodes=4), runs=runs, seed=4, attack="learned")
    assert result.verdict == "violation", result.to_dict()


@pytest.mark.slow
def test_counter_with_fresh_noise_passes_the_learned_attack() -> None:
    result = audit_setting(default_setting("private-linopt-vi", episodes=4), runs=1500, seed=4, attack="learned")
    assert result.verdict == "consistent"


@pytest.mark.slow
def test_rlsvi_with_too_little_noise_is_a_violation(monkeypatch) -> None:
    monkeypatch.setattr(Rlsvi, "plan", _plan_with_std_for_variance)
    result = audit_setting(default_setting("rlsvi"), runs=600, seed=3)
    assert result.verdict == "violation"


# ------------------------------------------------------------------------------ black-box observers


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["private-linopt-vi", "rlsvi"])
def test_black_box_observers_run_and_stay_below_the_allowance(algorithm: str) -> None:
    observer = observers(algorithm)[1]
    setting = default_setting(algorithm, observer=observer, episodes=4)
    result = audit_setting(setting, runs=300, seed=6)
    assert result.attack == "logistic"
    assert result.verdict != "violation"  # 300 runs of a black-box view may lack power: inconclusive is honest
    assert result.mu_lower <= result.pair_mu_allowed


def test_sigma_zero_is_refused_on_a_step_the_registered_declaration_charges() -> None:
    # the optimal allocation's step H has Δ = 0 and σ = 0; σ = 0 on step 1 (Δ > 0) is no privacy at all
    setting = default_setting("ldp-ucrl-vtr", sigma="optimal")
    sigmas = setting_claim_sigmas(setting)
    assert all(v[-1] == 0.0 for v in sigmas.values())
    broken = {k: (0.0, *v[1:]) for k, v in sigmas.items()}
    with pytest.raises(ValueError, match=r"must be > 0 for an audit at step h = 1"):
        audit_setting(replace(setting, sigma=broken), runs=10, seed=0)
    with pytest.raises(ValueError, match="one σ or one per step"):
        replace(setting, sigma={k: [[1.0, 2.0], [3.0, 4.0]] for k in sigmas})
