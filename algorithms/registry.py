"""The seed algorithms by name, and their privacy declarations from one set of parameters.

:func:`declare` is what the command line and the reports call: it checks that the parameters an
algorithm needs are given (and that no parameter it does not use is), then asks the algorithm's
module for its :class:`~dpkit.accountant.declarations.PrivacyDeclaration`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dpkit.accountant.declarations import PrivacyDeclaration
from dpkit.accountant.rlsvi import rlsvi_paper_epsilon
from dpkit.accountant.validation import check_choice

from . import ldp_ucrl_vtr, linopt, ofu_rl, rlsvi

__all__ = ["ALGORITHM_NAMES", "AlgorithmSpec", "SPECS", "declare"]


@dataclass(frozen=True)
class AlgorithmSpec:
    """An algorithm's name, the parameters its declaration needs, and those it may take."""

    name: str
    required: tuple[str, ...]
    optional: tuple[str, ...]
    build: Callable[..., PrivacyDeclaration]
    summary: str


def _ldp(epsilon: float, delta: float, p: Mapping[str, Any]) -> PrivacyDeclaration:
    return ldp_ucrl_vtr.declare_privacy(
        p["horizon"], epsilon, delta, reading=p.get("reading") or "theorem", states=p.get("states")
    )


def _linopt(name: str) -> Callable[[float, float, Mapping[str, Any]], PrivacyDeclaration]:
    def build(epsilon: float, delta: float, p: Mapping[str, Any]) -> PrivacyDeclaration:
        return linopt.declare_privacy(
            name,
            p["episodes"],
            p["horizon"],
            epsilon,
            delta,
            p["dim"],
            reading=p.get("reading") or "theorem-6.5",
            schedule=p.get("schedule") or "before-episode",
        )

    return build


def _ofu(epsilon: float, delta: float, p: Mapping[str, Any]) -> PrivacyDeclaration:
    return ofu_rl.declare_privacy(
        p["episodes"], p["horizon"], epsilon, delta, p["gamma"], schedule=p.get("schedule") or "before-episode"
    )


def _rlsvi(epsilon: float, delta: float, p: Mapping[str, Any]) -> PrivacyDeclaration:
    return rlsvi.declare_privacy(
        p["states"], p["actions"], p["horizon"], p["episodes"], epsilon, delta, beta=p.get("beta")
    )


SPECS: dict[str, AlgorithmSpec] = {
    spec.name: spec
    for spec in (
        AlgorithmSpec(
            "ldp-ucrl-vtr",
            ("horizon",),
            ("states", "reading"),
            _ldp,
            "local DP; 2H noisy messages per user (seeds 000/001)",
        ),
        AlgorithmSpec(
            "private-linopt-vi",
            ("episodes", "horizon", "dim"),
            ("reading", "schedule"),
            _linopt("private-linopt-vi"),
            "joint DP; 4H binary-tree counters (seed 004)",
        ),
        AlgorithmSpec(
            "private-linopt-po",
            ("episodes", "horizon", "dim"),
            ("reading", "schedule"),
            _linopt("private-linopt-po"),
            "joint DP; 4H binary-tree counters (seed 004)",
        ),
        AlgorithmSpec(
            "private-ofu-rl",
            ("episodes", "horizon", "gamma"),
            ("schedule",),
            _ofu,
            "joint DP; 2 binary-tree counters (seed 003)",
        ),
        AlgorithmSpec(
            "rlsvi",
            ("states", "actions", "horizon", "episodes"),
            ("beta",),
            _rlsvi,
            "joint DP from exploration noise alone (seed 002)",
        ),
    )
}
ALGORITHM_NAMES: tuple[str, ...] = tuple(SPECS)


def declare(algorithm: str, epsilon: float | None, delta: float, **parameters: Any) -> PrivacyDeclaration:
    """The privacy declaration of ``algorithm`` for the target (ε, δ) and its parameters.

    Parameters left ``None`` count as not given. ``epsilon=None`` is allowed for ``rlsvi`` only and
    then means the paper's own ε(δ) (RLSVI does not choose its noise for a target).
    """
    algorithm = check_choice("algorithm", algorithm, ALGORITHM_NAMES)
    spec = SPECS[algorithm]
    given = {k: v for k, v in parameters.items() if v is not None}
    missing = [k for k in spec.required if k not in given]
    if missing:
        raise ValueError(f"{algorithm} needs {', '.join(missing)}")
    unused = sorted(set(given) - set(spec.required) - set(spec.optional))
    if unused:
        raise ValueError(f"{algorithm} does not use {', '.join(unused)}")
    if epsilon is None:
        if algorithm != "rlsvi":
            raise ValueError(f"{algorithm} needs a target epsilon")
        epsilon = rlsvi_paper_epsilon(
            states=given["states"],
            actions=given["actions"],
            horizon=given["horizon"],
            episodes=given["episodes"],
            delta=delta,
        )
    try:
        return spec.build(epsilon, delta, given)
    except (OverflowError, ZeroDivisionError):
        shown = ", ".join(
            f"{k}={v:.3e}" if isinstance(v, int) and abs(v) >= 10**15 else f"{k}={v!r}"
            for k, v in sorted(given.items())
        )
        raise ValueError(
            f"{algorithm}: epsilon={epsilon!r}, delta={delta!r}, {shown} put the paper's σ or sensitivities "
            "outside the floating-point range"
        ) from None
