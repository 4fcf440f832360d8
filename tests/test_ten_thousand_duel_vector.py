"""The Ten Thousand race's native vector env (no tables): the fold's law, starts, masks,
autoreset, seeding, every opponent form, and the full goal at 4,096 copies; and the single
env's fast paths (the quick step, the opponent's turn in one loop) against the plain rules."""

from __future__ import annotations

from collections import Counter

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from test_vector_env import chi_square_pvalue
from traces import env_trace, model_trace, without_mask

from dice_envs import make_model
from dice_envs.envs.sb3 import DiceSB3VecEnv
from dice_envs.envs.ten_thousand_duel_vector import TenThousandDuelVectorEnv
from dice_envs.envs.vector import DiceVectorEnv
from dice_envs.games.base import reachable_states
from dice_envs.games.fold import Fold
from dice_envs.games.ten_thousand_duel import TenThousandDuel

ID = "dice_envs/TenThousandDuel-v0"
RACE = "dice_envs.games.ten_thousand_duel:TenThousandDuelVersus"


def race_env(num_envs: int, **kwargs) -> TenThousandDuelVectorEnv:
    return TenThousandDuelVectorEnv(RACE, num_envs, **kwargs)


def outcome_counts(obs, rewards, terminated) -> Counter:
    rows = np.column_stack((obs, rewards, terminated))
    keys, counts = np.unique(rows, axis=0, return_counts=True)
    return Counter(
        {
            (tuple(int(v) for v in key[:5]), float(key[5]), bool(key[6])): int(count)
            for key, count in zip(keys, counts, strict=True)
        }
    )


def expected_outcomes(fold, state, action) -> Counter:
    """The fold's exact law of one agent step (the opponent's whole turn summed), as what
    the env shows: (observation, reward, terminated)."""
    expected = Counter()
    for prob, after, reward, terminal in fold.transitions(state, action):
        expected[(tuple(fold.observation(after)), float(reward), terminal)] += prob
    return expected


def test_make_vec_uses_the_tables_where_they_fit_and_this_env_past_them():
    """The choice: the generic env over tables up to the registry's limit (fast steps, and
    the sampled gap reads its tables), this one where tables are refused (the full goal)."""
    assert isinstance(gym.make_vec(ID, num_envs=2, goal=300), DiceVectorEnv)
    full = gym.make_vec(ID, num_envs=2)
    assert isinstance(full, TenThousandDuelVectorEnv) and full.race.goal == 10_000
    assert full.single_observation_space == gym.make(ID).observation_space
    assert full.single_action_space == gym.make(ID).action_space
    big = gym.make_vec(ID, num_envs=2, goal=20_000, opponent="stop-at-30", agent_starts=False)
    assert isinstance(big, TenThousandDuelVectorEnv)
    assert big.model.agent_starts is False and big.model.opponent == "stop-at-30"


# (game arguments, agent states (seat 0 to move) and actions): stops hand the opponent its
# whole turn; rolls and give-backs throw the agent's dice first.
LAW_CASES = [
    (
        {"goal": 300, "opponent": "crocce-mordecki"},  # the opponent tabulated (small grid)
        [((0, 1, 3, 4, 7, 2), 0), ((0, 1, 3, 4, 7, 2), 5), ((0, 0, 4, 0, 0, 5), 1)],
    ),
    (
        {"goal": 300, "opponent": "random"},  # mixed, asked in batches
        [((0, 1, 0, 3, 3, 3), 0), ((0, 5, 1, 0, 0, 5), 1)],
    ),
    (
        {"goal": 10_000, "opponent": "crocce-mordecki"},  # asked in batches, no tables
        [((0, 150, 190, 12, 5, 2), 0), ((0, 150, 120, 0, 0, 5), 1)],
    ),
    (
        {"goal": 10_000, "opponent": "stop-at-12", "allowed_moves": []},
        [((0, 40, 60, 9, 2, 4), 0)],
    ),
]


