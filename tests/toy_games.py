"""Two toy games written outside the package, to show that one `register_game` entry is all a
new game needs: a single-agent stopping game and a two-player race."""

from __future__ import annotations

import numpy as np

from dice_envs.games.base import Transition, check_int
from dice_envs.games.fold import fold_factory
from dice_envs.games.rule import Rule, parse_threshold

STOP, ROLL = 0, 1
WALK, GAMBLE = 0, 1


class ToyStop:
    """Roll a three-sided die at most twice; stop after the first roll for its face, or take the
    second roll's face. Observation (rolls left, face), face 0 before the first roll."""

    num_actions = 2
    action_names = ("stop", "roll")
    observation_names = ("rolls left", "face")
    policy_names = ("stop-at-K",)

    def __init__(self, sides: int = 3) -> None:
        self.sides = check_int("sides", sides, 2)
        self.observation_nvec = (3, self.sides + 1)

    def initial_states(self):
        return [(1.0, (2, 0))]

    def legal_actions(self, state):
        return (ROLL,) if state[1] == 0 else (STOP, ROLL)

    def transitions(self, state, action):
        rolls_left, face = state
        if action == STOP:
            return [Transition(1.0, state, float(face), True)]
        return [
            Transition(1.0 / self.sides, (rolls_left - 1, f), float(f) if rolls_left == 1 else 0.0,
                       rolls_left == 1)
            for f in range(1, self.sides + 1)
        ]  # fmt: skip

    def observation(self, state):
        return state

    def validate_state(self, state):
        rolls_left, face = state
        return check_int("rolls left", rolls_left, 0, 2), check_int("face", face, 0, self.sides)

    def render_text(self, state):
        return f"{state[0]} rolls left, face {state[1]}"

    def named_policy(self, name):
        limit = parse_threshold("stop-at-{K}", name)
        if limit is None:
            return None
        return Rule.from_batch(
            lambda obs: np.where(np.asarray(obs).reshape(-1, 2)[:, 1] >= max(limit, 1), STOP, ROLL),
            name,
        )


class CoinRace:
    """Two players race to `goal` points, moving in turn: walk (+1) or gamble (+2 or 0 on a fair
    coin). State (player to move, score 0, score 1); a player sees (own, other)."""

    num_actions = 2
    action_names = ("walk", "gamble")
    observation_names = ("own score", "opponent score")
    policy_names = ("walk", "gamble", "random")

    def __init__(self, goal: int = 3) -> None:
        self.goal = check_int("goal", goal, 1, 50)
        self.observation_nvec = (self.goal + 1, self.goal + 1)

    def initial_states(self):
        return [(1.0, (0, 0, 0))]

    def to_move(self, state):
        return state[0]

    def swap_seats(self, state):
        return (1 - state[0], state[2], state[1])

    def legal_actions(self, state):
        return (WALK, GAMBLE)

    def transitions(self, state, action):
        gains = [(1.0, 1)] if action == WALK else [(0.5, 2), (0.5, 0)]
        return [self._after(state, gain, prob) for prob, gain in gains]

    def _after(self, state, gain, prob):
        mover, first, second = state
        scores = [first, second]
        scores[mover] = min(self.goal, scores[mover] + gain)
        won = scores[mover] >= self.goal
        reward = float(won and mover == 0)
        return Transition(prob, (1 - mover, *scores), reward, won)

    def observation(self, state, player):
        return (state[1], state[2]) if player == 0 else (state[2], state[1])

    def state_of(self, observation, player):
        own, other = (check_int("score", v, 0, self.goal - 1) for v in observation)
        return (0, own, other) if player == 0 else (1, other, own)

    def validate_state(self, state):
        mover, first, second = state
        return (check_int("mover", mover, 0, 1), *self.state_of((first, second), 0)[1:])

    def render_text(self, state, player):
        own, other = self.observation(state, player)
        return f"you {own}, opponent {other}"

    def named_policy(self, name):
        table = np.zeros(self.observation_nvec + (2,))
        if name in ("walk", "gamble"):
            table[..., WALK if name == "walk" else GAMBLE] = 1.0
        elif name == "random":
            table[...] = 0.5
        else:
            return None
        return table


CoinRaceVersus = fold_factory(CoinRace, default_opponent="walk")
