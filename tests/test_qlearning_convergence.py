"""Q-learning on the solitaire Pig games: why it got worse with training, and its remedy.

With the step size 1 / n(s, a)**0.8, the estimates trail their bootstrapped targets through the
long undiscounted episodes (about 50 steps to the goal): the start's estimate stays near its
initial 0 (a few turns where the optimum needs 12.5), the values of the scores are compressed,
banking points looks worth little, and the greedy policy rolls where it should hold. The
generalized harmonic step size offset / (offset + n - 1) (W. B. Powell, Approximate Dynamic
Programming, 2011) lets them catch up.
A plain one-env loop written here shows the same, so the vectorised learner is not the cause.
"""

from __future__ import annotations

import random

import gymnasium as gym
import numpy as np
import pytest
from training_helpers import CONFIGS

import baselines
from training.config import ConfigError, load_config, resolve_config
from training.qlearning import QLearning, VectorQLearning, visit_rate
from training.streams import run_streams

PIG = "dice_envs/PigSolitaire-v0"
OLD_RATE = {"power": 0.8}  # the solitaire configs' rate before issue 26
EPSILON = {"start": 1.0, "end": 0.1, "fraction": 0.3}


def _vector_learner(env_id: str, hyperparams: dict, steps: int, seed: int = 0, **kwargs):
    env = gym.make_vec(
        env_id,
        num_envs=512,
        vectorization_mode="vector_entry_point",
        autoreset_mode="SameStep",
        **kwargs,
    )
    learner = VectorQLearning(env, hyperparams, run_streams(seed, 512), steps)
    learner.learn(steps)
    return learner


def _start_value_and_gap(learner, env_id: str, **kwargs) -> tuple[float, float, float]:
    """The learned value of the start, the optimal one, and the greedy policy's relative gap."""
    tables, optimum = baselines.enumerated(env_id, **kwargs)
    start = int(np.flatnonzero(tables.initial)[0])
    rows = learner.q_table()[learner.indices(tables.observation_array)]
    estimate = float(rows[start][tables.legal[start]].max())
    actions = np.where(tables.legal, rows, -np.inf).argmax(axis=1)
    gap = baselines.score_actions(actions, tables, optimum).relative_gap
    return estimate, optimum.value, gap


def plain_q_learning(env, steps: int, power: float, offset: float, seed: int) -> dict:
    """Textbook one-env Q-learning, epsilon 1 -> 0.1 over the first 30 % of the steps."""
    rng, q, n = random.Random(seed), {}, {}
    obs, info = env.reset(seed=seed)
    for step in range(steps):
        state, legal = tuple(obs), np.flatnonzero(info["action_mask"]).tolist()
        values = q.setdefault(state, [0.0, 0.0])
        if rng.random() < max(0.1, 1.0 - 3.0 * step / steps):
            action = rng.choice(legal)
        else:
            action = max(legal, key=values.__getitem__)
        obs, reward, terminated, truncated, info = env.step(action)
        following = q.get(tuple(obs), [0.0, 0.0])
        best = 0.0 if terminated else max(following[b] for b in np.flatnonzero(info["action_mask"]))
        n[state, action] = n.get((state, action), 0) + 1
        rate = (offset / (offset + n[state, action] - 1)) ** power
        values[action] += rate * (reward + best - values[action])
        if terminated or truncated:
            obs, info = env.reset()
    return q


@pytest.mark.parametrize("power, offset", [(0.8, 1.0), (1.0, 30.0)])
def test_the_vectorised_learner_learns_the_start_as_a_plain_loop_does(power, offset):
    """Pig alone to 30 (optimum -4.098 turns), 100k steps, seeds 0 and 1: with 1 / n**0.8 both
    value the start at about -2.3 to -2.6 (far too optimistic), with the offset both at about
    -4.7 to -4.8 (this early, a little below the optimum; both reach it with more steps)."""
    env = gym.make(PIG, goal=30).unwrapped
    optimum = baselines.solve(PIG, goal=30).value
    hyperparams = {"gamma": 1.0, "learning_rate": {"power": power, "offset": offset}}
    for seed in (0, 1):
        plain = plain_q_learning(env, 100_000, power, offset, seed)[(0, 0)][1]
        learner = _vector_learner(PIG, {**hyperparams, "epsilon": EPSILON}, 100_000, seed, goal=30)
        vector = _start_value_and_gap(learner, PIG, goal=30)[0]
        assert vector == pytest.approx(plain, abs=0.1 * abs(optimum))
        if offset == 1.0:
            assert plain > 0.75 * optimum and vector > 0.75 * optimum  # the lag
        else:
            assert abs(plain - optimum) < 0.25 * abs(optimum)
            assert abs(vector - optimum) < 0.25 * abs(optimum)


