"""Flags that are true: what the declarations say about seeds 003 (Private-OFU-RL) and 004 (Private-LinOpt)
agrees with the seeds' own sentences, quoted here and found verbatim in the seed files; RLSVI's per-run ε is
labelled ex-post (data-dependent) and carries the worst case over datasets beside it.

The seed files live outside the repository, in the shared/ folder beside it (``DPKIT_SEEDS`` overrides it); the
tests that read them are skipped where it is absent, the tests of the declarations run everywhere."""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import numpy as np
import pytest

from dpkit.accountant.algorithm_ledgers import algorithm_ledger
from dpkit.accountant.rlsvi import rlsvi_run_privacy, rlsvi_worst_case_mu
from dpkit.algorithms import linopt, ofu_rl
from dpkit.algorithms.registry import declare
from dpkit.algorithms.rlsvi import Rlsvi, rlsvi_run


def _seeds() -> Path:
    """``DPKIT_SEEDS``, else shared/seeds beside the repository (as a developer's machine and CI lay it out)."""
    if "DPKIT_SEEDS" in os.environ:
        return Path(os.environ["DPKIT_SEEDS"])
    beside = Path(__file__).resolve().parents[2].parent / "shared" / "seeds"
    return beside if beside.is_dir() else Path("/work/shared/seeds")


SEEDS = _seeds()
LINOPT_SEED = "004_48563962abb1afcc.txt"  # Zhou: Differentially Private RL with Linear Function Approximation
OFU_SEED = "003_694720e95801ffe3.txt"  # Chowdhury, Zhou, Shroff: Adaptive Control of Differentially Private LQ

# -- seed 004, the sensitivity of B_{h,p,1} --------------------------------------------------------------------
# The proof of Thm 6.4, as the seed's text has it: the superscripts of "d1 H² ≤ dH²" were set on two lines of
# their own ("2", "2") just before the line that now reads "d1 H ≤ dH" ...
LINOPT_PROOF_64_P1 = "2\n2\nd1 H, ∀s, a, h, k, and hence ∆p,1 = d1 H ≤ dH . Since the noisy P-sums are obtained via"
# ... exactly as the "√ 2 √ 2" of "∆p,2 = √d1 H² ≤ √d H²" were (nobody reads that one as d1 H):
LINOPT_PROOF_64_P2 = "√ 2\n√\n2\nand ∆p,2 = d1 H ≤ dH . Similarly, we have Bh,r,1 and Bh,r,2 are both O(ε/4, δ/4)-DP"
# The proof of Thm 6.5 restates the σ of Thm 6.4 with the superscripts inline:
LINOPT_PROOF_65 = "32m ln(4H/δ) with ∆p,1 = d1 H 2 ≤\nε\n√\n√\ndH 2 , ∆p,2 = d1 H 2 ≤ dH 2 , ∆r,1 = ∆r,2 = 1."
LINOPT_QUOTES = (LINOPT_PROOF_64_P1, LINOPT_PROOF_64_P2, LINOPT_PROOF_65)

# -- seed 003, the confidence radius --------------------------------------------------------------------------
OFU_RADIUS = (
    r"where $\beta_k(\alpha) := C_w \sqrt{2 \ln(\frac{2}{\alpha}) + n \ln \det(I + \lambda_{\min}^{-1} Z_k^\top Z_k)}"
    r" + \sqrt{\lambda_{\max}} + \nu$."
)
OFU_GRAM = r"$Z_k := [z_{k',h'}^\top]_{k' \in [k-1], h' \in [H]}$"
OFU_RELEASED = (
    r"Let $T_{1,k}$ and $T_{2,k}$ denote the privatized versions for $Z_k^\top Z_k$ and $Z_k^\top X_k^{\text{next}}$"
)
OFU_ALGORITHM = (
    r"First, we compute the point estimate $\hat{\Theta}_k$ from (7) and build the confidence set "
    r"$\mathcal{C}_k(\alpha)$ from (8)."
)
OFU_PROOF = (
    r"Note that at each episode k , Private-OFU-RL computes private statistics $T_{1,k}$ and $T_{2,k}$ for all "
    r"users using the counters \mathcal{B}_1 and \mathcal{B}_2 ."
    "\n\n"
    r"These statistics are then used to compute the policy π_k . By composition and post-processing properties of "
    r"DP, we can argue that the sequence of policies $\{\pi_k\}_{k \in [K]}$ are computed using an (ε, δ) -DP "
    r"mechanism."
)
OFU_QUOTES = (OFU_RADIUS, OFU_GRAM, OFU_RELEASED, OFU_ALGORITHM, OFU_PROOF)


