"""Simultaneous Hog (the television game in Tijms, "Stochastic games and dynamic programming",
Asia Pacific Mathematics Newsletter, 2012): the model, its fold, and the
exact equilibrium, checked by hand-solved cases and by a brute force written here."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import baselines
from baselines.simultaneous import (
    SADDLE_TOLERANCE,
    best_response,
    equilibrium,
    fictitious_play,
    matrix_game,
    pair_values,
    saddle_gap,
    shapley_value_iteration,
    solve_position,
    solve_simultaneous_fold,
)
from dice_envs import make_model
from dice_envs.games.base import Transition
from dice_envs.games.simultaneous_hog import SimultaneousHog
from dice_envs.tables import build_tables

ENV_ID = "dice_envs/SimultaneousHog-v0"


def test_one_move_of_two_coins_by_hand():
    """Goal 2, one die of two sides (1 busts, 2 scores 2): each throw scores with 1/2."""
    model = SimultaneousHog(goal=2, max_dice=1, sides=2)
    outcomes = sorted(model.joint_transitions((0, 0), (0, 0)), key=lambda t: (t[1], -t[2]))
    assert outcomes == [
        Transition(0.25, (0, 0), 0.0, False),  # both bust: the position repeats
        Transition(0.25, (0, 2), 0.0, True),
        Transition(0.25, (2, 0), 1.0, True),
        Transition(0.125, (2, 2), 1.0, True),  # both reach 2: the coin
        Transition(0.125, (2, 2), 0.0, True),
    ]
    # v = 1/4 + 1/8 + v/4, so v = 1/2; the equilibrium agrees (one action, nothing to mix).
    assert equilibrium(ENV_ID, goal=2, max_dice=1, sides=2).value == pytest.approx(0.5, abs=1e-15)


def test_the_larger_total_wins_once_the_goal_is_reached():
    model = SimultaneousHog(goal=10, max_dice=2)
    assert model.first_wins(12, 9) == 1.0 and model.first_wins(9, 10) == 0.0
    assert model.first_wins(11, 11) == 0.5 and model.first_wins(13, 12) == 1.0
    # From (8, 9) with two dice each: p0 wins if it scores and p1 does not reach the goal with
    # more, or scores more; computed here from the throw law.
    law = {points: prob for points, prob in model.hog.scores[1]}
    expected = sum(
        p * q * (1.0 if 8 + a > 9 + b else 0.5 if 8 + a == 9 + b else 0.0)
        for a, p in law.items()
        for b, q in law.items()
        if 8 + a >= 10 or 9 + b >= 10
    )
    won = sum(t.prob * t.reward for t in model.joint_transitions((8, 9), (1, 1)) if t.terminal)
    assert won == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize(
    ("payoff", "row", "column", "value"),
    [
        ([[1.0, 0.0], [0.0, 1.0]], [0.5, 0.5], [0.5, 0.5], 0.5),  # matching pennies
        ([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], [1 / 3] * 3, [1 / 3] * 3, 0.0),  # rock-paper-...
        ([[3.0, 1.0], [4.0, 2.0]], [0.0, 1.0], [0.0, 1.0], 2.0),  # a saddle point
        ([[2.0, -1.0], [-1.0, 1.0]], [0.4, 0.6], [0.4, 0.6], 0.2),  # solved by hand
    ],
)
def test_matrix_games_solved_by_hand(payoff, row, column, value):
    x, y, v = matrix_game(np.array(payoff, dtype=float))
    np.testing.assert_allclose(x, row, atol=1e-9)
    np.testing.assert_allclose(y, column, atol=1e-9)
    assert v == pytest.approx(value, abs=1e-9)


def test_a_position_with_one_action_is_a_geometric_series():
    """One action: v = G + b^2 v, so v = G / (1 - b^2)."""
    position = solve_position(np.array([[0.3]]), np.array([0.6]))
    assert position.value == pytest.approx(0.3 / (1 - 0.36), abs=1e-15)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="payoff"):
        matrix_game(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="max_dice"):
        make_model(ENV_ID, max_dice=0)
    with pytest.raises(ValueError, match="not a simultaneous"):
        equilibrium("dice_envs/Hog-v0")
    solved = equilibrium(ENV_ID, goal=6, max_dice=3)
    with pytest.raises(ValueError, match="own score must be an integer in 0..5"):
        solved.value_at((6, 0))
    with pytest.raises(ValueError, match="opponent must have shape"):
        best_response(SimultaneousHog(6, 3), np.ones((6, 6, 3)) / 3)
    with pytest.raises(ValueError, match="own score must be an integer"):
        solved.value_at((2.9, 1))
    with pytest.raises(ValueError, match="other score must be an integer"):
        solved.strategy((2, True))
    with pytest.raises(ValueError, match="opponent"):
        equilibrium(ENV_ID, goal=6, max_dice=3, opponent="nonsense")
    with pytest.raises(ValueError, match="tol"):
        shapley_value_iteration(SimultaneousHog(6, 3), tol=0)
    with pytest.raises(ValueError, match="max_sweeps"):
        shapley_value_iteration(SimultaneousHog(6, 3), max_sweeps=0)


def test_probability_tables_must_sum_to_one_and_are_made_exact():
    """A row 1e-5 off is refused by the solvers and the fold alike; one 1e-7 off (a float32
    softmax) is accepted and divided by its sum, so the evaluation stays a probability."""
    model = SimultaneousHog(6, 3)
    off = np.full((7, 7, 3), 1 / 3)
    off[2, 3] = [0.5, 0.5, 1e-5]
    with pytest.raises(ValueError, match="must sum to 1"):
        best_response(model, off)
    with pytest.raises(ValueError, match="must sum to 1"):
        make_model(ENV_ID, goal=6, max_dice=3, opponent=off)
    close = np.full((7, 7, 3), 1 / 3)
    close[2, 3] = [0.5, 0.5, 1e-7]
    exact = close.copy()
    exact[2, 3] /= exact[2, 3].sum()
    np.testing.assert_allclose(
        pair_values(model, close, close), pair_values(model, exact, exact), rtol=0, atol=1e-14
    )
    fold = make_model(ENV_ID, goal=6, max_dice=3, opponent=close)
    assert fold.opponent_policy.batch_probs(np.array([[2, 3]])).sum() == pytest.approx(1, abs=1e-15)


def _support_enumeration(payoff: np.ndarray) -> float:
    """The value of a small matrix game by trying every pair of equal-size supports (written
    independently of baselines.simultaneous)."""
    rows, columns = payoff.shape
    for size in range(1, min(rows, columns) + 1):
        for rs in itertools.combinations(range(rows), size):
            for cs in itertools.combinations(range(columns), size):
                block = payoff[np.ix_(rs, cs)]
                # x on rs equalises the columns cs; y on cs equalises the rows rs.
                lhs = np.block([[block.T, -np.ones((size, 1))], [np.ones((1, size)), 0]])
                rhs = np.append(np.zeros(size), 1.0)
                try:
                    x_part = np.linalg.solve(lhs, rhs)
                    y_part = np.linalg.solve(
                        np.block([[block, -np.ones((size, 1))], [np.ones((1, size)), 0]]), rhs
                    )
                except np.linalg.LinAlgError:
                    continue
                x, y = np.zeros(rows), np.zeros(columns)
                x[list(rs)], y[list(cs)] = x_part[:-1], y_part[:-1]
                value = x_part[-1]
                if (x < -1e-12).any() or (y < -1e-12).any():
                    continue
                if (x @ payoff).min() >= value - 1e-12 and (payoff @ y).max() <= value + 1e-12:
                    return float(value)
    raise AssertionError("no equilibrium found")


def _brute_force(model: SimultaneousHog) -> np.ndarray:
    """Shapley's value iteration over all positions at once, each matrix game by support
    enumeration, until nothing moves by 1e-15: values[i, j] for player 0."""
    goal = model.goal
    actions = range(model.max_dice)
    outcomes = {
        (i, j, a, b): model.joint_transitions((i, j), (a, b))
        for i in range(goal)
        for j in range(goal)
        for a in actions
        for b in actions
    }
    values = np.full((goal, goal), 0.5)
    for _ in range(10_000):
        new = np.empty_like(values)
        for i in range(goal):
            for j in range(goal):
                payoff = np.array(
                    [
                        [
                            sum(p * (r if t else values[s]) for p, s, r, t in outcomes[i, j, a, b])
                            for b in actions
                        ]
                        for a in actions
                    ]
                )
                new[i, j] = _support_enumeration(payoff)
        change = np.abs(new - values).max()
        values = new
        if change < 1e-15:
            return values
    raise AssertionError("value iteration did not settle")


@pytest.mark.parametrize(
    ("goal", "max_dice", "sides", "mixed"),
    [(6, 3, 6, 0), (6, 3, 4, 14), (5, 4, 6, 8)],
)
def test_the_equilibrium_equals_a_brute_force(goal, max_dice, sides, mixed):
    """The issue's goal 6 with D = 3 (every position pure), and two small games that mix."""
    model = SimultaneousHog(goal, max_dice, sides)
    solved = equilibrium(ENV_ID, goal=goal, max_dice=max_dice, sides=sides)
    np.testing.assert_allclose(solved.values[:goal, :goal], _brute_force(model), atol=1e-12)
    assert solved.mixed_positions == mixed


