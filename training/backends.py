"""Where a sweep's runs execute: local worker processes, or Ray tasks (one machine or a cluster).

Local workers run `training.train.run` on the sweep's run store itself. A Ray task runs it in a
temporary store on its own node and ships the run's files back to the sweep, which writes them
into its store (see `RayBackend`); the store's files, resume and the report are the same.
Both stream progress messages to the sweep: ("start" | "steps", index, steps),
("eval", index, steps, relative_gap, "gap" | "sampled gap"), ("done", index, result),
("failed", index, text). A game too large for tables (Yahtzee) is evaluated from sampled
episodes between its checkpoints: its "eval" carries the sampled relative gap.
"""

from __future__ import annotations

import contextlib
import fcntl
import multiprocessing
import os
import queue
import shutil
import signal
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from dice_envs.files import atomic_write_bytes, remove_partial_files
from training.runs import (
    RunStoreError,
    check_identity,
    ctrl_c_deferred,
    locked,
    run_dir,
    run_identity,
    source_stamp,
)

# Progress messages are throttled to this many seconds apart per run.
MESSAGE_INTERVAL = 0.25
# After Ctrl-C, runs get this long to stop cleanly before they are killed.
STOP_GRACE_SECONDS = 5.0


class MessageProgress:
    """training.train.Progress that puts messages on a queue (any object with `put`)."""

    def __init__(self, channel, index: int) -> None:
        self.channel, self.index, self.last = channel, index, 0.0

    def start(self, steps: int, total: int) -> None:
        self.channel.put(("start", self.index, steps))

    def steps(self, steps: int) -> None:
        now = time.monotonic()
        if now - self.last >= MESSAGE_INTERVAL:
            self.last = now
            self.channel.put(("steps", self.index, steps))

    def evaluated(self, point: dict[str, Any]) -> None:
        if "relative_gap" in point:
            gap, what = point["relative_gap"], "gap"
        else:
            gap, what = point["sampled_relative_gap"], "sampled gap"
        self.channel.put(("eval", self.index, point["steps"], gap, what))

    def checkpointed(self, directory: Path) -> None:
        """Local workers write the sweep's store themselves: nothing to ship."""


class ShippingProgress(MessageProgress):
    """MessageProgress that also ships the run folder's files at every checkpoint."""

    def checkpointed(self, directory: Path) -> None:
        # Sent before the evaluation's message, and `put` returns once the channel holds it:
        # a worker that dies later has left its last checkpoint with the sweep.
        self.channel.put(("files", self.index, folder_files(directory)))


def folder_files(directory: Path) -> dict[str, bytes]:
    """The run folder's files by name, without its lock and temporary files."""
    return {path.name: path.read_bytes() for path in _run_files(directory)}


def _run_files(directory: Path) -> list[Path]:
    # A run folder holds files only; its lock and temporary files are the names with a dot.
    return [p for p in sorted(directory.iterdir()) if p.is_file() and not p.name.startswith(".")]


# Written last, in this order, as a run writes them: the checkpoint after the curve and the
# timing it continues, the result (whose presence means "done") after everything else.
_WRITTEN_LAST = ("checkpoint.pkl", "result.json")


def write_shipped(directory: Path, files: dict[str, bytes], final: bool) -> None:
    """Write shipped `files` into the run folder `directory`, each atomically, in the order a
    run writes them; `final` (a finished run's files) also removes the files it lacks (the
    checkpoint that a finished run drops)."""
    for name in files:
        if not isinstance(name, str) or not name or name.startswith(".") or "/" in name:
            raise ValueError(
                f"files: names must be plain file names of a run folder (no '/', no leading "
                f"'.'), got {name!r}"
            )
    order = [name for name in sorted(files) if name not in _WRITTEN_LAST]
    order += [name for name in _WRITTEN_LAST if name in files]
    with ctrl_c_deferred():
        for name in order:
            atomic_write_bytes(directory / name, files[name])
        if final:
            for path in _run_files(directory):
                if path.name not in files:
                    path.unlink(missing_ok=True)


def _raise_ctrl_c(signum, frame) -> None:
    """A signal handler that stops the process as Ctrl-C does."""
    raise KeyboardInterrupt


def _local_worker(tasks, messages) -> None:
    # Ctrl-C reaches the whole process group; the sweep alone decides, and sends SIGTERM.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _raise_ctrl_c)
    try:
        from training.train import run

        while (task := tasks.get()) is not None:
            index, config, seed, root = task
            try:
                result = run(config, seed, root, progress=MessageProgress(messages, index))
                messages.put(("done", index, result))
            except Exception:
                messages.put(("failed", index, traceback.format_exc()))
    except KeyboardInterrupt:
        pass


