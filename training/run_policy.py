"""A finished run of the run store as a policy: its folder is a form every policy argument
takes (`dice_envs.policies.as_policy`, through the `dice_envs.policy_forms` entry points)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import yaml

import baselines
from baselines.policy_forms import sb3_policy
from dice_envs.policies import BatchedPolicy, as_policy
from training.qlearning import FALLBACK, ObservationRows, sparse_greedy


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


def run_folder_policy(
    spec: Any, model: Any, obs_transform: Any, deterministic: bool
) -> BatchedPolicy | None:
    """The policy of the finished run whose folder is `spec` (a path), None for any other form:
    its greedy actions (`actions.npy`) where it kept them, else its saved model (`policy.zip`,
    asked as `as_policy` asks an SB3 model, with `obs_transform` and `deterministic=False` for
    its action distribution), or its sparse Q table (`policy_q.npz`, Yahtzee's Q-learning:
    played as the learner plays it)."""
    if not isinstance(spec, os.PathLike) or not Path(spec).is_dir():
        return None
    directory = Path(spec)
    if not (directory / "config.yaml").is_file():
        raise ValueError(f"{directory} is not a run folder (no config.yaml)")
    if deterministic and obs_transform is None and (directory / "actions.npy").is_file():
        return as_policy(load_run_policy(directory)[2], model)
    if (directory / "policy.zip").is_file():
        return sb3_policy(directory / "policy.zip", model, obs_transform, deterministic)
    if deterministic and obs_transform is None and (directory / "policy_q.npz").is_file():
        return _sparse_q_policy(directory / "policy_q.npz", model)
    raise ValueError(
        f"the run in {directory} has not finished, or kept no policy for this use (no "
        "actions.npy; no policy.zip for deterministic=False or obs_transform)"
    )


def _sparse_q_policy(path: Path, model: Any) -> BatchedPolicy:
    """The greedy policy of a saved sparse Q table, as `SparseQLearning.greedy` plays it."""
    with np.load(path, allow_pickle=False) as saved:
        keys, table, strides = saved["keys"], saved["q"], saved["strides"]
    store, fallback = ObservationRows(keys), model.named_policy(FALLBACK)

    def ask(observations: np.ndarray, legal: np.ndarray | None) -> np.ndarray:
        rows = store.find(observations @ strides)
        return sparse_greedy(table, rows, legal, observations, fallback)

    return BatchedPolicy(ask, int(model.num_actions), f"sparse Q table {path}", needs_legal=True)
