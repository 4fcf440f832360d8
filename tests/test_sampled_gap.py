"""The sampled gap (`baselines.estimate_gap`): unbiased against the exact gap, its 95 % interval
covering at its stated rate, the expected regret of a stochastic policy less noisy than the
regret of the action drawn, exactly 0 for the optimal policy, and on Yahtzee."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces
from scipy.stats import binomtest

import baselines
from baselines.yahtzee_sampled import yahtzee_action_values, yahtzee_positions, yahtzee_solution
from benchmarks.sampled_gap import (
    observation_hash,
    report,
    second_best_actions,
    yahtzee_policies,
)
from dice_envs.envs.yahtzee import OBSERVATION_NVEC
from dice_envs.envs.yahtzee_vector import YahtzeeVectorEnv
from dice_envs.games.yahtzee import REROLL_LEGAL, TurnState, Yahtzee
from dice_envs.policies import batched

PIG_FOLD = {"goal": 30, "opponent": "hold-at-10"}
YAHTZEE = "dice_envs/Yahtzee-v0"
SMALL_YAHTZEE = {"boxes": ["sixes", "yahtzee", "chance"]}


def _mixed_table(env_id: str, mix: float, **kwargs) -> np.ndarray:
    """A stochastic policy over the observation grid: each action with probability `mix`
    for action 0, the rest spread evenly over the other actions."""
    model = baselines.tabulate(env_id, **kwargs).model
    table = np.empty(tuple(model.observation_nvec) + (model.num_actions,))
    table[..., 0] = mix
    table[..., 1:] = (1 - mix) / (model.num_actions - 1)
    return table


CASES = [
    ("dice_envs/SumAvoid-v0", {"N": 6}, lambda: "stop-at-20"),
    ("dice_envs/SumAvoid-v0", {"N": 6}, lambda: lambda total: int(total < 12)),
    ("dice_envs/SumAvoid-v0", {"N": 6}, lambda: _mixed_table("dice_envs/SumAvoid-v0", 0.3, N=6)),
    ("dice_envs/DieStopping-v0", {}, lambda: "stop-at-4"),
    ("dice_envs/D20Rounds-v0", {"rounds": 2}, lambda: "take-above-10"),
    (
        "dice_envs/D20Rounds-v0",
        {"rounds": 2},
        lambda: batched(lambda obs: (obs[:, 1] < 15).astype(np.int64)),
    ),
    ("dice_envs/PigSolitaire-v0", {"goal": 30}, lambda: "hold-at-20"),
    ("dice_envs/Pig-v0", PIG_FOLD, lambda: "hold-at-20"),
    ("dice_envs/Pig-v0", PIG_FOLD, lambda: lambda obs: int(obs[2] < 15)),
]


@pytest.mark.parametrize(("env_id", "kwargs", "make_policy"), CASES)
def test_mean_approaches_the_exact_gap(env_id, kwargs, make_policy):
    policy = make_policy()
    exact = baselines.evaluate(policy, env_id, **kwargs)
    estimate = baselines.estimate_gap(policy, env_id, episodes=20_000, seed=3, **kwargs)
    assert exact.gap > 1e-3
    assert estimate.standard_error < 0.05 * exact.gap
    assert abs(estimate.mean - exact.gap) < 4 * estimate.standard_error
    assert abs(estimate.score_mean - exact.value) < 4 * estimate.score_standard_error
    assert estimate.optimal_value == pytest.approx(exact.optimal_value, abs=1e-12)
    low, high = estimate.interval
    assert high - low == pytest.approx(2 * 1.959964 * estimate.standard_error, rel=1e-6)


@pytest.mark.parametrize(
    ("env_id", "kwargs", "make_policy"),
    [
        ("dice_envs/SumAvoid-v0", {}, lambda: "stop-at-20"),
        (
            "dice_envs/D20Rounds-v0",
            {"rounds": 2},
            lambda: _mixed_table("dice_envs/D20Rounds-v0", 0.5, rounds=2),
        ),  # fmt: skip
    ],
)
def test_interval_covers_the_exact_gap_at_its_rate(env_id, kwargs, make_policy):
    """200 seeded estimates of 200 episodes: the number whose 95 % interval holds the exact
    gap is what Binomial(200, 0.95) gives (two-sided test at the 1 % level: 182..197, so an
    interval too narrow or too wide fails)."""
    policy = make_policy()
    gap = baselines.evaluate(policy, env_id, **kwargs).gap
    covered = 0
    for seed in range(200):
        low, high = baselines.estimate_gap(
            policy, env_id, episodes=200, seed=seed, **kwargs
        ).interval
        covered += low <= gap <= high
    assert binomtest(covered, 200, 0.95).pvalue > 0.01, covered


def test_stochastic_policy_uses_the_expected_regret():
    """A policy mixing take and reroll 50/50 everywhere: the regret of the action drawn adds
    the draw's own variance at each visited state, the expected regret does not; both are
    unbiased."""
    env_id, kwargs = "dice_envs/D20Rounds-v0", {"rounds": 2}
    policy = _mixed_table(env_id, 0.5, **kwargs)
    gap = baselines.evaluate(policy, env_id, **kwargs).gap
    expected = baselines.estimate_gap(policy, env_id, episodes=20_000, seed=5, **kwargs)
    drawn = baselines.estimate_gap(
        policy, env_id, episodes=20_000, seed=5, expected_regret=False, **kwargs
    )
    assert abs(expected.mean - gap) < 4 * expected.standard_error
    assert abs(drawn.mean - gap) < 4 * drawn.standard_error
    assert expected.standard_error < 0.7 * drawn.standard_error
    # The same episodes either way: the actions are drawn alike, only the regret counted differs.
    np.testing.assert_array_equal(expected.episode_scores, drawn.episode_scores)


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("dice_envs/SumAvoid-v0", {}),
        ("dice_envs/Pig-v0", PIG_FOLD),
        ("dice_envs/DieStopping-v0", {}),
    ],
)
def test_optimal_policy_gives_exactly_zero(env_id, kwargs):
    estimate = baselines.estimate_gap(
        baselines.solve(env_id, **kwargs), env_id, episodes=500, **kwargs
    )
    assert estimate.mean == 0.0
    assert estimate.standard_error == 0.0
    assert estimate.interval == (0.0, 0.0)
    assert estimate.score_standard_error > 0


def test_same_seed_same_estimate():
    first = baselines.estimate_gap("stop-at-20", "dice_envs/SumAvoid-v0", episodes=300, seed=7)
    again = baselines.estimate_gap("stop-at-20", "dice_envs/SumAvoid-v0", episodes=300, seed=7)
    other = baselines.estimate_gap("stop-at-20", "dice_envs/SumAvoid-v0", episodes=300, seed=8)
    np.testing.assert_array_equal(first.episode_gaps, again.episode_gaps)
    assert not np.array_equal(first.episode_gaps, other.episode_gaps)
    assert first.episodes == len(first.episode_scores) == 300


def test_batches_of_episodes_add_up(monkeypatch):
    """More episodes than one vector env plays at once: every episode is counted once."""
    monkeypatch.setattr("baselines.sampled_gap.EPISODE_BATCH", 64)
    estimate = baselines.estimate_gap("stop-at-4", "dice_envs/DieStopping-v0", episodes=150)
    assert estimate.episodes == 150
    assert (estimate.episode_scores > 0).all()  # a game of this die ends with its face, >= 1


@pytest.mark.parametrize(
    ("argument", "value"),
    [
        ("episodes", 0),
        ("episodes", 2.5),
        ("episodes", True),
        ("seed", "1"),
        ("seed", 1.0),
        ("seed", -1),
        ("seed", None),
        ("env_id", "dice_envs/NoSuchGame-v0"),
    ],  # fmt: skip
)
def test_bad_input_names_the_argument(argument, value):
    call = {"env_id": "dice_envs/SumAvoid-v0", "episodes": 10, "seed": 0, argument: value}
    with pytest.raises(ValueError, match=argument):
        baselines.estimate_gap("stop-at-20", **call)


# -- Yahtzee (a reduced game: three boxes, three turns) ---------------------------------------


def _legal(observations: np.ndarray, model: Yahtzee) -> np.ndarray:
    positions = yahtzee_positions(observations)
    legal = np.zeros((len(positions), 45), dtype=bool)
    legal[:, :32] = REROLL_LEGAL[positions[:, 3]] & (positions[:, 4] > 0)[:, None]
    legal[:, 32:] = model.scoring_many(positions[:, 0], positions[:, 3]).legal
    return legal


class _FirstLegal:
    """An SB3-style model: predict with action masks, the lowest-numbered legal action."""

    observation_space = spaces.MultiDiscrete(OBSERVATION_NVEC)

    def predict(self, observations, deterministic=True, action_masks=None):
        return np.asarray(action_masks).argmax(axis=1), None


def _uniform_legal():
    model = Yahtzee(**SMALL_YAHTZEE)

    def probabilities(observations):
        legal = _legal(observations, model).astype(float)
        return legal / legal.sum(axis=1, keepdims=True)

    return batched(probabilities)


@pytest.mark.parametrize("make_policy", [_FirstLegal, _uniform_legal])
def test_yahtzee_gap_plus_score_is_the_optimum(make_policy):
    """E[score] = V* - gap: each episode's score plus its summed regrets averages to the exact
    optimum (an unbiasedness check that needs no exact evaluation of the policy)."""
    estimate = baselines.estimate_gap(make_policy(), YAHTZEE, episodes=300, seed=1, **SMALL_YAHTZEE)
    total = estimate.episode_scores + estimate.episode_gaps
    error = total.std(ddof=1) / np.sqrt(len(total))
    assert estimate.mean > 5.0  # far from optimal
    assert abs(total.mean() - estimate.optimal_value) < 4 * error


def test_yahtzee_optimal_policy_gives_exactly_zero():
    solution = yahtzee_solution(YAHTZEE, **SMALL_YAHTZEE)
    estimate = baselines.estimate_gap(solution, YAHTZEE, episodes=100, seed=2, **SMALL_YAHTZEE)
    assert (estimate.mean, estimate.standard_error) == (0.0, 0.0)
    assert estimate.optimal_value == solution.value


def test_yahtzee_refuses_a_table():
    with pytest.raises(ValueError, match="policy"):
        baselines.estimate_gap(np.zeros(3), YAHTZEE, episodes=5, **SMALL_YAHTZEE)


def test_yahtzee_forbidden_action_counts_as_the_action_it_plays():
    """Action 0 (rerolling nothing) scores the dice in the first legal box: its regret is that
    scoring's, so the estimate equals the policy that names the box itself, episode by episode."""
    model = Yahtzee(**SMALL_YAHTZEE)
    nothing = batched(lambda observations: np.zeros(len(observations), dtype=np.int64))
    first_box = batched(
        lambda observations: 32 + _legal(observations, model)[:, 32:].argmax(axis=1)
    )
    forbidden, named = (
        baselines.estimate_gap(policy, YAHTZEE, episodes=100, seed=4, **SMALL_YAHTZEE)
        for policy in (nothing, first_box)
    )
    assert named.mean > 1.0
    np.testing.assert_array_equal(forbidden.episode_gaps, named.episode_gaps)
    np.testing.assert_array_equal(forbidden.episode_scores, named.episode_scores)


