"""accountant — the formal privacy accounting of dpkit (pure math, no I/O).

The Gaussian mechanism in every currency (exact μ-GDP, PLD, RDP, zCDP, classic), conversions
between them and to (ε, δ), composition through release ledgers, and σ calibration. Every
reported ε, δ and σ is rounded in the conservative direction.

Also: ℓ2 sensitivities under an explicit neighbouring relation (:mod:`dpkit.accountant.sensitivity`),
the binary counting mechanism (:mod:`dpkit.accountant.tree`), RLSVI's inherent-noise privacy
(:mod:`dpkit.accountant.rlsvi`) and algorithm declarations with their paper-vs-tight ledgers
(:mod:`dpkit.accountant.declarations`).

**Calling convention.** Only the arguments that define the quantity a function names are
positional — ε and δ of ``calibrate_sigma(epsilon, delta)``, σ and δ of
``gaussian_epsilon(sigma, delta)``, μ and ε of ``gdp_delta(mu, epsilon)``, the curve and δ of
``rdp_epsilon(orders, values, delta)`` — and, where several integers of the same kind would be easy
to swap (RLSVI's S, A, H, K; a counter's steps and σ; a sensitivity's bound, steps and relation),
at most the first. Everything else is keyword-only: ``calibrate_sigma(1.0, 1e-5, 1000)`` is a
``TypeError``, not a σ for sensitivity 1000. Options with defaults are always keyword-only (also on
methods: ``Ledger.homogeneous(Δ, σ, compositions=k)``, ``RdpAccountant(conversion_name=…)``).

**Bad arguments.** A wrong type (a string, a bool or None where a number is expected) raises
:class:`ArgumentTypeError`, a ``TypeError`` that is also a ``ValueError`` for older handlers; a bad
value (NaN, ±inf where a finite number is needed, out of range) raises ``ValueError``. Each message
names the parameter and the value. Where the mathematics has an answer it is given instead:
ε(δ = 0) = +inf, ε(δ = 1) = 0, δ(ε = +inf) = 0, and δ(ε = 0) — e.g. ``gdp_delta(mu, 0.0)`` is
2Φ(μ/2) − 1. Calibration answers the ends too: ``calibrate_sigma`` gives σ = +inf at δ = 0 (a Gaussian
mechanism is never pure DP), σ = 0 at δ = 1 or ε = +inf (met with no noise), and a finite σ at ε = 0 with
0 < δ < 1 under the exact method; a target that looks like a mistake (δ >= 0.5, or δ > ε: swapped?) is
answered with a :class:`SuspiciousTargetWarning`. Counts (``compositions``, a release's ``count``) may be
any integer: a composition beyond the doubles is answered (ε = +inf where μ = √K·Δ/σ is), not an
``OverflowError``.

Examples:
    A σ for 1,000 releases at (1, 10⁻⁵), and its ε read back:

    >>> from dpkit.accountant import calibrate_sigma, gaussian_epsilon
    >>> cal = calibrate_sigma(epsilon=1.0, delta=1e-5, compositions=1000)
    >>> gaussian_epsilon(cal.sigma, 1e-5, compositions=1000).epsilon <= 1.0
    True
"""

from __future__ import annotations

from .accountants import (
    METHODS,
    VARIANTS,
    Accountant,
    AccountingMethod,
    ClassicAccountant,
    DeltaComparison,
    ExactAccountant,
    Guarantee,
    MethodComparison,
    PldAccountant,
    RdpAccountant,
    ZcdpAccountant,
    compare_deltas,
    compare_methods,
    make_accountant,
)
from .assessment import LedgerAssessment, assess_ledger
from .calibration import Calibration, calibrate_ledger_scale, calibrate_sigma
from .classic import classic_sigma
from .declarations import AlgorithmLedger, DeclaredRelease, Flag, JointRelease, PrivacyDeclaration, algorithm_ledger
from .gdp import gdp_delta, gdp_epsilon, gdp_mu
from .ledger import GaussianRelease, Ledger
from .rdp import (
    DEFAULT_ORDERS,
    RDP_CONVERSIONS,
    RdpConversion,
    linear_rdp_delta,
    linear_rdp_epsilon,
    rdp_delta,
    rdp_epsilon,
)
from .rlsvi import RlsviClosedForm, RlsviRunPrivacy, rlsvi_closed_form, rlsvi_run_privacy, rlsvi_worst_case_mu
from .sensitivity import (
    RELATIONS,
    Relation,
    ReleaseNoise,
    SensitivityNoise,
    check_relation,
    clip_norm,
    episode_outer_product_sensitivity,
    episode_product_sensitivity,
    episode_sum_sensitivity,
    outer_product_sensitivity,
    product_sensitivity,
    stacked_outer_product_sensitivity,
    symmetric_matrix_sensitivity,
    upper_triangle,
    vector_sensitivity,
)
from .tree import (
    SCHEDULES,
    BinaryCounter,
    Schedule,
    calibrate_tree_sigma,
    max_psums_per_item,
    max_psums_per_prefix,
    paper_depth,
    tree_epsilon,
    tree_ledger,
    tree_mu,
)
from .validation import (
    ArgumentTypeError,
    SuspiciousTargetWarning,
    check_count,
    check_noise_scale,
    check_positive,
    check_probability,
)
from .zcdp import ZCDP_CONVERSIONS, zcdp_delta, zcdp_epsilon, zcdp_rho

