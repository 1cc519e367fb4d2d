"""A parameter that takes a vocabulary is annotated with the vocabulary's enum, not ``str``.

Inside the packages a relation is a :class:`~dpkit.accountant.sensitivity.Relation`, a method an
:class:`~dpkit.accountant.accountants.AccountingMethod`, and so on: the walk reads every function of the installed
packages and finds each parameter named for a vocabulary (:data:`VOCABULARIES`) whose annotation is plain ``str``
(or ``str | None``). At the public boundary a caller's string is still taken: there the annotation is
``Relation | str`` and the function converts it once (``check_member``, ``check_relation``), naming a bad value; a
private function (``_name``) takes the member alone. A click command's own parameters are click's strings (its
``Choice`` checked them) and are exempt; the command converts them before it calls anything. Every other exception
is listed in :data:`EXCEPTIONS` with its reason, and an exception that no longer matches is taken out.
"""

from __future__ import annotations

import ast
import enum
import importlib
from collections.abc import Iterator
from pathlib import Path

from package_modules import package_modules

#: A parameter's name -> the enums (by class name) a parameter of that name takes.
VOCABULARIES: dict[str, tuple[str, ...]] = {
    "relation": ("Relation",),
    "neighbours": ("Relation",),
    "method": ("AccountingMethod", "CalibrationMethod"),
    "schedule": ("Schedule",),
    "family": ("ShapeFamily",),
    "objective": ("Objective",),
    "attack": ("RlAttack",),
    "verdict": ("Verdict",),
    "mode": ("AuditMode",),
    "threat": ("ThreatModel",),
    "features": ("AttackFeatures",),
    "binning": ("Binning",),
    "adjacency": ("Adjacency",),
    "allocation": ("Allocation",),
    "unit": ("ClaimUnit",),
    "noise": ("SensitivityNoise", "ReleaseNoise"),
    "severity": ("Severity",),
    "bug": ("DpSgdBug",),
    "claim_kind": ("ClaimKind",),
}

#: (module, function, parameter) -> why it is annotated as it is: a word of another vocabulary that shares the
#: parameter's name, a converter of the boundary, or a file other work is rewriting now (to be typed there).
EXCEPTIONS: dict[tuple[str, str, str], str] = {
    ("dpkit.accountant.assessment", "_claim_scale", "method"): "a comparison variant's key (rdp-mironov, …)",
    ("dpkit.accountant.assessment", "_claim_flag", "method"): "a comparison variant's key (rdp-mironov, …)",
    ("dpkit.accountant.assessment", "_flags", "method"): "a comparison variant's key (rdp-mironov, …)",
    (
        "dpkit.accountant.declarations",
        "PrivacyDeclaration._relation",
        "relation",
    ): "the converter of the declaration's public methods: a caller's relation, or None for the paper's",
    (
        "dpkit.audits.sequential",
        "_prepare",
        "objective",
    ): "the audits' objective adds 'margin' (an attack's own threshold) to Objective's; check_audit_options checks it",
    (
        "dpkit.algorithms.ldp_ucrl_vtr",
        "LdpUcrlVtr.__init__",
        "features",
    ): "UCRL-VTR's feature map (auto, one-hot, support), not a learned attack's features",
    (
        "dpkit.algorithms.ucrl_vtr",
        "UcrlVtr.__init__",
        "features",
    ): "UCRL-VTR's feature map (auto, one-hot, support), not a learned attack's features",
    (
        "dpkit.algorithms.ucrl_vtr",
        "VtrAgent.__init__",
        "features",
    ): "UCRL-VTR's feature map (auto, one-hot, support), not a learned attack's features",
}


def _is_str(annotation: ast.expr | None) -> bool:
    """Whether an annotation is plain ``str``, ``str | None`` or ``Optional[str]``."""
    if annotation is None:
        return False
    return ast.unparse(annotation).replace(" ", "") in ("str", "str|None", "None|str", "Optional[str]")


def _with_str(annotation: ast.expr | None, enums: tuple[str, ...]) -> bool:
    """Whether an annotation is one of ``enums`` or ``str`` (``Relation | str``, ``Relation | str | None``)."""
    if annotation is None:
        return False
    parts = ast.unparse(annotation).replace(" ", "").strip("'\"").split("|")
    return "str" in parts and any(e in parts for e in enums)


