"""The JSON schemas of dpkit's file formats, generated from their pydantic models: report configurations
(:class:`~dpkit.reports.config.ReportConfig`), ledger files (:class:`~dpkit.reports.files.LedgerFile`) and
``report.json`` (:class:`~dpkit.reports.models.ReportJson`). ``reports/config.schema.json``,
``reports/ledger.schema.json`` and ``reports/report.schema.json`` are checked-in copies that a test keeps equal to
them (``python -m dpkit.reports.schemas`` rewrites them).
"""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from .config import config_schema
from .files import LedgerFile
from .models import report_schema

__all__ = ["SCHEMA_FILES", "checked_in", "dumps", "schemas"]


#: The checked-in schema of each file format (package data of dpkit.reports).
SCHEMA_FILES = {
    "config.schema.json": "report configuration",
    "ledger.schema.json": "ledger file",
    "report.schema.json": "report.json",
}


def schemas() -> dict[str, dict[str, Any]]:
    """The JSON schema of each file format, generated from its model.

    Returns:
        Each schema by file name (keys: :data:`SCHEMA_FILES`).
    """
    ledger = LedgerFile.model_json_schema(mode="validation")
    ledger["title"] = "dpkit ledger file"
    return {"config.schema.json": config_schema(), "ledger.schema.json": ledger, "report.schema.json": report_schema()}


def dumps(schema: dict[str, Any]) -> str:
    """A schema as the checked-in file holds it.

    Args:
        schema: The schema.

    Returns:
        Indented JSON with sorted keys and a final newline.
    """
    return json.dumps(schema, indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def checked_in(name: str) -> str:
    """The checked-in schema file ``name`` shipped in the package.

    Args:
        name: Its file name (one of :data:`SCHEMA_FILES`).

    Returns:
        The file's text.
    """
    return resources.files("dpkit.reports").joinpath(name).read_text(encoding="utf-8")


if __name__ == "__main__":  # pragma: no cover - python -m dpkit.reports.schemas [DIRECTORY]
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent
    for name, schema in schemas().items():
        (target / name).write_text(dumps(schema), encoding="utf-8")
        print(f"wrote {target / name}")
