"""A finished run of the run store as a policy: its final greedy actions as a table over the
observation grid, the form every policy argument takes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import yaml

import baselines


def load_run_policy(directory: str | Path) -> tuple[str, dict[str, Any], np.ndarray]:
    """(env id, game arguments, action table) of the finished run in `directory`.

    The table is indexed by the observation, of shape `observation_nvec`; it holds -1 at the
    observations of no reachable state (a two-player run's table covers the whole grid, as the
    mover plays it). Runs saved before the table form kept one action per state of the
    game's tables (`baselines.enumerated` order); those are mapped onto the grid here.
    """
    directory = Path(directory)
    config_path, actions_path = directory / "config.yaml", directory / "actions.npy"
    if not config_path.is_file():
        raise ValueError(f"{directory} is not a run folder (no config.yaml)")
    if not actions_path.is_file():
        raise ValueError(f"the run in {directory} has not finished (no actions.npy)")
    config = yaml.safe_load(config_path.read_text())
    env_id, kwargs = config["env_id"], dict(config["env_kwargs"])
    actions = np.load(actions_path, allow_pickle=False).astype(np.int64)
    tables = baselines.tabulate(env_id, **kwargs)
    grid = tuple(int(n) for n in tables.model.observation_nvec)
    if actions.shape == grid:
        return env_id, kwargs, actions
    if actions.shape != (tables.num_states,):
        raise ValueError(
            f"{actions_path} has shape {actions.shape}: neither the observation grid {grid} "
            f"nor one action for each of the {tables.num_states} states of {env_id}"
        )
    table = np.full(grid, -1, dtype=np.int64)
    table[tuple(tables.observation_array.T)] = actions
    return env_id, kwargs, table
