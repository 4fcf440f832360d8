"""The main job: every config in configs/, every seed of the budget, then the report.

    python -m training.sweep [--budget quick|full] [--games pig ...] [--workers 2]
                             [--backend local|ray] [--address ADDRESS] [--runs runs]
                             [--out dice-envs-report/<budget>]

Runs go to the run store `--runs`: a finished run is read back, a stopped one resumes from its
checkpoint, so the sweep can be stopped (Ctrl-C) and started again at any time. With
`--backend ray` every run is a Ray task, on a local Ray started here or on the cluster at
`--address`; the tasks ship their runs' files back, so no node needs to see the store.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib.util
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from tqdm import tqdm

from training.config import BUDGETS, ConfigError
from training.runs import planned_runs, read_finished, run_dir, run_identity


class SweepBar:
    """One bar over the steps of all runs: steps/s, runs done, the latest gap, and time left.

    Time left is not tqdm's (steps left over the mean rate, which mixes PPO's few thousand
    steps/s with Q-learning's hundreds of thousands): each unfinished run's steps left are
    divided by the rate measured on runs of its own kind (same label up to the seed; else
    same algorithm), summed, and shared among the workers.
    """

    FORMAT = (
        "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}, {rate_fmt}{postfix}]"
    )

    def __init__(
        self,
        labels: list[str],
        totals: list[int],
        done: list[int],
        kinds: list[tuple[str, str]] | None = None,
        workers: int = 1,
    ) -> None:
        self.labels, self.totals, self.done = labels, totals, list(done)
        self.kinds = kinds or [(label, "") for label in labels]
        self.workers = workers
        self.started: dict[int, tuple[float, int]] = {}  # index -> (time, steps) at start
        self.ended: dict[int, float] = {}  # index -> time its "done" came
        self.finished = sum(1 for d, t in zip(done, totals, strict=True) if d >= t)
        self.runs = len(totals)
        self.last_gap = ""
        self.bar = tqdm(
            total=sum(totals), initial=sum(done), unit="step", unit_scale=True, desc="sweep",
            dynamic_ncols=True, file=sys.stderr, bar_format=self.FORMAT,
        )  # fmt: skip
        self._postfix()

    def _rate(self, index: int, now: float) -> float | None:
        """Steps per second of runs like `index`: its own kind, else its algorithm."""
        for position in (0, 1):
            rates = [
                (self.done[i] - steps) / (self.ended.get(i, now) - start)
                for i, (start, steps) in self.started.items()
                if self.kinds[i][position] == self.kinds[index][position]
                and self.ended.get(i, now) - start > 1.0
                and self.done[i] > steps
            ]
            if rates:
                return sum(rates) / len(rates)
        return None

    def seconds_left(self, now: float | None = None) -> tuple[float, bool] | None:
        """(seconds left, whether every unfinished run's kind has a measured rate yet);
        None before any rate is measured. Runs of unmeasured kinds count as no time."""
        now = time.monotonic() if now is None else now
        left = [i for i in range(self.runs) if self.done[i] < self.totals[i]]
        total, complete, measured = 0.0, True, False
        for i in left:
            rate = self._rate(i, now)
            if rate is None:
                complete = False
                continue
            measured = True
            total += (self.totals[i] - self.done[i]) / rate
        if left and not measured:
            return None
        return total / max(1, min(self.workers, len(left))), complete

    def _postfix(self) -> None:
        text = f"runs {self.finished}/{self.runs}"  # tqdm puts ", " before the postfix
        estimate = self.seconds_left()
        if estimate is not None:
            seconds, complete = estimate
            bound = "about" if complete else "at least"
            text += f", {bound} {tqdm.format_interval(seconds)} left"
        if self.last_gap:
            text += f", {self.last_gap}"
        self.bar.set_postfix_str(text, refresh=False)

    def handle(self, message: tuple) -> None:
        kind, index = message[0], message[1]
        if kind == "start":
            self.started[index] = (time.monotonic(), message[2])
        if kind in ("start", "steps", "eval"):
            steps = min(message[2], self.totals[index])  # PPO ends past its budget
            self.bar.update(steps - self.done[index])
            self.done[index] = steps
            if kind == "eval":
                gap = 0.0 if abs(message[3]) < 1e-12 else message[3]  # rounding, not a gain
                self.last_gap = f"{self.labels[index]} {message[4]} {100 * gap:.3g} %"
        elif kind == "done":
            self.finished += 1
            self.ended[index] = time.monotonic()
            self.bar.update(self.totals[index] - self.done[index])
            self.done[index] = self.totals[index]
        self._postfix()
        self.bar.refresh()

    def close(self) -> None:
        self.bar.close()


def make_backend(name: str, workers: int, address: str | None):
    from training.backends import LocalBackend, RayBackend

    if name == "ray":
        return RayBackend(address, workers)
    return LocalBackend(workers)


def sweep(
    tasks: list[tuple[Path, dict[str, Any], int]],
    root: str | Path,
    backend,
) -> tuple[list[dict], list[str], dict[str, int]]:
    """Run every task not yet finished on `backend`; return (results, failures, counts of
    runs trained here and of those resumed from a checkpoint)."""
    results: list[dict | None] = [None] * len(tasks)
    labels = [f"{path.parent.name}/{path.stem} s{seed}" for path, _, seed in tasks]
    todo = []
    from training.train import load_run

    for index, (_, config, seed) in enumerate(tasks):
        directory = run_dir(root, config, seed)
        if read_finished(directory, run_identity(config, seed)) is not None:
            results[index] = load_run(directory)
        else:
            todo.append(index)
    # The longest runs first (PPO's are), so the workers finish together.
    todo.sort(key=lambda i: (tasks[i][1]["algo"] != "ppo", -tasks[i][1]["timesteps"], i))
    totals = [config["timesteps"] for _, config, _ in tasks]
    done = [totals[i] if results[i] is not None else 0 for i in range(len(tasks))]
    failures: list[str] = []
    resumed = 0
    kinds = [(f"{path.parent.name}/{path.stem}", config["algo"]) for path, config, _ in tasks]
    bar = SweepBar(labels, totals, done, kinds, getattr(backend, "workers", 1))
    try:
        if todo:
            backend.start([(i, tasks[i][1], tasks[i][2], str(root)) for i in todo])
            remaining = set(todo)
            while remaining:
                for message in backend.poll(timeout=0.5):
                    bar.handle(message)
                    resumed += message[0] == "start" and message[2] > 0
                    if message[0] in ("done", "failed"):
                        remaining.discard(message[1])
                    if message[0] == "done":
                        results[message[1]] = message[2]
                    elif message[0] == "failed":
                        failures.append(f"{labels[message[1]]}: {message[2].strip()}")
        backend.close()
    except KeyboardInterrupt:
        bar.close()
        backend.stop()
        raise
    bar.close()
    counts = {"trained": len(todo), "resumed": resumed}
    return [r for r in results if r is not None], failures, counts


def runs_summary(counts: dict[str, int], runs: int) -> str:
    """What the sweep did with its runs: trained (resumed among them), read back."""
    fresh = counts["trained"] - counts["resumed"]
    return (
        f"{fresh} trained, {counts['resumed']} resumed from a checkpoint, "
        f"{runs - counts['trained']} read back"
    )


def _sigterm_as_sigint(signum, frame) -> None:
    """SIGTERM handled as the Ctrl-C the sweep already handles: held by `ctrl_c_deferred`
    while a message or a shipped run is being written, then raised; once only, so that a
    second SIGTERM cannot break off the stopping of the workers (SIGKILL still can)."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.raise_signal(signal.SIGINT)


def _catch_sigterm() -> tuple[Any, Any] | None:
    """Handle SIGTERM as Ctrl-C from now on; return the SIGTERM and SIGINT handlers replaced
    (None outside the main thread, where no handler can be set). A SIGINT that is ignored (a
    background job of a non-interactive shell starts so) raises KeyboardInterrupt again: a
    SIGTERM passed on to it must not be lost."""
    if threading.current_thread() is not threading.main_thread():
        return None
    previous_int = signal.getsignal(signal.SIGINT)
    if not callable(previous_int):
        signal.signal(signal.SIGINT, signal.default_int_handler)
    return signal.signal(signal.SIGTERM, _sigterm_as_sigint), previous_int


@contextlib.contextmanager
def _sigterm_as_ctrl_c():
    """SIGTERM to the sweep alone (`kill PID`, a job scheduler's limit) stops it as Ctrl-C
    does (exit 130): its workers are stopped too. Otherwise the sweep dies and its worker
    processes live on, training the runs still queued and holding their locks."""
    previous = _catch_sigterm()
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous[0])
            signal.signal(signal.SIGINT, previous[1])