class LocalBackend:
    """`workers` spawned processes that take runs from a queue, the longest first."""

    name = "local"

    def __init__(self, workers: int) -> None:
        self.workers = workers
        context = multiprocessing.get_context("spawn")
        self.tasks, self.messages = context.Queue(), context.Queue()
        self.processes = [
            context.Process(target=_local_worker, args=(self.tasks, self.messages), daemon=True)
            for _ in range(workers)
        ]
        self.started: list = []  # the processes started (none when every run was finished)

    def start(self, tasks: list[tuple[int, dict, int, str]]) -> None:
        for task in tasks:
            self.tasks.put(task)
        for _ in self.processes:
            self.tasks.put(None)
        # Started with SIGINT ignored (kept across exec), so a Ctrl-C that reaches the process
        # group while a worker still imports can not print a traceback there either.
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            for process in self.processes:
                process.start()
                self.started.append(process)
        finally:
            signal.signal(signal.SIGINT, previous)

    def poll(self, timeout: float) -> list[tuple]:
        try:
            items = [self.messages.get(timeout=timeout)]
        except queue.Empty:
            if not any(p.is_alive() for p in self.started):
                raise RuntimeError("every worker process has died") from None
            return []
        while True:
            try:
                items.append(self.messages.get_nowait())
            except queue.Empty:
                return items

    def stop(self) -> None:
        for process in self.started:
            if process.is_alive():
                process.terminate()  # SIGTERM: the run stops at once, atomic writes unwind
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for process in self.started:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join()

    def close(self) -> None:
        for process in self.started:  # a process never started cannot be joined
            process.join(timeout=STOP_GRACE_SECONDS)


# A Ray task's temporary store on its node: `<TMPDIR>/<TASK_STORE>*`, locked by its task
# through the file TASK_LOCK in it while the task lives.
TASK_STORE, TASK_LOCK = "dice-envs-run-", ".task.lock"
_NEW_TASK_STORE = "dice-envs-new-"  # the name a store has until its task holds its lock


