"""The layered Pig solvers on loaded dice with exact ties, against independent references.

The references below are written here, independently of `baselines.pig`: whole-array value
iteration of the two-player optimality equations (Neller and Presser; Tijms), and the same for
the agent's best response with both sides' turns as states (the opponent's choices fixed).
They are run once per die at goal 60 and read at smaller goals by a shift: Pig depends only on
each player's distance to the goal (and "hold at 20" only on the turn total), so the game to
`goal` is the game to 60 started at scores (60 - goal, 60 - goal).

`best_response` gets a stand-in model (goal, face_probs and opponent_turns, the opponent's
turn distribution computed here), so these tests do not depend on the model class.
"""

from functools import cache
from types import SimpleNamespace

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

from baselines.pig import MAX_PASSES, best_response, two_player_optimum
from dice_envs.games.base import uniform_die

TWO_FACED = (1 / 6, 5 / 6)  # face 1 busts, face 2 adds 2
THREE_WAY = (1 / 3, 2 / 3)
LARGEST = 60
HOLD_AT = 20
TWO_PLAYER_CASES = [(TWO_FACED, goal) for goal in range(37, LARGEST + 1)] + [
    (THREE_WAY, goal) for goal in range(33, LARGEST + 1)
]
BEST_RESPONSE_GOALS = list(range(19, LARGEST + 1))
AGREE = 1e-9  # solver against reference
RESIDUAL = 1e-12  # the solver's tables against their own Bellman equations


def case_name(case):
    probs, goal = case
    return f"{'two-faced' if probs == TWO_FACED else 'three-way'}-goal{goal}"


def grids(goal):
    i, j, k = np.ogrid[:goal, :goal, :goal]
    return i, j, k, np.broadcast_to(i + k < goal, (goal, goal, goal))


@cache
def value_iteration_two_player(goal, probs, tol=1e-13):
    """P(i, j, k) = max(hold: 1 - P(j, i + k, 0) if k > 0, roll: p1 (1 - P(j, i, 0)) +
    sum_f p_f P(i, j, k + f)), with P = 1 once i + k >= goal; whole-array Jacobi sweeps until
    no entry moves by more than `tol`. Entries with i + k >= goal are NaN in the result."""
    sides = len(probs)
    valid = grids(goal)[3]
    P = np.ones((goal, goal, goal + sides))  # k up to goal - 1 + sides; 1 where i + k >= goal
    P[:, :, :goal] = np.where(valid, 0.5, 1.0)
    # banked[j, i + k] = P(j, i + k, 0), and 0 past the goal: holding there is worth 1, so
    # max(roll, hold) keeps P = 1 where i + k >= goal
    banked = np.zeros((goal, 2 * goal - 1))
    banked_view = sliding_window_view(banked, goal, axis=1).transpose(1, 0, 2)  # [i, j, k]
    roll, new, scratch = (np.empty((goal, goal, goal)) for _ in range(3))  # no temporaries
    for _ in range(100_000):
        start = P[:, :, 0]
        banked[:, :goal] = start
        np.multiply(probs[0], (1.0 - start.T)[:, :, None], out=roll)
        for face in range(2, sides + 1):
            roll += np.multiply(probs[face - 1], P[:, :, face : face + goal], out=scratch)
        np.maximum(roll, np.subtract(1.0, banked_view, out=new), out=new)
        new[:, :, 0] = roll[:, :, 0]  # no hold at turn total 0
        np.subtract(new, P[:, :, :goal], out=scratch)
        change = max(scratch.max(), -scratch.min())
        P[:, :, :goal] = new
        if change <= tol:
            return np.where(valid, new, np.nan)
    raise AssertionError("value iteration did not converge")


