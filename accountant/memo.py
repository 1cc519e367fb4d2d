"""Declarations worked out once per process: :func:`cached_declaration` memoises a declaration function (an audit
builds one agent per run, and every agent declares the same releases), :func:`clear_declaration_caches` forgets
them all."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["cached_declaration", "clear_declaration_caches"]

_F = TypeVar("_F", bound=Callable[..., Any])

#: The caches of the functions :func:`cached_declaration` memoises (:func:`clear_declaration_caches` empties them).
_DECLARATION_CACHES: list[Any] = []


def clear_declaration_caches() -> None:
    """Forget every memoised declaration: the next call of a declaration function declares afresh (what an agent
    built without the cache does in every run; bench/rl_throughput.py measures that path)."""
    for cache in _DECLARATION_CACHES:
        cache.cache_clear()


def cached_declaration(function: _F) -> _F:
    """Memoise a declaration function (its results are immutable declarations): agents built once per audit run
    declare the same releases thousands of times. Arguments that cannot be hashed (e.g. a list given where a number
    belongs) skip the cache, so the function's own validation still answers them.

    Args:
        function: the declaration function.

    Returns:
        The memoised function (same signature).
    """
    cached = functools.lru_cache(maxsize=256)(function)
    _DECLARATION_CACHES.append(cached)

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return cached(*args, **kwargs)
        except TypeError as err:
            if "unhashable" not in str(err):
                raise
            return function(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
