"""Whole-process start-up time of the command line, beside the floor it cannot beat.

    python bench/startup.py [--repeats N] [--json]

Times, in the same run and interleaved (so that load on the machine hits both alike), the median
wall time of ``N`` processes of

* ``dpkit calibrate --epsilon 1 --delta 1e-5 --compositions 1000 --json`` (the console script), and
* ``python -c "import numpy, scipy.special"`` (what calibration cannot avoid importing),

and prints their ratio (goal: at most 1.5) and which heavy libraries the calibrate process imported.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent
CALIBRATE = [str(BIN / "dpkit"), "calibrate", "--epsilon", "1", "--delta", "1e-5", "--compositions", "1000", "--json"]
FLOOR = [sys.executable, "-c", "import numpy, scipy.special"]
HEAVY = (
    "dp_accounting",
    "matplotlib",
    "sklearn",
    "scipy.optimize",
    "scipy.stats",
    "mpmath",
    "jinja2",
    "pydantic",
    "dpkit.audits",
    "dpkit.reports.config",  # the reports package itself is light: its JSON encoder serves every --json
    "dpkit.reports.render",
    "dpkit.algorithms",
)


def _wall(cmd: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def _heavy_imports() -> list[str]:
    """The heavy modules the calibrate command imports (run in-process under the same entry point)."""
    code = (
        "import sys, io, contextlib\n"
        "from dpkit.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main({CALIBRATE[1:]!r})\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.strip()
    return [m for m in out.split(",") if m]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    _wall(CALIBRATE), _wall(FLOOR)  # warm the file cache
    ours, floor = [], []
    for _ in range(args.repeats):
        ours.append(_wall(CALIBRATE))
        floor.append(_wall(FLOOR))
    result = {
        "calibrate_seconds": statistics.median(ours),
        "numpy_scipy_special_seconds": statistics.median(floor),
        "ratio": statistics.median(ours) / statistics.median(floor),
        "goal": 1.5,
        "heavy_imports": _heavy_imports(),
        "repeats": args.repeats,
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(f"dpkit calibrate … --json          {result['calibrate_seconds']:.3f} s (median of {args.repeats})")
        print(f"python -c 'import numpy, scipy.special' {result['numpy_scipy_special_seconds']:.3f} s")
        print(f"ratio {result['ratio']:.2f} (goal ≤ {result['goal']})")
        print(f"heavy modules imported: {', '.join(result['heavy_imports']) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