def test_yahtzee_action_values_are_the_solutions_one_by_one():
    """The batched action values the estimate reads equal `action_values` asked one position
    at a time, on visited observations of every kind (2, 1, 0 rolls left, later turns)."""
    solution = yahtzee_solution(YAHTZEE, **SMALL_YAHTZEE)
    env = YahtzeeVectorEnv(num_envs=64, **SMALL_YAHTZEE)
    obs, info = env.reset(seed=5)
    rng = np.random.default_rng(5)
    seen = []
    for _ in range(6):
        seen.append(obs)
        legal = info["action_mask"].astype(float)
        actions = (rng.random((64, 1)) * legal).argmax(axis=1)
        obs, _, _, _, info = env.step(actions)
    observations = np.concatenate(seen)
    batch = yahtzee_action_values(solution, observations)
    for row, (filled, upper, flag, dice, rolls) in zip(
        batch, yahtzee_positions(observations).tolist(), strict=True
    ):
        one = solution.turn_action_values(TurnState(filled, upper, bool(flag)), dice, rolls)
        np.testing.assert_array_equal(np.isnan(row), np.isnan(one))
        np.testing.assert_allclose(row[~np.isnan(row)], one[~np.isnan(one)], atol=1e-9)
    assert len({tuple(r) for r in observations[:, 6:7].tolist()}) == 3  # 2, 1 and 0 rolls left


