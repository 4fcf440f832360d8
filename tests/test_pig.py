"""Pig: published values, brute force written independently here, and the solvers agreeing."""

import gymnasium as gym
import numpy as np
import pytest

import baselines
from baselines.pig import two_player_optimum
from dice_envs import make_model
from dice_envs.games.base import uniform_die
from dice_envs.games.pig import HOLD, ROLL
from dice_envs.policies import named_policy

ID = "dice_envs/Pig-v0"
LOADED = (0.25, 0.05, 0.1, 0.2, 0.2, 0.2)


def brute_two_player(goal, probs, tol=1e-14):
    """Gauss-Seidel on Tijms's (2012) optimality equations, one position at a time."""
    states = [(i, j, k) for i in range(goal) for j in range(goal) for k in range(goal - i)]
    P = dict.fromkeys(states, 0.0)

    def value(i, j, k):
        return 1.0 if i + k >= goal else P[(i, j, k)]

    while True:
        change = 0.0
        for i, j, k in states:
            roll = probs[0] * (1 - P[(j, i, 0)])
            roll += sum(probs[f - 1] * value(i, j, k + f) for f in range(2, len(probs) + 1))
            best = max(roll, 1 - P[(j, i + k, 0)]) if k > 0 else roll
            change = max(change, abs(best - P[(i, j, k)]))
            P[(i, j, k)] = best
        if change < tol:
            return P


def brute_best_response(goal, probs, opponent_rolls, agent_starts, tol=1e-14):
    """The whole game, both sides' turns as states, the opponent's choices fixed; the agent's
    value iterated to convergence. `opponent_rolls(own, other, turn)` is 0/1 from its side."""
    faces = range(2, len(probs) + 1)
    agent = {(a, o, k): 0.0 for a in range(goal) for o in range(goal) for k in range(goal - a)}
    other = {(a, o, t): 0.0 for a in range(goal) for o in range(goal) for t in range(goal - o)}
    while True:
        change = 0.0
        for (a, o, k), old in agent.items():
            roll = probs[0] * other[(a, o, 0)]
            roll += sum(
                probs[f - 1] * (1.0 if a + k + f >= goal else agent[(a, o, k + f)]) for f in faces
            )
            new = max(roll, other[(a + k, o, 0)]) if k > 0 else roll
            change, agent[(a, o, k)] = max(change, abs(new - old)), new
        for (a, o, t), old in other.items():
            if t > 0 and not opponent_rolls(o, a, t):
                new = agent[(a, o + t, 0)]
            else:
                new = probs[0] * agent[(a, o, 0)]
                new += sum(
                    probs[f - 1] * (0.0 if o + t + f >= goal else other[(a, o, t + f)])
                    for f in faces
                )
            change, other[(a, o, t)] = max(change, abs(new - old)), new
        if change < tol:
            first, second = agent[(0, 0, 0)], other[(0, 0, 0)]
            return {True: first, False: second, None: (first + second) / 2}[agent_starts]


def test_neller_presser_first_player_win_probability():
    # Neller and Presser (2004), "Optimal play of the dice game Pig", The UMAP Journal 25 (cited
    # by Tijms, 2012): with both players optimal the first player wins 0.5306 of games to 100.
    optimum = two_player_optimum(100, uniform_die(6))
    assert round(optimum.value, 4) == 0.5306
    best = baselines.solve(ID, opponent="two-player-optimal", agent_starts=True)
    assert best.value == pytest.approx(optimum.value, abs=1e-9)


def test_hold_at_20_against_itself():
    # Neller's published figure: hold-at-20 (or the goal) against itself, the first player wins
    # about 0.5347 of games to 100. Exact here: a sparse linear solve over every position.
    policy = named_policy(ID, "hold-at-20")
    score = baselines.evaluate(policy, ID, opponent="hold-at-20", agent_starts=True)
    assert round(score.value, 4) == 0.5347
    assert score.gap > 0 and 0 < score.agreement < 1


@pytest.mark.parametrize(
    "goal, probs",
    [
        (1, uniform_die(6)),
        (6, uniform_die(6)),
        (10, uniform_die(6)),
        (8, LOADED),
        (9, uniform_die(3)),
    ],
)
def test_two_player_optimum_against_brute_force(goal, probs):
    brute = brute_two_player(goal, probs)
    tables = two_player_optimum(goal, probs).tables
    for (i, j, k), value in brute.items():
        assert tables.value[i, j, k] == pytest.approx(value, abs=1e-10), (i, j, k)


