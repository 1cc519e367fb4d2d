"""The defaults of ``dpkit audit --target``'s options, read lazily from the one place ``dpkit.audit`` reads them
(:data:`dpkit.audits.defaults.AUDIT_DEFAULTS`), so that listing the commands imports none of the audits."""

from __future__ import annotations

from typing import Any

__all__ = ["AuditDefault"]


class AuditDefault:
    """The default of a ``--target`` audit's option, read from :data:`dpkit.audits.defaults.AUDIT_DEFAULTS` (the one
    place ``dpkit.audit`` reads too) when it is needed: click calls it for the value and shows its text in
    ``--help``, so listing the commands imports none of the audits."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self) -> Any:
        from dpkit.audits.defaults import AUDIT_DEFAULTS

        return getattr(AUDIT_DEFAULTS, self.name)

    def __str__(self) -> str:
        return str(self())