# -- the benchmark's Yahtzee policies (benchmarks/sampled_gap.py) ----------------------------


def test_observation_hash_is_fixed_per_observation_and_spread():
    observations = np.random.default_rng(0).integers(0, 6, size=(20_000, 22))
    draws = observation_hash(observations)
    np.testing.assert_array_equal(draws, observation_hash(observations.copy()))
    assert ((draws >= 0) & (draws < 1)).all()
    assert abs(np.mean(draws < 0.05) - 0.05) < 0.006  # the share of mistakes it sets
    changed = observations.copy()
    changed[:, 21] ^= 1  # one entry differs: another draw
    assert np.mean(observation_hash(changed) == draws) < 1e-3


def test_second_best_action_is_the_best_other_legal_one():
    q = np.array([[1.0, 5.0, 3.0, np.nan], [2.0, 2.0, 0.0, 9.0], [np.nan, 4.0, np.nan, np.nan]])
    legal = np.array([[1, 1, 1, 0], [1, 1, 1, 0], [0, 1, 0, 0]], dtype=bool)
    assert second_best_actions(q, legal).tolist() == [2, 1, 1]  # only one legal: that one


def test_benchmark_yahtzee_policies_are_scored_exactly_and_estimated_without_bias():
    """Every Yahtzee policy of the benchmark, on a reduced game: the exact evaluation takes it,
    its sampled gap covers the exact gap, and the deterministic near-optimal ones err where
    their hash says (about their share of the observations)."""
    policies = yahtzee_policies("forced", SMALL_YAHTZEE["boxes"])
    kwargs = {"joker": "forced", **SMALL_YAHTZEE}
    gaps = {}
    for name, policy in policies.items():
        exact = baselines.evaluate(policy, YAHTZEE, **kwargs)
        estimate = baselines.estimate_gap(policy, YAHTZEE, episodes=1500, seed=6, **kwargs)
        assert abs(estimate.mean - exact.gap) < 4 * estimate.standard_error + 1e-9, name
        gaps[name] = exact.gap
    second = "optimal, the second-best action at 5 % of observations (deterministic)"
    blunder = "optimal, a hashed legal action at 5 % of observations (deterministic)"
    assert 0 < gaps[second] < gaps[blunder]  # smaller mistakes at the same observations
    solution = yahtzee_solution(YAHTZEE, **kwargs)
    env = YahtzeeVectorEnv(num_envs=2000, **kwargs)
    obs, _ = env.reset(seed=0)
    differs = policies[second].batch(obs) != solution.actions(obs)
    assert 0.02 < differs.mean() < 0.06


