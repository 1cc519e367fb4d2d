"""Ctrl-C is one line: ``error: interrupted``, exit 130, nothing half-written — its worker processes die of it
silently (dpkit.algorithms.worker_processes) and the command says it once (dpkit.cli)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dpkit.algorithms.worker_processes import quiet_context

DPKIT = str(Path(sys.executable).with_name("dpkit"))


def _wait(event: object) -> None:
    """A worker's target: say it runs, then wait (for the signal)."""
    event.set()  # type: ignore[attr-defined]
    time.sleep(60)


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_a_worker_dies_of_sigint_silently(method: str, capfd: pytest.CaptureFixture[str]) -> None:
    before = signal.getsignal(signal.SIGINT)  # Python's default, or SIG_IGN in a shell's background job
    context = quiet_context(method)
    started = context.Event()
    worker = context.Process(target=_wait, args=(started,))
    worker.start()
    assert started.wait(60)
    os.kill(worker.pid, signal.SIGINT)
    worker.join(30)
    assert worker.exitcode == -signal.SIGINT  # the default action: no KeyboardInterrupt, no traceback
    assert capfd.readouterr().err == ""
    assert signal.getsignal(signal.SIGINT) == before  # the parent's handler put back


def test_a_forkserver_context_is_left_as_multiprocessing_has_it() -> None:
    if "forkserver" not in multiprocessing.get_all_start_methods():
        pytest.skip("no forkserver here")
    assert type(quiet_context("forkserver")) is type(multiprocessing.get_context("forkserver"))


@pytest.mark.slow
def test_ctrl_c_during_a_report_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to the terminal's process group: the command and its workers) once the report's audits run
    in worker processes: one ``error:`` line, the last on stderr, no traceback; exit 130; no report folder."""
    out = tmp_path / "report"
    job = subprocess.Popen(
        [DPKIT, "report", "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env=dict(os.environ, COLUMNS="120", NO_COLOR="1"),
    )
    try:
        lines = []
        assert job.stderr is not None
        while not any(line.startswith("audits at") for line in lines):  # the workers are running
            line = job.stderr.readline()
            assert line, lines
            lines.append(line)
        time.sleep(2)
        os.killpg(job.pid, signal.SIGINT)
        rest, err = job.communicate(timeout=120)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
    err = "".join(lines) + err
    assert job.returncode == 130, err
    assert [line for line in err.splitlines() if "error" in line.lower()] == ["error: interrupted"], err
    assert err.splitlines()[-1] == "error: interrupted" and "Traceback" not in err and "Interrupt" not in err
    assert rest == "" and not out.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_ctrl_c_on_a_terminal_clears_the_reports_bars(tmp_path: Path) -> None:
    """On a terminal the report's stage bars are live on stderr: a Ctrl-C once the audits run erases them, and what
    is left after them is the one ``error:`` line (no traceback of the workers, no frozen bars)."""
    import pty
    import select

    pid, fd = pty.fork()
    if pid == 0:  # the child: the command on the terminal
        os.environ["COLUMNS"] = "100"
        os.execv(DPKIT, ["dpkit", "report", "--out", str(tmp_path / "report")])
    seen, sent, status = b"", False, None
    deadline = time.monotonic() + 600
    while status is None and time.monotonic() < deadline:
        if not sent and b"ldp-ucrl-vtr: position first" in seen:  # the audits run in the workers
            time.sleep(2)
            os.killpg(os.getpgid(pid), signal.SIGINT)  # what the terminal does on Ctrl-C
            sent = True
        if select.select([fd], [], [], 0.5)[0]:
            try:
                seen += os.read(fd, 65536)
            except OSError:  # the child closed the terminal
                pass
        done, code = os.waitpid(pid, os.WNOHANG)
        status = code if done else None
    assert status is not None and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 130
    while select.select([fd], [], [], 0.5)[0]:  # what the command wrote just before it ended
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(fd)
    text = seen.decode(errors="replace")
    after = text.rsplit("\x1b[?25h", 1)[-1]  # what was written once the bars stopped (the cursor shown again)
    assert after.replace("\r", "").replace("\x1b[1A", "").replace("\x1b[2K", "") == "error: interrupted\n"
    assert "Traceback" not in text and "KeyboardInterrupt" not in text and not (tmp_path / "report").exists()
