"""The two-player machinery: the fold of two-player Pig equals the Pig model it replaced, the
fast table builder equals the generic one, and a new game needs only a model and one entry."""

import subprocess
import sys
from collections import Counter
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from legacy_pig import Pig as LegacyPig

import baselines
import dice_envs
from dice_envs import make_model
from dice_envs.games.base import Transition, reachable_states
from dice_envs.games.fold import Fold
from dice_envs.games.pig import Pig
from dice_envs.registration import GAMES
from dice_envs.tables import build_tables

LOADED = (0.25, 0.05, 0.1, 0.2, 0.2, 0.2)


def twelve_or_roll(obs):
    own, other, turn = obs
    return int(turn < 12 or other > own)


def outcomes(model, state, action, observe):
    """A state's outcomes as {(observation, reward, terminal): probability}."""
    total = Counter()
    for prob, next_state, reward, terminal in model.transitions(state, action):
        total[(observe(next_state), reward, terminal)] += prob
    return total


def assert_same(left, right, tol=1e-12):
    assert set(left) == set(right)
    for key in left:
        assert left[key] == pytest.approx(right[key], abs=tol), key


FOLD_CASES = [
    pytest.param(goal, die, opponent, starts, marks=[pytest.mark.slow] if goal == 30 else [])
    for goal, die in ((2, None), (7, (1 / 3,) * 3), (12, LOADED), (30, None))
    for opponent in ("hold-at-20", "hold-at-4", "keep-pace", "random", twelve_or_roll)
    for starts in (True, False, None)
    if not (goal == 30 and opponent in ("random", "hold-at-4"))
]