def _seed(name: str) -> str:
    path = SEEDS / name
    if not path.exists():
        pytest.skip(f"seed file {path} not available (set DPKIT_SEEDS)")
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("name", "quote"), [(LINOPT_SEED, q) for q in LINOPT_QUOTES] + [(OFU_SEED, q) for q in OFU_QUOTES]
)
def test_the_quotes_are_the_seeds_words(name: str, quote: str) -> None:
    assert quote in _seed(name)


def test_linopt_seed_states_one_sensitivity_in_both_proofs() -> None:
    text = _seed(LINOPT_SEED)
    # The proof of Thm 6.4 is where "∆p,1 = d1 H" appears; the two floated superscripts sit right before it
    # and no other "∆p,1 = d1 H ≤" appears anywhere else in the paper.
    at = text.index("and hence ∆p,1 = d1 H ≤ dH")
    assert text[:at].rstrip().endswith("\n2\n2\nd1 H, ∀s, a, h, k,")
    assert text.count("∆p,1 = d1 H ≤") == 1
    # the one inline statement: ∆p,1 = d1 H^2 (and ∆p,2 = √d1 H^2)
    assert re.findall(r"∆p,1 = d1 H (\d)", text) == ["2"]
    assert re.findall(r"∆p,2 = d1 H (\d)", text) == ["2"]


@pytest.mark.parametrize(("k", "h", "d"), [(10_000, 10, 10), (100, 3, 4), (1024, 7, 12)])
def test_linopt_declares_the_seeds_sensitivity_and_no_inconsistency(k: int, h: int, d: int) -> None:
    exponent = int(re.search(r"∆p,1 = d1 H (\d)", LINOPT_PROOF_65).group(1))
    for name in linopt.ALGORITHMS:
        for reading in linopt.LINOPT_READINGS:
            decl = linopt.declare_privacy(name, k, h, 1.0, 0.1, d, reading=reading)
            p1, p2 = decl.releases[0], decl.releases[1]
            assert (p1.name, p2.name) == ("B_{h,p,1}", "B_{h,p,2}")
            assert p1.paper_sensitivity == d * h**exponent  # ∆p,1 = d1 H²
            assert p2.paper_sensitivity == pytest.approx(math.sqrt(d) * h**exponent, rel=1e-15)  # ∆p,2 = √d1 H²
            codes = {f.code for f in decl.flags} | {f.code for f in algorithm_ledger(decl).flags}
            assert "paper-sensitivity-inconsistent" not in codes
            assert any(f"Δ_(p,1) = d1·H² = {d * h * h}" in note for note in decl.notes)
    # the reading that took the extraction's "d1 H" at its word is gone
    assert linopt.LINOPT_READINGS == ("theorem-6.5",)
    with pytest.raises(ValueError, match="reading"):
        linopt.declare_privacy("private-linopt-vi", k, h, 1.0, 0.1, d, reading="proof-6.4")


@pytest.mark.parametrize("schedule", ["before-episode", "after-each"])
@pytest.mark.parametrize(("eps", "delta"), [(1.0, 0.1), (0.2, 1e-6)])
def test_ofu_flags_its_unaccounted_confidence_radius(schedule: str, eps: float, delta: float) -> None:
    decl = ofu_rl.declare_privacy(1024, 5, eps, delta, 0.5, schedule=schedule)
    (flag,) = [f for f in decl.flags if f.code == "unaccounted-data-dependent-quantity"]
    assert flag.code == ofu_rl.UNACCOUNTED_CODE
    # an error: the paper's policies read Z_kᵀZ_k, which neither counter releases and its proof does not charge
    assert flag.severity == "error" and flag.release is None
    for words in ("β_k(α)", "ln det(I + λ_min⁻¹ Z_kᵀZ_k)", "Lemma 1", "Algorithm 1", "(8)", "Thm 2", "T_1,k"):
        assert words in flag.message, words
    # the released statistics the proof charges are the declaration's two releases, and only those
    assert [r.name for r in decl.releases] == ["B1", "B2"]
    # the flag reaches the ledger (dpkit ledger, docs/ledgers.md, the report)
    led = algorithm_ledger(declare("private-ofu-rl", eps, delta, episodes=1024, horizon=5, gamma=0.5))
    assert [f.severity for f in led.flags if f.code == ofu_rl.UNACCOUNTED_CODE] == ["error"]
    assert any(f["code"] == ofu_rl.UNACCOUNTED_CODE for f in led.to_dict()["flags"])