def _payoff(model: SimultaneousHog, values: np.ndarray, i: int, j: int) -> np.ndarray:
    """Position (i, j)'s matrix game from the model's rules and the values of the positions."""
    actions = range(model.max_dice)
    return np.array(
        [
            [
                sum(
                    p * (r if t else values[s])
                    for p, s, r, t in model.joint_transitions((i, j), (a, b))
                )
                for b in actions
            ]
            for a in actions
        ]
    )


def test_every_position_is_a_saddle_point_and_the_game_is_symmetric():
    """Goal 16 with 5 dice (78 positions mix): each player's strategy at its own observation
    is optimal in every position's matrix game, built here from the model's rules and the
    returned values."""
    goal, dice = 16, 5
    model = SimultaneousHog(goal, dice)
    solved = equilibrium(ENV_ID, goal=goal, max_dice=dice)
    values = solved.values[:goal, :goal]
    np.testing.assert_allclose(np.diag(values), 0.5, atol=1e-9)
    np.testing.assert_allclose(values + values.T, 1.0, atol=1e-9)
    worst = 0.0
    for i in range(goal):
        for j in range(goal):
            payoff = _payoff(model, values, i, j)
            x, y = solved.strategy((i, j)), solved.strategy((j, i))
            worst = max(worst, saddle_gap(payoff, x, y))
            assert x @ payoff @ y == pytest.approx(values[i, j], abs=1e-9)
    assert worst <= 10 * SADDLE_TOLERANCE  # the solver's tolerance, rebuilt independently
    assert solved.saddle_gap <= SADDLE_TOLERANCE
    assert solved.mixed_positions > 0


