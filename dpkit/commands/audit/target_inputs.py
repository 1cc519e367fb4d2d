"""What a ``dpkit audit --target`` reads from its options: the one claim, the neighbouring pairs and the attack.

:mod:`dpkit.commands.audit.target` runs the audit; the one-run audit of a ``--target`` reads its claim here too.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..options import read_ledger

if TYPE_CHECKING:
    from dpkit.audits.claims import Claim

    from .form_options import ClaimOptions

__all__ = ["target_claim", "load_pairs", "attack_choice"]


def target_claim(options: ClaimOptions) -> Claim:
    """The one claim form the user gave: (ε, δ) (δ = 0: pure DP), μ, ρ, an RDP curve, or a ledger file.

    Args:
        options: A ``--target`` form's claim options: its ``epsilon`` and ``delta`` (δ = 0: pure ε-DP), ``mu``
            (GDP), ``rho`` (zCDP), ``rdp_orders`` and ``rdp_values`` (an RDP curve) and ``claim_file`` (a ledger
            file whose exact μ-GDP is the claim), each None where not given.

    Returns:
        The :class:`~dpkit.audits.claims.Claim`.

    Raises:
        click.UsageError: Not exactly one form given, ``epsilon`` without ``delta``, or one half of the RDP curve.
        ValueError: A bad value, or a ledger file that cannot be read.
    """
    from dpkit.audits import Claim

    epsilon, delta, mu, rho = options.epsilon, options.delta, options.mu, options.rho
    rdp_orders, rdp_values, claim_file = options.rdp_orders, options.rdp_values, options.claim_file
    forms = [
        name
        for name, present in (
            ("--epsilon/--delta", epsilon is not None),
            ("--mu", mu is not None),
            ("--rho", rho is not None),
            ("--rdp-orders/--rdp-values", rdp_orders is not None or rdp_values is not None),
            ("--claim", claim_file is not None),
        )
        if present
    ]
    if len(forms) != 1:
        raise click.UsageError(
            "give exactly one claim: --epsilon and --delta, --mu, --rho, --rdp-orders with "
            f"--rdp-values, or --claim FILE; got {', '.join(forms) if forms else 'none'}"
        )
    if epsilon is not None:
        if delta is None:
            raise click.UsageError("--epsilon needs --delta (0 for pure ε-DP)")
        return Claim.dp(epsilon, delta)
    if mu is not None:
        return Claim.gdp(mu)
    if rho is not None:
        return Claim.zcdp(rho)
    if claim_file is not None:
        return Claim.ledger(read_ledger(Path(claim_file)))
    if rdp_orders is None or rdp_values is None:
        raise click.UsageError("--rdp-orders and --rdp-values go together")
    return Claim.rdp(rdp_orders, rdp_values)


def load_pairs(value: str) -> list[tuple[Any, Any]]:
    """The neighbouring pairs of ``--neighbours FILE.py:NAME`` (a ValueError if it names none).

    Args:
        value: ``FILE.py:NAME``: a pair (D, D′), a non-empty list of pairs, or a function returning one.

    Returns:
        The pairs.
    """
    from dpkit.loading import load_object

    obj = load_object("--neighbours", value)
    if callable(obj):
        try:
            obj = obj()
        except Exception as err:
            raise ValueError(f"--neighbours: calling {value!r} failed: {type(err).__name__}: {err}") from None
    if isinstance(obj, tuple) and len(obj) == 2:
        return [obj]
    if isinstance(obj, list) and obj and all(isinstance(p, (tuple, list)) and len(p) == 2 for p in obj):
        return [(p[0], p[1]) for p in obj]
    raise ValueError(
        f"--neighbours: {value!r} must be a pair (D, D′), a non-empty list of pairs, or a function returning one"
    )


def attack_choice(value: str) -> Any:
    """``--attack`` of the ``--target`` form: a named attack (``lr`` and ``learned`` are aliases) or a score file.

    Args:
        value: ``auto``, ``lr``, ``learned``, an attack's name or ``FILE.py:SCORE``.

    Returns:
        The attack's name as :func:`dpkit.audits.engine.audit_pair` takes it, or a
        :class:`~dpkit.audits.ScoreFunction` of the user's score.

    Raises:
        ValueError: An unknown name that is no ``FILE.py:SCORE`` either, or a score file that cannot be loaded.
    """
    from dpkit.audits import ScoreFunction
    from dpkit.audits.attacks import ATTACK_NAMES
    from dpkit.loading import FileFunction

    if value == "lr":
        return "gaussian-lr-fitted"
    if value == "learned":
        return "logistic"
    if value == "auto" or (value in ATTACK_NAMES and value not in ("gaussian-lr", "score")):
        return value
    if ":" not in value:
        raise ValueError(
            f"--attack must be auto, lr, learned, one of "
            f"{', '.join(n for n in ATTACK_NAMES if n not in ('gaussian-lr', 'score'))} "
            f"or FILE.py:SCORE, got {value!r}"
        )
    return ScoreFunction(FileFunction("--attack", value), name=value)
