"""Headless Chromium for the browser tests (tests/reports/test_browser.py, tests/test_site_browser.py): the system's
Chromium (Debian's ``chromium``; ``DPKIT_CHROMIUM`` names another executable), never one downloaded by
``playwright install``, with the flags a machine with a closed network needs."""

from __future__ import annotations

import importlib.util
import os
import shutil
import struct
from pathlib import Path

WIDTH, HEIGHT = 1280, 900
# Chromium on a machine with a closed network: without the background-networking flags it keeps trying to reach
# Google's hosts (refused connections at every start).
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SKIP_REASON = "no headless Chromium: apt-get install chromium and pip install playwright — .ci/run does both"


def find_chromium() -> str | None:
    """The Chromium executable: ``$DPKIT_CHROMIUM``, Debian's ``/usr/bin/chromium``, or one on ``PATH``."""
    candidates = [os.environ.get("DPKIT_CHROMIUM"), "/usr/bin/chromium"]
    candidates += [shutil.which("chromium"), shutil.which("chromium-browser")]
    return next((c for c in candidates if c and os.path.isfile(c) and os.access(c, os.X_OK)), None)


def missing(*modules: str) -> list[str]:
    """What a browser test lacks: Chromium, and the Python modules named (playwright, …) not installed."""
    absent = ["Chromium"] if find_chromium() is None else []
    return absent + [name for name in modules if importlib.util.find_spec(name) is None]


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    width, height = struct.unpack(">II", head[16:24])
    return width, height


#: A script for ``page.evaluate``: every word of a table cell that the browser broke across lines, as
#: ``{word, table, cell, width}``. A word is a run of letters and digits (``mo|de|l`` is broken, a line ending after
#: the hyphen of ``near-linear`` is not); in a cell matching ``strict`` (a CSS selector) it is every run of
#: non-space characters, so ``replace-|one`` is broken there too.
BROKEN_WORDS = r"""(strict) => {
  const out = [];
  for (const cell of document.querySelectorAll('td, th')) {
    const whole = !!(strict && cell.matches(strict));
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const words = whole ? /\S+/g : /[\p{L}\p{N}]+/gu;
      for (let m = words.exec(node.data); m !== null; m = words.exec(node.data)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const lines = new Set(Array.from(range.getClientRects()).filter(b => b.width > 0).map(b => Math.round(b.top)));
        if (lines.size > 1) {
          const table = cell.closest('table');
          out.push({word: m[0], table: table ? table.className : '', cell: cell.tagName.toLowerCase(),
                    width: Math.round(cell.getBoundingClientRect().width)});
        }
      }
    }
  }
  return out;
}"""
