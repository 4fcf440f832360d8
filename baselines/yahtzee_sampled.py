"""The sampled gap on Yahtzee (`estimate_gap`'s player for the game, named by its registration
as `sampled_player`): the exact action values of the visited observations from the game's
structure-aware solution."""

from __future__ import annotations

from typing import Any

import numpy as np

from baselines.sampled_gap import _regret_table, _regrets, split_answer
from baselines.yahtzee import YahtzeeSolution, optimal_solution
from dice_envs.games.yahtzee import DICE, NUM_BOXES, Yahtzee
from dice_envs.policies import as_policy
from dice_envs.registration import game, load


def yahtzee_solution(env_id: str, **kwargs: Any) -> YahtzeeSolution:
    """The exact Yahtzee solution at the env's arguments (`joker`, `boxes`), kept per process
    (`baselines.yahtzee.optimal_solution`)."""
    return optimal_solution(**kwargs)


def _dice_lookup() -> np.ndarray:
    """Index in `DICE` of five dice given by their counts per face, coded in base 6."""
    lookup = np.full(6**6, -1, dtype=np.int64)
    lookup[DICE.astype(np.int64) @ 6 ** np.arange(6)] = np.arange(len(DICE))
    return lookup


_DICE_OF_CODE = _dice_lookup()


def yahtzee_positions(observations: np.ndarray) -> np.ndarray:
    """(n, 5) int64 rows (filled mask, upper total, Yahtzee-50 flag, dice index, rolls left)
    of a batch of Yahtzee observations (n, 22)."""
    observations = np.asarray(observations, dtype=np.int64).reshape(-1, 22)
    dice = _DICE_OF_CODE[observations[:, :6] @ 6 ** np.arange(6)]
    filled = observations[:, 7:20] @ (1 << np.arange(NUM_BOXES))
    return np.column_stack(
        [filled, observations[:, 20], observations[:, 21], dice, observations[:, 6]]
    )


def yahtzee_action_values(solution: YahtzeeSolution, observations: np.ndarray) -> np.ndarray:
    """(n, 45) Q* of every action at a batch of Yahtzee observations (NaN for illegal ones),
    by `YahtzeeSolution.action_values_batch`: each distinct score card's turn is solved once
    for the whole batch."""
    return solution.action_values_batch(np.asarray(observations, dtype=np.int64))


class YahtzeePlayer:
    """A policy on Yahtzee: asked at each step for the visited observations, its regrets from
    the exact action values there."""

    def __init__(self, policy: Any, env_id: str, kwargs: dict, options: dict) -> None:
        self.env_id, self.kwargs, self.options = env_id, dict(kwargs), options
        self.solution = yahtzee_solution(env_id, **kwargs)
        self.optimal_value = self.solution.value
        self.optimal = isinstance(policy, YahtzeeSolution)
        transform, deterministic = options["obs_transform"], options["deterministic"]
        self.policy = as_policy(
            policy, self.solution.model, obs_transform=transform, deterministic=deterministic
        )

    def vector_env(self, width: int) -> Any:
        return load(game(self.env_id).vector_entry_point)(num_envs=width, **self.kwargs)

    def decide(self, obs: np.ndarray, mask: np.ndarray, rng) -> tuple[np.ndarray, np.ndarray]:
        legal = mask.astype(bool)
        q = yahtzee_action_values(self.solution, obs)
        # Every in-space action plays as a legal one (`Yahtzee.played_actions`): its regret is
        # that action's.
        positions = yahtzee_positions(obs)
        legal_bits = legal[:, 32:] @ (1 << np.arange(NUM_BOXES))
        count, width = q.shape
        played = Yahtzee.played_actions(
            np.repeat(positions[:, 3], width),
            np.repeat(positions[:, 4], width),
            np.repeat(legal_bits, width),
            np.tile(np.arange(width), count),
        ).reshape(count, width)
        q = np.take_along_axis(q, played, axis=1)
        regret = _regret_table(q, legal)
        if self.optimal:  # its actions are the best legal action values, at hand here
            return _regrets(regret, None, np.where(legal, q, -np.inf).argmax(axis=1), rng, True)
        actions, probs = split_answer(self.policy.answer(obs, legal))
        return _regrets(regret, probs, actions, rng, self.options["expected_regret"])
