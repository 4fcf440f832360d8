"""Small configs for training tests: the committed ones with tiny budgets."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import yaml

from training.config import load_config

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "configs"
TINY_PPO = {"n_envs": 2, "n_steps": 64, "batch_size": 64, "n_epochs": 2}


def small(config: dict, timesteps: int, eval_every: int, **hyperparams) -> dict:
    config = copy.deepcopy(config)
    config.update(timesteps=timesteps, eval_every=eval_every)
    config["evaluation"]["episodes"] = 20
    config["hyperparams"].update(hyperparams)
    return config


def tiny_ppo(
    game: str, encoding: str = "onehot", timesteps: int = 512, vec_env: str = "native"
) -> dict:
    config = load_config(CONFIGS / game / "ppo.yaml")
    return small(config, timesteps, 256, obs_encoding=encoding, vec_env=vec_env, **TINY_PPO)


def write_configs(folder: Path, entries: dict[str, dict]) -> Path:
    """Write `<folder>/<game>/<name>.yaml` from the committed `<game>/<algo>.yaml`, changed.

    `entries` maps "game/name" to {"algo": ..., "budget": {...}, "hyperparams": {...},
    "env_kwargs": {...}, "evaluation": {...}, "seeds": [...]}.
    """
    for target, change in entries.items():
        game, name = target.split("/")
        raw = yaml.safe_load((CONFIGS / game / f"{change['algo']}.yaml").read_text())
        raw["budgets"]["quick"] = change["budget"]
        raw["seeds"] = change.get("seeds", [0, 1])
        raw["evaluation"] = {"episodes": 10, **change.get("evaluation", {})}
        raw["hyperparams"].update(change.get("hyperparams", {}))
        raw["env_kwargs"].update(change.get("env_kwargs", {}))
        path = folder / game / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return folder


def changed(config: dict, dotted: str, value) -> dict:
    """A copy of `config` with the key at `dotted` ("hyperparams.gamma") set to `value`."""
    config = json.loads(json.dumps(config))
    *parents, leaf = dotted.split(".")
    node = config
    for key in parents:
        node = node[key]
    node[leaf] = value
    return config


def sweep(*args) -> subprocess.CompletedProcess:
    """`python -m training.sweep ARGS` from the repository, its output captured."""
    command = [sys.executable, "-m", "training.sweep", *map(str, args)]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=240)


def ignored_sigint() -> None:
    """For `preexec_fn`: SIGINT ignored, as in a background job (`nohup ... &` in a script)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def default_sigint() -> None:
    """For `preexec_fn`: Ctrl-C's default in the child, so that Python there raises
    KeyboardInterrupt on SIGINT even when pytest itself runs with SIGINT ignored (a background
    job of a non-interactive shell passes that on to every process it starts)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupt_sweep(
    command: list[str], runs: Path, timeout: float = 120, sigterm: bool = False
) -> tuple[float, int, str]:
    """Start a sweep in its own process group, wait for a checkpoint past step 0, then send
    SIGINT to the group as Ctrl-C does (`sigterm`: SIGTERM to the sweep's process alone, as
    `kill PID` does, to a sweep started as a background job of a non-interactive shell, with
    SIGINT ignored); return (seconds to exit, exit status, stderr), once every process of the
    group has ended."""
    import contextlib
    import os
    import pickle
    import signal
    import subprocess
    import time

    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True, preexec_fn=ignored_sigint if sigterm else default_sigint,
    )  # fmt: skip

    def checkpointed_past_zero() -> bool:
        steps = []
        for path in runs.rglob("checkpoint.pkl"):
            # A run that finished meanwhile has removed its checkpoint.
            with contextlib.suppress(FileNotFoundError):
                steps.append(pickle.loads(path.read_bytes())["step"])
        return any(step > 0 for step in steps)

    try:
        deadline = time.time() + timeout
        while time.time() < deadline and not checkpointed_past_zero():
            time.sleep(0.1)
        started = time.monotonic()
        if sigterm:
            os.kill(process.pid, signal.SIGTERM)
        else:
            os.killpg(process.pid, signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
        seconds = time.monotonic() - started
        # Every process the sweep started in its group (its workers) ends with it.
        deadline = time.time() + 10
        while (left := live_processes_in_group(process.pid)) and time.time() < deadline:
            time.sleep(0.1)
        assert not left, f"still running after the sweep exited: {left}\n{stderr}"
        return seconds, process.returncode, stderr
    finally:  # a failed check leaves nothing training
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)


def live_processes_in_group(group: int) -> list[str]:
    """The processes of a process group that are not zombies (this machine's init reaps none),
    as "pid command"; Linux's /proc."""
    live = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # it ended meanwhile
            continue
        command, fields = (
            text[text.index("(") + 1 : text.rindex(")")],
            text[text.rindex(")") + 2 :].split(),
        )
        if int(fields[2]) == group and fields[0] != "Z":
            live.append(f"{stat.parent.name} {command}")
    return live


def assert_complete_files(runs: Path) -> None:
    """No temporary file left; every JSON parses; every checkpoint unpickles."""
    import json
    import pickle

    assert not list(runs.rglob(".*.tmp"))
    for path in runs.rglob("*.json"):
        json.loads(path.read_text())
    for path in runs.rglob("checkpoint.pkl"):
        pickle.loads(path.read_bytes())
