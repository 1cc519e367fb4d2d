"""The algorithms by name: one registration each, read by the simulation, ledgers, audits and reports.

As in Gymnasium, an algorithm is known by the :class:`~dpkit.algorithms.spec.AlgorithmSpec` it
registers. The seed algorithms register from their own modules (each ends with ``REGISTRATIONS``, a
tuple of specs; :data:`BUILTIN_MODULES` lists the modules — one line per module). Anyone else's
algorithm registers either by calling :func:`register` or, from an installed package, through the
entry-point group ``dpkit.algorithms`` (each entry point names an ``AlgorithmSpec`` or a sequence of
them, e.g. ``[project.entry-points."dpkit.algorithms"] mine = "mypkg.agent:SPEC"``); plugins are loaded
on the first lookup. An unknown name is refused with the closest registered one ("did you mean …?").

:func:`declare` is what the command line and the reports call: it checks that the parameters an
algorithm needs are given (and that no parameter it does not use is), then asks the algorithm's
declaration for its :class:`~dpkit.accountant.declarations.PrivacyDeclaration`.
"""

from __future__ import annotations

import difflib
import importlib
import numbers
from collections.abc import Iterable
from typing import Any

from dpkit.accountant.declarations import PrivacyDeclaration
from dpkit.accountant.validation import ArgumentTypeError

from .limits import DECLARATION_LIMITS, above_limit
from .spec import AlgorithmSpec

__all__ = [
    "BUILTIN_MODULES",
    "ENTRY_POINT_GROUP",
    "AlgorithmSpec",
    "register",
    "unregister",
    "get",
    "names",
    "declare",
    "runtime_registrations",
    "replay",
    "travelling",
    "generation",
    "is_runtime",
    "travels",
]

#: The modules of the built-in algorithms; each defines ``REGISTRATIONS``, a tuple of specs.
BUILTIN_MODULES: tuple[str, ...] = (
    "dpkit.algorithms.ucrl_vtr",
    "dpkit.algorithms.ldp_ucrl_vtr",
    "dpkit.algorithms.linopt",
    "dpkit.algorithms.ofu_rl",
    "dpkit.algorithms.rlsvi",
)
#: The package entry-point group through which installed packages register algorithms.
ENTRY_POINT_GROUP = "dpkit.algorithms"

_REGISTRY: dict[str, AlgorithmSpec] = {}
_RUNTIME: dict[str, AlgorithmSpec] = {}  # registered by register() in this process: replayed in worker processes
_LOADED: set[str] = set()  # the built-ins' and plugins' names (every process loads them itself)
_loaded = False
_generation = 0


def _specs(obj: object, origin: str) -> tuple[AlgorithmSpec, ...]:
    items = (obj,) if isinstance(obj, AlgorithmSpec) else obj
    if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
        raise TypeError(f"{origin} must give an AlgorithmSpec or a sequence of them, got {type(obj).__name__}")
    specs = tuple(items)
    bad = [type(s).__name__ for s in specs if not isinstance(s, AlgorithmSpec)]
    if bad:
        raise TypeError(f"{origin} must give AlgorithmSpec objects, got {', '.join(bad)}")
    return specs


def _ensure_loaded() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True  # set first: a plugin that looks names up while it loads must not recurse
    for module in BUILTIN_MODULES:
        for spec in _specs(importlib.import_module(module).REGISTRATIONS, f"{module}.REGISTRATIONS"):
            _REGISTRY.setdefault(spec.name, spec)
            _LOADED.add(spec.name)
    from importlib.metadata import entry_points

    errors = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            specs = _specs(ep.load(), f"the {ENTRY_POINT_GROUP} entry point {ep.name!r}")
        except Exception as err:  # a broken plugin is named; the others still load
            errors.append(f"the {ENTRY_POINT_GROUP} entry point {ep.name!r} ({ep.value}) cannot be loaded: {err}")
            continue
        for spec in specs:
            if spec.name in _REGISTRY:
                errors.append(f"the {ENTRY_POINT_GROUP} entry point {ep.name!r} names {spec.name!r}, already taken")
                continue
            _REGISTRY[spec.name] = spec  # every process loads the plugins itself: not a runtime registration
            _LOADED.add(spec.name)
    _bump()
    if errors:
        raise ValueError("; ".join(errors))


def _bump() -> None:
    global _generation
    _generation += 1


def generation() -> int:
    """A number that changes whenever a registration does (for caches and process pools keyed on it).

    Returns:
        The registry's generation.
    """
    _ensure_loaded()
    return _generation