@pytest.mark.parametrize(("kwargs", "pairs"), LAW_CASES, ids=lambda c: str(c)[:40])
def test_a_step_follows_the_folds_law(kwargs, pairs):
    """Chi-square of 20,000 copies' step from one state against the fold's exact
    transitions (`Fold.transitions`: the agent's move and the opponent's whole turn)."""
    draws = 20_000
    env = race_env(draws, agent_starts=True, **kwargs)
    fold = env.model
    for k, (state, action) in enumerate(pairs):
        assert fold.validate_state(state) == state
        env.reset(seed=k, options={"state": state})
        obs, rewards, terminated, truncated, _ = env.step(np.full(draws, action))
        assert not truncated.any()
        seen = outcome_counts(obs, rewards, terminated)
        pvalue = chi_square_pvalue(seen, expected_outcomes(fold, state, action), draws)
        assert pvalue > 1e-4, (state, action, pvalue)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"goal": 300, "agent_starts": None},
        {"goal": 100, "agent_starts": False},  # the opponent's first turn often wins
        {"goal": 10_000, "agent_starts": False, "opponent": "stop-at-4"},
    ],
)
def test_resets_follow_the_folds_starts(kwargs):
    """The coin, and the opponent's first turn played in the reset: chi-square against the
    fold's start distribution."""
    env = race_env(20_000, **kwargs)
    obs, info = env.reset(seed=5)
    seen = Counter(map(tuple, obs.tolist()))
    expected = Counter()
    for prob, state in env.model.initial_states():
        expected[tuple(env.model.observation(state))] += prob
    assert chi_square_pvalue(seen, expected, env.num_envs) > 1e-4
    assert info["action_mask"].shape == (env.num_envs, 15)


def test_a_game_the_opponent_won_before_the_agent_moved_ends_at_its_one_step():
    """As the single env's fold: every action allowed there, and any ends it, paying 0."""
    env = race_env(2_000, goal=100, agent_starts=False)
    obs, info = env.reset(seed=1)
    lost = obs[:, 1] == 2
    assert 0.8 < lost.mean() < 1.0  # 0.902
    assert info["action_mask"][lost].all()
    assert (info["action_mask"][~lost] == np.eye(15, dtype=np.int8)[1]).all()  # only a roll
    after, rewards, terminated, _, _ = env.step(np.zeros(env.num_envs, np.int64))
    assert terminated[lost].all() and (rewards[lost] == 0).all()
    np.testing.assert_array_equal(after[lost], obs[lost])