def hold_at_turns(goal, probs, threshold):
    """(bank[opp, agent, b], win[opp, agent]) of an opponent that holds at `threshold` (or at
    the goal): bank b = 0 is a 1 rolled; it does not depend on the agent's score."""
    sides = len(probs)
    opp = np.arange(goal)
    mass = np.zeros((goal, goal + sides))  # [opp score, turn total]
    mass[:, 0] = 1.0
    bank = np.zeros((goal, goal))
    win = np.zeros(goal)
    for turn in range(goal):
        here = mass[:, turn]
        if turn > 0 and turn >= threshold:
            bank[:, turn] += here
            continue
        bank[:, 0] += probs[0] * here
        for face in range(2, sides + 1):
            moved = probs[face - 1] * here
            done = opp + turn + face >= goal
            win += np.where(done, moved, 0.0)
            mass[:, turn + face] += np.where(done, 0.0, moved)
    return (
        np.broadcast_to(bank[:, None, :], (goal, goal, goal)).copy(),
        np.broadcast_to(win[:, None], (goal, goal)).copy(),
    )


def stand_in_model(goal, probs, threshold=HOLD_AT):
    """What `best_response` reads from a model: goal, face_probs and opponent_turns."""
    return SimpleNamespace(
        goal=goal, face_probs=probs, opponent_turns=hold_at_turns(goal, probs, threshold)
    )


@cache
def value_iteration_best_response(goal, probs, threshold=HOLD_AT, tol=1e-13):
    """The whole game against a hold-at-`threshold` opponent, both sides' turns as states, the
    agent's win probability by whole-array Jacobi sweeps until no entry moves by more than tol.

    Returns (agent[a, o, k] with the agent to move, NaN where a + k >= goal; waiting[a, o], the
    opponent to move at turn total 0)."""
    sides = len(probs)
    valid = grids(goal)[3]
    opp_valid = valid.transpose(1, 0, 2)  # [a, o, t]: o + t < goal
    agent = np.ones((goal, goal, goal + sides))  # 1 once a + k >= goal: the agent has won
    agent[:, :, :goal] = np.where(valid, 0.5, 1.0)
    other = np.zeros((goal, goal, goal + sides))  # 0 once o + t >= goal: the opponent has won
    other[:, :, :goal] = np.where(opp_valid, 0.5, 0.0)
    # the agent banks k: other[a + k, o, 0], and 1 past the goal (max(roll, 1) = 1 there)
    agent_banks = np.ones((2 * goal - 1, goal))
    hold = sliding_window_view(agent_banks, goal, axis=0)  # [a, o, k]
    # the opponent banks t: agent[a, o + t, 0] (past the goal: masked below)
    opp_banks = np.zeros((goal, 2 * goal - 1))
    opp_hold = sliding_window_view(opp_banks, goal, axis=1)  # [a, o, t]
    holds_from = max(threshold, 1)
    roll, opp_roll, new, scratch = (np.empty((goal, goal, goal)) for _ in range(4))
    for _ in range(100_000):
        agent_banks[:goal] = other[:, :, 0]
        opp_banks[:, :goal] = agent[:, :, 0]
        np.multiply(probs[0], other[:, :, :1], out=roll)
        np.multiply(probs[0], agent[:, :, :1], out=opp_roll)
        for face in range(2, sides + 1):
            roll += np.multiply(probs[face - 1], agent[:, :, face : face + goal], out=scratch)
            opp_roll += np.multiply(probs[face - 1], other[:, :, face : face + goal], out=scratch)
        np.maximum(roll, hold, out=new)
        new[:, :, 0] = roll[:, :, 0]  # no hold at turn total 0
        opp_roll[:, :, holds_from:] = opp_hold[:, :, holds_from:]
        opp_roll *= opp_valid
        np.subtract(new, agent[:, :, :goal], out=scratch)
        change = max(scratch.max(), -scratch.min())
        np.subtract(opp_roll, other[:, :, :goal], out=scratch)
        change = max(change, scratch.max(), -scratch.min())
        agent[:, :, :goal], other[:, :, :goal] = new, opp_roll
        if change <= tol:
            return np.where(valid, new, np.nan), opp_roll[:, :, 0].copy()
    raise AssertionError("value iteration did not converge")


def shifted(table, goal):
    """The goal-`LARGEST` table read as the game to `goal` (scores start LARGEST - goal on)."""
    skip = LARGEST - goal
    return table[skip:, skip:, :goal] if table.ndim == 3 else table[skip:, skip:]