def register(spec: AlgorithmSpec, *, replace: bool = False) -> AlgorithmSpec:
    """Register ``spec`` under its name.

    Args:
        spec: The algorithm's spec.
        replace: Replace an algorithm already registered under that name (else the name is refused).

    Returns:
        ``spec``.

    Raises:
        TypeError: ``spec`` is not an :class:`AlgorithmSpec` (an ``ArgumentTypeError``).
        ValueError: The name is taken and ``replace`` is false.
    """
    if not isinstance(spec, AlgorithmSpec):
        raise ArgumentTypeError(f"spec must be an AlgorithmSpec, got {type(spec).__name__}")
    _ensure_loaded()
    if _REGISTRY.get(spec.name) is spec:
        return spec
    if spec.name in _REGISTRY and not replace:
        raise ValueError(f"an algorithm named {spec.name!r} is already registered (pass replace=True to replace it)")
    _REGISTRY[spec.name] = spec
    _RUNTIME[spec.name] = spec
    _bump()
    return spec


def unregister(name: str) -> None:
    """Forget the algorithm ``name``.

    Built-ins and plugins stay: unregistering a runtime registration that replaced one brings the original back.

    Args:
        name: The registered name.

    Raises:
        ValueError: An unknown name.
    """
    get(name)
    del _REGISTRY[name]
    _RUNTIME.pop(name, None)
    if name in _LOADED:  # restore what every process loads
        global _loaded
        _loaded = False
        others = dict(_REGISTRY)
        _REGISTRY.clear()
        _LOADED.clear()
        _ensure_loaded()
        for key, value in others.items():
            _REGISTRY.setdefault(key, value)
    _bump()


def is_runtime(name: str) -> bool:
    """Whether ``name`` was registered by :func:`register` in this process (not a built-in or a plugin).

    Args:
        name: An algorithm's name.

    Returns:
        True for a runtime registration still in place.

    Examples:
        >>> is_runtime("rlsvi")
        False
    """
    _ensure_loaded()
    return name in _RUNTIME and _REGISTRY.get(name) is _RUNTIME[name]


def runtime_registrations() -> tuple[AlgorithmSpec, ...]:
    """The specs :func:`register` added in this process that can travel to another.

    They pickle (callables defined at module level, or "module:attr" strings): what a process pool replays in its
    workers (:func:`replay`). The built-ins and plugins are not among them: every process loads those itself.

    Returns:
        The specs, in registration order.
    """
    import pickle

    out = []
    for name, spec in _RUNTIME.items():
        if _REGISTRY.get(name) is not spec:
            continue
        try:
            pickle.dumps(spec)
        except Exception:  # a lambda or a closure: it stays in this process (an audit says so if asked)
            continue
        out.append(spec)
    return tuple(out)


def travels(name: str) -> bool:
    """Whether a process pool's workers know the algorithm ``name``.

    They know a built-in or a plugin (every process loads those), and a runtime registration that pickles
    (:func:`runtime_registrations`).

    Args:
        name: A registered name.

    Returns:
        Whether the workers know it.
    """
    return not is_runtime(name) or get(name) in runtime_registrations()


def replay(specs: Iterable[AlgorithmSpec | bytes]) -> None:
    """Register ``specs`` in this process (a worker's initializer: the parent's runtime registrations).

    Args:
        specs: The specs, or their pickles (:func:`travelling`). A pickle that does not load here (its class defined in
            a module this process cannot import, or whose import fails) is skipped: the worker does not know that
            algorithm (a task naming it fails with the registry's error) instead of the whole pool dying at start.
    """
    import pickle

    for spec in specs:
        if not isinstance(spec, bytes):
            register(spec, replace=True)
            continue
        try:  # its module imported here may fail, skip (pytest) or exit on import, or register a clashing name
            register(pickle.loads(spec), replace=True)
        except KeyboardInterrupt:
            raise
        except BaseException:  # noqa: BLE001, S112 - this worker cannot run that algorithm; the others it can
            continue


def travelling() -> tuple[bytes, ...]:
    """The pickles of :func:`runtime_registrations`, for a worker's initializer.

    :func:`replay` loads each one alone, so that one that cannot load in the worker costs only that algorithm.

    Returns:
        One pickle per spec.
    """
    import pickle

    return tuple(pickle.dumps(spec) for spec in runtime_registrations())