def main(argv: list[str] | None = None, prog: str = "python -m training.sweep") -> int:
    parser = _parser(prog)
    args = parser.parse_args(argv)
    tasks = _planned_tasks(parser, args)
    start = time.perf_counter()
    try:
        with _sigterm_as_ctrl_c():
            backend = make_backend(args.backend, args.workers, args.address)
            _catch_sigterm()  # again: `ray.init` sets a SIGTERM handler that exits at once
            results, failures, counts = sweep(tasks, args.runs, backend)
    except KeyboardInterrupt:
        finished = sum(
            read_finished(run_dir(args.runs, c, s), run_identity(c, s)) is not None
            for _, c, s in tasks
        )
        print(
            f"interrupted: {finished} of {len(tasks)} runs finished, the others keep their last "
            "checkpoint; run the same command again to resume",
            file=sys.stderr,
        )
        return 130
    wall = time.perf_counter() - start
    if failures:
        print("\n\n".join(failures), file=sys.stderr)
        print(f"{len(failures)} of {len(tasks)} runs failed; no report written", file=sys.stderr)
        return 1
    print(
        f"{len(tasks)} runs finished in {wall:.0f} s: {runs_summary(counts, len(tasks))}",
        file=sys.stderr,
    )
    print(f"run store: {Path(args.runs).resolve()}", file=sys.stderr)
    _write_report(args, tasks, counts, wall)
    return 0


