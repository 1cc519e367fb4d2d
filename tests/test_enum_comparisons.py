"""No string literal stands in for a vocabulary's enum: the packages compare values with the enums' members.

A vocabulary that is a string enum (``enum.StrEnum``) is compared as one: ``verdict == Verdict.VIOLATION``, never
``verdict == "violation"``. The walk reads every module of the installed packages (tests may keep strings: a JSON file
holds them) and finds each string literal compared (``==``, ``!=``, ``in``/``not in`` a tuple, set or list literal,
or a ``match`` case) against a value one of the packages' enums defines. A word that belongs to another vocabulary
which is not an enum (an executor's name, a release function's kind) is listed in :data:`OTHER_VOCABULARIES` with
the reason.
"""

from __future__ import annotations

import ast
import enum
import importlib
from collections.abc import Iterator
from pathlib import Path

from package_modules import package_modules

#: (module, word): the word is compared there as a value of a vocabulary that is not an enum and shares the word.
OTHER_VOCABULARIES: dict[tuple[str, str], str] = {
    ("dpkit.accountant.accountants", "epsilon"): "the quantity queried (ε or δ), not an estimator's objective",
    ("dpkit.accountant.event_plans", "gdp"): "the closed form of a lowered plan (gdp, laplace, randomized_response)",
    ("dpkit.accountant.event_plans", "laplace"): "a plan leaf's kind (laplace, rr, approx) and closed form",
    ("dpkit.accountant.pld_events", "laplace"): "a plan leaf's kind (laplace, rr, approx)",
    ("dpkit.algorithms.executors", "auto"): "an executor's name (in-process, processes, auto, dask)",
    ("dpkit.algorithms.ldp_ucrl_vtr", "auto"): "LDP-UCRL-VTR's feature map (auto, one-hot, support)",
    ("dpkit.audits.rl.ldp_ucrl_vtr", "auto"): "LDP-UCRL-VTR's feature map (auto, one-hot, support)",
    ("dpkit.audits.mechanisms", "laplace"): "a reference release function's kind (gauss, laplace)",
    ("dpkit.commands.accounting", "epsilon"): "the quantity queried (ε or δ), not an estimator's objective",
    ("dpkit.commands.accounting", "gaussian"): "the accounted mechanism's form (gaussian, dp-sgd, event)",
    ("dpkit.commands.mechanisms", "gaussian"): "the accounted mechanism's form (gaussian, dp-sgd, event)",
    ("dpkit.commands.options", "auto"): "an executor's name (in-process, processes, auto, dask)",
    (
        "dpkit.commands.audit.target_inputs",
        "auto",
    ): "a release audit's attack option (lr, learned, auto, an attack's name)",
    (
        "dpkit.commands.audit.target_inputs",
        "learned",
    ): "a release audit's attack option (lr, learned, auto, an attack's name)",
}


MODULES = package_modules()


def enum_words() -> dict[str, set[str]]:
    """Every value of every string enum the packages define: value -> the enums' names."""
    words: dict[str, set[str]] = {}
    for name in MODULES:
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if isinstance(value, type) and issubclass(value, enum.StrEnum) and value.__module__ == name:
                for member in value:
                    words.setdefault(member.value, set()).add(attr)
    return words


def _strings(node: ast.AST) -> list[str]:
    """The string literals a node is, or a tuple, set or list literal holds."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.Set | ast.List):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def compared_strings(tree: ast.AST) -> Iterator[tuple[int, str, str]]:
    """The string literals a tree compares: (line, enclosing function or "", literal).

    Args:
        tree: a parsed module.

    Yields:
        Each literal compared by ``==``/``!=`` (either side), tested by ``in``/``not in`` against a literal
        collection, or matched by a ``case``.
    """

    def walk(node: ast.AST, function: str) -> Iterator[tuple[int, str, str]]:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            function = node.name
        found: list[str] = []
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            for op, left, right in zip(node.ops, sides, sides[1:], strict=False):
                if isinstance(op, ast.Eq | ast.NotEq):
                    found += [s for side in (left, right) if isinstance(side, ast.Constant) for s in _strings(side)]
                elif isinstance(op, ast.In | ast.NotIn) and isinstance(right, ast.Tuple | ast.Set | ast.List):
                    found += _strings(right)
        elif isinstance(node, ast.MatchValue):
            found += _strings(node.value)
        for word in found:
            yield getattr(node, "lineno", 0), function, word
        for child in ast.iter_child_nodes(node):
            yield from walk(child, function)

    yield from walk(tree, "")


def string_comparisons(words: dict[str, set[str]]) -> list[tuple[str, int, str, str]]:
    """Every comparison of a string literal against an enum's value in the packages' modules.

    Args:
        words: the enums' values (:func:`enum_words`).

    Returns:
        (module, line, function, literal) of each, less the words of :data:`OTHER_VOCABULARIES`.
    """
    out = []
    for name in MODULES:
        path = Path(importlib.import_module(name).__file__ or "")
        for line, function, word in compared_strings(ast.parse(path.read_text(encoding="utf-8"))):
            if word in words and (name, word) not in OTHER_VOCABULARIES:
                out.append((name, line, function, word))
    return out


WORDS = enum_words()
FOUND = string_comparisons(WORDS)


def test_the_walk_finds_the_enums_and_each_kind_of_comparison() -> None:
    assert {"Verdict", "ClaimKind"} <= WORDS["violation"] | WORDS["dp"]
    source = """
def f(verdict, relation, kind):
    if verdict == "violation" or "consistent" != verdict:
        pass
    if relation in ("add_remove", "elsewhere"):
        pass
    match kind:
        case "dp":
            pass
    return verdict == Verdict.VIOLATION or verdict == "not a word"
"""
    found = [(function, word) for _, function, word in compared_strings(ast.parse(source)) if word in WORDS]
    assert found == [("f", "violation"), ("f", "consistent"), ("f", "add_remove"), ("f", "dp")]


def test_no_string_literal_is_compared_against_an_enum_value() -> None:
    shown = "\n".join(
        f"{module}:{line} in {function}(): {word!r} ({', '.join(sorted(WORDS[word]))})"
        for module, line, function, word in FOUND
    )
    assert FOUND == [], f"compare with the enum's member, not its string:\n{shown}"


def test_the_exceptions_are_still_needed() -> None:
    """An entry of the list that no longer matches a comparison is taken out of it."""
    every = [
        (name, word)
        for name in MODULES
        for _, _, word in compared_strings(
            ast.parse(Path(importlib.import_module(name).__file__ or "").read_text(encoding="utf-8"))
        )
    ]
    assert sorted(set(OTHER_VOCABULARIES) - set(every)) == []
