"""The sampled gap: an unbiased estimate of a policy's gap from sampled episodes, for every game.

    import baselines
    estimate = baselines.estimate_gap("hold-at-20", "dice_envs/Pig-v0", episodes=2000, seed=0,
                                      goal=30)
    estimate.mean, estimate.standard_error, estimate.interval

Along an episode of the policy, the regrets V*(s) - Q*(s, a) of the actions it takes, summed,
have the policy's gap V*(start) - V(start) as their expectation (the performance difference
lemma, Kakade and Langford 2002, for an undiscounted episodic game). A stochastic policy's
regret is taken in expectation under its action probabilities at each visited state: still
unbiased, and less noisy. Near the optimum most regrets are 0, so the mean of these sums is
far less noisy than the mean of the episodes' scores; this is how a policy is scored between
exact evaluations on a game too large to evaluate often (Yahtzee).

V* and Q* are exact: from the game's tables and their optimum (`baselines.solve`, the best
response to the opponent for a two-player game played against a fixed one) or, for Yahtzee,
from its structure-aware solution. Episodes are played in the game's native vector env.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from baselines.evaluation import policy_answer
from baselines.exact import _enumerated, with_optimal
from baselines.solvers import TIE_TOLERANCE, q_from_values
from dice_envs.registration import game, load

# The two-sided 95 % quantile of the normal distribution, scipy.stats.norm.ppf(0.975) written
# out: importing scipy.stats takes half a second of every command's start (`dice-envs play`).
Z_95 = 1.959963984540054
EPISODE_BATCH = 4096  # episodes played at once in one native vector env


@dataclass(frozen=True, eq=False)
class SampledGap:
    """The sampled gap of a policy: the mean over episodes of the regrets summed along each.

    Attributes:
        mean: the estimate of the gap (optimal value minus the policy's value), unbiased.
        standard_error: its standard error (sample standard deviation / sqrt(episodes); NaN
            for a single episode).
        interval: the 95 % confidence interval of the gap, mean +- 1.96 standard errors (the
            normal approximation).
        episodes: how many episodes were played.
        score_mean: the mean of the same episodes' scores (summed rewards), for comparison.
        score_standard_error: its standard error.
        optimal_value: the exact optimal value from the start (`optimal_value - mean`
            estimates the policy's value).
        seconds: wall time of the call, solving the game included when it was not kept.
        episode_gaps: (episodes,) each episode's summed regrets.
        episode_scores: (episodes,) each episode's score.
    """

    mean: float
    standard_error: float
    interval: tuple[float, float]
    episodes: int
    score_mean: float
    score_standard_error: float
    optimal_value: float
    seconds: float
    episode_gaps: np.ndarray = field(repr=False)
    episode_scores: np.ndarray = field(repr=False)

    @property
    def value(self) -> float:
        """The policy's value estimated from the gap: `optimal_value - mean`."""
        return self.optimal_value - self.mean

    def as_dict(self) -> dict[str, float]:
        keys = ("mean", "standard_error", "episodes", "score_mean", "score_standard_error")
        result = {key: float(getattr(self, key)) for key in keys}
        result["low"], result["high"] = self.interval
        result["optimal_value"], result["seconds"] = self.optimal_value, self.seconds
        return result


def estimate_gap(
    policy: Any,
    env_id: str,
    *,
    episodes: int = 1000,
    seed: int = 0,
    obs_transform: Any = None,
    deterministic: bool = True,
    expected_regret: bool = True,
    **env_kwargs: Any,
) -> SampledGap:
    """Estimate the gap of `policy` on `env_id` (with the env's keyword arguments) from
    `episodes` episodes sampled in the game's native vector env.

    The policy takes every form `baselines.evaluate` takes: a registered name, a batched
    callable, a callable on one observation (an action or a probability vector), a table over
    the observation grid (actions or probabilities), a mapping, an SB3 model (`deterministic`
    and `obs_transform` as in `evaluate`), a `Solution`; on Yahtzee also its
    `YahtzeeSolution` (the optimal policy). A stochastic policy's actions are drawn from its
    probabilities and its regret at each visited state is their expectation; with
    `expected_regret=False` the regret of the action drawn is summed instead (also unbiased,
    noisier: for comparison). All randomness comes from `seed`: the same seed gives the same
    estimate.

    Raises:
        ValueError: `env_id` not registered, `episodes` not an integer >= 1, `seed` not an
            integer >= 0, or a policy that does not fit the game.
    """
    start = time.perf_counter()
    entry = game(env_id)  # ValueError naming env_id and the registered ids
    if isinstance(episodes, bool) or not isinstance(episodes, int | np.integer) or episodes < 1:
        raise ValueError(f"episodes must be an integer >= 1, got {episodes!r}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    if not isinstance(expected_regret, bool):
        raise ValueError(f"expected_regret must be True or False, got {expected_regret!r}")
    options = {
        "obs_transform": obs_transform,
        "deterministic": deterministic,
        "expected_regret": expected_regret,
    }
    structure_player = entry.hook("sampled_player")
    if entry.tables:
        player: Any = _TablePlayer(policy, env_id, env_kwargs, options)
    elif structure_player is not None:
        player = structure_player(
            with_optimal(policy, env_id, env_kwargs), env_id, env_kwargs, options
        )
    else:
        raise ValueError(f"env_id {env_id!r} has no tables and no sampled gap yet")
    gaps, scores = _play(player, int(episodes), int(seed))
    return _summary(gaps, scores, player.optimal_value, time.perf_counter() - start)


def _summary(gaps: np.ndarray, scores: np.ndarray, optimal: float, seconds: float) -> SampledGap:
    count = len(gaps)

    def standard_error(values: np.ndarray) -> float:
        return float(values.std(ddof=1) / np.sqrt(count)) if count > 1 else float("nan")

    mean, error = float(gaps.mean()), standard_error(gaps)
    return SampledGap(
        mean=mean,
        standard_error=error,
        interval=(mean - Z_95 * error, mean + Z_95 * error),
        episodes=count,
        score_mean=float(scores.mean()),
        score_standard_error=standard_error(scores),
        optimal_value=float(optimal),
        seconds=seconds,
        episode_gaps=gaps,
        episode_scores=scores,
    )


def _play(player: Any, episodes: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Play `episodes` episodes, `EPISODE_BATCH` at a time; each one's summed regrets and
    score. The env's draws and the policy's come from two streams of `seed`."""
    env_seed, action_seed = np.random.SeedSequence(seed).spawn(2)
    rng = np.random.default_rng(action_seed)
    width = min(episodes, EPISODE_BATCH)
    env = player.vector_env(width)
    gaps, scores = np.zeros(episodes), np.zeros(episodes)
    first = True
    for lo in range(0, episodes, width):
        count = min(width, episodes - lo)
        reset_seed = int(env_seed.generate_state(1)[0]) if first else None
        obs, info = env.reset(seed=reset_seed)  # later batches continue the same generator
        first = False
        active = np.arange(width) < count  # a last, smaller batch: the rest are not counted
        gap, score = np.zeros(width), np.zeros(width)
        actions = np.zeros(width, dtype=np.int64)
        while active.any():
            rows = np.flatnonzero(active)
            chosen, regrets = player.decide(obs[rows], info["action_mask"][rows], rng)
            actions[:] = 0  # copies not counted play anything in the space: it never raises
            actions[rows] = chosen
            gap[rows] += regrets
            obs, reward, terminated, truncated, info = env.step(actions)
            score[rows] += reward[rows]
            active[rows] = ~(terminated[rows] | truncated[rows])
        gaps[lo : lo + count], scores[lo : lo + count] = gap[:count], score[:count]
    env.close()
    return gaps, scores


def _regret_table(q: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """V*(s) - Q*(s, a) per row and action, V* the best legal Q* of the row. Regrets within
    the project's tie tolerance (`baselines.solvers.TIE_TOLERANCE`, as `optimal_action_mask`
    counts optimal actions) are 0, so an optimal policy's sampled gap is exactly 0."""
    best = np.where(legal, q, -np.inf).max(axis=1, keepdims=True)
    regret = best - q
    regret[regret <= TIE_TOLERANCE * np.maximum(1.0, np.abs(best))] = 0.0
    return regret


def _draw(probs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One action per row of action probabilities."""
    cumulative = np.cumsum(probs, axis=1)
    drawn = (cumulative < rng.random(len(probs))[:, None] * cumulative[:, -1:]).sum(axis=1)
    return np.minimum(drawn, probs.shape[1] - 1)


def _regrets(
    regret: np.ndarray, probs: np.ndarray | None, actions: np.ndarray | None, rng, expected: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The actions played and the regret counted for rows of `regret` (V* - Q* per action),
    from a deterministic policy's `actions` or a stochastic one's `probs`."""
    rows = np.arange(len(regret))
    if probs is None:
        return actions, regret[rows, actions]
    drawn = _draw(probs, rng)
    return drawn, (probs * regret).sum(axis=1) if expected else regret[rows, drawn]


def split_answer(answer: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(actions, None) of a deterministic policy's answer, (None, probabilities) of a
    stochastic one's."""
    return (answer, None) if answer.ndim == 1 else (None, answer)


class _TablePlayer:
    """A policy on a game with tables: its actions (or probabilities) and regret per state,
    resolved once for every state as `baselines.evaluate` resolves them."""

    def __init__(self, policy: Any, env_id: str, kwargs: dict, options: dict) -> None:
        self.env_id, self.expected = env_id, options["expected_regret"]
        self.tables, optimum = _enumerated(env_id, dict(kwargs))
        self.optimal_value = optimum.value
        self.regret = _regret_table(
            q_from_values(self.tables, optimum.state_values), self.tables.legal
        )
        self.actions, self.probs = split_answer(
            policy_answer(
                policy,
                self.tables,
                obs_transform=options["obs_transform"],
                deterministic=options["deterministic"],
            )
        )

    def vector_env(self, width: int) -> Any:
        entry = game(self.env_id)
        return load(entry.vector_entry_point)(self.tables.model, width, tables=self.tables)

    def decide(self, obs: np.ndarray, mask: np.ndarray, rng) -> tuple[np.ndarray, np.ndarray]:
        states = self.tables.indices_of(obs.reshape(len(obs), -1))
        probs = None if self.probs is None else self.probs[states]
        actions = None if self.actions is None else self.actions[states]
        return _regrets(self.regret[states], probs, actions, rng, self.expected)
