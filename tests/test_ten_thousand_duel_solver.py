"""The race to the goal at Ten Thousand: the exact solver against a brute force over the whole
state space (value iteration to convergence, built here from the rules and the solitaire
model's transitions), the symmetry of the goal, and the solitaire turn."""

from __future__ import annotations

import numpy as np
import pytest

from baselines import solve
from baselines.protocols import GameSolution
from baselines.ten_thousand_duel import (
    best_response,
    evaluate_race,
    solitaire_turn_value,
    solve_race,
    solve_seats,
    turn_tables,
)
from dice_envs.games.rule import Rule
from dice_envs.games.ten_thousand import CONFIG_INDEX, CONFIGS, MOVE_ACTION, STOP, TenThousand
from dice_envs.games.ten_thousand_duel import TenThousandDuel
from dice_envs.policies import BatchedPolicy, batched

NUM_ACTIONS = 15


def stop_at(threshold: int) -> Rule:
    """The race's own stop-at-K (its model's named policy; it reads the turn alone)."""
    return TenThousandDuel(10_000).named_policy(f"stop-at-{threshold}")


def turn_policy(solitaire):
    """A policy of the solitaire turn asked on the turn's part of the race's observation."""
    return batched(lambda observations: solitaire(np.asarray(observations)[:, 2:]))


class BruteForce:
    """Value iteration over every decision of the race, from the rules: a pair (a, b) of
    banked chips (a the mover's), a turn state of the solitaire model, and the mover's seat.
    A roll reaching the goal wins, a bust hands (b, a) to the other seat, a stop at t hands it
    (b, a + t). Jacobi sweeps over all of it until nothing moves by 1e-15."""

    def __init__(self, goal: int, allowed_moves=None) -> None:
        self.goal = goal
        self.model = TenThousand(allowed_moves=allowed_moves, max_turn_score=goal + 30)
        self.turns = {top: self._turn(top) for top in range(1, goal + 1)}

    def _turn(self, top: int) -> dict:
        """The decision states with a turn total below `top`, and one row per (state, action):
        a sparse map to the next states, and its chances of a win, of a bust, the stop total."""
        states, frontier = {(0, 0, 5): 0}, [(0, 0, 5)]
        keys, moves, wins, busts, stops = [], [], [], [], []
        while frontier:
            state = frontier.pop()
            for action in self.model.legal_actions(state):
                row, win, bust, stop = {}, 0.0, 0.0, -1
                for prob, nxt, _reward, terminal in self.model.transitions(state, action):
                    if action == STOP:
                        stop = state[0]
                    elif terminal:
                        assert nxt[2] == 0  # the cap is far above the goal: only a bust ends it
                        bust += prob
                    elif nxt[0] >= top:
                        win += prob
                    else:
                        if nxt not in states:
                            states[nxt] = len(states)
                            frontier.append(nxt)
                        row[states[nxt]] = row.get(states[nxt], 0.0) + prob
                keys.append((state, action))
                moves.append(row)
                wins.append(win)
                busts.append(bust)
                stops.append(stop)
        matrix = np.zeros((len(keys), len(states)))
        for i, row in enumerate(moves):
            for j, p in row.items():
                matrix[i, j] = p
        return {
            "states": states,
            "keys": keys,
            "row_state": np.array([states[s] for s, _ in keys]),
            "row_action": np.array([a for _, a in keys]),
            "matrix": matrix,
            "win": np.array(wins),
            "bust": np.array(busts),
            "stop": np.array(stops),
        }

    def _rows(self, values, seat, a, b) -> np.ndarray:
        """Q of every row of seat's turn at (a, b) from the current values."""
        turn, other = self.turns[self.goal - a], values[1 - seat]
        stop = turn["stop"]
        stopped = np.array([1.0 - other[(b, a + t)][0] if t >= 0 else 0.0 for t in stop])
        return (
            turn["matrix"] @ values[seat][(a, b)]
            + turn["win"]
            + turn["bust"] * (1.0 - other[(b, a)][0])
            + stopped
        )

    def solve(self, seats=(None, None), sweeps: int = 100_000) -> dict:
        """values[s][(a, b)][j]: seat s's win probability at its decision j of pair (a, b);
        seats[s] None optimises, else a policy (observations, masks) -> actions or probs."""
        goal = self.goal
        pairs = [(a, b) for a in range(goal) for b in range(goal)]
        weights = [None, None]
        for s, policy in enumerate(seats):
            if policy is not None:
                weights[s] = {pair: self._weights(policy, pair) for pair in pairs}
        values = [
            {p: np.zeros(len(self.turns[goal - p[0]]["states"])) for p in pairs} for _ in (0, 1)
        ]
        for _ in range(sweeps):
            new = [{}, {}]
            for s in (0, 1):
                for a, b in pairs:
                    turn = self.turns[goal - a]
                    q = self._rows(values, s, a, b)
                    size = len(turn["states"])
                    if weights[s] is None:
                        v = np.full(size, -np.inf)
                        np.maximum.at(v, turn["row_state"], q)
                    else:
                        v = np.bincount(turn["row_state"], weights[s][(a, b)] * q, size)
                    new[s][(a, b)] = v
            change = max(np.abs(new[s][p] - values[s][p]).max() for s in (0, 1) for p in pairs)
            values = new
            if change < 1e-15:
                break
        q = {}
        for s in (0, 1):
            for a, b in pairs:
                rows = self._rows(values, s, a, b)
                for (state, action), value in zip(self.turns[goal - a]["keys"], rows, strict=True):
                    q[(s, a, b, *state, action)] = value
        return {"values": values, "q": q}

    def _weights(self, policy, pair) -> np.ndarray:
        """The fixed policy's probability of each row's action (a roll at the start)."""
        a, b = pair
        turn = self.turns[self.goal - a]
        states = list(turn["states"])
        obs = np.array([(a, b, *s) for s in states], dtype=np.int64)
        masks = np.zeros((len(states), NUM_ACTIONS), dtype=bool)
        for i, s in enumerate(states):
            masks[i, list(self.model.legal_actions(s))] = True
        answer = np.asarray(policy.batch(obs) if isinstance(policy, Rule) else policy(obs, masks))
        probs = answer if answer.ndim == 2 else np.eye(NUM_ACTIONS)[answer]
        probs = np.where(np.array([s[0] for s in states])[:, None] > 0, probs, np.eye(15)[1])
        return probs[turn["row_state"], turn["row_action"]]


