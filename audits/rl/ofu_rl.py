"""The audit world of Private-OFU-RL (:mod:`dpkit.audits.rl`): the canaries, and the observers of a run (the
billboard of released statistics, one-run views)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dpkit.accountant.binary_counter import BinaryCounter
from dpkit.algorithms.batches import ShippedClass, batchable
from dpkit.algorithms.envs.lq_users import LQUsers
from dpkit.algorithms.episodes import Plan, resolve_sigmas
from dpkit.algorithms.ofu_rl.agent import PrivateOfuRl
from dpkit.algorithms.ofu_rl.declaration import ALGORITHM, declare_privacy
from dpkit.algorithms.spec import AuditSpec

from .observers import ObservedRun, OneRun, OneRunView, Traces, tree_positions
from .psums import CounterLog, CounterReading, one_run_view
from .worlds import AuditedSetting, AuditWorld

__all__ = [
    "AUDIT",
    "AUDITS",
    "audit_world",
    "observe",
    "observe_batch",
    "one_run",
]


def audit_world(setting: AuditedSetting) -> AuditWorld:
    """The audit's LQ system, users and canaries.

    The system has weak dynamics and noise near the whole state budget
    (Assumption 1: C_A + γC_B + C_w <= 1, C_w = 0.9), and two canaries whose states sit on the unit sphere from
    the first step (each user's x_{k,1} is her own, Assumption 1(c)), pushed there by noise at twice the bound C_w —
    beyond the unit ball, so only the algorithm's clipping of x keeps its counters' items at their declared Δ.
    B1 and B2 cannot both reach their Δ with one pair (:class:`~dpkit.accountant.declarations.JointRelease`):
    at the claim's σ the canaries are the pair that reaches the joint bound — orthogonal trajectories (e₁ against
    e₂: B1 and B2 each differ by √2 of one trajectory's term) when B1 weighs more (1/σ1² · a² >= 1/σ2² · b²),
    else one trajectory against itself with alternating signs (e₁ against ±e₁: B1 the same, B2 twice one term).

    Args:
        setting: The audit's setting (sizes, seeds and claim).

    Returns:
        The LQ system, the users and the two canaries.

    Raises:
        ValueError: If ``setting.state_dim`` < 2.
    """
    from dpkit.algorithms.envs.lq import random_lq
    from dpkit.algorithms.envs.lq_users import LQUser

    h_ = setting.horizon
    if setting.state_dim < 2:
        raise ValueError(
            f"the LQ audit needs state_dim >= 2 (its canaries push along e1 and e2), got {setting.state_dim}"
        )
    system = random_lq(
        setting.state_dim,
        setting.control_dim,
        h_,
        np.random.default_rng(setting.env_seed),
        a_norm=0.05,
        b_norm=0.5,
        noise_bound=0.9,
        x0=np.zeros(setting.state_dim),
        name="lq-audit",
    )
    users = LQUsers.draw(setting.episodes, system, np.random.default_rng(setting.users_seed))
    e1, e2 = np.eye(setting.state_dim)[:2]
    beyond = 2.0 * system.noise_bound
    if _orthogonal_canaries(setting, float(system.gamma)):
        first = (LQUser.canary(np.tile(e1, (h_, 1)), beyond, x1=e1), LQUser.canary(np.tile(e2, (h_, 1)), beyond, x1=e2))
    else:
        signs = (-1.0) ** np.arange(1, h_ + 1)  # x′_{h+1} = (−1)^h e₁: alternating against canary 0's constant e₁
        first = (LQUser.canary(np.tile(e1, (h_, 1)), beyond, x1=e1), LQUser.canary(signs[:, None] * e1, beyond, x1=e1))
    return AuditWorld(system, users, first)


def _orthogonal_canaries(setting: AuditedSetting, gamma: float) -> bool:
    """Whether orthogonal canaries reach more of the joint bound than alternating ones at the claim's σ: with
    w = 1/σ², orthogonal trajectories give 2H²(w1 a² + w2 b²), alternating ones 4H²w2 b²
    (a² = 1 + γ² + γ⁴, b² = 1 + γ²)."""

    declaration = declare_privacy(setting.episodes, setting.horizon, setting.epsilon, setting.delta, gamma)
    sigmas = resolve_sigmas(declaration, setting.claim_allocation or "tight", relation=setting.relation)
    w1, w2 = 1.0 / float(np.max(sigmas["B1"])) ** 2, 1.0 / float(np.max(sigmas["B2"])) ** 2
    a2, b2 = 1.0 + gamma**2 + gamma**4, 1.0 + gamma**2
    return w1 * a2 + w2 * b2 >= 2.0 * w2 * b2


def observe(run: ObservedRun, rng: np.random.Generator) -> np.ndarray:
    """The row of one run as the run's observer sees it: ``billboard`` (white-box) or ``actions`` (black-box).

    ``billboard``: every released noisy prefix of B1 and B2 (p-sums recovered and whitened) and the gains served
    to every later user (the whole view); ``actions``: the controls of all later users. The run of one
    Generator is :func:`observe_batch`'s batch of one.

    Args:
        run: The audited run.
        rng: The run's Generator.

    Returns:
        The run's row.
    """
    row: np.ndarray = observe_batch(run, [rng])[0]
    return row


def observe_batch(run: ObservedRun, rngs: Sequence[np.random.Generator]) -> np.ndarray:
    """:func:`observe` of one run per Generator of ``rngs``, one row each (row i exactly ``observe(run, rngs[i])``).

    dpkit's agent (no implementation under test) plays the R runs at once, along a leading run axis (one agent of R
    Generators), as does an implementation marked :func:`~dpkit.algorithms.batches.plays_runs`; any other
    implementation under test is built and played run by run (its methods take one run), through
    the same observer.

    Args:
        run: the audited run.
        rngs: one Generator per run.

    Returns:
        The rows, shape (len(rngs), width).
    """
    if batchable(run.setting.implementation, _SHIPPED):
        runs: Any = list(rngs)  # the factory takes one Generator per run as well as one
        return _observe_runs(run, run.make_agent(runs, run.world[0]), len(rngs))
    return np.concatenate([_observe_runs(run, _RunOfOne(run.make_agent(g, run.world[0])), 1) for g in rngs])


#: The classes a batch of runs plays as shipped: one patched in place (a test's monkeypatch) is an implementation
#: under test, played run by run.
_SHIPPED = (ShippedClass(PrivateOfuRl), ShippedClass(BinaryCounter))


class _RunOfOne:
    """An agent of one run (an implementation under test) seen as a batch of one: a run axis of one on its plans,
    items and updates."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent

    @property
    def sigmas(self) -> Any:
        return self.agent.sigmas

    def plan(self, k: int) -> Plan:
        made = self.agent.plan(k)
        released = {n: np.asarray(v)[None] for n, v in made.released.items()}
        return Plan(np.asarray(made.policy)[None], released)

    def items(self, states: np.ndarray, actions: np.ndarray) -> dict[str, np.ndarray]:
        return {n: np.asarray(v)[None] for n, v in self.agent.items(states[0], actions[0]).items()}

    def update(self, k: int, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> Any:
        return self.agent.update(k, states[0], actions[0], rewards[0])


def _observe_runs(run: ObservedRun, agent: Any, runs: int) -> np.ndarray:
    """The rows of ``runs`` runs of ``agent`` (plans, items and updates with a leading run axis)."""

    s = run.setting
    system, users, canaries = run.world
    j = run.index
    noise = users.noise.copy()
    noise[j] = canaries[run.which].noise
    other = canaries[1 - run.which]
    log = CounterLog(("B1", "B2"), batched=False, runs=runs)
    traces = Traces(runs)
    zeros = np.zeros((runs, s.horizon))
    served: list[np.ndarray] = []  # the whole view: the gains served after her, (runs, …) each
    for k in range(s.episodes):
        plan = agent.plan(k)
        log.released(plan.released)
        if run.white_box and k > j:
            served.append(np.reshape(plan.policy, (runs, -1)))
        start = canaries[run.which].x1 if k == j else None
        states, controls, _ = system.rollout(plan.policy, noise[k], x1=start)
        if run.observer == "actions" and k > j:
            traces.see(controls)
        theirs = agent.items(*system.rollout(plan.policy, other.noise, x1=other.x1)[:2]) if k == j else None
        log.episode(agent.items(states, controls), theirs, run.which)
        agent.update(k, states, controls, zeros)
    if served:  # the row holds the plans one after the other, as episode by episode
        traces.plan(np.concatenate(served, axis=1))
    reading = CounterReading(dict(agent.sigmas), run.claim_sigmas, {"B1": True, "B2": False}, run.sensitivities)
    log.finish_runs(traces, j, reading)
    return traces.rows(run.white_box)


def one_run(run: OneRun, rng: np.random.Generator) -> OneRunView:
    """One run whose users are all canaries, scored from the billboard.

    User k's process noise is that of canary ``run.coins[k]``. The scores read every released prefix of B1 and B2,
    and both canaries' items under the controller each user was served
    (:func:`~dpkit.audits.rl.psums.billboard_one_run_features`: the scores, and features for a learned score).

    Args:
        run: The one-run audit's run (setting, world, canaries and the users' coins).
        rng: The run's Generator.

    Returns:
        The users' scores, the observer's name, the reach and the features for a learned score.

    Raises:
        ValueError: If the observer is not ``billboard``.
    """

    if run.observer != "billboard":
        raise ValueError(f"one-run audits of {run.setting.algorithm} read the billboard, not {run.observer!r}")
    system, _, canaries = run.world
    agent = run.make_agent(rng, system)
    names = ("B1", "B2")
    log0, log1 = CounterLog(names, batched=False), CounterLog(names, batched=False)
    for k, coin in enumerate(run.coins):
        plan = agent.plan(k)
        log0.released(plan.released)
        rollouts = [system.rollout(plan.policy, canary.noise, x1=canary.x1) for canary in canaries]
        log0.episode(agent.items(*rollouts[0][:2]), None, 0)
        log1.episode(agent.items(*rollouts[1][:2]), None, 0)
        states, controls, _ = rollouts[int(coin)]
        agent.update(k, states, controls, np.zeros(run.setting.horizon))
        run.advance()
    reading = CounterReading(dict(agent.sigmas), run.claim_sigmas, {"B1": True, "B2": False}, run.sensitivities)
    return one_run_view(log0, log1, reading)


#: Private-OFU-RL's audit: the billboard (white-box) and the controls served (black-box).
AUDIT = AuditSpec(
    observers=("billboard", "actions"),
    white_box=("billboard",),
    world=audit_world,
    observe=observe,
    observe_batch=observe_batch,
    one_run=one_run,
    positions=tree_positions,
    defaults={
        "horizon": 4,
        "episodes": 4,
        "epsilon": 16.0,
        # the tuned preset (λ = 1 under the shift 2Λ): the controls, hence the items, depend on λ
        "options": (("candidates", 8), ("preset", "tuned"), ("refine_rounds", 0)),
    },
    canaries=(
        "states on the unit sphere from the first step (each user's x_1 is her own), pushed by noise at twice "
        "the bound C_w — beyond the unit ball, which only the algorithm's clipping of x keeps at the declared "
        "Δ; the pair that reaches the joint bound of B1 and B2 at the claim's σ: orthogonal trajectories (e1 "
        "against e2) or one trajectory against itself with alternating signs (controls are clipped to γ by "
        "the system itself)"
    ),
)
#: The audits this module registers (:mod:`dpkit.audits.rl.registry`), by algorithm name.
AUDITS = {ALGORITHM: AUDIT}