@pytest.mark.parametrize("mode", list(AutoresetMode))
def test_masks_and_autoreset_in_random_games(mode):
    """Step by step: each copy's mask is the fold's legal actions at its state (every action
    where the next step resets it, none once ended in disabled mode), `action_masks()` the
    same; a next-step reset pays 0 and shows a start; same-step mode gives the final
    observations, which show a winner at the goal."""
    env = race_env(64, goal=300, opponent="stop-at-3", autoreset_mode=mode)
    fold, goal = env.model, 6
    starts = {tuple(fold.observation(s)) for _, s in fold.initial_states()}
    rng = np.random.default_rng(2)
    obs, info = env.reset(seed=2)
    ended, seen_ends = np.zeros(64, bool), 0
    for _ in range(120):
        assert env.observation_space.contains(obs)
        np.testing.assert_array_equal(info["action_mask"].astype(bool), env.action_masks())
        for i, state in enumerate(env.states):
            if ended[i] and mode != AutoresetMode.SAME_STEP:  # same-step: started anew
                expected = 1 if mode == AutoresetMode.NEXT_STEP else 0
                assert (info["action_mask"][i] == expected).all()
                continue
            legal = np.zeros(15, np.int8)
            legal[list(fold.legal_actions(state))] = 1
            np.testing.assert_array_equal(info["action_mask"][i], legal)
        if mode == AutoresetMode.DISABLED and ended.any():
            with pytest.raises(RuntimeError, match="episode ended"):
                env.step(np.ones(64, np.int64))
            obs, info = env.reset(options={"reset_mask": ended})
            assert {tuple(o) for o in obs[ended].tolist()} <= starts
            assert not info["action_mask"][~ended].any()  # as the other native envs
            info["action_mask"][~ended] = env.action_masks()[~ended]
            ended[:] = False
            continue
        actions = np.where(
            rng.random(64) < 0.7,
            [rng.choice(np.flatnonzero(row)) for row in info["action_mask"]],
            rng.integers(15, size=64),  # an illegal action plays as a roll
        )
        previous = ended
        obs, rewards, terminated, truncated, info = env.step(actions)
        ended = terminated | truncated
        seen_ends += int(ended.sum())
        assert not truncated.any()
        assert set(rewards.tolist()) <= {0.0, 1.0}
        assert (rewards[rewards == 1] == terminated[rewards == 1]).all()
        won = obs[:, 0] == goal
        if mode == AutoresetMode.SAME_STEP:
            if ended.any():
                finals = np.stack(info["final_obs"][ended])
                assert (finals[:, :2].max(axis=1) == goal).all()
                assert (rewards[ended] == (finals[:, 0] == goal)).all()
                assert {tuple(o) for o in obs[ended].tolist()} <= starts
                assert not info["final_info"]["action_mask"][ended].any()
            else:
                assert "final_obs" not in info
        else:
            assert (won == (terminated & (rewards == 1))).all()
            if mode == AutoresetMode.NEXT_STEP:
                assert (rewards[previous] == 0).all() and not terminated[previous].any()
                assert {tuple(o) for o in obs[previous].tolist()} <= starts
    assert seen_ends > 20


def rollout(env, seed: int, steps: int = 20) -> list:
    rng = np.random.default_rng(seed)
    trace = [env.reset(seed=seed)[0].tolist()]
    for _ in range(steps):
        obs, rewards, terminated, _, info = env.step(rng.integers(15, size=env.num_envs))
        trace.append((obs.tolist(), rewards.tolist(), terminated.tolist()))
        trace.append(info["action_mask"].tolist())
    return trace


def test_the_same_seed_gives_the_same_batch_and_snapshots_restore_it():
    first = rollout(race_env(64, goal=2_000), seed=3)
    assert first == rollout(race_env(64, goal=2_000), seed=3)
    assert first != rollout(race_env(64, goal=2_000), seed=4)
    env = race_env(64, goal=2_000, opponent="random")
    env.reset(seed=7)
    actions = np.random.default_rng(0).integers(15, size=(10, 64))
    for row in actions[:3]:
        env.step(row)
    snapshot = env.snapshot()
    later = [env.step(row)[0].tolist() for row in actions[3:]]
    env.restore(snapshot)
    assert later == [env.step(row)[0].tolist() for row in actions[3:]]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"goal": 2_000, "opponent": "crocce-mordecki"},
        {"goal": 1_600, "opponent": "stop-at-9", "agent_starts": False},
        {"opponent": "crocce-mordecki", "autoreset_mode": "SameStep"},
    ],
    ids=str,
)
def test_the_compiled_turns_draw_as_the_numpy_rounds(kwargs):
    """A deterministic opponent's turns, played in one compiled loop
    (`TenThousandDuel.batch_sample_turns`), give seed for seed the batches of the numpy loop
    that steps them round by round with `batch_sample_step`: every observation, reward, end
    and mask, games ending and restarting on the way."""
    compiled = race_env(300, **kwargs)
    assert compiled._opponent.actions is not None  # the compiled path is the one taken
    by_rounds = race_env(300, **kwargs)
    by_rounds.compiled_turns = False
    trace = rollout(compiled, seed=5, steps=80)
    assert trace == rollout(by_rounds, seed=5, steps=80)
    assert sum(sum(step[2]) for step in trace[1::2]) > 10  # games ended on the way


