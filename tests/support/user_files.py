"""A user's own files for report configs in tests: a ledger file and DP-SGD as dp-accounting writes it."""

from __future__ import annotations

import json
from pathlib import Path
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


#: The plugin algorithm of the report tests: the toy of tests/support/toy_algorithm.py, its name, and its
#: ``[[algorithm]]`` entry at a small size.
TOY_NAME = "toy-ldp-rewards"
TOY_ENTRY = """
[[algorithm]]
name = "toy-ldp-rewards"
env = "riverswim"
states = 2
episodes = 40
epsilon = 1.0
delta = 1e-5
[algorithm.audit]
runs = 300
"""


def write_toy(path: Path) -> Path:
    """The toy algorithm as a user's own file at ``path`` (its entry point the function itself: the original names its
    test-support module), for a config's ``plugins = ["…/toy.py:SPEC"]``."""
    toy = Path(__file__).resolve().parent / "toy_algorithm.py"
    text = toy.read_text(encoding="utf-8").replace('entry_point="toy_algorithm:make_agent"', "entry_point=make_agent")
    path.write_text(text, encoding="utf-8")
    return path