def test_ofu_confidence_set_is_lemma_1s_radius() -> None:
    """(8), the set Algorithm 1 builds, has Lemma 1's β_k(α) as its radius, and β_k reads Z_kᵀZ_k — which the
    seed releases only as T_1,k; the sentences of the privacy proof before the billboard lemma never name Z_k."""
    text = _seed(OFU_SEED)
    assert r"\left\| \Theta - \hat{\Theta}_k \right\|_{V_k} \leq \beta_k(\alpha) \right\}. \quad (8)$$" in text
    proof = text[text.index("Theorem 2 (Privacy)") : text.index("B. Regret Guarantee")]
    assert "Z_k" not in proof and r"T_{1,k}" in proof and r"T_{2,k}" in proof


# -- RLSVI: the per-run ε is ex-post ------------------------------------------------------------------------


def test_rlsvi_run_privacy_carries_the_worst_case_beside_the_ex_post_figure() -> None:
    _, privacy = rlsvi_run("riverswim", 5, 2, 1000, 0, delta=1e-5)
    worst = rlsvi_worst_case_mu(states=5, actions=2, horizon=10, episodes=1000)
    assert privacy.mu_worst_case == pytest.approx(worst, rel=1e-12) and privacy.mu_worst_case >= worst
    assert privacy.mu < privacy.mu_worst_case
    # the reference values of docs/ledgers.md (RLSVI per run, K = 1000): ex-post 0.5099 against the guarantee 3.62
    assert privacy.exact_epsilon(1e-5) == pytest.approx(0.5099, abs=5e-5)
    assert privacy.worst_case_epsilon(1e-5) == pytest.approx(3.620, abs=5e-4)
    d = privacy.to_dict()
    assert d["kind"] == "ex-post" and d["data_dependent"] is True and privacy.data_dependent
    assert d["mu_worst_case"] == privacy.mu_worst_case
    assert {"mu", "worst_user", "reward_range", "mu_per_user"} <= set(d)  # the old keys stay


def test_rlsvi_per_run_mu_depends_on_the_data_and_the_worst_case_does_not() -> None:
    runs = [rlsvi_run("tabular", 3, 2, 300, seed, delta=1e-5)[1] for seed in (0, 1, 2)]
    assert len({p.mu for p in runs}) == 3  # three datasets, three per-run figures
    assert len({p.mu_worst_case for p in runs}) == 1  # one guarantee
    assert all(p.mu <= p.mu_worst_case for p in runs)


def test_rlsvi_worst_case_follows_the_noise_it_was_run_with() -> None:
    # K = 2 with a constant β: the user's cells have n = 1 in the one later release, so the run *is* the worst case
    agent = Rlsvi(2, 2, 3, 2, 0, beta=0.05)
    for k in range(2):
        agent.plan(k)
        agent.update(k, np.zeros(4, dtype=int), np.zeros(3, dtype=int), np.ones(3))
    privacy = agent.run_privacy()
    assert privacy.mu == pytest.approx(privacy.mu_worst_case, rel=1e-12)
    assert privacy.mu_worst_case == pytest.approx(math.sqrt(2 * 3 / 0.05), rel=1e-12)
    # σ rescales β by (σ/σ_paper)², so μ by σ_paper/σ: twice the σ, half the worst case
    base = Rlsvi(3, 2, 4, 50, 0)
    doubled = Rlsvi(3, 2, 4, 50, 0, sigma=2 * base.sigmas["Q-values"])
    for a in (base, doubled):
        for k in range(5):
            a.plan(k)
            a.update(k, np.zeros(5, dtype=int), np.zeros(4, dtype=int), np.ones(4))
    want = rlsvi_worst_case_mu(states=3, actions=2, horizon=4, episodes=5)
    assert want > 0 and base.worst_case_mu() == pytest.approx(want, rel=1e-12)
    assert doubled.worst_case_mu() == pytest.approx(want / 2, rel=1e-12)


def test_rlsvi_run_privacy_refuses_a_worst_case_below_the_run() -> None:
    counts = np.array([[[[0]]], [[[1]]], [[[2]]]])
    variances = np.ones((3, 1, 1, 1))
    mu = rlsvi_run_privacy(counts, variances).mu
    assert rlsvi_run_privacy(counts, variances, mu_worst_case=mu).mu_worst_case == mu
    with pytest.raises(ValueError, match="below the run's"):
        rlsvi_run_privacy(counts, variances, mu_worst_case=0.5 * mu)