def test_batch_sample_turns_refuses_what_it_cannot_step_in_place():
    race = TenThousandDuel(1_000)
    policy = np.ones(race.observation_nvec[2] * 45 * 6, np.int64)
    rng = np.random.default_rng(0)
    ended = np.zeros(2, bool)
    states = np.array([[1, 0, 0, 0, 0, 5]] * 2, np.int64)
    with pytest.raises(ValueError, match="C-contiguous int64"):
        race.batch_sample_turns(states.astype(np.int32), ended, 1, policy, (2, 3, 4), rng)
    with pytest.raises(ValueError, match="policy must hold one action per cell"):
        race.batch_sample_turns(states, ended, 1, policy[:-1], (2, 3, 4), rng)
    race.batch_sample_turns(states, ended, 1, policy, (2, 3, 4), rng)  # always rolls
    assert (ended | (states[:, 0] == 0)).all()


def test_every_opponent_form_steps_it():
    """Named opponents, the two-player optimum (a solution, asked in batches), a table over
    the grid, and a per-observation callable all play their turns, each as the fold says
    (the first action of the opponent's turn after a stop, from a fixed state)."""
    goal = 300
    grid = make_model(ID, goal=goal).observation_nvec
    table = np.ones(grid, dtype=np.int64)
    table[:, :, 3:] = 0  # stop from 3 chips on

    def stop_at_2(observation) -> int:
        return 0 if observation[2] >= 2 else 1

    for opponent in ("two-player-optimal", "stop-at-5", table, stop_at_2):
        env = race_env(20_000, goal=goal, opponent=opponent, agent_starts=True)
        state = (0, 1, 2, 3, 3, 3)
        env.reset(seed=0, options={"state": state})
        obs, rewards, terminated, _, _ = env.step(np.zeros(env.num_envs, np.int64))
        seen = outcome_counts(obs, rewards, terminated)
        expected = expected_outcomes(env.model, state, 0)
        assert chi_square_pvalue(seen, expected, env.num_envs) > 1e-4, opponent


def test_the_full_goal_at_4096_copies():
    """gym.make_vec at the defaults (crocce-mordecki, goal 10,000): a few masked steps, the
    observations in the space, games going on, the SB3 adapter over it too."""
    env = gym.make_vec(ID, num_envs=4_096)
    assert isinstance(env, TenThousandDuelVectorEnv)
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(5):
        actions = [rng.choice(np.flatnonzero(row)) for row in info["action_mask"]]
        obs, rewards, terminated, truncated, info = env.step(np.array(actions))
        assert env.observation_space.contains(obs)
        assert not (terminated | truncated).any() and not rewards.any()
    np.testing.assert_array_equal(
        info["action_mask"], env.race.batch_legal(np.array(env.states)).astype(np.int8)
    )
    assert obs[:, 1].max() > 0 and obs[:, 0].max() > 0  # both sides banked
    sb3 = DiceSB3VecEnv(ID, 4, allowed_moves=[])
    sb3.reset()
    sb3.step(np.ones(4, np.int64))
    assert len(sb3.action_masks()) == 4


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="num_envs"):
        gym.make_vec(ID, num_envs=0)
    with pytest.raises(ValueError, match="goal must be a positive multiple of 50"):
        gym.make_vec(ID, num_envs=2, goal=10_010)
    with pytest.raises(ValueError, match="race's fold"):
        TenThousandDuelVectorEnv("dice_envs.games.pig:PigVersus", 2)
    env = gym.make_vec(ID, num_envs=2)
    with pytest.raises(RuntimeError, match="before reset"):
        env.step(np.ones(2, np.int64))
    env.reset(seed=0)
    with pytest.raises(ValueError, match="actions must be 2 integers"):
        env.step(np.array([1, 15]))
    with pytest.raises(ValueError, match="reset options may hold"):
        env.reset(options={"seed": 1})


