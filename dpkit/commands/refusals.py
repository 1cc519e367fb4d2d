"""Refusing the options that do not apply to the form given: one error line naming every such option typed.

An option is refused only when the user gave it (:func:`given`): one left at its default passes.
"""

from __future__ import annotations

from collections.abc import Sequence

import click

__all__ = ["given", "flag_of", "refuse_options"]


def given(ctx: click.Context, name: str) -> bool:
    """Whether the user gave option ``name`` (on the command line or through its environment variable).

    An option left at its default is not given, even when the default is a value (``--method exact``);
    typing the default value is giving it. click tells the two apart by the parameter's source.

    Args:
        ctx: The command's click context.
        name: The parameter's name (``claim_file``).

    Returns:
        Whether it was given.
    """
    from click.core import ParameterSource

    return ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP, None)


def flag_of(ctx: click.Context, name: str) -> str:
    """The long flag of the parameter called ``name`` (``claim_file`` → ``--claim``; an argument by its metavar).

    Args:
        ctx: The command's click context.
        name: The parameter's name.

    Returns:
        Its longest ``--`` flag (or its metavar, or ``--name`` for a name the command does not have).
    """
    for param in ctx.command.params:
        if param.name == name:
            if isinstance(param, click.Argument):
                return param.make_metavar(ctx)
            longs = [opt for opt in param.opts if opt.startswith("--")]
            return max(longs, key=len) if longs else param.opts[0]
    return "--" + name.replace("_", "-")


def refuse_options(ctx: click.Context, names: Sequence[str], form: str) -> None:
    """One error line naming every option of ``names`` the user gave, which do not apply to ``form``.

    Options left at their defaults pass (see :func:`given`); the flags are named in the order the
    command declares them: ``--trials and --mu do not apply to an ALGORITHM audit``.

    Args:
        ctx: The command's click context.
        names: The parameters (by name) that do not apply.
        form: The form given, in words (``an ALGORITHM audit``).

    Raises:
        click.UsageError: One of ``names`` was given.
    """
    order = {param.name: i for i, param in enumerate(ctx.command.params)}
    typed = sorted((name for name in names if given(ctx, name)), key=lambda n: order.get(n, len(order)))
    if not typed:
        return
    flags = [flag_of(ctx, name) for name in typed]
    listed = flags[0] if len(flags) == 1 else f"{', '.join(flags[:-1])} and {flags[-1]}"
    raise click.UsageError(f"{listed} {'does' if len(flags) == 1 else 'do'} not apply to {form}")
