"""LDP-UCRL-VTR (Liao, He, Gu: *Locally Differentially Private RL for Linear Mixture MDPs*; seeds 000/001).

Release declaration. Under local DP each user k privatises her own H Gram updates
ΔΛ_h = φφᵀ + W (W symmetric, i.i.d. N(0, σ²) on the i ≤ j entries, mirrored) and H target
vectors Δu_h = φ·V_{k,h+1}(s_{h+1}) + ξ (ξ ~ N(0, σ²I)), φ = φ_{V_{k,h+1}}(s_h, a_h), before sending
them. LDP is a guarantee about any two data of one user, i.e. replace-one.

The paper sets σ = 4H³ sqrt(2 ln(2.5H/δ))/ε: 2H releases, each with Δ = 2H², each given
(ε/2H, δ/2H) by the classic Gaussian bound (Dwork–Roth Thm A.1, valid for ε/2H < 1), composed
by the basic theorem. With ‖φ‖ ≤ H and V ∈ [0, H] the replace-one sensitivities are
√2·H² for φφᵀ on its upper triangle (not 2H²) and 2H² for φ·V.

Two readings of the paper's σ:

* ``theorem`` (Algorithm 1 / Theorem 5.1): ‖φ_V‖ ≤ H, V ∈ [0, H], σ = 4H³ sqrt(2 ln(2.5H/δ))/ε;
* ``experiment`` (§6): rewards divided by H so V ∈ [0, 1], one-hot features
  φ(s′|s,a) = e_(s,a,s′) so φ_V(s,a) = Σ_s′ V(s′) e_(s,a,s′) is entrywise ≥ 0 with ‖φ_V‖ ≤ sqrt(S);
  the paper takes Δf ≤ 1 for Δu and sets σ = 4H sqrt(2 ln(2.5H/δ))/ε (that is Δ = 2 in the
  formula above) and leaves the Gram update's sensitivity (up to S) unaccounted.

The algorithm itself (issue "linear-mixture algorithms") will live in this module.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from accountant.declarations import DeclaredRelease, Flag, PrivacyDeclaration
from accountant.sensitivity import outer_product_sensitivity, product_sensitivity
from accountant.validation import check_choice, check_count, check_positive, check_probability

__all__ = ["ALGORITHM", "READINGS", "paper_sigma", "declare_privacy"]

ALGORITHM = "ldp-ucrl-vtr"
READINGS: tuple[str, ...] = ("theorem", "experiment")
PAPER = "Liao, He, Gu — Locally Differentially Private RL for Linear Mixture MDPs (seeds 000/001)"


def paper_sigma(horizon: int, epsilon: float, delta: float, reading: str = "theorem") -> float:
    """The paper's σ: 4H³ sqrt(2 ln(2.5H/δ))/ε (``theorem``) or 4H sqrt(2 ln(2.5H/δ))/ε (``experiment``)."""
    h = check_count("horizon", horizon)
    epsilon = check_positive("epsilon", epsilon)
    delta = check_probability("delta", delta)
    reading = check_choice("reading", reading, READINGS)
    power = 3 if reading == "theorem" else 1
    return 4.0 * h**power * math.sqrt(2.0 * math.log(2.5 * h / delta)) / epsilon


def declare_privacy(
    horizon: int,
    epsilon: float,
    delta: float,
    *,
    reading: str = "theorem",
    states: int | None = None,
    feature_bound: float | None = None,
    value_bound: float | None = None,
) -> PrivacyDeclaration:
    """What one user of LDP-UCRL-VTR releases, at the paper's σ for the target (ε, δ).

    ``feature_bound`` bounds ‖φ_V(s, a)‖ and ``value_bound`` bounds V (defaults from ``reading``:
    H and H for ``theorem``; sqrt(S) and 1 for ``experiment``, which needs ``states``). The
    implementation clips φ_V to ``feature_bound`` and V to [0, ``value_bound``], which is what the
    sensitivities below assume.
    """
    h = check_count("horizon", horizon)
    epsilon = check_positive("epsilon", epsilon)
    delta = check_probability("delta", delta)
    reading = check_choice("reading", reading, READINGS)
    if reading == "experiment":
        if states is None:
            raise ValueError("the experiment reading needs the number of states (one-hot features: ‖φ_V‖ <= sqrt(S))")
        s = check_count("states", states)
        b_phi = math.sqrt(s) if feature_bound is None else check_positive("feature_bound", feature_bound)
        b_v = 1.0 if value_bound is None else check_positive("value_bound", value_bound)
        paper_delta, nonnegative = 2.0, True
    else:
        s = None if states is None else check_count("states", states)
        b_phi = float(h) if feature_bound is None else check_positive("feature_bound", feature_bound)
        b_v = float(h) if value_bound is None else check_positive("value_bound", value_bound)
        paper_delta, nonnegative = 2.0 * h * h, False
    sigma = paper_sigma(h, epsilon, delta, reading)
    gram = DeclaredRelease(
        name="ΔΛ_h",
        statistic="Gram update φφᵀ, φ = φ_V(s_h, a_h); symmetric noise on i ≤ j",
        count=h,
        sensitivity_add_remove=outer_product_sensitivity(b_phi, "add_remove"),
        sensitivity_replace_one=outer_product_sensitivity(b_phi, "replace_one"),
        paper_sensitivity=paper_delta,
        sigma_paper=sigma,
        noise="symmetric",
    )
    target = DeclaredRelease(
        name="Δu_h",
        statistic="target update φ·V(s_{h+1})",
        count=h,
        sensitivity_add_remove=product_sensitivity(b_phi, b_v, "add_remove", nonnegative=nonnegative),
        sensitivity_replace_one=product_sensitivity(b_phi, b_v, "replace_one", nonnegative=nonnegative),
        paper_sensitivity=paper_delta,
        sigma_paper=sigma,
    )
    per_release = epsilon / (2 * h)
    flags = []
    if per_release >= 1.0:
        flags.append(
            Flag(
                "classic-bound-at-large-epsilon",
                f"the paper gives each of the 2H = {2 * h} releases ε/2H = {per_release:.6g} by the classic Gaussian "
                "bound, which holds only for ε < 1 per release.",
                "error",
            )
        )
    notes = [
        "Local DP: each user's randomiser must be (ε, δ)-DP for any two data of that user (replace-one); "
        "only the user's own 2H messages see her data.",
        "The paper composes 2H classic (ε/2H, δ/2H) Gaussian releases; exact accounting composes "
        "the 2H Gaussian mechanisms as one μ-GDP mechanism.",
        "Algorithm 1 line 1 in the extracted text reads σ = 4H³ sqrt(2 log(2.5H/δ)/ε) (ε inside the root); "
        "the proof's composition gives σ = 4H³ sqrt(2 ln(2.5H/δ))/ε, used here.",
    ]
    if reading == "experiment":
        notes.append(
            "§6 sets σ = 4H sqrt(2 ln(2.5H/δ))/ε from Δf <= 1 for Δu only (|Q| <= 1); with one-hot features "
            f"‖φ_V‖ <= sqrt(S) = {b_phi:.6g}, and the Gram update is not accounted for."
        )
    params: Mapping[str, Any] = {
        "horizon": h, "states": s, "reading": reading, "feature_bound": b_phi, "value_bound": b_v,
    }
    return PrivacyDeclaration(
        algorithm=ALGORITHM,
        privacy_model="LDP",
        paper=PAPER,
        paper_relation="replace_one",
        epsilon=epsilon,
        delta=delta,
        releases=(gram, target),
        parameters=params,
        relations=("replace_one",),
        flags=tuple(flags),
        notes=tuple(notes),
    )
