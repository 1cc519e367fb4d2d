"""The ``dpkit`` command line: the group, its commands (one module each in :mod:`dpkit.commands`) and ``main``.

Every command that prints a result takes ``--json`` and then prints exactly one JSON object on
stdout. Bad input — a value the API rejects, an option click cannot parse, or an option that does
not apply to the form given — is reported as one line ``error: …`` on stderr with exit code 2,
never a traceback. A command's module is imported only when the command runs, so ``dpkit calibrate``
imports the accountant and nothing of the audits, algorithms or reports.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
import signal
import sys
import threading
import warnings
from collections.abc import Iterator, Sequence

import click

from . import __version__
from .render import plain

#: Command name → "module:attribute" under :mod:`dpkit.commands`, in the order ``--help`` lists them.
COMMANDS: dict[str, str] = {
    "calibrate": "accounting:calibrate",
    "epsilon": "accounting:epsilon",
    "delta": "accounting:delta",
    "methods": "accounting:methods",
    "budgets": "budgets:budgets",
    "convert": "convert:convert",
    "ledger": "ledger:ledger_cmd",
    "tree": "tree:tree",
    "rlsvi": "rlsvi:rlsvi",
    "audit": "audit.command:audit",
    "simulate": "simulate:simulate",
    "report": "report:report",
}


class LazyGroup(click.Group):
    """A click group that imports a command's module when the command is looked up."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """The command names, in the order ``--help`` lists them (:data:`COMMANDS`).

        Args:
            ctx: The group's click context (unused).

        Returns:
            The names, without importing any command's module.
        """
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command named ``cmd_name``, importing its module under :mod:`dpkit.commands` now.

        Args:
            ctx: The group's click context (unused).
            cmd_name: The command's name, as typed.

        Returns:
            The click command, or None for a name not in :data:`COMMANDS`.
        """
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attribute = target.split(":")
        command = getattr(importlib.import_module(f"dpkit.commands.{module}"), attribute)
        assert isinstance(command, click.Command)
        return command

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """As click's, with "did you mean …?" for an unknown command name.

        Args:
            ctx: The group's click context.
            args: The arguments left on the command line, the command's name first.

        Returns:
            The command's name, the command and the arguments left for it.

        Raises:
            click.UsageError: ``args`` starts with a name that is not a command (a near one offered).
        """
        name = args[0] if args else ""
        if name and not name.startswith("-") and name not in COMMANDS:
            close = difflib.get_close_matches(name, list(COMMANDS), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f" (commands: {', '.join(COMMANDS)})"
            raise click.UsageError(f"no such command {name!r}{hint}", ctx)
        return super().resolve_command(ctx, args)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dpkit")
def cli() -> None:
    """dpkit: account for, audit and report the privacy of private RL algorithms."""


#: What users of other tools type for an option of ours: the name → the option that does the job (offered only
#: where the command has it). Opacus, tensorflow-privacy, dp-accounting and the papers' names.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "--steps": ("--compositions",),
    "--num-steps": ("--steps", "--compositions"),
    "--iterations": ("--steps", "--compositions"),
    "--niter": ("--steps", "--compositions"),
    "--num-compositions": ("--compositions",),
    "--count": ("--compositions",),
    "--releases": ("--compositions",),
    "--k": ("--compositions",),
    "--noise-multiplier": ("--sigma",),
    "--noise": ("--sigma",),
    "--std": ("--sigma",),
    "--stddev": ("--sigma",),
    "--sample-rate": ("--sampling-rate",),
    "--sampling-probability": ("--sampling-rate",),
    "--sampling-prob": ("--sampling-rate",),
    "--q": ("--sampling-rate",),
    "--n": ("--dataset-size",),
    "--num-examples": ("--dataset-size",),
    "--dataset": ("--dataset-size",),
    "--data-size": ("--dataset-size",),
    "--population-size": ("--dataset-size",),
    "--batch": ("--batch-size",),
    "--lot-size": ("--batch-size",),
    "--expected-batch-size": ("--batch-size",),
    "--num-epochs": ("--epochs",),
    "--epoch": ("--epochs",),
    "--eps": ("--epsilon",),
    "--target-epsilon": ("--epsilon",),
    "--target-delta": ("--delta",),
    "--l2-norm-clip": ("--sensitivity",),
    "--max-grad-norm": ("--sensitivity",),
    "--clip": ("--sensitivity",),
    "--accountant": ("--method",),
    "--mechanism": ("--event",),
    "--dp-event": ("--event",),
    "--event-file": ("--event",),
    "--save": ("--save-event",),
    "--output": ("--out",),
    "-o": ("--out",),
}


def _option_hint(err: click.exceptions.NoSuchOption) -> str:
    """The option that does the job of an unknown one (:data:`SYNONYMS`), before click's near names."""
    command = err.ctx.command if err.ctx is not None else None
    known = {opt for p in command.params for opt in p.opts} if command is not None else set()
    name = err.option_name.split("=", 1)[0]
    wanted = [o for o in SYNONYMS.get(name, ()) if o in known]
    near = [o for o in difflib.get_close_matches(name, sorted(known), n=3, cutoff=0.7) if o not in wanted]
    offers = wanted or near
    if not offers:
        return f"no such option: {name}"
    said = " or ".join(offers[:3])
    return f"no such option: {name}; did you mean {said}?"


