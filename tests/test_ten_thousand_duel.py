"""Competitive Ten Thousand: the race's rules are the solitaire turn's, and the small races
solve as worked by hand."""

from __future__ import annotations

import functools
from collections import Counter

import gymnasium as gym
import numpy as np
import pytest
from scipy.stats import chisquare

import baselines
import dice_envs
from baselines.ten_thousand import crocce_mordecki_policy
from baselines.two_player import minimax_value_iteration, two_player_optimum
from dice_envs.games.base import reachable_states
from dice_envs.games.ten_thousand import CONFIGS, TenThousand
from dice_envs.games.ten_thousand_duel import TenThousandDuel

DUEL = "dice_envs/TenThousandDuel-v0"


@pytest.mark.parametrize("allowed_moves", [None, [], ["5", "1", "t2"]])
@pytest.mark.parametrize(("own", "other"), [(0, 0), (7, 3), (11, 11)])
def test_the_races_turn_is_the_solitaire_turn_below_the_goal(allowed_moves, own, other):
    goal = 600  # 12 chips
    duel = TenThousandDuel(goal, allowed_moves)
    turn = TenThousand(allowed_moves, max_turn_score=40)
    left = duel.goal_chips - own
    checked = 0
    for position in reachable_states(turn):
        tau, _, dice = position
        if dice == 0 or tau >= left:
            continue
        for mover in (0, 1):
            scores = (own, other) if mover == 0 else (other, own)
            state = (mover, *scores, *position)
            assert duel.legal_actions(state) == turn.legal_actions(position)
            for action in turn.legal_actions(position):
                expected = {}
                for prob, after, _, _ in turn.transitions(position, action):
                    if action == 0:  # a stop banks the turn score; the other moves
                        key = ("banked", tau)
                    elif after[2] == 0:
                        key = ("bust",)
                    elif after[0] >= left:
                        key = ("won",)
                    else:
                        key = after
                    expected[key] = expected.get(key, 0.0) + prob
                found = {}
                for prob, after, reward, terminal in duel.transitions(state, action):
                    if terminal:
                        assert reward == float(mover == 0) and after[1 + mover] == duel.goal_chips
                        key = ("won",)
                    elif after[0] != mover:  # the turn passed: banked, or lost
                        assert after[3:] == (0, 0, 5)
                        gained = after[1 + mover] - own
                        assert after[2 - mover] == other
                        key = ("banked", gained) if gained else ("bust",)
                    else:
                        assert after[1:3] == state[1:3]
                        key = after[3:]
                    found[key] = found.get(key, 0.0) + prob
                assert found.keys() == expected.keys()
                for key, prob in expected.items():
                    assert found[key] == pytest.approx(prob, abs=1e-15)
                checked += 1
    assert checked > (500 if left > 6 else 1)


def test_a_race_to_one_chip_is_won_by_the_first_scoring_roll():
    """By hand: with 50 points to go, any scoring roll of five dice wins (p = 1 - 600/7776);
    the first player wins W = p + (1 - p)^2 W, so W = 1 / (2 - p)."""
    p = 1 - 600 / 7776
    optimum = baselines.solve(DUEL, goal=50, opponent="two-player-optimal", agent_starts=True)
    assert optimum.value == pytest.approx(1 / (2 - p), abs=1e-12)
    second = baselines.solve(DUEL, goal=50, opponent="stop-at-1", agent_starts=False)
    assert second.value == pytest.approx(1 - 1 / (2 - p), abs=1e-12)


def test_half_way_through_a_race_is_the_start_of_a_race_half_as_long():
    """Scores shift: at banked scores (g/2, g/2) only the g/2 still to go matters."""
    whole = two_player_optimum(TenThousandDuel(600))
    half = two_player_optimum(TenThousandDuel(300))
    middle = whole.value_at((6, 6, 0, 0, 5))
    assert middle == pytest.approx(half.value, abs=1e-12)
    assert half.value == pytest.approx(half.value_at((0, 0, 0, 0, 5)), abs=1e-12)
    assert abs(whole.value - half.value) > 1e-3  # the shift is not a coincidence of values


def test_crocce_mordecki_plays_the_solitaire_optimum_on_the_turn():
    solitaire = baselines.solve("dice_envs/TenThousand-v0")
    env = gym.make(DUEL, goal=10_000)
    policy = crocce_mordecki_policy(env.unwrapped.model.model)
    turns = [s for s in reachable_states(TenThousand(max_turn_score=60)) if s[2] > 0]
    banked = np.array([[0, 0], [150, 3], [37, 190]])
    for own, other in banked:
        observations = np.array([(own, other, *turn) for turn in turns])
        actions = policy.batch(observations)
        expected = solitaire.actions(np.array(turns))
        assert np.array_equal(actions, expected)
    assert CONFIGS[0] == (0, 0, 0)


