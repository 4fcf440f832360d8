"""The native vector env: the model's law, seeding, Gymnasium's autoreset modes, spaces, masks."""

from collections import Counter

import gymnasium as gym
import numpy as np
import pytest
from conftest import CASES, case_id, with_tables
from gymnasium.vector import AutoresetMode
from scipy.stats import chi2_contingency, chisquare

from dice_envs import make_model
from dice_envs.envs.vector import DiceVectorEnv
from dice_envs.tables import alias_tables, build_tables, observation_key


def native(env_id, num_envs, **kwargs):
    env = gym.make_vec(env_id, num_envs=num_envs, **kwargs)
    assert isinstance(env, DiceVectorEnv)
    return env


_TABLES = {}


def game(case):
    """The model and tables of a case, built once for the whole module."""
    key = case_id(case)
    if key not in _TABLES:
        model = make_model(case[0], **case[1])
        _TABLES[key] = model, build_tables(model)
    return _TABLES[key]


def vector(case, num_envs, **options):
    """The native vector env of a case over its shared tables (what make_vec builds)."""
    model, tables = game(case)
    return DiceVectorEnv(model, num_envs, tables=tables, **options)


def chi_square_pvalue(observed: Counter, expected: dict, draws: int) -> float:
    """Pearson's test of `observed` counts against `expected` probabilities; outcomes expected
    fewer than 5 times share one bin."""
    unexpected = set(observed) - set(expected)
    assert not unexpected, f"outcomes the model never gives: {sorted(unexpected)[:5]}"
    big = [key for key, p in expected.items() if p * draws >= 5]
    small = [key for key in expected if key not in big]
    f_obs = [observed[key] for key in big]
    f_exp = [expected[key] * draws for key in big]
    if small:
        f_obs.append(sum(observed[key] for key in small))
        f_exp.append(sum(expected[key] for key in small) * draws)
    if len(f_obs) < 2:
        assert f_obs == [draws]
        return 1.0
    f_exp = np.array(f_exp) * (draws / sum(f_exp))  # rounding of the probabilities' sum
    return float(chisquare(f_obs, f_exp).pvalue)


def test_alias_tables_give_back_the_probabilities_exactly():
    rng = np.random.default_rng(1)
    for _ in range(100):
        counts = rng.integers(1, 12, size=rng.integers(1, 200))
        ptr = np.concatenate([[0], np.cumsum(counts)])
        prob = rng.random(ptr[-1]) ** rng.integers(1, 6)
        prob[rng.random(len(prob)) < 0.3] = 0
        prob[ptr[:-1]] += 1e-3
        group = np.repeat(np.arange(len(counts)), counts)
        prob /= np.add.reduceat(prob, ptr[:-1])[group]
        threshold, keep, alias = alias_tables(ptr, prob)
        assert (group[keep] == group).all() and (group[alias] == group).all()
        assert ((threshold >= 0) & (threshold <= 1)).all()
        implied = np.zeros(len(prob))
        np.add.at(implied, keep, threshold / counts[group])
        np.add.at(implied, alias, (1 - threshold) / counts[group])
        np.testing.assert_allclose(implied, prob, rtol=0, atol=1e-15)


class _ChosenUniforms(np.random.Generator):
    """A generator whose `random(n)` gives back the n uniforms set in `values`."""

    values: np.ndarray

    def random(self, size=None, dtype=np.float64, out=None):
        assert size == len(self.values)
        return self.values


def _first_of_cell(k: np.ndarray, count: np.ndarray) -> np.ndarray:
    """The least double u whose u x count has integer part k (or more)."""
    u = k / count
    while (below := (u * count).astype(np.int64) < k).any():
        u = np.where(below, np.nextafter(u, 2.0), u)
    while (above := (u > 0) & ((np.nextafter(u, -1.0) * count).astype(np.int64) >= k)).any():
        u = np.where(above, np.nextafter(u, -1.0), u)
    return u