def _error(message: object) -> int:
    """Print ``error: MESSAGE`` as one plain line on stderr (user text in it cannot inject) and return 2."""
    click.echo(f"error: {plain(message)}", err=True)
    return 2


def _invoke(ctx: click.Context) -> object:
    """Run the command; an exception raised in a user's own file (an agent's method, say) becomes one message naming
    the file, the line and the call dpkit made (:func:`dpkit.user_code.user_error`); any other is raised as it is."""
    try:
        return cli.invoke(ctx)
    except Exception as err:
        user_code = sys.modules.get("dpkit.user_code")  # imported only when a command loaded a user's file
        said = None if user_code is None else user_code.user_error(err)
        if user_code is None or said is None:
            raise
        raise user_code.UserCodeError(said) from None


@contextlib.contextmanager
def _one_line_on_interrupt() -> Iterator[None]:
    """While a command runs: a Ctrl-C ends its worker processes (silently: they leave it to this one, see
    :mod:`dpkit.algorithms.worker_processes`) and is raised here as KeyboardInterrupt, for :func:`main` to say in one
    line; what a pool's threads then raise of the workers' end is not printed beside it."""
    if threading.current_thread() is not threading.main_thread():  # signal handlers belong to the main thread
        yield
        return
    interrupted = threading.Event()

    def on_sigint(signum: int, frame: object) -> None:
        interrupted.set()
        import multiprocessing

        for child in multiprocessing.active_children():  # a worker still starting ignores the Ctrl-C
            child.terminate()
        raise KeyboardInterrupt

    def on_thread_error(args: threading.ExceptHookArgs) -> None:
        if not interrupted.is_set():
            previous_hook(args)

    previous_handler = signal.signal(signal.SIGINT, on_sigint)
    previous_hook, threading.excepthook = threading.excepthook, on_thread_error
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous_handler)
        threading.excepthook = previous_hook


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: run the CLI, turning every bad input into one line ``error: …`` and exit code 2.

    Ctrl-C prints ``error: interrupted`` and exits with 130 (128 + SIGINT, the shell's convention), its worker
    processes ended and nothing else on stderr of it (:func:`_one_line_on_interrupt`); a report being written when
    it comes keeps the previous report (see :func:`dpkit.reports.render.write_report`).

    Args:
        argv: The arguments after ``dpkit`` (None: ``sys.argv[1:]``).

    Returns:
        The exit status: the command's (0 unless it returned one: 1 for an audit's violation, say), 2 for bad
        input, 130 for Ctrl-C. Bad input is reported, never raised.
    """
    args = list(argv) if argv is not None else sys.argv[1:]
    try:
        with _one_line_on_interrupt():
            return _run(args)
    except KeyboardInterrupt:  # one that came as the handlers were put back
        click.echo("error: interrupted", err=True)
        return 130


def _run(args: list[str]) -> int:
    """:func:`main`'s body: run the command of ``args``, every bad input one line ``error: …`` (exit status 2)."""
    try:
        # numpy's overflow warnings of extreme inputs are not for users: the results handle them (inf, 0)
        with warnings.catch_warnings(), cli.make_context("dpkit", args) as ctx:
            warnings.simplefilter("ignore", RuntimeWarning)
            # a suspicious target (accountant.SuspiciousTargetWarning): the commands print it as a warning: line
            # (matched by its text, so that --help does not import the accountant to name the category)
            warnings.filterwarnings("ignore", message=r"delta = \S+ is (at least 0\.5|larger than epsilon)")
            rv = _invoke(ctx)
    except click.exceptions.NoArgsIsHelpError as err:  # pragma: no cover - click >= 8.2
        click.echo(err.ctx.get_help() if err.ctx else str(err))
        return 0
    except click.exceptions.Exit as err:  # --help, --version
        return err.exit_code
    except click.exceptions.NoSuchOption as err:
        return _error(_option_hint(err))
    except click.UsageError as err:
        return _error(err.format_message())
    except (KeyboardInterrupt, click.Abort):
        click.echo("error: interrupted", err=True)
        return 130
    except (ValueError, TypeError) as err:  # includes UnicodeDecodeError
        return _error(err)
    except MemoryError as err:  # numpy names the array it could not allocate; Python's own MemoryError is bare
        detail = f" ({err})" if str(err) else ""
        return _error(f"not enough memory for these sizes{detail}; lower the episodes, states, horizon or dimensions")
    except RecursionError:
        return _error("input nested too deeply")
    except ArithmeticError as err:  # a last resort: the API names the value where it can
        return _error(f"a number is beyond what doubles can compute with ({type(err).__name__}: {err})")
    except OSError as err:
        name = f" {str(err.filename)!r}" if err.filename else ""
        return _error(f"cannot access{name}: {err.strerror or err}")
    except click.ClickException as err:
        return _error(err.format_message())
    return rv if isinstance(rv, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
