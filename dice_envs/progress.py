"""Progress of long steps: a hook they report to, silent unless someone listens.

    from dice_envs import progress

    with progress.listening(print):         # any callable taking an `Event`
        baselines.evaluate("hold-at-20", "dice_envs/Pig-v0", goal=150)
    with progress.on_terminal():            # tqdm bars on stderr, if stderr is a terminal
        baselines.solve("dice_envs/Yahtzee-v0")

A long step (building tables, a solver's layers or sweeps, a factorisation, Yahtzee's solve and
evaluation) opens a `task` and advances it once per chunk of work, never per state: with
nobody listening, `task` hands back a task that does nothing, at the cost of reading one
context variable. The listener is a context variable, so it holds for the code inside the
`with` (and the threads and tasks started there), not for other threads.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TextIO


@dataclass(frozen=True)
class Event:
    """Where a long step is.

    Attributes:
        task: what it does ("building tables", "solving", ...).
        done: how much of it is done, in `unit`.
        total: how much there is in all (None where unknown beforehand).
        unit: what `done` counts ("states", "layers", ...).
        finished: True on the task's last event.
    """

    task: str
    done: float
    total: float | None
    unit: str
    finished: bool = False


Listener = Callable[[Event], Any]
_LISTENER: ContextVar[Listener | None] = ContextVar("dice_envs_progress", default=None)


class Task:
    """A long step that someone listens to: `advance` after each chunk of work, and leave the
    `with` (or call `finish`) when it is done."""

    __slots__ = ("done", "listener", "name", "total", "unit")

    def __init__(self, name: str, total: float | None, unit: str, listener: Listener) -> None:
        self.name, self.total, self.unit, self.listener = name, total, unit, listener
        self.done = 0.0
        listener(Event(name, 0.0, total, unit))

    def advance(self, amount: float = 1.0) -> None:
        self.done += amount
        self.listener(Event(self.name, self.done, self.total, self.unit))

    def finish(self) -> None:
        self.listener(Event(self.name, self.done, self.total, self.unit, finished=True))

    def __enter__(self) -> Task:
        return self

    def __exit__(self, *exc: object) -> None:
        self.finish()


class _Silent:
    """The task of a step nobody listens to: every call does nothing."""

    __slots__ = ()

    def advance(self, amount: float = 1.0) -> None:
        pass

    def finish(self) -> None:
        pass

    def __enter__(self) -> _Silent:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


SILENT = _Silent()


def task(name: str, total: float | None = None, unit: str = "") -> Task | _Silent:
    """A task for a long step: reported to the listener where there is one, else silent."""
    listener = _LISTENER.get()
    if listener is None:
        return SILENT
    return Task(name, None if total is None else float(total), unit, listener)


def listening_now() -> bool:
    """Whether someone listens (to skip preparing what only a report would show)."""
    return _LISTENER.get() is not None


@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Send every long step's `Event`s inside the `with` to `listener`."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)


class TerminalBars:
    """A listener drawing one tqdm bar per running task on `stream`: a bar shows once its
    task has run `delay` seconds (a quick step shows nothing), redraws at most a few times a
    second, and goes away when its task finishes."""

    def __init__(self, stream: TextIO, delay: float = 1.0) -> None:
        self.stream, self.delay = stream, delay
        self.bars: dict[str, Any] = {}

    def __call__(self, event: Event) -> None:
        from tqdm import tqdm

        bar = self.bars.get(event.task)
        if bar is None:
            bar = self.bars[event.task] = tqdm(
                desc=event.task,
                total=_whole(event.total),
                unit=f" {event.unit}" if event.unit else "it",
                file=self.stream,
                leave=False,
                dynamic_ncols=True,
                mininterval=0.25,
                delay=self.delay,
            )
        if event.done > bar.n:
            bar.update(_whole(event.done - bar.n))
        if event.finished:
            bar.close()
            del self.bars[event.task]

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()
        self.bars.clear()


def _whole(number: float | None) -> float | int | None:
    """A count as an int where it is whole (tqdm then shows 6, not 6.0)."""
    if number is not None and float(number).is_integer():
        return int(number)
    return number


def wanted(json_output: bool = False, stream: TextIO | None = None) -> bool:
    """Whether to show progress: not under `--json`, and only when `stream` (stderr by
    default) is a terminal."""
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return not json_output and isatty is not None and bool(isatty())


@contextmanager
def on_terminal(
    enabled: bool | None = None, stream: TextIO | None = None, delay: float = 1.0
) -> Iterator[None]:
    """Progress bars on `stream` (stderr by default) for every step inside the `with` that
    runs over `delay` seconds, where `enabled` (default: `wanted()`, stream a terminal) says
    so; silent otherwise."""
    stream = sys.stderr if stream is None else stream
    if not (wanted(stream=stream) if enabled is None else enabled):
        yield
        return
    bars = TerminalBars(stream, delay)
    try:
        with listening(bars):
            yield
    finally:
        bars.close()