@pytest.mark.parametrize("case", with_tables(CASES), ids=case_id)
def test_the_compiled_cells_hold_the_tables_law_entry_for_entry(case):
    """The alias cells (the tables' rows encoded for speed) give the rows' law exactly: one
    copy per cell of each (state, action), stepped with chosen uniforms (u x cells picks the
    cell, its fraction the side), finds by bisection where the outcome shown (observation,
    end, reward) changes; the lengths of u each outcome covers are the rows' probabilities."""
    model, tables = game(case)
    n, num_actions = tables.num_states, tables.num_actions
    final = np.array([np.atleast_1d(model.observation(s)) for s in tables.terminal_states])
    final = final.reshape(len(final), -1)
    assert len(np.unique(final, axis=0)) == len(final)  # what a step shows names its state
    counts = np.diff(tables.outcome_ptr)
    group = np.repeat(np.arange(len(counts)), counts)  # one copy per row, of its group
    k = np.arange(len(group)) - tables.outcome_ptr[group]  # and its cell in the group
    one, positions = vector(case, 1), []  # one copy reset to each state, as snapshots hold it
    for state in tables.states:
        one.reset(options={"state": state})
        positions.append(one.snapshot()["position"][0])
    start = {  # every copy at the state of its group, as a snapshot
        "position": np.array(positions)[group // num_actions],
        "done": np.zeros(len(group), bool),
        "elapsed": np.zeros(len(group), np.int64),
        "rng": one.snapshot()["rng"],
    }
    env = vector(case, len(group))
    env.reset(seed=0)
    env.np_random = uniforms = _ChosenUniforms(np.random.PCG64(0))
    actions = group % num_actions

    def code(obs: np.ndarray, terminated: np.ndarray) -> np.ndarray:
        return np.ravel_multi_index(tuple(obs.T), model.observation_nvec) * 2 + terminated

    def shown(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per copy, what its step from the start shows when drawing `u`: its observation
        and end as one number, and its reward."""
        env.restore(start)
        uniforms.values = u
        obs, reward, terminated, _, _ = env.step(actions)
        return code(obs.reshape(len(u), -1), terminated), reward

    def same(a, b) -> np.ndarray:
        return (a[0] == b[0]) & (a[1] == b[1])

    first, end = _first_of_cell(k, counts[group]), _first_of_cell(k + 1, counts[group])
    lo, hi = first.view(np.int64), np.nextafter(end, -1.0).view(np.int64)
    left, right = shown(first), shown(hi.view(np.float64))
    two = ~same(left, right)  # cells whose two sides show different outcomes
    while (active := two & (hi - lo > 1)).any():
        mid = np.where(active, (lo + hi) // 2, lo)
        seen = shown(mid.view(np.float64))
        on_left = same(seen, left)
        assert (on_left | same(seen, right)).all()  # one side or the other
        lo, hi = np.where(active & on_left, mid, lo), np.where(active & ~on_left, mid, hi)
    switch = np.where(two, hi.view(np.float64), end)  # the first u of the right side
    nexts = tables.outcome_next
    after = np.concatenate([tables.observation_array, final])
    after = code(after[np.where(nexts >= 0, nexts, n - 1 - nexts)], nexts < 0)
    keys = np.concatenate(
        [
            np.column_stack([group, after, tables.outcome_reward]),
            np.column_stack([group, *left]),
            np.column_stack([group, *right]),
        ]
    )
    mass = np.concatenate([tables.outcome_prob, first - switch, switch - end])
    order = np.lexsort(keys.T)
    keys, mass = keys[order], mass[order]
    runs = np.flatnonzero(np.r_[True, (keys[1:] != keys[:-1]).any(axis=1)])
    difference = np.add.reduceat(mass, runs)  # per (group, outcome): rows' minus the steps'
    assert np.abs(difference).max() < 1e-14


def sample_pairs(tables, rng, count):
    """Up to `count` (state index, action) pairs: legal ones, and one forbidden where any."""
    states = rng.choice(tables.num_states, size=min(count, tables.num_states), replace=False)
    pairs = []
    for s in states.tolist():
        legal = np.flatnonzero(tables.legal[s])
        pairs.append((s, int(rng.choice(legal))))
    illegal = np.argwhere(~tables.legal)
    if len(illegal):
        s, a = illegal[rng.integers(len(illegal))]
        pairs.append((int(s), int(a)))
    return pairs


@pytest.mark.parametrize("case", with_tables(CASES), ids=case_id)
def test_steps_follow_the_models_law(case):
    """Chi-square of each sampled (state, action)'s outcomes against `model.transitions`."""
    env_id, kwargs = case
    model, tables = game(case)
    pairs = sample_pairs(tables, np.random.default_rng(7), 6)
    per_pair, repeats = 8192, 4
    env = vector(case, per_pair * len(pairs))
    env.reset(seed=11)
    actions = np.repeat([a for _, a in pairs], per_pair)
    outcomes = []
    for _ in range(repeats):
        for k, (s, _) in enumerate(pairs):
            mask = np.zeros(env.num_envs, dtype=bool)
            mask[k * per_pair : (k + 1) * per_pair] = True
            env.reset(options={"reset_mask": mask, "state": tables.states[s]})
        obs, rewards, terminated, _, _ = env.step(actions)
        outcomes.append(np.column_stack([obs.reshape(env.num_envs, -1), rewards, terminated]))
    outcomes = np.stack(outcomes, axis=1)  # (copies, repeats, outcome)
    pvalues = []
    for k, (s, a) in enumerate(pairs):
        block = outcomes[k * per_pair : (k + 1) * per_pair].reshape(-1, outcomes.shape[2])
        rows, counts = np.unique(block, axis=0, return_counts=True)
        width = block.shape[1] - 2
        observed = Counter(
            {
                (tuple(int(v) for v in row[:width]), float(row[width]), bool(row[width + 1])): c
                for row, c in zip(rows, counts.tolist(), strict=True)
            }
        )
        expected = Counter()
        for prob, nxt, reward, terminal in model.transitions(tables.states[s], a):
            key = (tuple(np.atleast_1d(model.observation(nxt)).tolist()), float(reward), terminal)
            expected[key] += prob
        pvalues.append(chi_square_pvalue(observed, expected, len(block)))
    assert min(pvalues) > 1e-4, pvalues


@pytest.mark.parametrize("case", with_tables(CASES), ids=case_id)
def test_resets_follow_the_start_distribution(case):
    env_id, kwargs = case
    model, _ = game(case)
    env = vector(case, 20_000)
    obs, _ = env.reset(seed=5)
    observed = Counter(map(tuple, obs.reshape(env.num_envs, -1).tolist()))
    expected = Counter()
    for prob, state in model.initial_states():
        expected[tuple(np.atleast_1d(model.observation(state)).tolist())] += prob
    assert chi_square_pvalue(observed, expected, env.num_envs) > 1e-4


def rollout(env, seed, steps=60):
    rng = np.random.default_rng(seed)
    trace = [env.reset(seed=seed)[0].tolist()]
    for _ in range(steps):
        obs, rewards, terminated, truncated, info = env.step(
            rng.integers(env.single_action_space.n, size=env.num_envs)
        )
        trace.append((obs.tolist(), rewards.tolist(), terminated.tolist(), truncated.tolist()))
        trace.append(info["action_mask"].tolist())
    return trace


@pytest.mark.parametrize("case", with_tables(CASES), ids=case_id)
def test_the_same_seed_gives_the_same_batch(case):
    first = rollout(native(case[0], 16, **case[1]), seed=3)
    assert first == rollout(vector(case, 16), seed=3)
    assert first != rollout(vector(case, 16), seed=4)


def test_copies_draw_independent_streams():
    """Copies in the same state under the same action: different outcomes, independently."""
    env = native("dice_envs/SumAvoid-v0", 40_000)
    env.reset(seed=0, options={"state": 0})
    obs, *_ = env.step(np.ones(env.num_envs, dtype=np.int64))
    even, odd = obs[0::2], obs[1::2]
    assert (even != odd).mean() > 0.8
    table = np.zeros((7, 7))
    np.add.at(table, (even, odd), 1)
    table = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]
    assert chi2_contingency(table).pvalue > 1e-3


# Games whose every transition is certain, so the native env and SyncVectorEnv (with any
# seeds) must return the same arrays step for step.
CERTAIN = [
    ("dice_envs/Pig-v0", {"goal": 40, "die_probs": (0, 0, 0, 0, 0, 1), "agent_starts": True}),
    ("dice_envs/RedBlackCards-v0", {"red": 3, "black": 0}),
]


@pytest.mark.parametrize("max_episode_steps", [None, 3])
@pytest.mark.parametrize("mode", list(AutoresetMode))
@pytest.mark.parametrize("case", CERTAIN, ids=case_id)
def test_autoreset_matches_sync_vector_env(case, mode, max_episode_steps):
    env_id, kwargs = case
    limit = {} if max_episode_steps is None else {"max_episode_steps": max_episode_steps}
    ours = native(env_id, 5, autoreset_mode=mode, **limit, **kwargs)
    sync = gym.make_vec(
        env_id,
        num_envs=5,
        vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": mode},
        **limit,
        **kwargs,
    )
    assert ours.metadata["autoreset_mode"] == sync.metadata["autoreset_mode"] == mode
    rng = np.random.default_rng(0)
    expected, got = sync.reset(seed=1), ours.reset(seed=2)
    compare(expected, got)
    ends, ended = 0, np.zeros(5, dtype=bool)
    for _ in range(80):
        actions = rng.integers(2, size=5)
        if mode == AutoresetMode.DISABLED and ended.any():  # the copies the last step ended
            with pytest.raises(RuntimeError, match="episode ended"):
                ours.step(actions)
            compare(
                sync.reset(options={"reset_mask": ended}), ours.reset(options={"reset_mask": ended})
            )
        expected, got = sync.step(actions), ours.step(actions)
        ended = got[2] | got[3]
        if mode == AutoresetMode.NEXT_STEP:
            # Where SyncVectorEnv passes on the terminal state's empty mask (or a truncated
            # state's), ours allows every action: the next step resets those copies and
            # ignores what they play.
            assert got[-1]["action_mask"][ended].all()
            assert not expected[-1]["action_mask"][got[2]].any()
            expected[-1]["action_mask"][ended] = 1
        compare(expected, got)
        ends += int(ended.sum())
    assert ends >= 5  # the comparison saw episodes end (and, in the modes that do, restart)


def compare(expected, got):
    assert len(expected) == len(got)
    for want, have in zip(expected[:-1], got[:-1], strict=True):
        np.testing.assert_array_equal(have, want)
        assert have.dtype == want.dtype
    want_info, info = expected[-1], got[-1]
    for key in ("action_mask", "_action_mask", "_final_obs", "_final_info"):
        assert (key in info) == (key in want_info), key
        if key in info:
            np.testing.assert_array_equal(info[key], want_info[key])
    if "final_obs" in want_info:
        for want, have in zip(want_info["final_obs"], info["final_obs"], strict=True):
            assert (want is None) == (have is None)
            if want is not None:
                np.testing.assert_array_equal(have, want)
        for key in ("action_mask", "_action_mask"):
            np.testing.assert_array_equal(info["final_info"][key], want_info["final_info"][key])


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.parametrize("case", with_tables(CASES), ids=case_id)
def test_autoreset_in_random_games(case, mode):
    """What SyncVectorEnv guarantees, step by step: starts after ends, reward 0 on a next-step
    reset, final observations that are the model's, masks of the copies' states; and, beyond
    it, a next-step reset's mask allows every action, so masked sampling never meets an empty
    row (`rng.choice` over the legal actions below would raise on one)."""
    env_id, kwargs = case
    model, tables = game(case)
    starts = {observation_key(model.observation(s)) for p, s in model.initial_states() if p > 0}
    finals = {observation_key(model.observation(s)) for s in tables.terminal_states}
    env = vector(case, 32, autoreset_mode=mode)
    rng = np.random.default_rng(1)
    obs, info = env.reset(seed=1)
    ended = np.zeros(32, dtype=bool)
    seen_ends = 0
    for _ in range(150):
        assert env.observation_space.contains(obs)
        for i, state in enumerate(env.states):
            if mode == AutoresetMode.NEXT_STEP and ended[i]:  # the next step resets it
                assert info["action_mask"][i].all()
                continue
            legal = np.zeros(env.single_action_space.n, dtype=np.int8)
            legal[list(model.legal_actions(state))] = 1
            np.testing.assert_array_equal(info["action_mask"][i], legal)
        np.testing.assert_array_equal(info["action_mask"].astype(bool), env.action_masks())
        # Half the time a legal action, else any action: a forbidden one has the model's
        # documented effect, and must not raise.
        sampled = [rng.choice(np.flatnonzero(row)) for row in info["action_mask"]]
        actions = np.where(
            rng.random(32) < 0.5, sampled, rng.integers(env.single_action_space.n, size=32)
        )
        previous = ended
        obs, rewards, terminated, truncated, info = env.step(actions)
        assert env.action_space.contains(actions)
        ended = terminated | truncated
        seen_ends += int(ended.sum())
        if mode == AutoresetMode.NEXT_STEP:
            assert (rewards[previous] == 0).all() and not ended[previous].any()
            assert {observation_key(o) for o in obs[previous]} <= starts
            assert {observation_key(o) for o in obs[ended]} <= finals
            assert info["action_mask"][ended].all()
        else:
            assert (info["_final_obs"] == ended).all() if ended.any() else "final_obs" not in info
            if ended.any():
                assert {observation_key(o) for o in info["final_obs"][ended]} <= finals
                assert {observation_key(o) for o in obs[ended]} <= starts
                assert not info["final_info"]["action_mask"][ended].any()
    assert seen_ends > 0


def test_any_integer_dtype_of_actions_steps_alike():
    results = []
    for dtype in (np.int64, np.uint64, np.uint8, np.int32):
        env = native("dice_envs/SumAvoid-v0", 6)
        env.reset(seed=2)
        results.append(env.step(np.array([1, 1, 0, 1, 0, 1], dtype=dtype))[0].tolist())
    assert all(result == results[0] for result in results)


def test_alias_tables_refuse_what_is_not_a_distribution():
    for ptr, prob, match in [
        ([0, 2], [0.5, 0.5, 0.1], "ptr must run from 0 to len"),
        ([1, 2], [0.5, 0.5], "ptr must run from 0 to len"),
        ([0, 0, 2], [0.5, 0.5], "at least one outcome"),
        ([0, 2], [0.5, np.nan], "finite numbers >= 0"),
        ([0, 2], [1.5, -0.5], "finite numbers >= 0"),
        ([0, 1, 2], [1.0, 0.0], "positive total"),
    ]:
        with pytest.raises(ValueError, match=match):
            alias_tables(np.array(ptr), np.array(prob))


def test_make_vec_picks_the_native_env_and_sync_still_works():
    env = gym.make_vec("dice_envs/SumAvoid-v0", num_envs=3, N=7)
    assert isinstance(env, DiceVectorEnv) and env.model.N == 7
    assert env.spec.id == "dice_envs/SumAvoid-v0"
    sync = gym.make_vec("dice_envs/SumAvoid-v0", num_envs=3, vectorization_mode="sync", N=7)
    assert isinstance(sync, gym.vector.SyncVectorEnv)
    assert sync.observation_space == env.observation_space
    assert sync.action_space == env.action_space
    assert sync.single_observation_space == env.single_observation_space


def test_render_ansi_gives_a_line_per_copy():
    env = native("dice_envs/Pig-v0", 3, goal=20, render_mode="ansi")
    env.reset(seed=0)
    lines = env.render()
    assert len(lines) == 3 and all(isinstance(line, str) and line for line in lines)
    assert lines == tuple(env.model.render_text(s) for s in env.states)


def test_bad_input_is_refused_clearly():
    env = native("dice_envs/SumAvoid-v0", 4)
    with pytest.raises(RuntimeError, match="before reset"):
        env.step(np.zeros(4, dtype=np.int64))
    env.reset(seed=0)
    for actions in ([0, 1, 2, 0], [0, 1], np.zeros(4), [[0, 1, 0, 1]]):
        with pytest.raises(ValueError, match="actions must be 4 integers in 0..1"):
            env.step(actions)
    with pytest.raises(ValueError, match="seed must be an int"):
        env.reset(seed=[1, 2, 3, 4])
    with pytest.raises(ValueError, match="seed must be an int"):
        env.reset(seed=True)
    with pytest.raises(ValueError, match="options must be a dict"):
        env.reset(options="state")
    with pytest.raises(ValueError, match="reset options"):
        env.reset(options={"stat": 3})
    with pytest.raises(ValueError, match="reset_mask"):
        env.reset(options={"reset_mask": [True] * 4})
    with pytest.raises(ValueError, match="state must be an integer"):
        env.reset(options={"state": 10_000})
    pig = native("dice_envs/Pig-v0", 2, goal=20)
    with pytest.raises(ValueError, match="not a reachable live state"):
        pig.reset(options={"state": (0, 19, 5)})
    for kwargs, match in [
        ({"num_envs": 0}, "num_envs"),
        ({"autoreset_mode": "next_step"}, "autoreset_mode must be"),
        ({"render_mode": "rgb_array"}, "vectorization_mode='sync'"),
        ({"max_episode_steps": 0}, "max_episode_steps"),
        ({"N": -1}, "N"),
    ]:
        with pytest.raises(ValueError, match=match):
            gym.make_vec("dice_envs/SumAvoid-v0", **{"num_envs": 2, **kwargs})
    with pytest.raises(ValueError, match="vectorization_mode='sync'"):
        gym.make_vec("dice_envs/ChowRobbins-v0", num_envs=2, horizon=20_000)
    disabled = native("dice_envs/SumAvoid-v0", 2, autoreset_mode="Disabled")
    disabled.reset(seed=0, options={"state": 9})
    _, rewards, terminated, _, _ = disabled.step(np.zeros(2, dtype=np.int64))  # both stop
    assert terminated.all() and (rewards == 9).all()
    with pytest.raises(RuntimeError, match="episode ended"):
        disabled.step(np.ones(2, dtype=np.int64))