def names(*, private: bool | None = None, environment: str | None = None) -> tuple[str, ...]:
    """The registered names, in registration order, optionally filtered.

    Args:
        private: Only the algorithms that declare their releases (True) or only those that do not (False).
        environment: Only those of this environment kind (``"tabular"`` or ``"lq"``).

    Returns:
        The names.

    Examples:
        >>> "rlsvi" in names(private=True)
        True
    """
    _ensure_loaded()
    return tuple(
        name
        for name, spec in _REGISTRY.items()
        if (private is None or spec.private == private) and (environment is None or spec.environment == environment)
    )


def get(name: str, *, private: bool | None = None, what: str = "algorithm") -> AlgorithmSpec:
    """The spec of ``name``.

    Args:
        name: The registered name.
        private: Refuse an algorithm that is not private (True) or that is (False).
        what: How the name is called in the error (``"algorithm"``).

    Returns:
        The spec.

    Raises:
        TypeError: ``name`` is not a string (an ``ArgumentTypeError``).
        ValueError: An unknown name, or one that is not private when that is asked: the error lists the choices
            and the closest one.
    """
    if not isinstance(name, str):
        raise ArgumentTypeError(f"{what} must be a string, got {type(name).__name__}")
    choices = names(private=private)
    if name not in choices:
        close = difflib.get_close_matches(name, choices, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        shown = name if len(name) <= 60 else name[:57] + "..."
        raise ValueError(f"{what} must be one of {', '.join(choices)}; got {shown!r}{hint}")
    return _REGISTRY[name]


def declare(algorithm: str, epsilon: float | None, delta: float, **parameters: Any) -> PrivacyDeclaration:
    """The privacy declaration of ``algorithm`` for the target (ε, δ) and its parameters.

    Sizes (episodes, horizon, states, actions, dim) are checked against
    :data:`dpkit.algorithms.limits.DECLARATION_LIMITS` before anything is computed.

    Args:
        algorithm: A private algorithm's registered name.
        epsilon: The target ε; ``None`` is allowed for an algorithm that has an ε of its own (its spec's
            ``default_epsilon``: RLSVI's closed-form ε(δ), as it does not choose its noise for a target).
        delta: The target δ.
        **parameters: The parameters the algorithm's declaration names (``required``/``optional``); those left
            ``None`` count as not given.

    Returns:
        The declaration.

    Raises:
        ValueError: An unknown algorithm, a parameter missing or unused, a size above its limit, no declaration or ε
            of its own, or parameters that put σ or sensitivities outside the floating-point range.
        TypeError: The algorithm's declaration returned something other than a PrivacyDeclaration.
    """
    spec = get(algorithm, private=True)
    given = {k: v for k, v in parameters.items() if v is not None}
    missing = [k for k in spec.required if k not in given]
    if missing:
        raise ValueError(f"{algorithm} needs {', '.join(missing)}")
    unused = sorted(set(given) - set(spec.required) - set(spec.optional))
    if unused:
        raise ValueError(f"{algorithm} does not use {', '.join(unused)}")
    for name, limit in DECLARATION_LIMITS.items():  # sizes before any work (the builders check their types)
        value = given.get(name)
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            value = int(value)  # numpy's integers too
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > limit:  # NaN: the builder's
            raise ValueError(above_limit(name, value, limit))
    build = spec.hook("declaration")
    if build is None:
        raise ValueError(
            f"{algorithm} declares its releases only through its agents (no declaration in its registration): "
            "it can be audited, but has no ledger of its own"
        )
    if epsilon is None:
        default = spec.hook("default_epsilon")
        if default is None:
            raise ValueError(f"{algorithm} needs a target epsilon")
        epsilon = float(default(delta, given))
    try:
        declaration = build(epsilon, delta, given)
    except (OverflowError, ZeroDivisionError):
        shown = ", ".join(
            f"{k}={v:.3e}" if isinstance(v, int) and abs(v) >= 10**15 else f"{k}={v!r}"
            for k, v in sorted(given.items())
        )
        raise ValueError(
            f"{algorithm}: epsilon={epsilon!r}, delta={delta!r}, {shown} put the paper's σ or sensitivities "
            "outside the floating-point range"
        ) from None
    if not isinstance(declaration, PrivacyDeclaration):
        raise TypeError(f"{algorithm}'s declaration must return a PrivacyDeclaration, got {type(declaration).__name__}")
    return declaration


def __getattr__(name: str) -> Any:
    if name == "ALGORITHM_NAMES":  # the private algorithms registered now (plugins included)
        return names(private=True)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
