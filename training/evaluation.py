"""Scoring a learning agent: its greedy policy over every reachable observation, evaluated
exactly, beside the mean return of a few hundred seeded episodes; on a game too large for
tables (Yahtzee), its sampled gap at every evaluation point and one exact evaluation at the
end of the run (`SampledScorer`)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

import baselines
import dice_envs  # noqa: F401  (registers the ids)
from baselines.exploitability import observation_grid
from dice_envs import make_model
from dice_envs.registration import game
from training.streams import RunStreams, seed_env


def game_arguments(env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """A two-player env's arguments that are the game's own: without the fixed opponent's."""
    return {k: v for k, v in env_kwargs.items() if k not in ("opponent", "agent_starts")}


class ExactScorer:
    """Enumerates one game (env id and keyword arguments) once and scores policies on it."""

    sampled = False

    def __init__(
        self, env_id: str, env_kwargs: dict[str, Any], episodes: int, streams: RunStreams
    ) -> None:
        self.env_id, self.env_kwargs = env_id, env_kwargs
        self.tables, self.optimum = baselines.enumerated(env_id, **env_kwargs)
        self.episodes, self.stream = episodes, streams.evaluation
        self._env = gym.make(env_id, **env_kwargs).unwrapped
        # A two-player game: the game itself, and its arguments without the opponent's.
        self.game = getattr(self.tables.model, "model", None)
        self.game_kwargs = game_arguments(env_kwargs)
        self._grid = None
        # The last evaluations made (greedy actions; action probabilities, with them), which
        # the value errors of the same policy reuse instead of solving it again.
        self._scored: baselines.Evaluation | None = None
        self._scored_stochastic: tuple[np.ndarray, baselines.Evaluation] | None = None

    @property
    def masks_actions(self) -> bool:
        """Whether some state forbids some action (MaskablePPO with `masked: auto`)."""
        return not bool(self.tables.legal.all())

    @property
    def grid(self) -> tuple[np.ndarray, np.ndarray]:
        """Every observation of a two-player game's grid (rows) and its legal actions, as the
        mover sees them."""
        if self._grid is None:
            grid = observation_grid(self.game)
            self._grid = (grid.observation_array, grid.legal)
        return self._grid

    def exploitability(self, policy) -> float:
        """The exact exploitability of a policy of both seats (a coin flip for the first move;
        see `baselines.exploitability`)."""
        return baselines.exploitability(policy, self.env_id, **self.game_kwargs).value

    def score(self, actions: np.ndarray) -> dict[str, float]:
        """Exact value, gap and agreement of an action per MDP state; Monte Carlo beside it."""
        evaluation = baselines.score_actions(actions, self.tables, self.optimum)
        self._scored = evaluation
        result = evaluation.as_dict()
        del result["seconds"]  # a time: it goes to timing.json, never into the results
        result["mc_mean"], result["mc_stderr"] = self.monte_carlo(actions)
        return result

    def score_stochastic(self, probabilities: np.ndarray) -> dict[str, float]:
        """Exact value, gap, relative gap and agreement of action probabilities per MDP state
        (the policy a PPO agent plays), under keys prefixed `stochastic_`."""
        evaluation = baselines.score_probabilities(probabilities, self.tables, self.optimum)
        self._scored_stochastic = (probabilities, evaluation)
        keys = ("value", "gap", "relative_gap", "agreement")
        return {f"stochastic_{key}": getattr(evaluation, key) for key in keys}

    def value_errors(
        self, agent: Any, gamma: float, plays: np.ndarray | None = None
    ) -> dict[str, float]:
        """The agent's own value estimates against the exact ones (`baselines.value_errors`):
        a Q-learner's table against Q*, a PPO critic against the exact value of the policy it
        plays (its action distribution), under the run's `gamma`; visit-weighted mean error
        (> 0 optimistic), mean absolute error and the share of visits where the error changes
        the greedy action. Empty for an agent with neither. `plays`: the PPO agent's action
        probabilities per state of the tables, where the caller has them already."""
        errors = self.errors_of(agent, gamma, plays)
        if errors is None:
            return {}
        return {
            "value_error": errors.mean_error,
            "value_abs_error": errors.mean_abs_error,
            "value_changed_share": errors.changed_share,
        }

    def errors_of(
        self, agent: Any, gamma: float, plays: np.ndarray | None = None
    ) -> baselines.ValueErrors | None:
        """The agent's `baselines.ValueErrors` (see `value_errors`); None for an agent with
        neither a Q table nor a critic. The policy's evaluation made last by `score` (or
        `score_stochastic`) is reused when it is of the same actions (probabilities)."""
        if hasattr(agent, "q_table"):
            evaluation = self._scored
            tables = self.tables
            if evaluation is not None and not np.array_equal(
                evaluation.actions, agent.greedy_actions(tables.observations, tables.legal)
            ):
                evaluation = None
            return baselines.value_errors(
                agent.q_table(), self.env_id, gamma=gamma, evaluation=evaluation,
                **self.env_kwargs,
            )  # fmt: skip
        if not hasattr(agent, "critic_values"):
            return None
        nvec = tuple(self.tables.model.observation_nvec)
        rows = tuple(self.tables.observation_array.T)
        critic = np.zeros(nvec)
        critic[rows] = agent.critic_values(self.tables)
        plays = agent.probabilities(self.tables) if plays is None else plays
        scored = self._scored_stochastic
        if scored is not None and np.array_equal(scored[0], plays):
            return baselines.value_errors(
                critic, self.env_id, evaluation=scored[1], gamma=gamma, **self.env_kwargs
            )
        actions = self.tables.model.num_actions
        policy = np.full(nvec + (actions,), 1.0 / actions)  # unreached cells: never read
        policy[rows] = plays
        return baselines.value_errors(
            critic, self.env_id, policy=policy, gamma=gamma, **self.env_kwargs
        )

    def monte_carlo(self, actions: np.ndarray) -> tuple[float, float]:
        """Mean return (and its standard error) of `episodes` episodes; every call plays the
        same dice (the run's evaluation stream from its start), so points compare."""
        if self.episodes == 0:
            return float("nan"), float("nan")
        env, index_of = self._env, self.tables.index_of
        returns = np.empty(self.episodes)
        seed_env(env, self.stream)
        obs, _ = env.reset()
        for episode in range(self.episodes):
            total, done = 0.0, False
            while not done:
                obs, reward, done, truncated, _ = env.step(int(actions[index_of(obs)]))
                total += reward
                done = done or truncated
            returns[episode] = total
            obs, _ = env.reset()
        stderr = returns.std(ddof=1) / np.sqrt(self.episodes) if self.episodes > 1 else 0.0
        return float(returns.mean()), float(stderr)