# -- the single env's fast paths ----------------------------------------------------------------
def test_the_quick_step_is_the_turns_rules():
    """`sample_step` (read from lists laid out per position) gives, for every reachable state
    of both seats, every action (illegal ones too) and a spread of uniforms, what the
    solitaire turn's `rolled_from`, `throw` and `after_roll` give through the race's landing."""
    duel = TenThousandDuel(300, ["5", "1", "11", "t2", "t5"])
    rng = np.random.default_rng(0)
    for state in reachable_states(duel):
        if state[5] == 0:
            continue
        for action in range(duel.num_actions):
            for u in rng.random(6).tolist():
                got = duel.sample_step(state, action, lambda u=u: u)
                if action == 0 and state[3] > 0:
                    mover, first, second, tau = state[:4]
                    banked = (first + tau, second) if mover == 0 else (first, second + tau)
                    expected = ((1 - mover, *banked, 0, 0, 5), 0.0, False, {"dice": []})
                else:
                    start, dice = duel.turn.rolled_from(state[3:], action)
                    faces, config = duel.turn.throw(dice, lambda u=u: u)
                    landed = duel._landed(state, start, dice, config)
                    expected = (*landed, {"dice": list(faces)})
                assert got == expected, (state, action, u)


class _ActionByAction:
    """The race without `sample_turn`: its fold plays the opponent action by action."""

    def __init__(self, game) -> None:
        self.game = game

    def __getattr__(self, name: str):
        if name == "sample_turn":
            raise AttributeError(name)
        return getattr(self.game, name)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"goal": 1_000, "opponent": "random"},
        {"goal": 10_000, "agent_starts": False},
        {"goal": 500, "opponent": "stop-at-6", "allowed_moves": []},
    ],
)
def test_the_single_envs_turn_sampler_draws_as_the_step_by_step_opponent(kwargs):
    """Seed for seed, the env (whose fold plays the opponent's turn by `sample_turn`) gives
    the episodes of a fold of the same race playing it action by action."""
    env = gym.make(ID, **kwargs).unwrapped
    fast = env.model
    slow = Fold(_ActionByAction(fast.model), fast.opponent_policy, fast.agent_starts)
    actions = np.random.default_rng(7).integers(fast.num_actions, size=3000).tolist()
    uniform = gym.utils.seeding.np_random(7)[0].random
    _, info = env.reset(seed=7)
    fast_trace = [(env.state, without_mask(info)), *env_trace(env, actions)]
    start = slow.sample_start(uniform)
    slow_trace = [start, *model_trace(slow, start[0], uniform, actions)]
    assert len(fast_trace) > 3000 and fast_trace == slow_trace


@pytest.mark.parametrize("opponent", ["crocce-mordecki", "stop-at-9"])
def test_the_single_env_keeps_its_opponents_answers_by_the_turn(opponent):
    """At the full goal the opponent is asked one observation at a time; the race's named
    policies read only the turn (`Rule.reads`), so their answers are kept by turn position
    (not one per pair of scores), and each is the policy's own answer there."""
    env = gym.make(ID, opponent=opponent, agent_starts=True).unwrapped
    env.reset(seed=0)
    for action in np.random.default_rng(0).integers(15, size=4_000).tolist():
        if env.step(action)[2]:
            env.reset()
    policy = env.model.opponent_policy
    met = np.array(list(env.model._opponent_choices), dtype=np.int64)
    turns = {tuple(turn) for turn in met[:, 3:].tolist()}
    assert set(policy._cache) == turns and len(turns) < len(met) / 2
    observations = env.model.model.batch_observation(met, 1)
    expected = np.eye(15)[policy.asked.answer(observations)]
    kept = np.array([policy.probs(tuple(o)) for o in observations.tolist()])
    np.testing.assert_array_equal(kept, expected)