@pytest.mark.parametrize("game", ["pig_solitaire", "two_dice_pig_solitaire"])
def test_the_solitaire_configs_learn_the_start_value_at_the_quick_budget(game):
    """The regression test: the committed config at its quick budget (1M steps, seed 0) on the
    real game. With the former 1 / n**0.8 the start was valued -2.6 (Pig, optimum -12.55; gap
    231 %) and -5.0 (two dice, optimum -16.92; gap 86 %); with the offset -8.9 and -14.7
    (still catching up), gaps 12.8 % and 12.7 %."""
    config = load_config(CONFIGS / game / "qlearning.yaml")
    env_id, kwargs = config["env_id"], config["env_kwargs"]
    learner = _vector_learner(env_id, config["hyperparams"], config["timesteps"], **kwargs)
    estimate, optimum, gap = _start_value_and_gap(learner, env_id, **kwargs)
    assert estimate < 0.6 * optimum
    assert gap < 0.25


def test_the_old_rate_leaves_the_start_near_its_initial_value():
    """What the configs did before: Pig alone to 100 at the quick budget with 1 / n**0.8. The
    start is valued at -2.6 turns, about a fifth of the optimum, and the gap is 231 %."""
    hyperparams = {"gamma": 1.0, "learning_rate": OLD_RATE, "epsilon": EPSILON}
    learner = _vector_learner(PIG, hyperparams, 1_000_000, goal=100)
    estimate, optimum, gap = _start_value_and_gap(learner, PIG, goal=100)
    assert estimate > 0.25 * optimum
    assert gap > 1.0


def test_visit_rate():
    visits = np.arange(1, 6)
    assert np.array_equal(visit_rate(visits, 0.8, 1.0), visits**-0.8)  # the former floats
    assert visit_rate(1, 1.0, 30.0) == 1.0
    assert visit_rate(31, 1.0, 30.0) == pytest.approx(0.5)
    assert visit_rate(31, 0.5, 30.0) == pytest.approx(0.5**0.5)


def _with_rate(rate) -> dict:
    raw = {
        "env_id": PIG,
        "env_kwargs": {"goal": 20},
        "algo": "qlearning",
        "hyperparams": {"learning_rate": rate},
        "budgets": {"quick": {"timesteps": 10, "eval_every": 10}},
    }
    return resolve_config(raw)["hyperparams"]["learning_rate"]


def test_the_offset_is_checked_and_kept_only_where_given():
    assert _with_rate({"power": 1, "offset": 30}) == {"power": 1.0, "offset": 30.0}
    assert _with_rate({"power": 0.8}) == {"power": 0.8}  # a run's identity stays
    for rate, message in [
        ({"power": 1, "offset": 0.5}, r"learning_rate.offset must be a number >= 1, got 0.5"),
        ({"power": 1, "offset": True}, r"learning_rate.offset must be a number >= 1, got True"),
        ({"power": 1, "offset": "30"}, r"learning_rate.offset must be a number >= 1"),
        ({"offset": 30}, r"learning_rate: missing key 'power'"),
        ({"power": 0.5, "offset": 30}, r"learning_rate.power must be a number in \(0.5, 1\]"),
        ({"power": 1, "offst": 30}, r"unknown key 'offst'; allowed: \['offset', 'power'\]"),
    ]:
        with pytest.raises(ConfigError, match=message):
            _with_rate(rate)


def test_the_scalar_learner_takes_the_offset_too():
    """`n_envs: 1` (one env, one update a step) at Pig alone to 30, 100k steps: the start within
    a quarter of the optimum with the offset, above three quarters of it without."""
    optimum = baselines.solve(PIG, goal=30).value
    estimates = []
    for rate in (OLD_RATE, {"power": 1.0, "offset": 30.0}):
        env = gym.make(PIG, goal=30).unwrapped
        hyperparams = {"gamma": 1.0, "learning_rate": rate, "epsilon": EPSILON}
        learner = QLearning(env, hyperparams, run_streams(0, 1), 100_000)
        learner.learn(100_000)
        estimates.append(learner.q[learner.index((0, 0))][1])
    assert estimates[0] > 0.75 * optimum
    assert abs(estimates[1] - optimum) < 0.25 * abs(optimum)