def test_the_goal_must_be_a_positive_multiple_of_50():
    for goal in (0, 75, -50, 10.5, "10000"):
        with pytest.raises(ValueError, match="goal"):
            TenThousandDuel(goal)
    assert TenThousandDuel(10_000).observation_nvec == (201, 201, 200, len(CONFIGS), 6)


def test_the_tables_stop_where_the_structure_takes_over():
    small = TenThousandDuel(300)
    assert small.table_size().states == len(list(reachable_states(small)))  # exact when small
    with pytest.raises(ValueError, match="has no tables at .*its structure-aware solver"):
        baselines.solve(DUEL, goal=10_000, method="value_iteration")
    assert "goal=10000 gives tables of about" in dice_envs.game(DUEL).tables_refused(
        {"goal": 10_000}
    )


@pytest.mark.parametrize("goal", [300, 500])
def test_the_structure_aware_solver_and_the_tables_agree(goal):
    """The race's solver (banked-score pairs, policy iteration on each two-cycle) against the
    generic tables: the two-player optimum and best responses, either seat starting."""
    model = TenThousandDuel(goal)
    structure = two_player_optimum(model)
    tables = two_player_optimum(model, method="value_iteration")
    assert structure.value == pytest.approx(tables.value, abs=1e-12)
    for opponent in ("two-player-optimal", "crocce-mordecki", "stop-at-20"):
        for agent_starts in (True, False):
            kwargs = {"goal": goal, "opponent": opponent, "agent_starts": agent_starts}
            found = baselines.solve(DUEL, **kwargs)
            assert found.method == "structure-aware"
            on_tables = baselines.solve(DUEL, method="generic", tol=1e-15, **kwargs)
            assert found.value == pytest.approx(on_tables.value, abs=1e-12)
    # crocce-mordecki against stop-at-20, scored exactly on the tables, by the race's solver.
    from baselines.ten_thousand_duel import evaluate_race

    crocce = crocce_mordecki_policy(model)
    for agent_starts in (True, False):
        scored = baselines.evaluate(
            "crocce-mordecki", DUEL, goal=goal, opponent="stop-at-20", agent_starts=agent_starts
        )
        seats = (crocce, "stop-at-20") if agent_starts else ("stop-at-20", crocce)
        from dice_envs.policies import as_policy

        seats = tuple(as_policy(s, model) if isinstance(s, str) else s for s in seats)
        race = evaluate_race(model.goal_chips, *seats).first_player_wins
        expected = race if agent_starts else 1.0 - race
        assert scored.value == pytest.approx(expected, abs=1e-12)


# -- a brute force of the race, built here from the solitaire turn's rules ---------------------
START = (0, 0, 0, 0, 0, 5)
WON = "won"  # the terminal state of a race the first player won; "lost" the other


def race_outcomes(turn: TenThousand, goal: int, state: tuple, action: int) -> dict:
    """{next race state, WON or "lost": probability} of `action` at race `state` (mover,
    banked chips of player 0, of player 1, turn score, configuration, dice), from the
    solitaire turn's transitions alone: a stop banks, a bust hands over, the goal wins."""
    mover, first, second, tau, config_index, dice = state
    own = first if mover == 0 else second
    fresh = (0, 0, 5)
    outcomes: dict = {}
    for prob, after, _, terminal in turn.transitions((tau, config_index, dice), action):
        if action == 0 and tau > 0:
            banked = (first + tau, second) if mover == 0 else (first, second + tau)
            key = (1 - mover, *banked, *fresh)
        elif terminal and after[2] == 0:  # no scoring die
            key = (1 - mover, first, second, *fresh)
        elif own + after[0] >= goal:
            key = WON if mover == 0 else "lost"
        else:
            key = (mover, first, second, *after)
        outcomes[key] = outcomes.get(key, 0.0) + prob
    return outcomes


@functools.cache
def race_rows(goal_points: int) -> dict:
    """{state: {action: outcomes}} for every state the race to `goal_points` reaches."""
    goal = goal_points // 50
    turn = TenThousand(max_turn_score=goal + 30)  # the cap never binds below the goal
    rows, frontier = {}, [START]
    while frontier:
        state = frontier.pop()
        if state in rows:
            continue
        rows[state] = {
            action: race_outcomes(turn, goal, state, action)
            for action in turn.legal_actions(state[3:])
        }
        for outcomes in rows[state].values():
            frontier.extend(key for key in outcomes if isinstance(key, tuple))
    return rows


