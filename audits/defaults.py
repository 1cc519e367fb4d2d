"""The defaults of an audit of a release function, in one place: ``dpkit.audit`` (Python) and ``dpkit audit
--target`` (the command line) both start from :data:`AUDIT_DEFAULTS`, so one release, claim and seed give one
verdict and the same numbers whichever door is used (the runs per chunk included: the seeds are split per chunk).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AUDIT_DEFAULTS", "AUTO", "AuditDefaults"]

#: The attack name that fits every attack of :data:`~dpkit.audits.attacks.AUTO_ATTACKS` and chooses one.
AUTO = "auto"


@dataclass(frozen=True)
class AuditDefaults:
    """What an audit of a release function does when told nothing else.

    Attributes:
        runs: Runs per dataset (``--trials``): enough for the power to call a correct Gaussian at (1, 10⁻⁵)
            ``consistent``.
        seed: The seed every split's seeds are spawned from (``--seed``).
        alpha: The audit's error probability (``--confidence`` is 1 − α).
        attack: The attack (``--attack``): ``auto`` fits every candidate and chooses one on a held-out split.
        chunk_size: Runs per chunk (``--chunk-size``); the outputs change with it (each chunk has its own seed).
    """

    runs: int = 100_000
    seed: int = 0
    alpha: float = 0.05
    attack: str = AUTO
    chunk_size: int = 100_000

    @property
    def confidence(self) -> float:
        """1 − α, as ``--confidence`` takes it."""
        return 1.0 - self.alpha


#: The one set of defaults both doors use.
AUDIT_DEFAULTS = AuditDefaults()
