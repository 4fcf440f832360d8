"""Run directories: everything a run writes, written atomically, so a killed run resumes from
its last checkpoint and nothing finished is ever lost or half-written.

    runs/<budget>/<game>/<algo>/seed_<n>/
        config.yaml      the resolved config
        curve.json       one entry per evaluation point
        checkpoint.*     the agent and the run's progress at the last evaluation point
        result.json      the final evaluation (written last: its presence means "done")
        policy.*         the final policy (Q table or SB3 model)
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml

from training.config import game_name


def run_dir(root: str | Path, config: dict[str, Any], seed: int) -> Path:
    return (
        Path(root)
        / config["budget"]
        / game_name(config["env_id"])
        / config["algo"]
        / f"seed_{seed}"
    )


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write to a temporary file in the same folder, then rename over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def atomic_write_json(path: Path, data: Any) -> None:
    atomic_write_bytes(path, (json.dumps(data, indent=1, default=float) + "\n").encode())


def atomic_write_yaml(path: Path, data: Any) -> None:
    atomic_write_bytes(path, yaml.safe_dump(data, sort_keys=False).encode())


def read_json(path: Path, default: Any = None) -> Any:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return default