def assert_same_positions(solver, reference):
    assert solver.shape == reference.shape
    np.testing.assert_array_equal(np.isnan(solver), np.isnan(reference))
    np.testing.assert_allclose(solver, reference, rtol=0, atol=AGREE, equal_nan=True)


def two_player_residual(tables, goal, probs):
    """Largest violation of the two-player optimality equations by the returned tables."""
    sides = len(probs)
    i, j, k, valid = grids(goal)
    start = tables.turn_start
    ahead = np.ones((goal, goal, goal + sides))
    ahead[:, :, :goal] = np.where(valid, tables.value, 1.0)
    roll = probs[0] * (1.0 - start.T)[:, :, None]
    for face in range(2, sides + 1):
        roll = roll + probs[face - 1] * ahead[:, :, face : face + goal]
    hold = 1.0 - start[j, np.minimum(i + k, goal - 1)]
    best = np.where(k > 0, np.maximum(roll, hold), roll)
    held = valid & (k > 0)
    return max(
        np.max(np.abs(tables.value - best)[valid]),
        np.max(np.abs(tables.roll - roll)[valid]),
        np.max(np.abs(tables.hold - hold)[held], initial=0.0),
        np.max(np.abs(tables.turn_start - tables.value[:, :, 0])),
    )


def best_response_residual(tables, model):
    """Largest violation of the best-response equations by the returned tables."""
    goal, probs = model.goal, model.face_probs
    bank, _win = model.opponent_turns
    sides = len(probs)
    i, j, k, valid = grids(goal)
    start, waiting = tables.turn_start, tables.waiting
    # waiting[i, j] = sum_b bank[j, i, b] * start[i, j + b] (j + b >= goal is no bank)
    later = np.minimum(j + k, goal - 1)  # here k is the banked amount b
    reached = np.where(j + k < goal, start[i, later], 0.0)
    expected_waiting = np.sum(bank.transpose(1, 0, 2) * reached, axis=2)
    ahead = np.ones((goal, goal, goal + sides))
    ahead[:, :, :goal] = np.where(valid, tables.value, 1.0)
    roll = probs[0] * waiting[:, :, None]
    for face in range(2, sides + 1):
        roll = roll + probs[face - 1] * ahead[:, :, face : face + goal]
    hold = waiting[np.minimum(i + k, goal - 1), j]
    best = np.where(k > 0, np.maximum(roll, hold), roll)
    held = valid & (k > 0)
    return max(
        np.max(np.abs(waiting - expected_waiting)),
        np.max(np.abs(tables.value - best)[valid]),
        np.max(np.abs(tables.roll - roll)[valid]),
        np.max(np.abs(tables.hold - hold)[held], initial=0.0),
        np.max(np.abs(start - tables.value[:, :, 0])),
    )


@pytest.mark.parametrize("probs, goal", TWO_PLAYER_CASES, ids=map(case_name, TWO_PLAYER_CASES))
def test_two_player_optimum_matches_value_iteration(probs, goal):
    tables = two_player_optimum(goal, probs).tables
    reference = shifted(value_iteration_two_player(LARGEST, probs), goal)
    assert_same_positions(tables.value, reference)
    np.testing.assert_allclose(tables.turn_start, reference[:, :, 0], rtol=0, atol=AGREE)
    assert 1 <= tables.passes <= 10 < MAX_PASSES
    if (probs, goal - 1) not in TWO_PLAYER_CASES:  # the first goal: no shift, the shift's check
        assert_same_positions(tables.value, value_iteration_two_player(goal, probs))


@pytest.mark.parametrize("probs, goal", TWO_PLAYER_CASES, ids=map(case_name, TWO_PLAYER_CASES))
def test_two_player_optimum_satisfies_its_bellman_equations(probs, goal):
    tables = two_player_optimum(goal, probs).tables
    assert two_player_residual(tables, goal, probs) <= RESIDUAL