def brute_force(goal_points: int, policy=None) -> float:
    """Player 0's win probability from the start, by value iteration over every state the
    race reaches (in place, until nothing moves by more than 1e-16): both players optimal
    (player 0 maximises, player 1 minimises), or each mover playing `policy(state)`."""
    rows = race_rows(goal_points)
    values = dict.fromkeys(rows, 0.0)
    values[WON], values["lost"] = 1.0, 0.0
    if policy is not None:
        rows = {state: {0: actions[policy(state)]} for state, actions in rows.items()}

    def worth(outcomes: dict) -> float:
        return sum(prob * values[key] for key, prob in outcomes.items())

    for _ in range(10_000):
        moved = 0.0
        for state, actions in rows.items():
            worths = [worth(outcomes) for outcomes in actions.values()]
            new = max(worths) if state[0] == 0 else min(worths)
            moved = max(moved, abs(new - values[state]))
            values[state] = new
        if moved <= 1e-16:
            break
    else:
        raise AssertionError("the brute force did not converge")
    return values[START]


@pytest.mark.parametrize(
    ("goal", "bounds"),
    [
        (300, (0.70, 0.72)),  # 0.70985: the first roll is worth much in a short race
        pytest.param(500, (0.61, 0.62), marks=pytest.mark.verify),  # 0.61535
        pytest.param(1000, (0.57, 0.575), marks=pytest.mark.verify),  # 0.57131
    ],
)
def test_the_two_player_optimum_is_the_brute_forces(goal, bounds):
    """`solve` as it routes (a structure-aware solver where one is registered) and the
    generic tables (minimax value iteration on both seats, the fold's best response)."""
    optimum = brute_force(goal)
    assert bounds[0] < optimum < bounds[1]
    tables = minimax_value_iteration(TenThousandDuel(goal))
    assert tables.value == pytest.approx(optimum, abs=1e-12)
    for method in ("auto", "generic"):
        for agent_starts, value in ((True, optimum), (False, 1 - optimum)):
            solution = baselines.solve(
                DUEL,
                goal=goal,
                opponent="two-player-optimal",
                agent_starts=agent_starts,
                method=method,
            )
            assert solution.value == pytest.approx(value, abs=1e-12), (method, agent_starts)


@pytest.mark.parametrize("goal", [300, 500, pytest.param(1000, marks=pytest.mark.verify)])
def test_crocce_mordecki_against_stop_at_k_is_the_brute_forces(goal):
    """The solitaire optimum's action on the turn's part of the observation (asked here of
    `baselines.solve("dice_envs/TenThousand-v0")`), against stop-at-K, either seat first."""
    solitaire = baselines.solve("dice_envs/TenThousand-v0")

    def plays(k):
        def act(state):
            tau = state[3]
            return 0 if tau > 0 and tau >= k else 1

        return act

    def crocce_mordecki(state):
        return solitaire.action(state[3:])

    for k in (20, 4):
        stop_at_k = plays(k)
        for agent_starts in (True, False):
            agent_seat = 0 if agent_starts else 1

            def choose(state, seat=agent_seat, other=stop_at_k):
                return crocce_mordecki(state) if state[0] == seat else other(state)

            first_wins = brute_force(goal, choose)
            expected = first_wins if agent_starts else 1 - first_wins
            score = baselines.evaluate(
                "crocce-mordecki",
                DUEL,
                goal=goal,
                opponent=f"stop-at-{k}",
                agent_starts=agent_starts,
            )
            assert score.value == pytest.approx(expected, abs=1e-12), (k, agent_starts)