def _row(policy: str, gap: float, ratio: float, exact: float | None) -> dict:
    return {
        "game": "Yahtzee-v0(joker='forced')", "policy": policy, "episodes": 100,
        "optimal_value": 250.0, "exact_gap": exact,
        "exact_relative_gap": None if exact is None else exact / 250.0,
        "exact_seconds": None if exact is None else 60.0, "gap": gap, "gap_se": 0.1,
        "low": gap - 0.2, "high": gap + 0.2, "score": 250.0 - gap, "score_se": 2.0,
        "ratio": ratio, "check": 0.0, "check_se": 1.0, "seconds": 1.0,
    }  # fmt: skip


def test_benchmark_report_uses_the_exact_relative_gap_where_it_has_one():
    """Within 10 % by the exact gap (20 of 250) though the sampled one says 12 %; a row not
    evaluated exactly is judged by its sampled gap and says so."""
    rows = [
        _row("near by its exact gap", 30.0, 6.0, 20.0),
        _row("far, not evaluated", 40.0, 9.0, None),
        _row("near, not evaluated", 5.0, 3.0, None),
    ]
    text = report(rows, seed=0)
    reached = "Reached by: near by its exact gap (6.0)."
    assert f"{reached} Not reached by: near, not evaluated (3.0)." in text
    assert "16.00 % (sampled)" in text and "| 8.00 % |" in text
    assert "holds the exact gap in 0 of 1 rows" in text and "--no-yahtzee-exact" in text
    assert "issue" not in text
