"""What a user's own code did wrong, in one line: the file and line an exception was raised at (in this process or
a worker's), and the call dpkit made with the signature it expects (:class:`dpkit.loading.FileFunction`'s calls,
an agent's methods). The command line prints it as its one ``error:`` line (:mod:`dpkit.cli`)."""

from __future__ import annotations

import inspect
import os
import re
import traceback
from typing import Any

__all__ = ["USER_FILES", "CALLS", "AGENT_CALLS", "UserCodeError", "user_frames", "user_error", "accepts", "defined"]

#: The user's files imported so far: the resolved path → the path as the user gave it (what messages show).
USER_FILES: dict[str, str] = {}

#: The call dpkit makes to the function an option names (what the function must accept), for the messages.
FACTORY_CALL = "make_agent(name, env, episodes, rng, *, epsilon, delta, sigma, **options)"
CALLS: dict[str, str] = {
    "--target": "release(dataset, rng, n)",
    "--score": "score(output, canary)",
    "--attack": "attack(outputs)",
    "--agent": FACTORY_CALL,
    "plugins": FACTORY_CALL,
}
#: The methods dpkit calls on a user's agent (either protocol), as it calls them.
AGENT_CALLS: dict[str, str] = {
    "plan": "agent.plan(k)",
    "update": "agent.update(k, states, actions, rewards)",
    "message_statistics": "agent.message_statistics(states, actions, rewards)",
    "billboard_items": "agent.billboard_items(states, actions, rewards)",
    "psums_per_user": "agent.psums_per_user(episodes)",
    "make_counter": "agent.make_counter(shape, sigma, seed, episodes)",
}
_REMOTE_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<name>\S+)', re.M)


class UserCodeError(ValueError):
    """An exception raised in a user's own file (``FILE.py:NAME``), said in one message that names the file, the line
    and the call dpkit made. A ValueError, so that the command line prints it as its one ``error:`` line; it
    pickles (a worker process's error reaches the parent whole)."""


def user_frames(err: BaseException) -> list[tuple[str, int, str]]:
    """The frames of ``err``'s traceback in a user's file, outermost first: this process's frames, then those of a
    worker's traceback (concurrent.futures attaches its text as the cause).

    Args:
        err: An exception.

    Returns:
        Each frame as (the file as the user gave it, the line, the function).
    """
    frames = [(f.filename, f.lineno or 0, f.name) for f in traceback.extract_tb(err.__traceback__)]
    cause = err.__cause__
    if cause is not None and type(cause).__name__ == "_RemoteTraceback":
        frames += [(m["file"], int(m["line"]), m["name"]) for m in _REMOTE_FRAME.finditer(str(cause))]
    out = []
    for file, line, name in frames:
        shown_file = USER_FILES.get(os.path.realpath(file))
        if shown_file is not None:
            out.append((shown_file, line, name))
    return out


def user_error(err: BaseException) -> str | None:
    """One line saying where a user's code raised ``err`` — ``myagent.py:68 (plan): KeyError: 'oops'``, with the call
    dpkit made where it is one of an agent's methods (``— in the agent's plan, which dpkit calls as agent.plan(k)``)
    — or None when no frame of its traceback is in a user's file (dpkit's own error, said as it is).

    Args:
        err: An exception the command line caught.

    Returns:
        The message, or None.
    """
    if isinstance(err, UserCodeError):
        return None  # it says so already
    frames = user_frames(err)
    if not frames:
        if isinstance(err, TypeError) and USER_FILES:  # an agent's method that does not take dpkit's call
            called = re.match(r"(?:\w+\.)*(\w+)\(\) (?:takes|missing|got)", str(err))
            if called is not None and called[1] in AGENT_CALLS:
                return f"{err}; dpkit calls {AGENT_CALLS[called[1]]}"
        return None
    file, line, name = frames[-1]
    entry = frames[0][2]
    where = f" — in the agent's {entry}, which dpkit calls as {AGENT_CALLS[entry]}" if entry in AGENT_CALLS else ""
    return f"{file}:{line} ({name}): {type(err).__name__}: {err}{where}"


def accepts(function: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether ``function``'s signature binds the call ``function(*args, **kwargs)``.

    Args:
        function: A user's function.
        args: The positional arguments of the call.
        kwargs: Its keyword arguments.

    Returns:
        Whether the call binds (True where the function has no signature to read).
    """
    try:
        inspect.signature(function).bind(*args, **kwargs)
    except TypeError:
        return False
    except ValueError:  # no signature (some builtins)
        return True
    return True


def defined(function: Any) -> str:
    """Where and how a user's function is defined, for a message: `` (my.py:10 defines two_args(dataset, rng))``.

    Args:
        function: A user's function.

    Returns:
        The text (with its leading space), or "" where the function has no code or signature to read.
    """
    try:
        signature = inspect.signature(function)
        code = function.__code__
    except (TypeError, ValueError, AttributeError):
        return ""
    file = USER_FILES.get(os.path.realpath(code.co_filename), code.co_filename)
    return f" ({file}:{code.co_firstlineno} defines {function.__name__}{signature})"
