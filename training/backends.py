"""Where a sweep's runs execute: local worker processes, or Ray tasks (one machine or a cluster).

Both run `training.train.run` on the same run store, so resume and the report are the same;
both stream progress messages to the sweep: ("start" | "steps", index, steps),
("eval", index, steps, relative_gap), ("done", index, result), ("failed", index, text).
"""

from __future__ import annotations

import multiprocessing
import queue
import signal
import time
import traceback
from pathlib import Path
from typing import Any

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
        self.channel.put(("eval", self.index, point["steps"], point["relative_gap"]))


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def _local_worker(tasks, messages) -> None:
    # Ctrl-C reaches the whole process group; the sweep alone decides, and sends SIGTERM.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _interrupt)
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


def _ray_run(config: dict, seed: int, root: str, index: int, channel) -> dict:
    from training.train import run

    return run(config, seed, root, progress=MessageProgress(channel, index))


class RayBackend:
    """Every run a Ray task (one CPU each) on a local Ray started here, or on a cluster.

    On a cluster the run store must be a path every node sees (a shared file system), and
    every node needs this package installed, as for any Ray job.
    """

    name = "ray"

    def __init__(self, address: str | None, workers: int) -> None:
        import ray
        from ray.util.queue import Queue

        self.ray = ray
        self.started_here = not ray.is_initialized()
        if self.started_here:
            if address is None:
                ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
            else:
                ray.init(address=address, log_to_driver=False)
        # The runs that go at once: the CPUs of the cluster, or of the local Ray.
        self.workers = int(ray.cluster_resources().get("CPU", workers))
        self.channel = Queue()
        self.remote = ray.remote(num_cpus=1, max_retries=0)(_ray_run)
        self.pending: dict[Any, int] = {}

    def start(self, tasks: list[tuple[int, dict, int, str]]) -> None:
        for index, config, seed, root in tasks:
            root = str(Path(root).resolve())  # workers may start in another folder
            self.pending[self.remote.remote(config, seed, root, index, self.channel)] = index

    def poll(self, timeout: float) -> list[tuple]:
        ready, _ = self.ray.wait(list(self.pending), num_returns=1, timeout=timeout)
        items = self.channel.get_nowait_batch(self.channel.qsize())
        for ref in ready:
            index = self.pending.pop(ref)
            try:
                items.append(("done", index, self.ray.get(ref)))
            except Exception as error:  # a RayTaskError carries the worker's traceback
                items.append(("failed", index, str(error)))
        # Progress sent before a run finished comes before its "done".
        items.sort(key=lambda item: item[0] == "done")
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
        self.close()

    def close(self) -> None:
        if self.started_here and self.ray.is_initialized():
            self.ray.shutdown()