@contextlib.contextmanager
def _task_store():
    """A temporary store for one Ray task, removed when the task ends. The stores that tasks
    killed on this node left (a lost worker cannot remove its own) are removed first: a store
    whose lock nobody holds. A store is made under another name, locked, then renamed, so no
    task ever sees a store of a live task unlocked."""
    _remove_abandoned_task_stores()
    fresh = tempfile.mkdtemp(prefix=_NEW_TASK_STORE)
    with open(os.path.join(fresh, TASK_LOCK), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        parent, name = os.path.split(fresh)
        store = os.path.join(parent, TASK_STORE + name.removeprefix(_NEW_TASK_STORE))
        os.rename(fresh, store)
        try:
            yield store
        finally:
            shutil.rmtree(store, ignore_errors=True)


def _remove_abandoned_task_stores() -> None:
    for store in Path(tempfile.gettempdir()).glob(TASK_STORE + "*"):
        try:
            lock = open(store / TASK_LOCK, "r+")  # noqa: SIM115 (held while removing)
        except OSError:  # not a task store (nor being made: those have another name)
            continue
        with lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # its task is alive
                continue
            shutil.rmtree(store, ignore_errors=True)


def _ray_run(
    config: dict,
    seed: int,
    folder: str,
    files: dict[str, bytes],
    index: int,
    channel,
    sources: dict[str, str],
) -> tuple[dict, dict[str, bytes]]:
    """A Ray task: the run in a temporary store on the task's node, seeded with the sweep's
    `files` of it (a checkpoint to resume from, or none), its files shipped at every checkpoint
    through `channel`; return (result, the finished run's files, or {} if only read back).
    `folder` is the run's folder in the sweep's store, relative to the store; `sources`, the
    sweep's `source_stamp`, which the node's must equal."""
    from training.train import READ_BACK, run

    with _task_store() as store:
        directory = run_dir(store, config, seed)
        here = source_stamp()
        differ = sorted(m for m in set(here) | set(sources) if here.get(m) != sources.get(m))
        if directory.relative_to(store).as_posix() != folder or differ:
            raise RunStoreError(
                f"this node names the run {directory.relative_to(store)}, the sweep {folder}, "
                f"and its code differs from the sweep's in {differ or 'none'}: the node has "
                "other code or another package version (every node needs the same)"
            )
        directory.mkdir(parents=True)
        write_shipped(directory, files, final=False)
        result = run(config, seed, store, progress=ShippingProgress(channel, index))
        shipped = {} if result.get("status") == READ_BACK else folder_files(directory)
        return result, shipped


class RayBackend:
    """Every run a Ray task (one CPU each) on a local Ray started here, or on a cluster.

    No node needs to see the sweep's run store (a cluster needs no shared file system): the
    sweep sends each task the files it holds of its run (a checkpoint to resume from), the task
    trains in a temporary store on its own node, ships the run folder's files back through Ray
    at every checkpoint (a queue held on the sweep's node) and when it ends (its return value),
    and the sweep writes them into its store, each file atomically. A task that dies mid-run
    has left its last checkpoint in the sweep's store; the next sweep resumes from there. The
    sweep holds each run folder's lock while its task runs. Every node needs this package
    installed at the same code as the sweep's: a task whose node has other code (its
    `source_stamp`) or another package version fails, saying so.
    """

    name = "ray"

    def __init__(self, address: str | None, workers: int) -> None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers must be an int >= 1, got {workers!r}")
        if address is not None and (not isinstance(address, str) or not address):
            raise ValueError(f"address must be a Ray address (host:port) or None, got {address!r}")
        import ray
        from ray.util.queue import Queue
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        self.ray = ray
        self.started_here = not ray.is_initialized()
        if self.started_here:
            if address is None:
                ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
            else:
                ray.init(address=address, log_to_driver=False)
        # The runs that go at once: the CPUs of the cluster, or of the local Ray.
        self.workers = int(ray.cluster_resources().get("CPU", workers))
        # On the sweep's node, so the checkpoints shipped there outlive any worker node.
        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        self.channel = Queue(actor_options={"num_cpus": 0, "scheduling_strategy": here})
        self.remote = ray.remote(num_cpus=1, max_retries=0)(_ray_run)
        self.pending: dict[Any, int] = {}
        self.folders: dict[int, Path] = {}  # index -> the run's folder in the sweep's store
        self.locks: dict[int, contextlib.ExitStack] = {}
        self.refused: list[tuple] = []  # "failed" messages of runs whose folder is busy
        self.sources = source_stamp()  # every task's node must have the same code

    def start(self, tasks: list[tuple[int, dict, int, str]]) -> None:
        for index, config, seed, root in tasks:
            directory = run_dir(root, config, seed)
            lock = contextlib.ExitStack()
            try:
                lock.enter_context(locked(directory))
                # Here, so that a refusal names the sweep's folder, not the task's.
                check_identity(directory, run_identity(config, seed))
            except RunStoreError as error:
                lock.close()
                self.refused.append(("failed", index, str(error)))
                continue
            self.locks[index], self.folders[index] = lock, directory
            remove_partial_files(directory)
            folder = directory.relative_to(root).as_posix()
            args = (config, seed, folder, folder_files(directory), index, self.channel)
            args += (self.sources,)
            self.pending[self.remote.remote(*args)] = index

    def poll(self, timeout: float) -> list[tuple]:
        items, self.refused = self.refused, []
        ready, _ = self.ray.wait(list(self.pending), num_returns=1, timeout=timeout)
        # Everything a task put on the channel is there once the task has returned.
        items += self._drain()
        items += self._collect(ready)
        # Progress sent before a run finished comes before its "done".
        items.sort(key=lambda item: item[0] in ("done", "failed"))
        return items

    def _collect(self, refs: list) -> list[tuple]:
        """The "done" or "failed" messages of the ended tasks `refs`: a finished run's files
        are written into the store, and the run's lock released. A task stays pending until
        then, so a Ctrl-C meanwhile leaves it to `stop`, which writes it too."""
        items = []
        for ref in refs:
            index = self.pending[ref]
            try:
                result, files = self.ray.get(ref)
            except Exception as error:  # a RayTaskError carries the worker's traceback
                items.append(("failed", index, str(error)))
            else:
                if files:  # none when the task only read back a run the store already held
                    write_shipped(self.folders[index], files, final=True)
                items.append(("done", index, {**result, "run_dir": str(self.folders[index])}))
            del self.pending[ref]
            self.locks.pop(index).close()
        return items

    def _drain(self) -> list[tuple]:
        """The channel's progress messages; the files shipped on it are written into the store."""
        items = []
        with ctrl_c_deferred():  # a message taken off the channel is never dropped half-way
            for item in self.channel.get_nowait_batch(self.channel.qsize()):
                if item[0] == "files":
                    write_shipped(self.folders[item[1]], item[2], final=False)
                else:
                    items.append(item)
        return items

    def stop(self) -> None:
        refs = list(self.pending)
        for ref in refs:
            self.ray.cancel(ref)  # KeyboardInterrupt inside the task: atomic writes unwind
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        while refs and time.monotonic() < deadline:
            _, refs = self.ray.wait(refs, num_returns=len(refs), timeout=0.2)
        for ref in refs:
            self.ray.cancel(ref, force=True)
        # Keep the checkpoints shipped meanwhile, and the runs that finished before the
        # cancel reached them (or before a poll saw them).
        with contextlib.suppress(Exception):
            self._drain()
            if self.pending:
                ended, _ = self.ray.wait(
                    list(self.pending), num_returns=len(self.pending), timeout=0
                )
                self._collect(ended)
        self.close()

    def close(self) -> None:
        for lock in self.locks.values():
            lock.close()
        self.locks.clear()
        if self.started_here and self.ray.is_initialized():
            self.ray.shutdown()
