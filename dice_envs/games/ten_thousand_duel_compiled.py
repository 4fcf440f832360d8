"""The compiled (numba) inner loops of the Ten Thousand race's batch sampler.

The rules stay in the model: every loop here reads only the solitaire turn's tables as
`_BatchRules` lays them out (what each move gives back, the outcome of every ordered roll, its
chips, whether it busts, the dice and configuration after it). One step is written once
(`_step_rows`): `TenThousandDuel.batch_sample_step` steps a batch with it, and `sample_turns`
plays whole turns with it, round by round in the order the numpy loop of the vector env drew
its uniforms (a test holds them equal draw for draw). Compiled once, cached on disk.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from dice_envs.games.ten_thousand import ROLL, STOP


@njit(cache=True)
def _step_rows(states, rows, actions, uniforms, won, goal, num_actions, tables) -> None:
    """Step the rows `rows` of `states` (six ints a row: mover, banked chips of both, turn
    score, configuration, dice) in place, row `rows[j]` by `actions[j]` with its dice thrown
    with `uniforms[j]`; `won[j]` set to whether its mover won."""
    dice_back, chips_back, sixes, ordered, width, gain, bust, next_dice, kept = tables
    for j in range(len(rows)):
        i, action = rows[j], actions[j]
        mover, tau, dice = states[i, 0], states[i, 3], states[i, 5]
        move = (states[i, 4] * 6 + dice) * num_actions + action
        thrown = dice + dice_back[move]
        # One of the 6**n equally likely ordered rolls of the n dice thrown.
        outcome = ordered[thrown * width + np.int64(uniforms[j] * sixes[thrown])]
        new_tau = tau - chips_back[move] + gain[outcome]
        stopping = (action == STOP) & (tau > 0)
        handing = stopping | bust[outcome]  # the turn passes with fresh dice
        own = states[i, 1 + mover]
        reached = (not handing) & (own + new_tau >= goal)
        going = (not handing) & (not reached)
        states[i, 0] = mover ^ handing
        if reached:
            states[i, 1 + mover] = goal
        elif stopping:
            states[i, 1 + mover] = own + tau
        states[i, 3] = new_tau * going
        states[i, 4] = kept[outcome] * going
        # Fresh dice after a stop, a bust or hot dice; none once the game is won.
        states[i, 5] = 0 if reached else (next_dice[outcome] if going else 5)
        won[j] = reached


@njit(cache=True)
def sample_steps(states, actions, uniforms, goal, num_actions, tables):
    """`TenThousandDuel.batch_sample_step`'s loop: (next states, player 0's rewards, won)."""
    after = states.copy()
    won = np.zeros(len(states), np.bool_)
    _step_rows(after, np.arange(len(states)), actions, uniforms, won, goal, num_actions, tables)
    rewards = np.zeros(len(states))
    for i in range(len(states)):
        if won[i] and states[i, 0] == 0:
            rewards[i] = 1.0
    return after, rewards, won


@njit(cache=True)
def sample_turns(states, ended, player, policy, columns, strides, rng, goal, num_actions, tables):
    """Play `player`'s turns in `states` (in place) wherever it is to move and the game has not
    `ended`, until the turn passes or the game ends (marked in `ended`): its action at a
    position with a turn score is `policy[sum(states[columns] * strides)]`, a roll at a
    turn's start. Round by round: each round steps every copy still in its turn, in row
    order, with one `rng.random()` each, drawn in that order."""
    n = len(states)
    waiting = np.empty(n, np.int64)
    actions = np.empty(n, np.int64)
    uniforms = np.empty(n)
    won = np.empty(n, np.bool_)
    count = 0
    for i in range(n):
        if not ended[i] and states[i, 0] == player:
            waiting[count] = i
            count += 1
    while count:
        for j in range(count):
            i = waiting[j]
            actions[j] = ROLL
            if states[i, 3] > 0:
                index = 0
                for k in range(len(columns)):
                    index += states[i, columns[k]] * strides[k]
                actions[j] = policy[index]
        for j in range(count):
            uniforms[j] = rng.random()
        _step_rows(states, waiting[:count], actions, uniforms, won, goal, num_actions, tables)
        going = 0
        for j in range(count):
            i = waiting[j]
            if won[j]:
                ended[i] = True
            elif states[i, 0] == player:
                waiting[going] = i
                going += 1
        count = going