def has_tables(env_id: str) -> bool:
    """Whether the game of `env_id` is scored on its tables (`ExactScorer`) or, too large for
    them (Yahtzee), by sampled gaps and one exact evaluation at the end (`SampledScorer`)."""
    return game(env_id).tables


def make_scorer(
    env_id: str, env_kwargs: dict[str, Any], episodes: int, streams: RunStreams
) -> ExactScorer | SampledScorer:
    """The scorer of a run on `env_id`: exact at every point where the game has tables."""
    if has_tables(env_id):
        return ExactScorer(env_id, env_kwargs, episodes, streams)
    return SampledScorer(env_id, env_kwargs, episodes, streams)


# What a sampled point holds, by name: never "gap" or "value", which are exact everywhere.
SAMPLED_KEYS = (
    "sampled_gap",
    "sampled_gap_stderr",
    "sampled_gap_low",
    "sampled_gap_high",
    "sampled_relative_gap",
    "sampled_gap_episodes",
    "sampled_score_mean",
    "sampled_score_stderr",
)


class SampledScorer:
    """Scores the policy of a run on a game too large for tables (Yahtzee).

    At every evaluation point: the sampled gap (`baselines.estimate_gap`: the exact regrets
    V* - Q* of the actions the policy takes, summed along `episodes` sampled episodes; its
    mean, standard error and 95 % interval), under the `SAMPLED_KEYS` names. Every point plays
    the same dice (one seed drawn from the run's evaluation stream), so points compare. Once,
    at the end of the run: the exact evaluation (`baselines.evaluate`, minutes on the full
    game), whose value, gap, relative gap and agreement are the run's result as on every
    other game, with the losses by turn (`YahtzeeEvaluation.losses_by_turn`) as where the
    policy loses.
    """

    sampled = True
    masks_actions = True  # Yahtzee's mask forbids actions (MaskablePPO with masked: auto)

    def __init__(
        self, env_id: str, env_kwargs: dict[str, Any], episodes: int, streams: RunStreams
    ) -> None:
        if episodes < 2:
            raise ValueError(
                f"episodes must be >= 2 for a sampled gap with a standard error on {env_id}, "
                f"got {episodes}"
            )
        self.env_id, self.env_kwargs, self.episodes = env_id, env_kwargs, episodes
        self.seed = int(streams.evaluation.generate_state(1)[0])
        self.model = make_model(env_id, **env_kwargs)

    def sampled_point(self, policy: Any) -> dict[str, float]:
        """The sampled gap of `policy` (any policy form `baselines.estimate_gap` takes)."""
        estimate = baselines.estimate_gap(
            policy, self.env_id, episodes=self.episodes, seed=self.seed, **self.env_kwargs
        )
        low, high = estimate.interval
        optimal = estimate.optimal_value
        return {
            "sampled_gap": estimate.mean,
            "sampled_gap_stderr": estimate.standard_error,
            "sampled_gap_low": low,
            "sampled_gap_high": high,
            "sampled_relative_gap": estimate.mean / abs(optimal) if optimal else estimate.mean,
            "sampled_gap_episodes": estimate.episodes,
            "sampled_score_mean": estimate.score_mean,
            "sampled_score_stderr": estimate.score_standard_error,
            "optimal_value": optimal,
        }

    def exact(self, policy: Any, **options: Any) -> tuple[dict[str, Any], float]:
        """The exact evaluation of `policy`: its numbers (value, optimal value, gap, relative
        gap, agreement, `losses_by_turn` as nested lists) and the seconds it took. `options`
        go to `baselines.evaluate` (`deterministic=False`: an SB3 model's action
        distribution, `obs_transform`)."""
        evaluation = baselines.evaluate(policy, self.env_id, **options, **self.env_kwargs)
        result = evaluation.as_dict()
        seconds = result.pop("seconds")  # a time: it goes to timing.json
        result["losses_by_turn"] = np.asarray(evaluation.losses_by_turn).tolist()
        return result, seconds
