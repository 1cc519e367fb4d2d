"""A user's own files for report configs in tests: a ledger file and DP-SGD as dp-accounting writes it."""

from __future__ import annotations

import json
from typing import Any

import dp_accounting

#: A ledger file (`[[release]]`): 20 Gaussian releases of Δ = 1.5 at σ = 30.
LEDGER_TOML = '[[release]]\nname = "gram"\nsensitivity = 1.5\nsigma = 30.0\ncount = 20\n'


def dp_sgd(steps: int, *, sampling_rate: float = 0.01, noise_multiplier: float = 1.1) -> Any:
    """DP-SGD as a dp-accounting DpEvent: ``steps`` Poisson-subsampled Gaussian steps."""
    step = dp_accounting.PoissonSampledDpEvent(sampling_rate, dp_accounting.GaussianDpEvent(noise_multiplier))
    return dp_accounting.SelfComposedDpEvent(step, steps)


def dp_accounting_json(dp_event: Any) -> str:
    """JSON as a dp-accounting user writes it, from dp-accounting's own named tuples (not through dpkit)."""

    def plain(value: Any) -> Any:
        if isinstance(value, dp_accounting.dp_event.DpEventNamedTuple):
            return {k: plain(v) for k, v in value._asdict().items()}
        if isinstance(value, list):
            return [plain(v) for v in value]
        return value

    return json.dumps(plain(dp_event.to_named_tuple()))
