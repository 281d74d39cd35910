"""Where a reader's answer runs: a fresh thread each time, stopped by a time limit or an interrupt.

A checker never runs the reader's function on its own stack, for two reasons:

- **Its reference is in its locals.** An answer that walks up its own stack (``error.__traceback__.tb_frame``,
  ``frame.f_back``: attribute reads, which no hook sees) would find the expected result there. In a thread
  of its own the answer's stack ends at :func:`.run_answer`'s little task, which holds nothing of the checker.
- **An answer may never end.** ``while True: pass`` in a lab must not cost the student the rest of the lab.

Why a fresh thread for every answer, and how it is stopped: Python cannot kill a thread, so the thread
that waits (the kernel's main thread, where the checker runs) never waits on a stuck one. It waits on an
event the answer's thread sets as it ends, which an interrupt (the kernel's stop button, ``SIGINT``) or
the time limit cuts short (not on ``Thread.join``: an interrupt that lands there marks the thread as
stopped while it still runs, CPython's fix of bpo-45274); then it raises an exception *inside* the
answer's thread with
``ctypes.pythonapi.PyThreadState_SetAsyncExc`` (a public function of CPython's C API). Python checks for
it between bytecodes, so a loop that never ends is stopped within a few milliseconds; the checker
then reports the time limit (a verdict) or re-raises the interrupt. An answer stuck inside one long C
call (a huge matrix product) is stopped when that call returns; one that catches every exception in
an endless loop cannot be stopped at all: it is left behind, still running, and the verdict says so.
Either way the next check starts on a thread of its own, so nothing queues behind a stuck answer (the
checkers once ran every answer on one long-lived thread, and a single endless loop hung every later
check until the kernel was restarted). A thread costs about 0.1 ms to start.

Alternatives that do not work in a notebook: running the answer in the main thread under a
``signal.alarm`` (Unix only, the main thread only, and the answer's stack would lead back to the
checker), or a trace function that checks the clock on every line (it slows every answer many times).
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from typing import Any

import torch

from .guard import CallWatch, armed, watching

__all__ = ["run_answer", "TIME_LIMIT", "AnswerStopped", "TimeLimitExceeded", "AnswerInterrupted"]

TIME_LIMIT = 30.0
"""Seconds one call of a reader's function may run before it is stopped (a checker may give more)."""

_GRACE = 1.0
"""Seconds the answer's thread is given to end once stopped, before it is left behind."""


class AnswerStopped(BaseException):  # noqa: N818 (raised inside the answer's thread to stop it)
    """Raised inside an answer's thread to stop it (not an ``Exception``: ``except Exception`` lets it through)."""


class TimeLimitExceeded(Exception):  # noqa: N818
    """The reader's function ran past its time limit and was stopped (or left behind, if it could not be)."""

    def __init__(self, seconds: float, stopped: bool) -> None:
        super().__init__(f"the answer ran past {seconds:g} s")
        self.seconds, self.stopped = seconds, stopped


class AnswerInterrupted(KeyboardInterrupt):
    """The reader interrupted a check: their function was stopped, and the next check starts afresh."""


def _stop(thread: threading.Thread, done: threading.Event) -> bool:
    """Raise :class:`.AnswerStopped` in ``thread`` until it ends, for :data:`._GRACE` seconds; whether it ended.

    Whether it ended is read from ``done``, which the thread sets as it ends, not from ``thread.is_alive()``: an
    interrupt that lands in ``Thread.join`` marks a thread that still runs as stopped (CPython's bpo-45274 fix
    releases the lock the running thread holds), which is how the checkers once left an endless answer running."""
    deadline = time.monotonic() + _GRACE
    while thread.ident is not None and not done.is_set() and time.monotonic() < deadline:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(AnswerStopped))
        done.wait(0.05)
    return done.is_set()


def run_answer(fn: Callable[..., Any], *args: Any, watch: CallWatch | None = None, modes: Iterable[Any] = (),
               limit: float = TIME_LIMIT) -> Any:
    """``fn(*args)`` run in a fresh thread, under ``watch``, within ``limit`` seconds.

    The answer runs with this thread's grad mode, inside ``modes`` (PyTorch modes of the checker: a memory
    tracker), entered in its thread.

    Args:
        fn: The reader's function.
        *args: Its arguments.
        watch: The :class:`~helpers.exercises.guard.CallWatch` in force, if any.
        modes: Context managers to enter in the answer's thread around the call.
        limit: Seconds the call may run.

    Returns:
        What ``fn(*args)`` returned.

    Raises:
        TimeLimitExceeded: It ran past ``limit`` (it was stopped, or left behind when it could not be).
        AnswerInterrupted: The reader interrupted the check (the answer was stopped).
        BaseException: Whatever ``fn`` raised, re-raised here.
    """
    box: dict[str, Any] = {}
    grad = torch.is_grad_enabled()
    modes = tuple(modes)
    for mode in modes:  # a mode's own code (a memory tracker's) is the checker's, not the answer's
        if watch is not None:
            watch.allow(type(mode))

    ready, done = threading.Event(), threading.Event()

    def task() -> None:
        ready.wait()  # until the watch is armed (a thread started before is not the answer's)
        if "cancelled" in box:  # interrupted before the answer started
            done.set()
            return
        try:
            with ExitStack() as stack:
                stack.enter_context(torch.set_grad_enabled(grad))
                for mode in modes:
                    stack.enter_context(mode)
                if watch is not None:
                    stack.enter_context(watching(watch, process=False))
                box["result"] = fn(*args)
        except BaseException as error:  # noqa: BLE001 (handed to the waiting thread, which raises it)
            box["error"] = error
        finally:
            done.set()

    thread = threading.Thread(target=task, name="answer", daemon=True)
    with ExitStack() as stack:
        try:
            thread.start()  # before the watch is armed: its own thread gets no trace from threading.settrace
            if watch is not None:
                stack.enter_context(armed(watch))
            ready.set()
            if not done.wait(limit):  # an Event, not Thread.join: see _stop
                raise TimeLimitExceeded(limit, _stop(thread, done))
        except KeyboardInterrupt:
            if not ready.is_set():
                box["cancelled"] = True
                ready.set()
            stopped = _stop(thread, done)
            raise AnswerInterrupted("the check was interrupted: your function was " + (
                "stopped, and the next check starts afresh" if stopped else
                "asked to stop but goes on (it catches every exception?); the next check starts afresh, "
                "but restart the kernel to free the processor")) from None
        finally:
            if watch is not None:
                watch.closed = True
    if "error" in box:
        raise box["error"]
    return box.get("result")