@pytest.mark.parametrize(
    "goal, die, opponent, agent_starts",
    FOLD_CASES,
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_fold_equals_the_pig_model_it_replaced(goal, die, opponent, agent_starts):
    """Every state, both actions, and the start: the fold of two-player Pig with the opponent
    gives the transitions of the earlier hand-folded Pig model (tests/legacy_pig.py)."""
    # The legacy model's callable opponents take the components, f(own, other, turn).
    unpacked = (lambda *obs: opponent(obs)) if callable(opponent) else opponent
    legacy = LegacyPig(goal=goal, die_probs=die, opponent=unpacked, agent_starts=agent_starts)
    fold = Fold(Pig(goal=goal, die_probs=die), opponent, agent_starts)
    assert_same(
        Counter({state: p for p, state in legacy.initial_states()}),
        Counter({fold.observation(state): p for p, state in fold.initial_states()}),
    )
    legacy_states = list(reachable_states(legacy))
    fold_states = list(reachable_states(fold))
    assert sorted(legacy_states) == sorted(fold.observation(s) for s in fold_states)
    for state in fold_states:
        old = legacy.validate_state(fold.observation(state))
        assert fold.legal_actions(state) == legacy.legal_actions(old)
        for action in (0, 1):
            assert_same(
                outcomes(legacy, old, action, lambda s: s),
                outcomes(fold, state, action, fold.observation),
            )


PIG, SUM_AVOID = "dice_envs/Pig-v0", "dice_envs/SumAvoid-v0"


def _batched(model) -> bool:
    """Whether `build_tables` would take the vectorised builder."""
    return hasattr(model, "batch_transitions") and getattr(model, "batchable", True)


TABLE_CASES = [
    (PIG, {"goal": 2, "agent_starts": False}),
    (PIG, {"goal": 9, "die_probs": (1 / 3,) * 3, "opponent": "random"}),
    (PIG, {"goal": 15, "die_probs": LOADED, "opponent": "keep-pace", "agent_starts": True}),
    (PIG, {"goal": 25, "opponent": "hold-at-20"}),
    (PIG, {"goal": 25, "opponent": "two-player-optimal", "agent_starts": False}),
    (PIG, {"goal": 20, "opponent": twelve_or_roll}),
    (SUM_AVOID, {}),
    (SUM_AVOID, {"N": 7, "sides": 4}),
    (SUM_AVOID, {"N": 3, "sides": 8, "max_sum": 30}),
    ("dice_envs/PigSolitaire-v0", {"goal": 30, "objective": "turn_score"}),
]
# Every registered game with a batch form of its rules, at each of its example arguments
# (a game without tables in general, such as Yahtzee, compares its builders on its own small
# reduced games, in its own tests).
TABLE_CASES += [
    (env_id, kwargs)
    for env_id, game in GAMES.items()
    for kwargs in game.examples
    if env_id not in (PIG, SUM_AVOID) and game.tables and _batched(make_model(env_id, **kwargs))
]


def stable_id(value) -> str:
    """A test id that is the same in every process (pytest-xdist's workers must agree): a
    function by its name, not its repr with an address."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={stable_id(v)}" for k, v in value.items()) + "}"
    if callable(value):
        return getattr(value, "__name__", type(value).__name__)
    return str(value)


@pytest.mark.parametrize("env_id, kwargs", TABLE_CASES, ids=stable_id)
def test_fast_tables_equal_the_generic_enumeration(env_id, kwargs):
    model = make_model(env_id, **kwargs)
    generic = build_tables(model, "generic")
    fast = build_tables(make_model(env_id, **kwargs), "vectorised")
    assert (generic.builder, fast.builder) == ("generic", "vectorised")
    # The same states (matched by observation), legal actions and start distribution.
    perm = generic.indices_of(fast.observation_array)
    assert sorted(perm.tolist()) == list(range(generic.num_states)) == list(range(fast.num_states))
    assert [generic.states[i] for i in perm] == fast.states
    np.testing.assert_array_equal(generic.legal[perm], fast.legal)
    np.testing.assert_allclose(generic.initial[perm], fast.initial, atol=1e-15)
    # Every outcome row, aggregated per (state, action, next state or final observation, reward).
    assert row_table(generic, np.arange(generic.num_states)) == pytest.approx(
        row_table(fast, perm), abs=1e-13
    )


def row_table(tables, to_generic):
    """{(state, action, next, reward): probability}, states in the generic numbering, final
    states by their observation."""
    final = [tables.model.observation(s) for s in tables.terminal_states]
    total = Counter()
    for row in range(len(tables.outcome_prob)):
        nxt = int(tables.outcome_next[row])
        target = int(to_generic[nxt]) if nxt >= 0 else final[-1 - nxt]
        key = (
            int(to_generic[tables.row_state[row]]),
            int(tables.row_action[row]),
            target,
            float(tables.outcome_reward[row]),
        )
        total[key] += float(tables.outcome_prob[row])
    return dict(total)


def test_batch_rules_equal_the_rules():
    """Pig's batch form against its per-state rules, on every state of a small game."""
    model = Pig(goal=14, die_probs=LOADED)
    states = [
        (mover, a, b, k)
        for mover in (0, 1)
        for a in range(14)
        for b in range(14)
        for k in range(14)
        if (a if mover == 0 else b) + k < 14 and k != 1
    ]
    array = np.array(states)
    for action in (0, 1):
        source, prob, nxt, reward, terminal = model.batch_transitions(array, action)
        batch = Counter()
        for i, p, s, r, t in zip(source, prob, nxt.tolist(), reward, terminal, strict=True):
            batch[(states[i], tuple(s), float(r), bool(t))] += p
        single = Counter()
        for state in states:
            for p, s, r, t in model.transitions(state, action):
                single[(state, s, r, t)] += p
        assert batch == pytest.approx(dict(single), abs=1e-15)
    np.testing.assert_array_equal(
        model.batch_legal(array),
        [[a in model.legal_actions(s) for a in (0, 1)] for s in states],
    )


class CoinRun:
    """A toy game: bank your pot (stop) or flip a fair coin: heads adds 1, tails loses the pot.

    A pot of 4 is banked at once. Hand-solved with V(p) = max(p, V(p + 1) / 2) and V(4) = 4:
    V(3) = max(3, 2) = 3, V(2) = max(2, 1.5) = 2, V(1) = max(1, 1) = 1, V(0) = max(0, 0.5)
    = 0.5; always flipping is worth 4 / 16 = 0.25.
    """

    num_actions = 2
    action_names = ("bank", "flip")
    observation_nvec = (5,)

    def initial_states(self):
        return [(1.0, 0)]

    def legal_actions(self, state):
        return (0, 1)

    def transitions(self, state, action):
        if action == 0:
            return [Transition(1.0, state, float(state), True)]
        up = state + 1
        return [
            Transition(0.5, up, float(up) if up == 4 else 0.0, up == 4),
            Transition(0.5, 0, 0.0, True),
        ]

    def observation(self, state):
        return state

    def validate_state(self, state):
        if state not in range(4):
            raise ValueError(f"state must be 0..3, got {state!r}")
        return state

    def render_text(self, state):
        return f"pot {state}"


def test_a_new_game_is_a_model_and_one_registration():
    # Unregistered after the test by the autouse fixture `registrations_do_not_leak`.
    dice_envs.register_game("toy/CoinRun-v0", CoinRun, [{}])
    env = gym.make("toy/CoinRun-v0", render_mode="rgb_array")
    check_env(env.unwrapped)
    assert "coin" in env.unwrapped.__doc__
    best = baselines.solve("toy/CoinRun-v0")
    np.testing.assert_allclose([best.state_value(p) for p in range(4)], [0.5, 1, 2, 3])
    assert best.value == 0.5 and best.bellman_residual == 0.0
    assert baselines.evaluate(lambda p: 0, "toy/CoinRun-v0").value == 0.0
    assert baselines.evaluate(lambda p: 1, "toy/CoinRun-v0").value == pytest.approx(0.25)


def test_import_contract_holds():
    """The layers of the architecture (pyproject.toml's import-linter contracts)."""
    lint = Path(sys.executable).parent / "lint-imports"
    run = subprocess.run([str(lint)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 kept, 0 broken" in run.stdout


@pytest.mark.parametrize(
    "kwargs", [{"goal": 8, "agent_starts": False}, {"goal": 12, "opponent": "hold-at-4"}]
)
def test_reset_draws_the_folded_start_distribution(kwargs):
    """reset() plays the opponent's first turn action by action; chi-square against the
    fold's exact start distribution."""
    from scipy.stats import chisquare

    model = make_model("dice_envs/Pig-v0", **kwargs)
    expected = Counter()
    for p, state in model.initial_states():
        expected[model.observation(state)] += p
    env = gym.make("dice_envs/Pig-v0", **kwargs)
    draws = 4000
    observed = Counter(tuple(int(v) for v in env.reset(seed=seed)[0]) for seed in range(draws))
    assert set(observed) <= set(expected)
    keys = list(expected)
    result = chisquare([observed[k] for k in keys], [expected[k] * draws for k in keys])
    assert result.pvalue > 1e-4


class PigStepwise(Pig):
    """Pig without its whole-turn sampler: the fold plays turns step by step."""

    sample_turn = None


@pytest.mark.parametrize("stepwise", [False, True], ids=["whole-turns", "step-by-step"])
def test_both_samplers_of_the_opponents_turn_follow_the_fold(stepwise):
    """The env's draws after a hold (the opponent's whole turn) against the fold's exact
    outcomes, with the model's whole-turn sampler and with the generic step-by-step loop."""
    from scipy.stats import chisquare

    from dice_envs.envs.base import DiceEnv

    game = (PigStepwise if stepwise else Pig)(goal=12)
    fold = Fold(game, "hold-at-4", agent_starts=False)
    env = DiceEnv(fold)
    env.reset(seed=0)
    for obs in [(3, 5, 4), (0, 9, 2)]:
        state = fold.validate_state(obs)
        expected = outcomes(fold, state, 0, fold.observation)
        observed = Counter()
        for _ in range(3000):
            env.reset(options={"state": obs})
            next_obs, reward, terminal, _, _ = env.step(0)
            observed[(tuple(int(v) for v in next_obs), reward, terminal)] += 1
        keys = list(expected)
        assert set(observed) <= set(keys)
        result = chisquare([observed[k] for k in keys], [expected[k] * 3000 for k in keys])
        assert result.pvalue > 1e-4, (obs, observed, expected)


@pytest.mark.parametrize("seed", range(6))
def test_both_level_algorithms_agree(seed, monkeypatch):
    """Longest paths to a sink, by rounds of array operations and node by node, on random
    graphs with and without cycles."""
    import scipy.sparse as sp

    import dice_envs.tables as tables_module

    rng = np.random.default_rng(seed)
    n = 300
    rows = rng.integers(0, n, 900)
    cols = rng.integers(0, n, 900)
    if seed % 2 == 0:  # a DAG: edges only towards lower numbers
        rows, cols = np.maximum(rows, cols), np.minimum(rows, cols)
        keep = rows != cols
        rows, cols = rows[keep], cols[keep]
    graph = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    node_by_node = tables_module.longest_path_levels(graph)
    monkeypatch.setattr(tables_module, "WIDE_GRAPH_EDGES", 0)
    in_rounds = tables_module.longest_path_levels(graph)
    if node_by_node is None:
        assert in_rounds is None and seed % 2 == 1
    else:
        np.testing.assert_array_equal(node_by_node, in_rounds)
        assert node_by_node.max() > 3


def test_review_cases_are_refused_clearly_or_handled():
    """Found by a review: a die whose face 1 never shows, opponents that do not fit, bad
    reset states, and a cache that must not keep the result of a changed callable."""
    model = lambda: make_model(  # noqa: E731
        "dice_envs/Pig-v0", goal=5, die_probs=(0, 0.5, 0.5), agent_starts=True
    )
    assert build_tables(model(), "generic").num_states == 4
    assert build_tables(model(), "vectorised").num_states == 4
    with pytest.raises(ValueError, match="no action for observation"):
        make_model("dice_envs/Pig-v0", goal=6, opponent={(0, 0, 0): 1}, agent_starts=False)
    with pytest.raises(ValueError, match="opponent: a policy table must hold actions or prob"):
        make_model("dice_envs/Pig-v0", goal=6, opponent=np.ones((7, 7, 6), dtype=object))
    with pytest.raises(ValueError, match="die_probs"):
        make_model("dice_envs/Pig-v0", die_probs=[False, True])
    env = gym.make("dice_envs/Pig-v0", goal=20)
    assert set(env.reset(options={"state": (5, 3, 4)})[1]) >= {"rolls", "opponent_rolls"}
    with pytest.raises(ValueError, match="state"):
        env.reset(options={"state": "abc"})
    threshold = [2]
    opponent = lambda obs: int(obs[2] < threshold[0])  # noqa: E731
    policy = lambda obs: int(obs[2] < 6)  # noqa: E731
    before = baselines.evaluate(policy, "dice_envs/Pig-v0", goal=15, opponent=opponent).value
    threshold[0] = 10
    after = baselines.evaluate(policy, "dice_envs/Pig-v0", goal=15, opponent=opponent).value
    assert before != pytest.approx(after, abs=1e-3)


def test_an_env_with_a_solution_as_opponent_pickles():
    import pickle

    best = baselines.solve("dice_envs/Pig-v0", goal=12)
    env = gym.make("dice_envs/Pig-v0", goal=12, opponent=best)
    env.reset(seed=4)
    copy = pickle.loads(pickle.dumps(env))
    for _ in range(5):
        first, second = env.step(1), copy.step(1)
        assert tuple(first[0]) == tuple(second[0]) and first[1:3] == second[1:3]
        if first[2]:
            break
    assert pickle.loads(pickle.dumps(best)).bellman_residual <= 1e-12


def test_test_ids_name_functions_without_their_address():
    # pytest-xdist's workers must collect the same ids; a repr holds a per-process address.
    assert stable_id({"goal": 20, "opponent": len}) == "{goal=20, opponent=len}"


def test_a_game_the_opponent_ended_renders_the_scores_and_who_won():
    fold = Fold(Pig(goal=2), "hold-at-20", agent_starts=False)
    over = [state for _, state in fold.initial_states() if fold.transitions(state, 0)[0][3]]
    assert over, "at goal 2 the opponent can win its first turn"
    for state in over:
        text = fold.render_text(state)
        assert text.endswith(": the opponent won") and "you 0" in text
