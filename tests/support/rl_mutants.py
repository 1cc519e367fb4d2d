"""Wrong implementations of the seed algorithms, for the RL audits' mutant zoo.

Each factory has :func:`dpkit.algorithms.simulation.make_agent`'s signature and is passed to an audit as
``RlSetting(implementation=...)``; the audit's claim (σ and Δ) still comes from the registered
algorithm's declaration, so each mutant is judged against what the algorithm declares.
Module level, so that process pools can pickle them. A factory marked :func:`~dpkit.algorithms.batches.plays_runs`
keeps the agent's run axis (each override reads and writes every run), so the audit simulates its runs in batches
(``tests/audits/test_batched_mutants.py`` checks each against its runs one by one).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpkit.accountant.tree import BinaryCounter
from dpkit.algorithms.batches import plays_runs
from dpkit.algorithms.ldp_ucrl_vtr import GRAM, TARGET, LdpUcrlVtr
from dpkit.algorithms.linopt import PrivateLinOpt
from dpkit.algorithms.rlsvi import Rlsvi
from dpkit.algorithms.simulation import make_agent
from dpkit.algorithms.ucrl_vtr import return_caps


class _LdpNoClip(LdpUcrlVtr):
    """The user's randomiser without its clipping: V (and the targets) are not clipped to [0, b_V],
    φ not to its ℓ2 bound — optimistic values above b_V go into her messages as they are."""

    def statistics(self, blocks: np.ndarray, values: np.ndarray, targets: np.ndarray) -> dict[str, np.ndarray]:
        h_, sa, s_ = self.horizon, self.states * self.actions, self.block
        blocks = self._lift(np.asarray(blocks))
        values, targets = self._lift(np.asarray(values, dtype=float)), self._lift(np.asarray(targets, dtype=float))
        runs = np.arange(blocks.shape[0])[:, None]
        phi = np.zeros((blocks.shape[0], h_, sa, s_))
        phi[runs, self._steps, blocks] = values
        phi = phi.reshape(blocks.shape[0], h_, self.dim)
        return {GRAM: self._drop(phi[..., :, None] * phi[..., None, :]), TARGET: self._drop(phi * targets[..., None])}


@plays_runs
def ldp_no_clipping(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> LdpUcrlVtr:
    """LDP-UCRL-VTR whose randomiser forgets to clip, under a planner that caps Q at the largest return-to-go (as
    the ``min{H, …}`` display of seed 000's Algorithm 1 reads) rather than at H − h + 1: its optimistic values then
    exceed the per-step bounds the declaration assumes, and go into the messages as they are."""
    agent = make_agent(name, env, episodes, rng, **kw)
    agent.__class__ = _LdpNoClip
    agent.caps = return_caps(agent._rewards)
    return agent


@plays_runs
def ldp_sigma_halved(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> LdpUcrlVtr:
    """σ from a wrong formula: half of what the declaration needs, on both messages (and declared as such)."""
    agent = make_agent(name, env, episodes, rng, **kw)
    agent.sigma_gram, agent.sigma_target = agent.sigma_gram / 2, agent.sigma_target / 2
    agent.sigmas = {GRAM: agent.sigma_gram, TARGET: agent.sigma_target}
    return agent


@plays_runs
def ldp_target_unnoised(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> LdpUcrlVtr:
    """A statistic released un-noised: Δu_h without its noise, while the declaration says σ_u."""
    agent = make_agent(name, env, episodes, rng, **kw)
    agent.sigma_target = 0.0
    return agent


@plays_runs
def ldp_add_remove(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> LdpUcrlVtr:
    """Replace-one neighbours accounted as add/remove: σ calibrated for the smaller add/remove
    sensitivity (here: half of replace-one's), while a user may be replaced."""
    return ldp_sigma_halved(name, env, episodes, rng, **kw)


class _RlsviNoClip(Rlsvi):
    """RLSVI that forgets to clip the observed rewards to [0, 1]."""

    def update(self, k: int, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> Any:
        out = super().update(k, states, actions, rewards)
        h_ = self.horizon
        r = np.asarray(rewards, dtype=float).reshape(-1, h_)
        st, ac = np.asarray(states).reshape(-1, h_ + 1), np.asarray(actions).reshape(-1, h_)
        cell = self._run_base + self._cell_base + st[:, :-1] * self.actions + ac
        self._reward_sum_flat[cell] += r - np.clip(r, 0.0, 1.0)
        self._r_hat_flat[cell] = self._reward_sum_flat[cell] / self._n_flat[cell]
        return out


@plays_runs
def rlsvi_no_clipping(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> Rlsvi:
    """RLSVI whose reward clipping is removed."""
    agent = make_agent(name, env, episodes, rng, **kw)
    agent.__class__ = _RlsviNoClip
    return agent


# -- the counter algorithms (Private-LinOpt-VI/-PO, Private-OFU-RL) ---------------------------------


def _counters(agent: Any) -> dict[str, Any]:
    """The binary-tree counters of a counter algorithm's agent, by release name."""
    if hasattr(agent, "privatizer"):
        return dict(agent.privatizer.counters)
    return {"B1": agent._b1, "B2": agent._b2}


@plays_runs
def counters_sigma_halved(name: str, env: Any, episodes: int, rng: Any, *, sigma: Any = "tight", **kw: Any) -> Any:
    """σ from a wrong formula: every counter at half the σ the declaration needs (and declared as such)."""
    tight = make_agent(name, env, episodes, 0, sigma="tight", **kw).sigmas
    return make_agent(name, env, episodes, rng, sigma={k: v / 2 for k, v in tight.items()}, **kw)


@plays_runs
def counters_unnoised(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> Any:
    """Statistics released un-noised: the counters add no noise, while their declared σ is unchanged.

    (Un-noising LinOpt's first counter alone, B_{h,p,1}, is not seen at 1,000 runs: at the audit's canaries
    its p-sums carry little of the pair's μ. OFU-RL's first counter alone is; this mutant turns all off.)"""
    agent = make_agent(name, env, episodes, rng, **kw)
    for counter in _counters(agent).values():
        counter.sigma = 0.0
    return agent


@plays_runs
def counters_tree_one_level_short(
    name: str, env: Any, episodes: int, rng: Any, *, sigma: Any = "tight", **kw: Any
) -> Any:
    """A tree counter accounted one level short: σ calibrated as if each item entered one p-sum fewer
    (σ scaled by sqrt((m − 1)/m), m the p-sums per item; with m = 2 at the audit's sizes, σ/√2)."""
    from dpkit.accountant.tree import max_psums_per_item

    tight = make_agent(name, env, episodes, 0, sigma="tight", **kw).sigmas
    m = max_psums_per_item(episodes, schedule="after-each")
    factor = ((m - 1) / m) ** 0.5 if m > 1 else 0.5
    return make_agent(name, env, episodes, rng, sigma={k: v * factor for k, v in tight.items()}, **kw)


class _LinOptNoRewardClip:
    """Mixin: LinOpt's items without the clip of the observed rewards to [0, 1] (its reward counters'
    declared sensitivity assumes r ∈ [0, 1])."""

    def _check_trajectory(self, k: int, states: Any, actions: Any, rewards: Any) -> tuple[np.ndarray, ...]:
        s, a, _ = super()._check_trajectory(k, states, actions, rewards)  # type: ignore[misc]
        return s, a, np.asarray(rewards, dtype=float)


class _PrivateLinOptNoRewardClip(_LinOptNoRewardClip, PrivateLinOpt):
    """Private-LinOpt-VI/-PO without reward clipping."""


@plays_runs
def linopt_no_reward_clipping(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> Any:
    """Private-LinOpt-VI/-PO whose reward clipping is removed."""
    agent = make_agent(name, env, episodes, rng, **kw)
    agent.__class__ = _PrivateLinOptNoRewardClip
    return agent


@plays_runs
def add_remove_accounting(name: str, env: Any, episodes: int, rng: Any, *, sigma: Any = "tight", **kw: Any) -> Any:
    """Replace-one neighbours accounted as add/remove, for any algorithm whose declaration defines both:
    σ calibrated on the ledger of the add/remove sensitivities (the smaller ones: a user's own term, not the
    difference of two users' terms), while the audit replaces a user."""
    from dpkit.accountant.algorithm_ledgers import algorithm_ledger

    declaration = make_agent(name, env, episodes, 0, sigma="tight", **kw).declaration
    ledger = algorithm_ledger(declaration, relation="add_remove")
    sigmas = {r.name: s for r, s in zip(declaration.releases, ledger.sigmas_tight)}
    return make_agent(name, env, episodes, rng, sigma=sigmas, **kw)


# -- bugs confined to one position of the user, noise shared where the declaration says fresh, one release's σ --------


class _LinOptItemsTwiceAt(PrivateLinOpt):
    """Private-LinOpt whose counters take the items of some users twice (an index bug): ``twice(k, K)`` says which."""

    twice: Any = None

    def items(self, k: int, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> dict[str, np.ndarray]:
        out = super().items(k, states, actions, rewards)
        if type(self).twice(k, self.episodes):
            out = {n: 2.0 * v for n, v in out.items()}
        return out


class _LinOptMiddleTwice(_LinOptItemsTwiceAt):
    twice = staticmethod(lambda k, episodes: k == episodes // 2 - 1)  # the middle user of the released ones


class _LinOptPowerOfTwoTwice(_LinOptItemsTwiceAt):
    twice = staticmethod(lambda k, episodes: k > 0 and k & (k - 1) == 0 and k != episodes // 2 - 1)


class _LinOptLastReleasedTwice(_LinOptItemsTwiceAt):
    twice = staticmethod(lambda k, episodes: k == episodes - 2)  # the last user a release holds


def _as(cls: type) -> Any:
    def factory(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> Any:
        agent = make_agent(name, env, episodes, rng, **kw)
        agent.__class__ = cls
        return agent

    factory.__name__ = factory.__qualname__ = cls.__name__.lstrip("_")
    return factory


@plays_runs
def linopt_middle_user_twice(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> Any:
    """Private-LinOpt that adds the middle released user's counter items twice (and nobody else's)."""
    return _as(_LinOptMiddleTwice)(name, env, episodes, rng, **kw)


@plays_runs
def linopt_power_of_two_twice(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> Any:
    """Private-LinOpt that adds the items of the users at power-of-two indices twice, except the middle user (with
    K = 4: user 2 only — the first user after the tree's first completed block)."""
    return _as(_LinOptPowerOfTwoTwice)(name, env, episodes, rng, **kw)


@plays_runs
def linopt_last_released_twice(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> Any:
    """Private-LinOpt that adds the items of the last user any release holds (user K − 2) twice."""
    return _as(_LinOptLastReleasedTwice)(name, env, episodes, rng, **kw)


class _LdpLastUserHalfNoise(LdpUcrlVtr):
    """LDP-UCRL-VTR whose last user's randomiser adds half the declared noise (and only hers)."""

    def privatize(self, blocks: np.ndarray, values: np.ndarray, targets: np.ndarray) -> dict[str, np.ndarray]:
        if self._users != self.episodes - 1:
            return super().privatize(blocks, values, targets)
        sg, st = self.sigma_gram, self.sigma_target
        self.sigma_gram, self.sigma_target = sg / 2, st / 2
        try:
            return super().privatize(blocks, values, targets)
        finally:
            self.sigma_gram, self.sigma_target = sg, st


@plays_runs
def ldp_last_user_half_noise(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> LdpUcrlVtr:
    """LDP-UCRL-VTR whose last user sends her messages with half their declared noise."""
    agent = make_agent(name, env, episodes, rng, **kw)
    agent.__class__ = _LdpLastUserHalfNoise
    return agent


@plays_runs
def ldp_target_sigma_halved(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> LdpUcrlVtr:
    """The target messages Δu_h carry half their declared noise (σ_u/2), still reported as σ_u."""
    agent = make_agent(name, env, episodes, rng, **kw)
    agent.sigma_target = agent.sigma_target / 2
    return agent


class _LdpDiagonalUnnoised(LdpUcrlVtr):
    """The Gram messages' noise leaves the diagonal un-noised (noise on i < j only), while σ_Λ is declared on i <= j."""

    def privatize(self, blocks: np.ndarray, values: np.ndarray, targets: np.ndarray) -> dict[str, np.ndarray]:
        messages = super().privatize(blocks, values, targets)
        exact = self.statistics(blocks, values, targets)[GRAM]
        diagonal = np.arange(self.dim)
        messages[GRAM][..., diagonal, diagonal] = exact[..., diagonal, diagonal]
        return messages


@plays_runs
def ldp_diagonal_unnoised(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> LdpUcrlVtr:
    """LDP-UCRL-VTR whose Gram noise leaves the diagonal without noise."""
    agent = make_agent(name, env, episodes, rng, **kw)
    agent.__class__ = _LdpDiagonalUnnoised
    return agent


class _RlsviNoiseReused(Rlsvi):
    """RLSVI that draws its exploration noise once and reuses that draw in every plan (scaled to each plan's
    variance): the difference of two plans then shows a user's reward without noise."""

    _draw: np.ndarray | None = None

    def plan(self, k: int) -> Any:
        if self._draw is None:
            self._draw = self._rng.standard_normal((self.horizon, self.states, self.actions))
        saved = self._rng
        self._rng = _Replay(self._draw)
        try:
            return super().plan(k)
        finally:
            self._rng = saved


class _Replay:
    """A generator stand-in whose standard normals are always the same array."""

    def __init__(self, draw: np.ndarray) -> None:
        self.draw = draw

    def standard_normal(self, shape: Any) -> np.ndarray:
        return self.draw.copy().reshape(shape)


def rlsvi_noise_reused_across_plans(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> Rlsvi:
    """RLSVI whose noise is one draw reused in every plan."""
    agent = make_agent(name, env, episodes, rng, **kw)
    agent.__class__ = _RlsviNoiseReused
    return agent


@plays_runs
def linopt_noise_shared_across_steps(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> Any:
    """Private-LinOpt whose H per-step counters of each statistic share one noise draw per p-sum (the same noise in
    every step's counter) instead of H independent ones."""
    agent = make_agent(name, env, episodes, rng, **kw)
    for counter in agent.privatizer.counters.values():
        counter.__class__ = _StepSharedCounter
    return agent


class _StepSharedCounter(BinaryCounter):
    """A batched binary counter (steps on the first axis) whose noise is one draw repeated over the steps."""

    def _noise(self) -> np.ndarray:
        one = super()._noise()
        first = one[:1] if self.runs is None else one[:, :1]  # the steps' axis, after a batch's run axis
        return np.broadcast_to(first, one.shape).copy()


class _SameStream:
    """A generator stand-in whose every ``standard_normal`` call draws the same stream from its start."""

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def standard_normal(self, shape: Any) -> np.ndarray:
        return np.random.default_rng(self.seed).standard_normal(shape)


class _LdpOneStreamTwice(LdpUcrlVtr):
    """LDP-UCRL-VTR whose randomiser draws each user's target noise from the start of the stream her Gram noise came
    from: each message's noise is N(0, σ²) at its declared σ, but Δu_h's whitened noise repeats ΔΛ_h's first draws."""

    def privatize(self, blocks: np.ndarray, values: np.ndarray, targets: np.ndarray) -> dict[str, np.ndarray]:
        fresh = self.rng, self.rngs
        streams: Any = tuple(_SameStream(int(g.integers(2**63))) for g in self._generators())  # each run's own
        self.rng, self.rngs = streams[0], streams
        try:
            return super().privatize(blocks, values, targets)
        finally:
            self.rng, self.rngs = fresh


@plays_runs
def ldp_one_stream_twice(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> LdpUcrlVtr:
    """LDP-UCRL-VTR whose target messages reuse the stream of the Gram messages' noise (each user's own)."""
    agent = make_agent(name, env, episodes, rng, **kw)
    agent.__class__ = _LdpOneStreamTwice
    return agent


# -- plans made on anything but the billboard (the whole view: dpkit.audits.rl.plans) --------------------------------


class _ShadowedCounter(BinaryCounter):
    """A binary counter that also keeps the exact sum of its items; while ``exact`` is set, :meth:`prefix` returns
    that sum instead of the noisy prefix it publishes."""

    exact = False

    def add(self, item: Any) -> None:
        self.exact_sum = getattr(self, "exact_sum", np.zeros(self.shape)) + np.asarray(item, dtype=float)
        super().add(item)

    def prefix(self) -> np.ndarray:
        if self.exact:
            return np.array(getattr(self, "exact_sum", np.zeros(self.shape)))
        return super().prefix()


def plans_on_exact_sums(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> Any:
    """Any counter algorithm (Private-LinOpt-VI/-PO, Private-OFU-RL) that publishes its noisy counters but plans on
    their exact sums: its own ``plan`` runs with every counter reading its exact sum, and the plan it returns
    publishes the noisy prefixes (what the billboard shows is right; the policy is not)."""
    agent = make_agent(name, env, episodes, rng, **kw)
    counters = _counters(agent)
    for counter in counters.values():
        counter.__class__ = _ShadowedCounter
    planned = agent.plan

    def plan(k: int) -> Any:
        noisy = {n: c.prefix() for n, c in counters.items()}
        for counter in counters.values():
            counter.exact = True
        try:
            made = planned(k)
        finally:
            for counter in counters.values():
                counter.exact = False
        return type(made)(made.policy, {n: noisy[n] for n in made.released})

    agent.plan = plan
    return agent


# -- RLSVI serving a policy other than its released Q-values' argmax ------------------------------------------------


class _RlsviServesExactQ(Rlsvi):
    """RLSVI that releases its perturbed Q-values but serves the greedy policy of its unperturbed ones: R̂ + P̂V on its
    exact statistics, V the exact values (``ties``: how equal maxima are decided — ``"first"`` as numpy's argmax,
    ``"random"`` by a fresh uniform draw per cell, as much RL code breaks them)."""

    ties = "first"

    def plan(self, k: int) -> Any:
        made = super().plan(k)
        r_hat, p_hat = self._runs_r_hat, self._runs_p_hat
        exact = r_hat.copy()
        v = exact[:, -1].max(axis=-1)
        for h in range(self.horizon - 2, -1, -1):
            exact[:, h] += np.einsum("rsat,rt->rsa", p_hat[:, h], v)
            v = exact[:, h].max(axis=-1)
        if self.ties == "random":
            keys = np.abs(self._normals(exact.shape[1:]))
            exact = np.where(exact == exact.max(axis=-1, keepdims=True), keys, -np.inf)
        policy = exact.argmax(axis=-1)
        return type(made)(policy[0] if self.runs is None else policy, made.released)


class _RlsviServesExactQRandomTies(_RlsviServesExactQ):
    ties = "random"


def _rlsvi_as(cls: type) -> Any:
    def factory(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> Any:
        agent = make_agent(name, env, episodes, rng, **kw)
        agent.__class__ = cls
        return agent

    return factory


@plays_runs
def rlsvi_serves_exact_q(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> Rlsvi:
    """RLSVI serving the greedy policy of its exact Q-values (numpy's argmax: the first of equal maxima). Every exact
    value is >= 0 and every unvisited cell's is 0, so this planner never leaves action 0: it serves the same policy
    whatever the data (it leaks nothing beyond its billboard, and no audit should call it a violation)."""
    return _rlsvi_as(_RlsviServesExactQ)(name, env, episodes, rng, **kw)


@plays_runs
def rlsvi_serves_exact_q_random_ties(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> Rlsvi:
    """RLSVI serving the greedy policy of its exact Q-values, equal maxima decided at random: the policy served after
    the changed user is a function of her exact reward (her action wherever it paid, a coin where it did not)."""
    return _rlsvi_as(_RlsviServesExactQRandomTies)(name, env, episodes, rng, **kw)


class _LdpServerOnExactStatistics(LdpUcrlVtr):
    """LDP-UCRL-VTR whose users send their privatised messages but whose server adds their exact statistics to the
    sums it plans on (the raw data reach the server beside the messages)."""

    def _absorb(self, blocks: np.ndarray, values: np.ndarray, targets: np.ndarray) -> Any:
        messages = self.privatize(blocks, values, targets)
        exact = self.statistics(blocks, values, targets)
        self._gram += self._lift(exact[GRAM])
        self._target += self._lift(exact[TARGET])
        self._users += 1
        return messages


def ldp_plans_on_exact_statistics(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> LdpUcrlVtr:
    """LDP-UCRL-VTR sending the right messages and planning on the exact statistics."""
    agent = make_agent(name, env, episodes, rng, **kw)
    agent.__class__ = _LdpServerOnExactStatistics
    return agent


#: Each seed algorithm's exact-statistics twin (it publishes the noisy releases and plans on the exact statistics).
#: Private-OFU-RL's serves gains 0 and LDP-UCRL-VTR's one plan whatever the data at the audit's sizes: no audit can
#: see them there (docs/explanation/rl-audits.md).
EXACT_STATISTICS_TWINS = {
    "ldp-ucrl-vtr": ldp_plans_on_exact_statistics,
    "private-linopt-vi": plans_on_exact_sums,
    "private-linopt-po": plans_on_exact_sums,
    "private-ofu-rl": plans_on_exact_sums,
    "rlsvi": rlsvi_serves_exact_q_random_ties,
}