def _parser(prog: str = "python -m training.sweep") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--budget", default="quick", choices=BUDGETS)
    parser.add_argument("--configs", default="configs", help="folder of <game>/<name>.yaml")
    parser.add_argument(
        "--games",
        nargs="+",
        default=None,
        help="only these configs/ folders (pig) or configs (pig/ppo_goal100)",
    )
    parser.add_argument("--runs", default="runs", help="the run store (default: runs)")
    parser.add_argument(
        "--out", default=None, help="where the report goes (default: dice-envs-report/<budget>)"
    )
    parser.add_argument("--workers", type=int, default=2, help="parallel runs (CPUs for Ray)")
    parser.add_argument("--backend", default="local", choices=("local", "ray"))
    parser.add_argument("--address", default=None, help="a Ray cluster (default: start one)")
    parser.add_argument(
        "--no-report", action="store_true", help="train only (the wall time still goes to OUT)"
    )
    return parser


def _planned_tasks(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list:
    """The runs the arguments select; a bad argument or an empty selection exits with 2."""
    if args.workers < 1:
        parser.error(f"--workers must be >= 1, got {args.workers}")
    if args.address is not None and args.backend != "ray":
        parser.error("--address needs --backend ray")
    if args.backend == "ray" and importlib.util.find_spec("ray") is None:
        parser.error("--backend ray needs Ray: pip install -e '.[ray]'")
    try:
        tasks = planned_runs(args.configs, args.budget, args.games)
    except (ConfigError, ValueError) as error:
        parser.error(str(error))
    if not tasks:
        parser.error(
            f"no config in {args.configs}/<game>/*.yaml (of {args.games or 'any game'}) "
            f"has a `{args.budget}` budget"
        )
    return tasks


def _write_report(args: argparse.Namespace, tasks: list, counts: dict, wall: float) -> None:
    """Record the sweep's wall time (when it trained every run whole), then the report."""
    from training.report import build_report, default_out, record_sweep

    out = default_out(args.budget) if args.out is None else Path(args.out)
    # A wall time says how long the budget takes only if this sweep trained every run whole.
    if counts["trained"] == len(tasks) and counts["resumed"] == 0:
        record_sweep(
            out,
            {
                "budget": args.budget,
                "games": sorted({path.parent.name for path, _, _ in tasks})
                if not any("/" in entry for entry in args.games or [])
                else sorted(args.games),
                "runs": len(tasks),
                "backend": args.backend,
                "workers": args.workers,
                "wall_seconds": wall,
                "date": datetime.date.today().isoformat(),
            },
        )
    if args.no_report:
        return
    table = build_report(args.configs, args.budget, args.runs, out, games=args.games)
    print(table)
    print(f"report in {out}/", file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
