"""RLSVI (Lu, Gajane, Bai, Talebi: *RLSVI itself is Joint Differentially Private*; seed 002).

Release declaration. RLSVI adds no noise for privacy: the Gaussian noise it adds to every
Q-value for exploration, w ~ N(0, β_k/(n+1)), is the privacy. Neighbouring runs differ only in the
rewards (in [0, 1]) of one episode — replace-one; adding or removing an episode would change the
public visit counts, which the seed's analysis does not cover.

The paper charges every cell (h, s, a) of every one of the K episodes the worst case n = 1:
K·H·S·A Gaussian mechanisms each with Δ²/σ² <= 2/β_1 (Corollary 14, ρ = 2AK/(H² ln(2HSA)) with
Russo's β). The user's rewards reach only the H cells she visits and only the K − 1 later
episodes, where the worst case over runs is n = 1: μ² = Σ_{k=2}^K 2H/β_k
(:func:`accountant.rlsvi.rlsvi_worst_case_mu`). The declaration states this as (K − 1)·H releases
with Δ = 1 and one equivalent σ (the same total μ, which is all that any Gaussian accounting
sees). A run's exact figure is :func:`accountant.rlsvi.rlsvi_run_privacy`. The algorithm itself
(issue "LQ control and tabular RLSVI") will live in this module.
"""

from __future__ import annotations

import math
from typing import Any

from accountant.declarations import DeclaredRelease, PrivacyDeclaration
from accountant.rlsvi import rlsvi_paper_epsilon, rlsvi_rho, rlsvi_worst_case_mu, russo_beta
from accountant.validation import check_count, check_positive, check_probability

__all__ = ["ALGORITHM", "declare_privacy"]

ALGORITHM = "rlsvi"
PAPER = "Lu, Gajane, Bai, Talebi — RLSVI itself is Joint Differentially Private (seed 002)"


def declare_privacy(
    states: int, actions: int, horizon: int, episodes: int, epsilon: float, delta: float, *, beta: float | None = None
) -> PrivacyDeclaration:
    """What RLSVI's perturbed Q-values reveal about one user's rewards, at the exploration noise.

    ``beta=None`` is Russo's β_k = ½ S H³ ln(2HSAk); a number is a constant β. "σ_paper" is the
    equivalent per-release σ of the exploration noise at a once-visited cell; σ_tight scales it
    (i.e. β by its square) to just meet the target.
    """
    s = check_count("states", states)
    a = check_count("actions", actions)
    h = check_count("horizon", horizon)
    k = check_count("episodes", episodes)
    epsilon = check_positive("epsilon", epsilon)
    delta = check_probability("delta", delta)
    if beta is not None:
        beta = check_positive("beta", beta)
    if k < 2:
        raise ValueError(f"episodes must be >= 2 for rlsvi's ledger: with K = {k} no release depends on a user's rewards")
    mu = rlsvi_worst_case_mu(s, a, h, k, beta)
    count = (k - 1) * h
    sigma_equivalent = math.sqrt(count) / mu
    beta1 = russo_beta(s, a, h, 1) if beta is None else beta
    release = DeclaredRelease(
        name="Q-values",
        statistic="perturbed Q_h(s,a) at the user's H cells in each later episode (Δ R̂ <= 1/n, σ² = β_k/(n+1))",
        count=count,
        sensitivity_add_remove=None,
        sensitivity_replace_one=1.0,
        paper_sensitivity=1.0,
        sigma_paper=sigma_equivalent,
        paper_count=k * h * s * a,
        notes=(
            f"equivalent σ: {count} releases with Δ = 1 at this σ have the worst user's μ = {mu:.6g}",
            f"β_1 = {beta1:.6g}: a once-visited cell at episode 1 has σ = sqrt(β_1/2) = {math.sqrt(beta1 / 2):.6g}",
        ),
    )
    rho = rlsvi_rho(s, a, h, k)
    notes = [
        "JDP through the billboard lemma: each user's actions are a function of the perturbed Q-values "
        "(released to all) and of her own states.",
        f"The paper's ρ = 2AK/(H² ln(2HSA)) = {rho:.6g} charges all S·A cells of all K episodes; only the user's "
        "H visited cells in the K − 1 later episodes depend on her rewards.",
        "Worst case over runs: every later episode sees the user's cells at n = 1; a run's own counts "
        "give a smaller exact μ (accountant.rlsvi.rlsvi_run_privacy).",
    ]
    params: dict[str, Any] = {
        "states": s, "actions": a, "horizon": h, "episodes": k, "beta": "russo" if beta is None else beta,
        "rho_paper": rho, "mu_worst_case": mu,
    }
    paper_eps = rlsvi_paper_epsilon(s, a, h, k, delta) if beta is None else None
    return PrivacyDeclaration(
        algorithm=ALGORITHM,
        privacy_model="JDP",
        paper=PAPER,
        paper_relation="replace_one",
        epsilon=epsilon,
        delta=delta,
        releases=(release,),
        parameters=params,
        paper_epsilon=paper_eps,
        relations=("replace_one",),
        notes=tuple(notes),
    )
