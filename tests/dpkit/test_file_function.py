"""FileFunction (dpkit/loading.py): a user's function loaded once per process and kept, its reference (never the
function) what travels to another process."""

from __future__ import annotations

import pickle
from pathlib import Path

from dpkit.loading import FileFunction


def test_the_function_is_kept_and_only_the_reference_pickles(tmp_path: Path) -> None:
    file = tmp_path / "twice.py"
    file.write_text("def twice(x):\n    return 2 * x\n", encoding="utf-8")
    f = FileFunction("--target", f"{file}:twice")
    assert f(3) == 6 and f._function() is f._function()
    state = pickle.loads(pickle.dumps(f)).__dict__
    assert "_loaded" not in state and state["value"] == f"{file}:twice"
    assert pickle.loads(pickle.dumps(f))(4) == 8