@pytest.mark.parametrize("agent_starts", [True, False, None])
@pytest.mark.parametrize(
    "goal, probs, opponent",
    [
        (10, uniform_die(6), "hold-at-5"),
        (12, uniform_die(6), "hold-at-20"),
        (8, LOADED, "hold-at-3"),
        (2, uniform_die(6), "hold-at-20"),
        (9, uniform_die(6), "two-player-optimal"),
    ],
)
def test_best_response_against_brute_force(goal, probs, opponent, agent_starts):
    if opponent == "two-player-optimal":
        table = two_player_optimum(goal, probs).roll
        rolls = lambda own, other, turn: bool(table[own, other, turn])  # noqa: E731
    else:
        threshold = int(opponent.split("-")[-1])
        rolls = lambda own, other, turn: turn < threshold  # noqa: E731
    expected = brute_best_response(goal, probs, rolls, agent_starts)
    kwargs = {"goal": goal, "die_probs": probs, "opponent": opponent, "agent_starts": agent_starts}
    assert baselines.solve(ID, **kwargs).value == pytest.approx(expected, abs=1e-10)
    assert baselines.solve(ID, method="generic", tol=1e-14, **kwargs).value == pytest.approx(
        expected, abs=1e-10
    )


@pytest.mark.parametrize("opponent", ["hold-at-20", "keep-pace", "random", "two-player-optimal"])
@pytest.mark.parametrize("goal", [15, 30])
def test_specialised_and_generic_best_responses_agree(goal, opponent):
    fast = baselines.solve(ID, goal=goal, opponent=opponent, agent_starts=None)
    generic = baselines.solve(ID, goal=goal, opponent=opponent, agent_starts=None, method="generic")
    assert generic.method == "value_iteration" and generic.bellman_residual <= 1e-9
    assert fast.value == pytest.approx(generic.value, abs=1e-9)
    for i, obs in enumerate(generic.tables.observations):
        np.testing.assert_allclose(fast.q_values(obs), generic.q[i], atol=1e-9)
    on_tables = baselines.on_states(fast, generic.tables)
    assert on_tables.bellman_residual <= 1e-9


def test_goal_20_optimum_rolls_to_the_goal():
    # With goal 20 the two-player optimum never holds short of the goal from the start,
    # so hold-at-20 is a best response to itself there: both give the same values.
    assert baselines.solve(ID, goal=20, opponent="hold-at-20", agent_starts=True).value == (
        pytest.approx(two_player_optimum(20, uniform_die(6)).value, abs=1e-12)
    )


def test_hold_at_zero_plays_as_a_roll():
    model = make_model(ID, goal=30)
    for obs in [(0, 0, 0), (12, 20, 0)]:
        state = model.validate_state(obs)
        assert model.legal_actions(state) == (ROLL,)
        assert model.transitions(state, HOLD) == model.transitions(state, ROLL)
    assert model.legal_actions(model.validate_state((12, 20, 4))) == (HOLD, ROLL)


def test_opponent_that_wins_before_the_agent_moves():
    # Goal 2: the opponent, moving first, wins with any face but 1 (probability 5/6).
    model = make_model(ID, goal=2, agent_starts=False)
    start = {model.observation(state): p for p, state in model.initial_states()}
    assert start[(0, 2, 0)] == pytest.approx(5 / 6)
    env = gym.make(ID, goal=2, agent_starts=False)
    lost = 0
    for seed in range(60):
        obs, info = env.reset(seed=seed)
        if tuple(obs) == (0, 2, 0):
            assert info["opponent_rolls"] and info["opponent_rolls"][-1] != 1
            lost += 1
            _, reward, terminated, _, _ = env.step(1)
            assert terminated and reward == 0
    assert 35 <= lost <= 59


def test_callable_opponent_matches_the_named_one():
    named = baselines.solve(ID, goal=25, opponent="hold-at-8")
    callable_ = baselines.solve(ID, goal=25, opponent=lambda obs: int(obs[2] < 8))
    assert callable_.value == pytest.approx(named.value, abs=1e-12)
    with pytest.raises(ValueError, match="opponent"):
        baselines.solve(ID, goal=5, opponent=lambda obs: "roll")


def test_env_reports_the_dice():
    env = gym.make(ID, goal=30, agent_starts=True, render_mode="ansi")
    obs, _ = env.reset(seed=1)
    saw_opponent = False
    terminated = False
    while not terminated:
        action = HOLD if obs[2] >= 10 else ROLL
        obs, _, terminated, _, info = env.step(action)
        assert len(info["rolls"]) == (1 if action == ROLL else 0)
        saw_opponent |= bool(info["opponent_rolls"])
    assert saw_opponent and "you" in env.render()


