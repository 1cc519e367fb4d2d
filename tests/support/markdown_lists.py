"""Lists as Python-Markdown (the site's renderer, mkdocs.yml) reads them, where GitHub's CommonMark reads them
otherwise: a list needs a blank line (or a heading) before it, or it runs into the paragraph above as text
(``--attack: - auto (default): … - lr: …`` on one line); and what belongs inside a list item — a nested list, a
second paragraph, a fenced block — is indented by four spaces, or it leaves the item (a nested list read as the
outer list's items, a numbered list as bullets).

:func:`list_problems` finds both in a page's Markdown, outside fenced blocks.
"""

from __future__ import annotations

import re

__all__ = ["list_problems"]

#: A list item's first line: its indentation and its marker (``-``, ``*``, ``+``, ``1.``, ``1)``).
ITEM = re.compile(r"^(?P<indent> *)(?:[-*+]|\d{1,9}[.)]) +\S")
FENCE = re.compile(r"^ *(```|~~~)")
#: Lines after which a list may start without a blank line: a heading, an HTML block, a table row, a list item.
OPENS = re.compile(r"^ *(#{1,6} |<|\|)")


def list_problems(text: str) -> list[str]:
    """Every list of ``text`` (Markdown) that Python-Markdown would not render as written, as ``line N: what``.

    Args:
        text: A Markdown page.

    Returns:
        The problems, in the order of the page (none for a page whose lists all render as lists).

    Examples:
        >>> list_problems("The options:\\n- a\\n- b\\n")
        ['line 2: a list glued to the paragraph above (a blank line is needed before it): - a']
        >>> list_problems("The options:\\n\\n- a\\n  - nested\\n")
        ['line 4: a list item indented by 2 spaces (Python-Markdown nests by 4): - nested']
        >>> list_problems("The options:\\n\\n- a\\n    - nested\\n\\n    more of a\\n- b\\n")[0][:50]
        'line 7: a list glued to the paragraph above (a bla'
        >>> list_problems("The options:\\n\\n- a\\n    - nested\\n\\n    more of a\\n\\n- b\\n")
        []
    """
    problems: list[str] = []
    in_fence = in_list = blank = False
    #: what the last non-blank line was: "open" (the start, a heading, a table row, HTML: a list may follow), "item"
    #: (a list item's first paragraph: a nested or next item may follow) or "text" (any other paragraph)
    previous = "open"
    for number, line in enumerate(text.split("\n"), 1):
        indent = len(line) - len(line.lstrip(" "))
        if FENCE.match(line):
            if not in_fence and in_list and blank:
                if indent == 0:
                    in_list = False  # a block after the list
                elif indent % 4:
                    problems.append(
                        f"line {number}: a fenced block of a list item indented by {indent} spaces (4 keep it in "
                        "the item)"
                    )
            in_fence = not in_fence
            blank, previous = False, "text"
            continue
        if in_fence:
            continue
        if not line.strip():
            blank = True
            continue
        if ITEM.match(line):
            if not blank and previous == "text":
                problems.append(
                    f"line {number}: a list glued to the paragraph above (a blank line is needed before it): "
                    f"{line.strip()[:60]}"
                )
            elif in_list and indent % 4:
                problems.append(
                    f"line {number}: a list item indented by {indent} spaces (Python-Markdown nests by 4): "
                    f"{line.strip()[:60]}"
                )
            in_list, previous = True, "item"
        elif OPENS.match(line):
            in_list = in_list and not line.lstrip().startswith("#")  # a heading ends every list
            previous = "open"
        elif blank:
            if in_list and indent == 0:
                in_list = False  # a paragraph after the list
            elif in_list and indent % 4:
                problems.append(
                    f"line {number}: a paragraph of a list item indented by {indent} spaces (4 keep it in the item): "
                    f"{line.strip()[:60]}"
                )
            previous = "text"
        elif previous == "open":
            previous = "text"
        blank = False
    return problems
