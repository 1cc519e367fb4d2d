"""accountant — the formal privacy accounting of dpkit (pure math, no I/O).

The Gaussian mechanism in every currency (exact μ-GDP, PLD, RDP, zCDP, classic), conversions
between them and to (ε, δ), composition through release ledgers, and σ calibration. Every
reported ε, δ and σ is rounded in the conservative direction.

Also: ℓ2 sensitivities under an explicit neighbouring relation (:mod:`dpkit.accountant.sensitivity`),
the binary counting mechanism (:mod:`dpkit.accountant.tree`), RLSVI's inherent-noise privacy
(:mod:`dpkit.accountant.rlsvi`) and algorithm declarations with their paper-vs-tight ledgers
(:mod:`dpkit.accountant.declarations`, :mod:`dpkit.accountant.algorithm_ledgers`).

Only the arguments that define the quantity a function names are positional; options are
keyword-only. A wrong type raises :class:`ArgumentTypeError`, a bad value ``ValueError``, and the
ends (δ = 0, δ = 1, ε = +inf) are answered — calibration too: σ = +inf at δ = 0, σ = 0 at δ = 1 or ε = +inf,
a finite σ at ε = 0 (exact method) — see docs/explanation/methods.md (Calling convention).
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
from .algorithm_ledgers import AlgorithmLedger, algorithm_ledger
from .assessment import LedgerAssessment, assess_ledger
from .calibration import Calibration, calibrate_ledger_scale, calibrate_sigma
from .classic import classic_sigma
from .declarations import DeclaredRelease, Flag, JointRelease, PrivacyDeclaration
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
    method: AccountingMethod | str = "exact",
    conversion: str | None = None,
    **options: object,
) -> Guarantee:
    """ε(δ) of ``compositions`` Gaussian releases (sensitivity Δ, noise σ) under ``method``.

    Args:
        sigma: the noise standard deviation σ of each release (> 0).
        delta: the target δ, in [0, 1].
        sensitivity: the ℓ2 sensitivity Δ of each release (> 0); 1 by default.
        compositions: how many identical releases compose (an integer >= 1); 1 by default.
        method: the accounting method, one of ``METHODS`` ("exact", "pld", "rdp", "zcdp", "classic").
        conversion: the RDP or zCDP conversion to (ε, δ) of that method; None takes the method's default.
        **options: further options of the accountant (see :func:`make_accountant`).

    Returns:
        The :class:`Guarantee` holding ε (rounded up) and the details of the method.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: σ or Δ not positive, compositions not an integer >= 1, δ outside [0, 1], or an unknown method.

    Examples:
        A σ for 1,000 releases at (1, 10⁻⁵), and its ε read back:

        >>> from dpkit.accountant import calibrate_sigma, gaussian_epsilon
        >>> cal = calibrate_sigma(epsilon=1.0, delta=1e-5, compositions=1000)
        >>> gaussian_epsilon(cal.sigma, 1e-5, compositions=1000).epsilon <= 1.0
        True
    """
    acc = make_accountant(method, conversion=conversion, **options)
    return acc.epsilon(_homogeneous(sigma, sensitivity, compositions), delta)


def gaussian_delta(
    sigma: float,
    epsilon: float,
    *,
    sensitivity: float = 1.0,
    compositions: int = 1,
    method: AccountingMethod | str = "exact",
    conversion: str | None = None,
    **options: object,
) -> Guarantee:
    """δ(ε) of ``compositions`` Gaussian releases (sensitivity Δ, noise σ) under ``method``.

    Args:
        sigma: the noise standard deviation σ of each release (> 0).
        epsilon: the target ε (>= 0, +inf allowed).
        sensitivity: the ℓ2 sensitivity Δ of each release (> 0); 1 by default.
        compositions: how many identical releases compose (an integer >= 1); 1 by default.
        method: the accounting method, one of ``METHODS`` ("exact", "pld", "rdp", "zcdp", "classic").
        conversion: the RDP or zCDP conversion of that method; None takes the method's default.
        **options: further options of the accountant (see :func:`make_accountant`).

    Returns:
        The :class:`Guarantee` holding δ (rounded up) and the details of the method.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: σ or Δ not positive, compositions not an integer >= 1, ε negative, or an unknown method.
    """
    acc = make_accountant(method, conversion=conversion, **options)
    return acc.delta(_homogeneous(sigma, sensitivity, compositions), epsilon)