def start_values(brute: dict, seat: int, goal: int) -> np.ndarray:
    return np.array([[brute["values"][seat][(a, b)][0] for b in range(goal)] for a in range(goal)])


def check_q(solution, brute: dict, seat: int, goal: int) -> int:
    """Every Q-value of `seat`'s decisions against the brute force; returns how many."""
    keys = [k for k in brute["q"] if k[0] == seat]
    obs, row = np.unique(
        np.array([k[1:6] for k in keys], dtype=np.int64), axis=0, return_inverse=True
    )
    q = solution.action_values_batch(obs)
    expected = np.array([brute["q"][k] for k in keys])
    got = q[row.reshape(-1), [k[6] for k in keys]]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    # Exactly the legal actions have values.
    assert (~np.isnan(q)).sum() == len(keys)
    np.testing.assert_allclose(solution.values_at(obs), np.nanmax(q, axis=1), rtol=0, atol=0)
    return len(keys)


CASES = [(4, None), (6, None), (10, None), (10, ())]


@pytest.fixture(scope="module")
def brute_optimum():
    return {case: BruteForce(case[0], case[1]).solve() for case in CASES}


@pytest.mark.parametrize("goal,allowed", CASES)
def test_optimum_matches_brute_force(goal, allowed, brute_optimum):
    brute = brute_optimum[(goal, allowed)]
    solution = solve_race(goal, allowed_moves=allowed)
    expected = start_values(brute, 0, goal)
    np.testing.assert_allclose(solution.tables.seat_values[0], expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(solution.tables.seat_values[1], expected, rtol=0, atol=1e-12)
    assert solution.value == pytest.approx(expected[0, 0], abs=1e-12)
    assert solution.win_probability(goal - 1, 0) == pytest.approx(expected[-1, 0], abs=1e-12)
    assert check_q(solution, brute, 0, goal) > 9 * goal * goal
    assert (solution.tables.iterations >= 1).all()


def test_optimal_actions_are_the_best_and_lowest_on_ties():
    solution = solve_race(6)
    obs = np.array([(0, 0, 0, 0, 5), (2, 3, 2, CONFIG_INDEX[(2, 0, 0)], 3)], dtype=np.int64)
    q = solution.action_values_batch(obs)
    actions = solution.actions(obs)
    assert actions[0] == 1  # only a roll at the start
    assert q[1, actions[1]] == pytest.approx(np.nanmax(q[1]), abs=1e-9)
    assert not np.isnan(q[1, MOVE_ACTION["5"]])  # giving back a 5 is legal there
    assert solution.action(tuple(obs[1])) == actions[1]
    np.testing.assert_array_equal(solution.action_values(obs[1]), q[1])
    assert solution.value == solution.win_probability(0, 0)
    assert solution.value_at(obs[0]) == pytest.approx(solution.value, abs=1e-14)
    assert isinstance(solution, GameSolution)


def solitaire_optimum():
    solution = solve("dice_envs/TenThousand-v0")
    return solution, turn_policy(solution.actions)


MIXED_STOP_AT_2 = None


def half_stop_at_two(observations, masks):
    """Stops with probability 1/2 from a turn total of 2 chips on, else rolls."""
    tau = observations[:, 2]
    probs = np.zeros((len(observations), NUM_ACTIONS))
    probs[:, 1] = np.where(tau >= 2, 0.5, 1.0)
    probs[:, 0] = 1.0 - probs[:, 1]
    return probs


def test_best_response_matches_brute_force():
    goal = 6
    brute_force = BruteForce(goal)
    for policy in (stop_at(3), solitaire_optimum()[1], half_stop_at_two):
        brute = brute_force.solve((None, policy))
        first, second = best_response(goal, policy)
        np.testing.assert_allclose(
            first.tables.seat_values[0], start_values(brute, 0, goal), rtol=0, atol=1e-12
        )
        np.testing.assert_allclose(
            first.tables.seat_values[1], start_values(brute, 1, goal), rtol=0, atol=1e-12
        )
        check_q(first, brute, 0, goal)
        # As second mover: 1 - the fixed policy's win probability as first mover.
        assert second.value == pytest.approx(1.0 - brute["values"][1][(0, 0)][0], abs=1e-12)
        assert first.value >= solve_race(goal).value - 1e-12  # it exploits, never loses


def test_evaluation_of_two_fixed_policies_matches_brute_force():
    goal = 6
    brute_force = BruteForce(goal)
    seats = (stop_at(2), solitaire_optimum()[1])
    brute = brute_force.solve(seats)
    race = evaluate_race(goal, *seats)
    np.testing.assert_allclose(
        race.seat_values[0], start_values(brute, 0, goal), rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(
        race.seat_values[1], start_values(brute, 1, goal), rtol=0, atol=1e-12
    )
    swapped = evaluate_race(goal, seats[1], seats[0])
    # The tables are by seat to move, so swapping who starts only swaps them.
    np.testing.assert_allclose(swapped.seat_values[::-1], race.seat_values, rtol=0, atol=1e-12)
    mixed = evaluate_race(goal, half_stop_at_two, stop_at(4), allowed_moves=["5"])
    brute_mixed = BruteForce(goal, ["5"]).solve((half_stop_at_two, stop_at(4)))
    assert mixed.first_player_wins == pytest.approx(brute_mixed["values"][0][(0, 0)][0], abs=1e-12)


def test_one_optimising_seat_is_the_optimum():
    goal = 10
    optimum = solve_race(goal)
    race = evaluate_race(goal, None, optimum.batched_policy())
    np.testing.assert_allclose(race.seat_values[0], optimum.tables.seat_values[0], atol=1e-12)


def test_symmetry_of_the_goal():
    """The race to g from banked (k + a, k + b) is the race to g - k from (a, b)."""
    big, small = solve_race(20).tables.seat_values[0], solve_race(10).tables.seat_values[0]
    np.testing.assert_allclose(big[10:, 10:], small, rtol=0, atol=1e-12)
    assert big[10, 10] == pytest.approx(small[0, 0], abs=1e-12)


def test_solitaire_turn_is_the_papers():
    """With the turn total as the stop payoff and 0 for a bust, the race's turn solver is the
    paper's solitaire turn: 5.872019 chips, R(tau, n) and the optimal action of every turn
    total up to 55."""
    solitaire, _ = solitaire_optimum()
    for top in (56, 101):
        value, r = solitaire_turn_value(top)
        assert value == pytest.approx(solitaire.value, abs=1e-12)
        assert round(value, 6) == 5.872019
        tables = turn_tables()
        obs = np.array(
            [
                (tau, c, n)
                for tau in range(1, 56)
                for c, n in tables.positions.tolist()
                if tau >= tables.position_score[tables.position_of[c, n]]
            ]
        )
        q = solitaire.action_values_batch(obs)
        np.testing.assert_allclose(q[:, 1], r[obs[:, 0], obs[:, 2]], rtol=0, atol=1e-12)
        # The same optimal action (the lowest of the best) at every turn total up to 55.
        ours = np.full(q.shape, -np.inf)
        ours[:, 0], ours[:, 1] = obs[:, 0], r[obs[:, 0], obs[:, 2]]
        for row, (tau, c, n) in enumerate(obs.tolist()):
            for action, (chips, dice) in TenThousand().moves(CONFIGS[c], n).items():
                ours[row, action] = r[tau - chips, n + dice]
        best = ours.max(axis=1, keepdims=True)
        np.testing.assert_array_equal(
            np.argmax(ours >= best - 1e-9 * np.maximum(1.0, best), axis=1), solitaire.actions(obs)
        )
    assert solitaire_turn_value(101, [])[0] == pytest.approx(
        solve("dice_envs/TenThousand-v0", allowed_moves=[]).value, abs=1e-12
    )


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="goal_chips"):
        solve_race(0)
    with pytest.raises(ValueError, match="observations"):
        solve_race(4).action_values_batch(np.array([[0, 0, 9, 0, 5]]))
    with pytest.raises(ValueError, match="observations"):
        solve_race(4).action_values_batch(np.array([[0, 0, 1, CONFIG_INDEX[(0, 3, 0)], 5 - 3 + 1]]))
    with pytest.raises(ValueError, match="policy must answer"):
        evaluate_race(4, lambda obs, masks: np.zeros(len(obs) + 1, dtype=np.int64))
    assert len(CONFIGS) == 45


def test_an_illegal_answer_is_played_as_a_roll():
    """As `TenThousand-v0` plays it: with no give-back allowed, "give back t6" is a roll."""

    def always(action):
        return lambda obs, masks: np.full(len(obs), action, dtype=np.int64)

    illegal = evaluate_race(6, always(MOVE_ACTION["t6"]), stop_at(2), allowed_moves=())
    rolling = evaluate_race(6, always(1), stop_at(2), allowed_moves=())
    np.testing.assert_array_equal(illegal.seat_values, rolling.seat_values)
    assert illegal.first_player_wins != evaluate_race(6, always(0), stop_at(2)).first_player_wins


def test_stability_intervals_stop_policy_iteration_as_a_last_pass_would():
    """Stopping a pair's policy iteration when each turn's new bust value lies in its stability
    interval gives what one more pass at the final bust values gives: the same values and the
    same number of policy evaluations, with several evaluations somewhere."""
    for seats in ((None, None), (None, stop_at(5)), (half_stop_at_two, None)):
        fast = solve_seats(30, seats)
        checked = solve_seats(30, seats, recheck=True)
        np.testing.assert_array_equal(fast.iterations, checked.iterations)
        np.testing.assert_allclose(fast.seat_values, checked.seat_values, rtol=0, atol=1e-14)
        assert fast.iterations.min() >= 1 and fast.iterations.max() >= 2


def test_a_batched_policy_of_the_project_is_asked_with_its_masks():
    """`dice_envs.policies.BatchedPolicy` (what `as_policy` returns) is asked through
    `answer(observations, legal)`; one that gives a 5 back whenever it may, else stops from 3
    chips, is scored as the same rule written as a plain callable."""

    def rule(observations, legal):
        give_back = legal[:, MOVE_ACTION["5"]]
        stop = observations[:, 2] >= 3
        return np.where(give_back, MOVE_ACTION["5"], np.where(stop, STOP, 1))

    asked = BatchedPolicy(ask=rule, num_actions=NUM_ACTIONS, name="rule", needs_legal=True)
    race = evaluate_race(8, asked, stop_at(4))
    assert race.first_player_wins == pytest.approx(
        evaluate_race(8, rule, stop_at(4)).first_player_wins, abs=0
    )
    assert race.first_player_wins != pytest.approx(
        evaluate_race(8, stop_at(3), stop_at(4)).first_player_wins, abs=1e-6
    )


def all_decisions(goal: int) -> np.ndarray:
    """Every decision observation of the race to `goal` chips."""
    tables = turn_tables()
    rows = [(a, b, 0, 0, 5) for a in range(goal) for b in range(goal)]
    for a in range(goal):
        for b in range(goal):
            for tau in range(1, goal - a):
                for p, (config, dice) in enumerate(tables.positions.tolist()):
                    if tables.position_score[p] <= tau:
                        rows.append((a, b, tau, config, dice))
    return np.array(rows, dtype=np.int64)


def test_the_action_table_holds_the_recomputed_actions():
    obs = all_decisions(12)
    for solution in (solve_race(12), best_response(12, stop_at(3))[1]):
        recomputed = solution.actions(obs)
        assert solution.action_table().dtype == np.uint8
        np.testing.assert_array_equal(solution.actions(obs), recomputed)
        assert set(np.unique(recomputed)) > {0, 1}  # stops, rolls and give-backs


def test_mass_on_an_illegal_action_is_played_as_a_roll():
    """Probabilities asked without masks (a Rule): what goes on "give back 5" where it is
    illegal is a roll."""

    def mixed(illegal_action):
        def probabilities(observations):
            probs = np.zeros((len(observations), NUM_ACTIONS))
            probs[:, 0] = np.where(observations[:, 2] >= 3, 0.5, 0.0)
            probs[:, illegal_action] = 1.0 - probs[:, 0]
            return probs

        return batched(probabilities)

    moved = evaluate_race(6, mixed(MOVE_ACTION["5"]), stop_at(2), allowed_moves=())
    rolled = evaluate_race(6, mixed(1), stop_at(2), allowed_moves=())
    np.testing.assert_allclose(moved.seat_values, rolled.seat_values, rtol=0, atol=1e-15)