def test_fast_evaluation_equals_the_generic_fold():
    """pair_values and best_response (one sweep over score sums) against the fold's tables:
    a mixed policy's value by baselines.evaluate, and the best response by the generic solver."""
    goal, dice = 15, 3
    model = SimultaneousHog(goal, dice)
    rng = np.random.default_rng(0)
    ours = rng.dirichlet(np.ones(dice), size=(goal + 1, goal + 1))
    theirs = rng.dirichlet(np.ones(dice), size=(goal + 1, goal + 1))
    kwargs = {"goal": goal, "max_dice": dice, "opponent": theirs}
    generic = baselines.evaluate(ours, ENV_ID, **kwargs)
    assert pair_values(model, ours, theirs)[0, 0] == pytest.approx(generic.value, abs=1e-12)
    fast = best_response(model, theirs)
    exact = baselines.solve(ENV_ID, method="generic", **kwargs)
    rows = exact.tables.observation_array
    np.testing.assert_allclose(fast[rows[:, 0], rows[:, 1]], exact.q, atol=1e-11)
    assert baselines.solve(ENV_ID, **kwargs).value == pytest.approx(exact.value, abs=1e-12)


def test_the_equilibrium_is_unexploitable_and_five_dice_is_exploited():
    goal, dice = 40, 6
    model = SimultaneousHog(goal, dice)
    solved = equilibrium(ENV_ID, goal=goal, max_dice=dice)
    both = pair_values(model, solved.strategies, solved.strategies)
    np.testing.assert_allclose(both, solved.values[:goal, :goal], atol=1e-12)
    assert best_response(model, solved.strategies)[0, 0].max() == pytest.approx(0.5, abs=1e-12)
    # Always five dice: the best response's margin, the same by the generic solve of the fold.
    five = model.named_policy("dice-5")
    fast = best_response(model, five)[0, 0].max()
    generic = baselines.solve(ENV_ID, method="generic", goal=goal, max_dice=dice, opponent="dice-5")
    assert fast == pytest.approx(generic.value, abs=1e-11)
    assert fast - 0.5 > 0.01
    # The "equilibrium" policy name reads the same equilibrium.
    named = baselines.exploitability("equilibrium", ENV_ID, goal=goal, max_dice=dice)
    assert named.value == pytest.approx(0.0, abs=1e-12)


def test_plain_shapley_iteration_reaches_the_ordered_solve():
    """The textbook method (every position from the last sweep's values) and the ordered
    solve (by score sum, a fixed point per position) give the same values."""
    goal, dice = 15, 4
    plain = shapley_value_iteration(SimultaneousHog(goal, dice))
    solved = equilibrium(ENV_ID, goal=goal, max_dice=dice)
    assert plain.residual <= 1e-12 and plain.sweeps > 1
    np.testing.assert_allclose(plain.values, solved.values[:goal, :goal], atol=1e-10)