@pytest.mark.parametrize("goal, die", [(30, uniform_die(6)), (20, (1 / 3, 2 / 3))])
def test_plain_value_iteration_agrees_with_the_layered_optimum(goal, die):
    # Whole-array value iteration (Neller and Presser's successive substitution) is a method
    # independent of the layered solver: the two must give the same optimum.
    from benchmarks.peers import pig_value_iteration

    value, sweeps = pig_value_iteration(goal, die, tol=1e-12)
    assert value == pytest.approx(two_player_optimum(goal, die).value, abs=1e-10)
    assert sweeps > 1


@pytest.mark.parametrize(
    "kwargs, match",
    [({"goal": 1}, "goal must be"), ({"goal": True}, "goal must be"), ({"goal": 5, "tol": 0},
     "tol must be"), ({"goal": 5, "face_probs": (0.5, 0.6)}, "face_probs must be")],
)  # fmt: skip
def test_plain_value_iteration_refuses_bad_arguments(kwargs, match):
    from benchmarks.peers import pig_value_iteration

    with pytest.raises(ValueError, match=match):
        pig_value_iteration(**kwargs)


LOADED_CASES = (
    [((1 / 6, 5 / 6), goal, "two-player-optimal") for goal in range(37, 61)]
    + [((1 / 3, 2 / 3), goal, "two-player-optimal") for goal in range(33, 61)]
    + [((1 / 3, 2 / 3), goal, "hold-at-20") for goal in range(19, 61)]
)


@pytest.mark.slow
@pytest.mark.parametrize("die, goal, opponent", LOADED_CASES)
def test_loaded_dice_solve_and_agree_with_value_iteration(die, goal, opponent):
    """The cases whose exact ties once stalled the layered solver (a two-faced die): the
    two-player optimum (best response to "two-player-optimal", agent first) and the best response to
    hold-at-20 agree with generic value iteration on every Q-value."""
    kwargs = {"goal": goal, "die_probs": die, "opponent": opponent, "agent_starts": True}
    fast = baselines.solve(ID, **kwargs)
    generic = baselines.solve(ID, method="generic", tol=1e-13, **kwargs)
    assert fast.bellman_residual <= 1e-12
    np.testing.assert_allclose(baselines.on_states(fast, generic.tables).q, generic.q, atol=1e-9)
    if opponent == "two-player-optimal":
        assert fast.value == pytest.approx(two_player_optimum(goal, die).value, abs=1e-12)


@pytest.mark.parametrize(
    "kwargs",
    [{"goal": 12}, {"goal": 9, "die_probs": (0.3, 0.0, 0.1, 0.25, 0.0, 0.35)}],
    ids=["fair", "uneven"],
)
def test_sample_step_is_transitions_exactly_driven_by_chosen_uniforms(kwargs):
    """Every outcome branch of `sample_step` (a 1, a gain, a win, a hold; for each mover), hit
    with uniforms at both ends and the middle of each face's interval of [0, 1) (the die's
    cumulative probabilities, the last taken as 1): each throws that face, and the outcomes,
    weighted by their intervals, are `transitions` entry for entry."""
    import functools
    from itertools import accumulate

    from dice_envs.games.base import reachable_states
    from dice_envs.games.pig import Pig

    model = Pig(**kwargs)
    edges = [0.0, *list(accumulate(model.face_probs))[:-1], 1.0]
    intervals = [
        (face, lo, hi, (lo, (lo + hi) / 2, float(np.nextafter(hi, 0.0))))
        for face, (lo, hi) in enumerate(zip(edges, edges[1:], strict=False), start=1)
        if hi > lo
    ]
    assert len(intervals) == sum(prob > 0 for prob in model.face_probs)
    checked = 0
    for state in reachable_states(model):
        for action in model.legal_actions(state):
            expected: dict = {}
            for prob, after, reward, terminal in model.transitions(state, action):
                key = (after, reward, terminal)
                expected[key] = expected.get(key, 0.0) + prob
            sampled: dict = {}
            for face, lo, hi, probes in intervals:
                steps = [
                    model.sample_step(state, action, functools.partial(float, u))  # one draw
                    for u in probes
                ]
                if action == HOLD and state[3] > 0:
                    assert all(step == (*steps[0][:3], {"rolls": []}) for step in steps)
                    sampled[steps[0][:3]] = 1.0
                    break
                assert all(step == (*steps[0][:3], {"rolls": [face]}) for step in steps)
                sampled[steps[0][:3]] = sampled.get(steps[0][:3], 0.0) + hi - lo
            assert sampled.keys() == expected.keys(), (state, action)
            for key, prob in expected.items():
                assert sampled[key] == pytest.approx(prob, abs=1e-15), (state, action, key)
            checked += 1
    assert checked > 100