@pytest.mark.parametrize("goal", BEST_RESPONSE_GOALS)
def test_best_response_to_hold_at_20_matches_value_iteration(goal):
    tables = best_response(stand_in_model(goal, THREE_WAY))
    agent, waiting = value_iteration_best_response(LARGEST, THREE_WAY)
    assert_same_positions(tables.value, shifted(agent, goal))
    np.testing.assert_allclose(tables.waiting, shifted(waiting, goal), rtol=0, atol=AGREE)
    assert 1 <= tables.passes <= 10 < MAX_PASSES
    if goal == BEST_RESPONSE_GOALS[0]:  # no shift, the shift's check
        agent, waiting = value_iteration_best_response(goal, THREE_WAY)
        assert_same_positions(tables.value, agent)
        np.testing.assert_allclose(tables.waiting, waiting, rtol=0, atol=AGREE)


@pytest.mark.parametrize("goal", BEST_RESPONSE_GOALS)
def test_best_response_satisfies_its_bellman_equations(goal):
    model = stand_in_model(goal, THREE_WAY)
    assert best_response_residual(best_response(model), model) <= RESIDUAL


@pytest.mark.parametrize("probs", [TWO_FACED, THREE_WAY])
def test_exact_ties_hold_and_decisions_match_the_reference(probs):
    # These dice have exact ties between holding and rolling (round-off splits them either
    # way); the published policy holds on them and elsewhere is the reference's greedy policy.
    tables = two_player_optimum(LARGEST, probs).tables
    reference = value_iteration_two_player(LARGEST, probs)
    i, j, k, valid = grids(LARGEST)
    held = valid & (k > 0)
    roll = np.where(held, tables.roll, 0.0)
    hold = np.where(held, tables.hold, 0.0)
    ties = held & (np.abs(roll - hold) <= 1e-12)
    assert ties.sum() >= 10
    assert not tables.roll_decision[ties].any()
    assert tables.roll_decision[valid & (k == 0)].all()
    # the reference's own action values, one more sweep from its fixed point
    ahead = np.ones((LARGEST, LARGEST, LARGEST + len(probs)))
    ahead[:, :, :LARGEST] = np.where(valid, reference, 1.0)
    ref_roll = probs[0] * (1.0 - reference[:, :, 0].T)[:, :, None]
    for face in range(2, len(probs) + 1):
        ref_roll = ref_roll + probs[face - 1] * ahead[:, :, face : face + LARGEST]
    ref_hold = 1.0 - reference[:, :, 0][j, np.minimum(i + k, LARGEST - 1)]
    clear = held & (np.abs(ref_roll - ref_hold) > 1e-9)
    assert clear.sum() > 1000
    np.testing.assert_array_equal(tables.roll_decision[clear], (ref_roll > ref_hold)[clear])


@pytest.mark.parametrize(
    "probs",
    [(1 - 1e-12, 1e-12), (0.95, 0.05), (0.2, 0.8), (0.9, 0.05, 0.05)],
    ids=["bust-all-but-1e-12", "bust-95%", "bust-20%", "three-faced"],
)
def test_other_dice_settle_with_exact_values(probs):
    # More dice on which a layer's greedy policy flips on exact ties, and one whose turns
    # almost surely bust, which makes the turn-start equations nearly singular (1 - b with b
    # within 1e-12 of 1).
    goal = LARGEST
    tables = two_player_optimum(goal, probs).tables
    assert tables.passes <= 10
    assert two_player_residual(tables, goal, probs) <= RESIDUAL
    assert np.all((tables.turn_start >= 0) & (tables.turn_start <= 1))
    model = stand_in_model(goal, probs)
    response = best_response(model)
    assert response.passes <= 10
    assert best_response_residual(response, model) <= RESIDUAL


def test_published_value_in_few_passes():
    # Neller and Presser (2004): with both players optimal the first player wins 0.5306 of
    # games to 100 (0.530593 to six digits). Each layer starts from its neighbours' values,
    # so no layer needs more than a few passes.
    two_player_optimum.cache_clear()
    optimum = two_player_optimum(100, uniform_die(6))
    assert round(optimum.value, 4) == 0.5306
    assert round(optimum.value, 6) == 0.530593
    assert optimum.tables.passes <= 4
    assert two_player_residual(optimum.tables, 100, uniform_die(6)) <= RESIDUAL