def test_fictitious_play_is_scored_exactly_and_approaches_the_equilibrium():
    goal, dice = 20, 4
    model = SimultaneousHog(goal, dice)
    learned = fictitious_play(model, 60)
    uniform = baselines.exploitability("random", ENV_ID, goal=goal, max_dice=dice)
    assert learned.exploitability[0] == pytest.approx(uniform.value, abs=1e-12)
    final = best_response(model, learned.strategies)[0, 0].max() - 0.5
    assert len(learned.exploitability) == 61 and final == learned.exploitability[-1]
    assert 0 < final < learned.exploitability[0] / 20
    np.testing.assert_allclose(learned.strategies.sum(axis=-1), 1.0, atol=1e-12)
    with pytest.raises(ValueError, match="iterations"):
        fictitious_play(model, 0)


@pytest.mark.parametrize("opponent", ["five-dice", "random", "dice-2"])
def test_the_fast_solve_counts_the_folds_reachable_states(opponent):
    fold = make_model(ENV_ID, goal=15, max_dice=3, opponent=opponent)
    assert solve_simultaneous_fold(fold)._reachable == build_tables(fold).num_states


# -- the PettingZoo parallel env --------------------------------------------------------------
def test_the_parallel_env_passes_pettingzoos_api_test():
    from pettingzoo import ParallelEnv
    from pettingzoo.test import parallel_api_test

    from dice_envs.pettingzoo import DiceParallelEnv, parallel_env, parallel_names

    assert parallel_names() == ("simultaneous_hog",)
    game = parallel_env("simultaneous_hog", goal=25, max_dice=4)
    assert isinstance(game, ParallelEnv) and isinstance(game, DiceParallelEnv)
    parallel_api_test(game, num_cycles=300)
    import pettingzoo

    made = pettingzoo.make("parallel", ENV_ID, goal=20, max_dice=3)
    assert isinstance(made, DiceParallelEnv) and (made.model.goal, made.model.max_dice) == (20, 3)


@pytest.mark.parametrize(
    ("goal", "dice", "state", "actions"),
    [(15, 4, (3, 7), (2, 0)), (15, 4, (11, 12), (3, 3)), (4, 1, (2, 2), (0, 0))],
)
def test_the_parallel_env_samples_the_models_joint_law(goal, dice, state, actions):
    """Chi-square of the next (state, reward) against `joint_transitions`, the coin of a tie
    included (at (2, 2) of 4 with one die each, 5 throws in 36 tie)."""
    from scipy.stats import chisquare

    from dice_envs.pettingzoo import parallel_env

    model = SimultaneousHog(goal=goal, max_dice=dice)
    outcomes = model.joint_transitions(state, actions)
    index = {(s, r): i for i, (_, s, r, _) in enumerate(outcomes)}
    game = parallel_env("simultaneous_hog", goal=goal, max_dice=dice)
    game.reset(seed=11)
    draws, counts = 6000, np.zeros(len(outcomes))
    for _ in range(draws):
        game.reset(options={"state": state})
        _, rewards, terminations, _, _ = game.step(
            dict(zip(("player_0", "player_1"), actions, strict=True))
        )
        won = float(rewards["player_0"] > 0)
        counts[index[(game.position, won if terminations["player_0"] else 0.0)]] += 1
    expected = np.array([t.prob for t in outcomes]) * draws
    assert chisquare(counts, expected).pvalue > 1e-3


def test_the_parallel_env_is_seeded_and_refuses_bad_actions():
    from dice_envs.pettingzoo import parallel_env

    def play(seed):
        game = parallel_env("simultaneous_hog", goal=30)
        game.reset(seed=seed)
        seen = []
        while game.agents:
            observations, *_ = game.step({"player_0": 4, "player_1": 6})
            seen.append(tuple(observations["player_0"]["observation"]))
        return seen

    assert play(5) == play(5) != play(6)
    game = parallel_env("simultaneous_hog", goal=30)
    with pytest.raises(RuntimeError, match="before reset"):
        game.step({"player_0": 0, "player_1": 0})
    game.reset(seed=0)
    with pytest.raises(ValueError, match="an action for each"):
        game.step({"player_0": 0})
    for bad in (10, -1):
        with pytest.raises(ValueError, match="action must be"):
            game.step({"player_0": bad, "player_1": 0})
    with pytest.raises(ValueError, match="name must be one of"):
        parallel_env("hog")