__all__ = [
    "METHODS",
    "AccountingMethod",
    "VARIANTS",
    "RDP_CONVERSIONS",
    "ZCDP_CONVERSIONS",
    "DEFAULT_ORDERS",
    "Accountant",
    "ExactAccountant",
    "PldAccountant",
    "RdpAccountant",
    "ZcdpAccountant",
    "ClassicAccountant",
    "Guarantee",
    "MethodComparison",
    "Calibration",
    "RdpConversion",
    "GaussianRelease",
    "Ledger",
    "make_accountant",
    "compare_methods",
    "compare_deltas",
    "DeltaComparison",
    "calibrate_sigma",
    "calibrate_ledger_scale",
    "assess_ledger",
    "LedgerAssessment",
    "classic_sigma",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_mu",
    "rdp_epsilon",
    "rdp_delta",
    "linear_rdp_epsilon",
    "linear_rdp_delta",
    "zcdp_epsilon",
    "zcdp_delta",
    "zcdp_rho",
    "gaussian_epsilon",
    "gaussian_delta",
    "ArgumentTypeError",
    "SuspiciousTargetWarning",
    "check_count",
    "check_positive",
    "check_probability",
    # sensitivity under an explicit neighbouring relation
    "RELATIONS",
    "Relation",
    "ReleaseNoise",
    "SensitivityNoise",
    "check_relation",
    "vector_sensitivity",
    "outer_product_sensitivity",
    "symmetric_matrix_sensitivity",
    "stacked_outer_product_sensitivity",
    "product_sensitivity",
    "episode_sum_sensitivity",
    "episode_outer_product_sensitivity",
    "episode_product_sensitivity",
    "upper_triangle",
    "clip_norm",
    # the binary counting mechanism
    "SCHEDULES",
    "Schedule",
    "BinaryCounter",
    "max_psums_per_item",
    "max_psums_per_prefix",
    "paper_depth",
    "tree_mu",
    "tree_ledger",
    "tree_epsilon",
    "calibrate_tree_sigma",
    # RLSVI's inherent noise
    "RlsviClosedForm",
    "RlsviRunPrivacy",
    "rlsvi_closed_form",
    "rlsvi_worst_case_mu",
    "rlsvi_run_privacy",
    # algorithm declarations and their ledgers
    "DeclaredRelease",
    "JointRelease",
    "PrivacyDeclaration",
    "Flag",
    "AlgorithmLedger",
    "algorithm_ledger",
]


def _homogeneous(sigma: float, sensitivity: float, compositions: int) -> Ledger:
    return Ledger.homogeneous(
        check_positive("sensitivity", sensitivity),
        check_noise_scale("sigma", sigma),
        compositions=check_count("compositions", compositions),
    )


def gaussian_epsilon(
    sigma: float,
    delta: float,
    *,
    sensitivity: float = 1.0,
    compositions: int = 1,
    method: str = "exact",
    conversion: str | None = None,
    **options: object,
) -> Guarantee:
    """ε(δ) of ``compositions`` Gaussian releases (sensitivity Δ, noise σ) under ``method``."""
    acc = make_accountant(method, conversion=conversion, **options)
    return acc.epsilon(_homogeneous(sigma, sensitivity, compositions), delta)


def gaussian_delta(
    sigma: float,
    epsilon: float,
    *,
    sensitivity: float = 1.0,
    compositions: int = 1,
    method: str = "exact",
    conversion: str | None = None,
    **options: object,
) -> Guarantee:
    """δ(ε) of ``compositions`` Gaussian releases (sensitivity Δ, noise σ) under ``method``."""
    acc = make_accountant(method, conversion=conversion, **options)
    return acc.delta(_homogeneous(sigma, sensitivity, compositions), epsilon)
