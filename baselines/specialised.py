"""Game-specific exact solvers, each checked against the generic solver in the tests."""

from __future__ import annotations

import time

import numpy as np

from baselines.mdp import observation_key
from baselines.solvers import Solution, greedy
from dice_envs.games.d20_rounds import REROLL, TAKE, D20Rounds


def solve_d20_rounds(model: D20Rounds) -> Solution:
    """Backward induction over the rounds left, all faces at once.

    V_0 = 0; V_r(f) = max(f + V_{r-1}(f), sum_g p_g V_{r-1}(g)). One numpy step per round, so
    100,000 rounds take well under a second. Exact up to float round-off; the model supplies the
    face probabilities, so it is the same game the generic solver enumerates.
    """
    start = time.perf_counter()
    sides, rounds = model.sides, model.rounds
    faces = np.arange(1, sides + 1, dtype=float)
    probs = np.asarray(model.face_probs)
    q = np.empty((rounds, sides, 2))
    values = np.zeros(sides)
    for r in range(rounds):
        q[r, :, TAKE] = faces + values
        q[r, :, REROLL] = probs @ values
        values = q[r].max(axis=1)
    q = q.reshape(rounds * sides, 2)
    legal = np.ones_like(q, dtype=bool)
    state_values = q.max(axis=1)

    def index_of(obs) -> int:
        rounds_left, face = observation_key(obs)
        if not (1 <= rounds_left <= rounds and 1 <= face <= sides):
            raise KeyError(obs)
        return (rounds_left - 1) * sides + face - 1

    return Solution(
        value=float(state_values[index_of((rounds, model.start_face))]),
        state_values=state_values,
        q=q,
        policy=greedy(q, legal),
        legal=legal,
        index_of=index_of,
        method="specialised",
        seconds=time.perf_counter() - start,
        bellman_residual=0.0,  # V is max Q by construction; tests check it on the generic MDP
    )


def _solve_pig(model) -> Solution:
    from baselines.pig import solve_pig

    return solve_pig(model)


def _solve_ten_thousand(model) -> Solution:
    from baselines.ten_thousand import solve_ten_thousand

    return solve_ten_thousand(model)


# env id -> solver taking the model.
SPECIALISED = {
    "dice_envs/D20Rounds-v0": solve_d20_rounds,
    "dice_envs/Pig-v0": _solve_pig,
    "dice_envs/TenThousand-v0": _solve_ten_thousand,
}