def _click_command(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a function is a click command's callback (decorated with click's command or its options)."""
    return any(
        "click." in ast.unparse(d) or ast.unparse(d).split("(")[0].endswith((".command", ".group"))
        for d in node.decorator_list
    )


def parameters(tree: ast.AST) -> Iterator[tuple[str, str, ast.arg, bool]]:
    """Every parameter of every function of a module: (qualified function name, parameter, arg, is a command).

    Args:
        tree: a parsed module.

    Yields:
        The function's name (``Class.method``, or ``outer.inner`` for a nested one), the parameter's name, its
        ``ast.arg`` and whether the function is a click command.
    """

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, str, ast.arg, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                args = child.args
                for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
                    yield name, arg.arg, arg, _click_command(child)
                yield from walk(child, f"{name}.")
            else:
                yield from walk(child, prefix)

    yield from walk(tree, "")


def _private(function: str) -> bool:
    last = function.rsplit(".", 1)[-1]
    return last.startswith("_") and not last.startswith("__")


def findings(name: str, tree: ast.AST) -> list[tuple[str, str, str, str]]:
    """The parameters of a module that break the rule: (module, function, parameter, what is wrong).

    Args:
        name: the module's dotted name.
        tree: the module, parsed.

    Returns:
        A parameter named for a vocabulary annotated plain ``str`` (not a click command's), or a private
        function's parameter annotated ``Enum | str`` (inside, the member alone), less :data:`EXCEPTIONS`.
    """
    out = []
    for function, param, arg, command in parameters(tree):
        if param not in VOCABULARIES or (name, function, param) in EXCEPTIONS:
            continue
        if _is_str(arg.annotation) and not command:
            out.append((name, function, param, f"annotated str: take {' or '.join(VOCABULARIES[param])}"))
        elif _with_str(arg.annotation, VOCABULARIES[param]) and _private(function):
            out.append((name, function, param, "a private function takes the member alone (convert at the door)"))
    return out


MODULES = package_modules()


def _trees() -> dict[str, ast.AST]:
    return {
        name: ast.parse(Path(importlib.import_module(name).__file__ or "").read_text(encoding="utf-8"))
        for name in MODULES
    }


TREES = _trees()


def test_the_vocabularies_named_are_the_packages_enums() -> None:
    enums = {
        attr
        for name in MODULES
        for attr, value in vars(importlib.import_module(name)).items()
        if isinstance(value, type) and issubclass(value, enum.StrEnum)
    }
    named = {e for names in VOCABULARIES.values() for e in names}
    assert sorted(named - enums) == []


def test_the_walk_finds_a_str_vocabulary_and_a_private_union() -> None:
    source = """
import click

def public(relation: str, *, method: str | None = None, name: str = "x", schedule: "Schedule | str" = "a") -> None:
    pass

def _private(relation: Relation | str, attack: RlAttack) -> None:
    pass

class Agent:
    def __init__(self, *, noise: Optional[str] = None) -> None:
        def _inner(mode: str) -> None:
            pass

@click.command()
@click.option("--method")
def command(method: str) -> None:
    pass
"""
    found = [(f, p) for _, f, p, _ in findings("m", ast.parse(source))]
    assert found == [
        ("public", "relation"),
        ("public", "method"),
        ("_private", "relation"),
        ("Agent.__init__", "noise"),
        ("Agent.__init__._inner", "mode"),
    ]


def test_no_parameter_named_for_a_vocabulary_is_annotated_str() -> None:
    left = [f for name, tree in TREES.items() for f in findings(name, tree)]
    shown = "\n".join(f"{module}: {function}({param}): {why}" for module, function, param, why in left)
    assert left == [], f"annotate the vocabulary's enum (Enum | str at a public door, converted once):\n{shown}"


def test_the_exceptions_are_still_needed() -> None:
    """An exception that no longer names a parameter annotated with ``str`` is taken out of the list."""
    every = {
        (name, function, param)
        for name, tree in TREES.items()
        for function, param, arg, _ in parameters(tree)
        if _is_str(arg.annotation) or _with_str(arg.annotation, VOCABULARIES.get(param, ()))
    }
    assert sorted(set(EXCEPTIONS) - every) == []