@pytest.mark.parametrize(
    ("goal", "allowed_moves"), [(300, None), (250, []), (400, ["5", "1", "t2"])]
)
def test_the_batch_rules_are_the_rules(goal, allowed_moves):
    """Every reachable state of both seats, every action (illegal ones too): the batch rules'
    rows are `transitions`' rows; masks, observations and states of observations agree."""
    duel = TenThousandDuel(goal, allowed_moves)
    states = np.array(list(reachable_states(duel)), dtype=np.int64)
    for action in range(duel.num_actions):
        source, prob, after, reward, terminal = duel.batch_transitions(states, action)
        found = {
            (int(s), tuple(a.tolist())): (p, r, bool(t))
            for s, p, a, r, t in zip(source, prob, after, reward, terminal, strict=True)
        }
        assert len(found) == len(source)  # one row per next state
        expected = {
            (i, after): (p, r, t)
            for i, state in enumerate(map(tuple, states.tolist()))
            for p, after, r, t in duel.transitions(state, action)
        }
        assert found.keys() == expected.keys()
        for key, (p, r, t) in expected.items():
            assert found[key][0] == pytest.approx(p, abs=1e-15) and found[key][1:] == (r, t)
    legal = np.zeros((len(states), duel.num_actions), bool)
    for i, state in enumerate(map(tuple, states.tolist())):
        legal[i, list(duel.legal_actions(state))] = True
    np.testing.assert_array_equal(duel.batch_legal(states), legal)
    np.testing.assert_array_equal(duel.batch_to_move(states), states[:, 0])
    for player in (0, 1):
        seen = duel.batch_observation(states, player)
        assert seen.tolist() == [list(duel.observation(tuple(s), player)) for s in states.tolist()]
        movers = states[states[:, 0] == player]
        mine = duel.batch_observation(movers, player)
        np.testing.assert_array_equal(duel.batch_state_of(mine, player), movers)


def test_the_batch_sampler_throws_as_sample_step_and_follows_the_rules():
    """Row by row, the same uniform gives `sample_step`'s next state, reward and end; and the
    draws of a few (state, action) pairs fit `transitions` (chi-square)."""
    duel = TenThousandDuel(400, ["5", "1", "11", "t2", "t5"])
    states = np.array(list(reachable_states(duel)), dtype=np.int64)
    rng = np.random.default_rng(3)
    picks = states[rng.integers(len(states), size=4000)]
    actions = rng.integers(duel.num_actions, size=len(picks))  # illegal ones play as rolls
    uniforms = rng.random(len(picks))
    after, reward, terminal = duel.batch_sample_step(picks, actions, uniforms)
    for i, (state, action, u) in enumerate(zip(picks.tolist(), actions, uniforms, strict=True)):
        expected = duel.sample_step(tuple(state), int(action), lambda u=u: u)[:3]
        assert (tuple(after[i].tolist()), reward[i], terminal[i]) == expected
    draws = 20_000
    give_back = next(s for s in map(tuple, states.tolist()) if len(duel.legal_actions(s)) > 3)
    near_goal = (0, 1, 6, 5, 0, 5)  # hot dice at 5 chips, 2 short of the goal: most rolls win
    pairs = [
        (give_back, duel.legal_actions(give_back)[-1]),
        ((1, 7, 2, 0, 0, 5), 0),
        (near_goal, 1),
    ]
    for state, action in pairs:
        assert duel.validate_state(state) == state
        after, reward, _ = duel.batch_sample_step(
            np.tile(state, (draws, 1)), np.full(draws, action), rng.random(draws)
        )
        seen = Counter(map(tuple, np.column_stack((after, reward)).tolist()))
        expected = {(*nxt, r): p for p, nxt, r, _ in duel.transitions(state, action)}
        assert set(seen) <= set(expected)
        keys = list(expected)
        observed = [seen[k] for k in keys]
        assert chisquare(observed, [expected[k] * draws for k in keys]).pvalue > 1e-4


@pytest.mark.parametrize("kwargs", [{"goal": 300}, {"goal": 10_000, "allowed_moves": []}])
def test_the_pettingzoo_race_passes_api_test_and_seed_test(kwargs):
    """As the other two-player games' (tests/test_pettingzoo.py): no warning but
    PettingZoo's own advice; at the full goal too (its opponents are the other agent)."""
    from pettingzoo.test import api_test, seed_test
    from test_pettingzoo import warnings_are_errors_but_pettingzoos_advice

    from dice_envs.pettingzoo import env

    with warnings_are_errors_but_pettingzoos_advice():
        api_test(env("ten_thousand_duel", **kwargs), num_cycles=200)
        seed_test(lambda: env("ten_thousand_duel", **kwargs), num_cycles=200)


def test_random_mixes_the_legal_actions_evenly():
    """Self-play's first opponent: 1/k on each of the k legal actions of a decision."""
    duel = TenThousandDuel(500)
    states = np.array(list(reachable_states(duel)), dtype=np.int64)
    states = states[states[:, 0] == 0]
    observations = duel.batch_observation(states, 0)
    probabilities = duel.named_policy("random").batch(observations)
    legal = duel.batch_legal(states)
    assert np.allclose(probabilities, legal / legal.sum(axis=1, keepdims=True), atol=0)
    assert 2 in legal.sum(axis=1) and legal.sum(axis=1).max() > 2
    score = baselines.evaluate("random", DUEL, goal=500)
    assert 0.35 < score.value < 0.43  # 0.39065
