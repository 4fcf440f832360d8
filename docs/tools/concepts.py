"""The worked examples of docs/concepts.md, computed with the library on small games.

    python -m docs.tools.concepts

Run from the repository's root. Each example is a Markdown section that this tool writes
between the page's `<!-- name:start -->` and `<!-- name:end -->` markers; the prose around
them is written by hand. Nothing here is timed, so the sections are the same on every run (a
test holds the committed page to what this tool writes now).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym
import numpy as np

import baselines
from baselines.simultaneous import shapley_value_iteration
from dice_envs.games.simultaneous_hog import SimultaneousHog
from docs.tools.game_pages import replace_section

PAGE = Path(__file__).resolve().parents[1] / "concepts.md"

DIE = "dice_envs/DieStopping-v0"
DIE_ARGS = {"rolls": 3}
SUM_AVOID = "dice_envs/SumAvoid-v0"
SUM_AVOID_POLICIES = ("stop-at-20", "stop-at-25", "stop-at-30")
# The learned-values example: Q* of SumAvoid with this optimism on "roll" at these sums.
OPTIMISM, OPTIMISTIC_SUMS = 1.0, range(20, 30)
PIG = "dice_envs/Pig-v0"
PIG_ARGS = {"goal": 30}
PIG_POLICIES = ("hold-at-10", "hold-at-20", "random", "two-player-optimal")
SIMULTANEOUS_HOG = "dice_envs/SimultaneousHog-v0"
HOG_ARGS = {"goal": 20, "max_dice": 5}
HOG_POLICIES = ("five-dice", "dice-3", "random", "equilibrium")
MONTE_CARLO_EPISODES = 10_000
# Below this a difference is float round-off, printed as such rather than as digits.
ROUND_OFF = 1e-12


def _number(value: float, digits: int = 6) -> str:
    """A value as a table cell; round-off (|x| < ROUND_OFF) is written as 0."""
    return f"{0.0 if abs(value) < ROUND_OFF else value:.{digits}f}"


def _row(*cells: object) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def exact_model() -> str:
    """DieStopping with three rolls: its tables and the optimum state by state."""
    tables = baselines.tabulate(DIE, **DIE_ARGS)
    solution = baselines.solve(DIE, **DIE_ARGS)
    lines = [
        f"`baselines.tabulate({DIE!r}, rolls=3)`: {tables.num_states} reachable non-terminal "
        f"states, {len(tables.outcome_prob)} outcome rows, "
        f"{'acyclic' if tables.acyclic else 'cyclic'}; `baselines.solve` used "
        f"`{solution.method}` and found the optimal value {_number(solution.value)} "
        f"(Bellman residual {_difference(solution.bellman_residual, 0.0)}).",
        "",
        _row("observation (rolls left, face)", "Q*(stop)", "Q*(roll)", "V*", "optimal action"),
        "|---|---|---|---|---|",
    ]
    for obs in tables.observations:
        stop, roll = solution.action_values(obs)
        action = ("stop", "roll")[solution.action(obs)]
        stop_cell = "masked" if np.isnan(stop) else _number(stop, 4)
        lines.append(
            _row(obs, stop_cell, _number(roll, 4), _number(solution.value_at(obs), 4), action)
        )
    return "\n".join(lines)


def exact_evaluation() -> str:
    """Stop-at-25 on SumAvoid: the linear solve against a Monte Carlo estimate."""
    score = baselines.evaluate("stop-at-25", SUM_AVOID)
    tables = baselines.tabulate(SUM_AVOID)
    returns = _monte_carlo_returns("stop-at-25", MONTE_CARLO_EPISODES, seed=0)
    mean, error = returns.mean(), returns.std(ddof=1) / np.sqrt(len(returns))
    return "\n".join(
        [
            f"`baselines.evaluate('stop-at-25', {SUM_AVOID!r})` solves one sparse system of "
            f"{tables.num_states} equations, one per reachable sum: value "
            f"{_number(score.value)}.",
            "",
            f"The same policy played for {MONTE_CARLO_EPISODES:,} episodes of "
            f"`gym.make({SUM_AVOID!r})` (seed 0) averages {mean:.4f} with a standard error "
            f"of {error:.4f}: the estimate is {abs(mean - score.value) / error:.2f} standard "
            "errors from the exact value, and only the exact value can rank two policies "
            "whose values differ by less than the noise.",
        ]
    )


def _monte_carlo_returns(policy_name: str, episodes: int, seed: int) -> np.ndarray:
    from dice_envs.policies import named_policy

    policy = named_policy(SUM_AVOID, policy_name)
    env = gym.make(SUM_AVOID)
    returns = np.empty(episodes)
    obs, _ = env.reset(seed=seed)
    for episode in range(episodes):
        total, done = 0.0, False
        if episode:
            obs, _ = env.reset()
        while not done:
            obs, reward, terminated, truncated, _ = env.step(int(policy(obs)))
            total, done = total + reward, terminated or truncated
        returns[episode] = total
    return returns


def gap_and_agreement() -> str:
    """Three stopping rules of SumAvoid: value, gap, relative gap, agreement."""
    lines = [
        _row("policy", "value", "optimal value", "gap", "relative gap", "agreement"),
        "|---|---|---|---|---|---|",
    ]
    scores = {name: baselines.evaluate(name, SUM_AVOID) for name in SUM_AVOID_POLICIES}
    for name, score in scores.items():
        lines.append(
            _row(
                f"`{name}`",
                _number(score.value, 4),
                _number(score.optimal_value, 4),
                _number(score.gap, 4),
                f"{100 * score.relative_gap:.2f} %",
                f"{100 * score.agreement:.1f} %",
            )
        )
    closest = min(scores, key=lambda name: scores[name].gap)
    agreeing = max(scores, key=lambda name: scores[name].agreement)
    if closest != agreeing:
        lines += [
            "",
            f"`{agreeing}` agrees with the optimum most often, yet `{closest}` has the "
            "smallest gap: agreement counts where a policy errs, the gap what its errors cost.",
        ]
    return "\n".join(lines)


def where_lost() -> str:
    """Where stop-at-25 loses its gap: visits, what the action gives up, their product."""
    score = baselines.evaluate("stop-at-25", SUM_AVOID)
    best = baselines.solve(SUM_AVOID)
    visits = score.by_observation("visits")
    lines = [
        _row("sum", "action", "expected visits", "V* - Q*(s, action)", "loss"),
        "|---|---|---|---|---|",
    ]
    top = score.where_lost(5)
    for lost in top:
        obs, action = lost.observation, lost.action
        given_up = best.value_at(obs) - best.action_values(obs)[action]
        name = ("stop", "roll")[action]
        row = (_number(visits[obs], 4), _number(given_up, 4), _number(lost.loss))
        lines.append(_row(obs, name, *row))
    shown = sum(lost.loss for lost in top)
    lines += [
        "",
        f"These five sums lose {_number(shown)} of the gap {_number(score.gap)} "
        f"({100 * shown / score.gap:.1f} %); the losses of all {len(visits)} states sum to "
        f"the gap (difference {_difference(score.losses.sum(), score.gap)}).",
    ]
    return "\n".join(lines)


def learned_values() -> str:
    """Q* of SumAvoid with an optimistic error on "roll" at some sums, against the exact Q*."""
    best = baselines.solve(SUM_AVOID)
    tables = best.tables
    table = np.zeros(tuple(tables.model.observation_nvec) + (tables.num_actions,))
    table[tuple(tables.observation_array.T)] = best.q
    table[list(OPTIMISTIC_SUMS), 1] += OPTIMISM
    errors = baselines.value_errors(table, SUM_AVOID)
    lines = [
        f"`baselines.value_errors(table, {SUM_AVOID!r})`, with `table` the exact Q* plus "
        f"{OPTIMISM:g} on roll at the sums {OPTIMISTIC_SUMS.start} to "
        f"{OPTIMISTIC_SUMS.stop - 1}: mean error {_number(errors.mean_error, 4)}, mean "
        f"absolute error {_number(errors.mean_abs_error, 4)}, and the greedy values' "
        f"(max over actions of Q against V*) mean error {_number(errors.mean_max_error, 4)}, "
        "all weighted by the table's own greedy policy's visits, which reach those sums only "
        "part of the time.",
        "",
        _row("sum", "expected visits", "Q(s, roll)", "Q*(s, roll)", "Q*(s, stop)", "loss"),
        "|---|---|---|---|---|---|",
    ]
    losses = errors.evaluation.losses
    for i in np.flatnonzero(errors.changed):
        obs = tables.observations[i]
        stop, roll = best.action_values(obs)
        lines.append(
            _row(obs, _number(errors.visits[i], 4), _number(table[obs, 1], 4),
                 _number(roll, 4), _number(stop, 4), _number(losses[i]))
        )  # fmt: skip
    changed = _count(int(errors.changed.sum()), "state")
    lines += [
        "",
        f"The error changes the greedy action in {changed}, "
        f"{100 * errors.changed_share:.2f} % of the visits; the changed states lose "
        f"{_number(errors.changed_loss)}, the whole gap {_number(errors.evaluation.gap)}. "
        "Elsewhere the optimism leaves the action alone: rolling stays worse, or was best "
        "already.",
    ]
    return "\n".join(lines)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _difference(first: float, second: float) -> str:
    gap = abs(first - second)
    return f"less than {ROUND_OFF:g}" if gap < ROUND_OFF else f"{gap:.2e}"


def seat_values(policy: str) -> dict[str, float]:
    """A policy of Pig to 30, seat by seat: its best responses' win probabilities, the game's
    value of each seat, and the policy's win probability against itself from seat 0."""
    first = baselines.exploitability(policy, PIG, agent_starts=True, **PIG_ARGS)
    second = baselines.exploitability(policy, PIG, agent_starts=False, **PIG_ARGS)
    itself = baselines.evaluate(policy, PIG, opponent=policy, agent_starts=True, **PIG_ARGS)
    return {
        "best_response_first": first.best_response_value,
        "best_response_second": second.best_response_value,
        "game_value_first": first.game_value,
        "self_play_first": itself.value,
    }


def openspiel_measures(seats: dict[str, float]) -> tuple[float, float]:
    """OpenSpiel's `exploitability` and `nash_conv` of a policy played by both seats, on the
    +1 / -1 payoff of the PettingZoo envs, from their definitions: a seat's best-response
    value is 2 w - 1 (w its win probability); NashConv sums over the two seats the
    best-response value minus the seat's value when both play the policy; exploitability is
    the mean over the seats of the best-response value (the two on-policy values sum to 0)."""
    best = np.array([seats["best_response_first"], seats["best_response_second"]]) * 2 - 1
    on_policy = np.array([2 * seats["self_play_first"] - 1, 1 - 2 * seats["self_play_first"]])
    return float(best.mean()), float((best - on_policy).sum())


def exploitability_scales() -> str:
    """Pig to 30: this project's exploitability beside OpenSpiel's two measures."""
    lines = [
        _row(
            "policy",
            "best response wins, moving first",
            "moving second",
            "exploitability (this project)",
            "OpenSpiel `exploitability` (+1/-1)",
            "OpenSpiel `nash_conv` (+1/-1)",
        ),
        "|---|---|---|---|---|---|",
    ]
    for policy in PIG_POLICIES:
        ours = baselines.exploitability(policy, PIG, **PIG_ARGS).value
        seats = seat_values(policy)
        theirs, nash_conv = openspiel_measures(seats)
        lines.append(
            _row(
                f"`{policy}`",
                _number(seats["best_response_first"]),
                _number(seats["best_response_second"]),
                _number(ours),
                _number(theirs),
                _number(nash_conv),
            )
        )
    first = seat_values("two-player-optimal")["game_value_first"]
    lines += [
        "",
        f"The first player's win probability with both optimal is {_number(first)} at goal "
        f"30, so the best response to the optimum wins {_number(first)} moving first and "
        f"{_number(1 - first)} moving second: {_number(0.5)} on average, the game's value "
        "with a coin flip for the first move.",
    ]
    return "\n".join(lines)


def best_response() -> str:
    """The best response to hold-at-20 at Pig to 30, where it differs from the optimum."""
    found = baselines.exploitability("hold-at-20", PIG, **PIG_ARGS)
    response = found.best_response
    optimum = baselines.solve(PIG, opponent="two-player-optimal", **PIG_ARGS)
    tables = baselines.tabulate(PIG, opponent="hold-at-20", **PIG_ARGS)
    differ = [obs for obs in tables.observations if response.action(obs) != optimum.action(obs)]
    shown = sorted(differ, key=lambda obs: (obs[1], obs[0], obs[2]))[:1]
    lines = [
        f"`baselines.exploitability('hold-at-20', {PIG!r}, goal=30)`: the best response wins "
        f"{_number(found.best_response_value)} (a coin flip for the first move), so the "
        f"exploitability is {_number(found.value)}. Its policy is "
        "`found.best_response`, a `Solution` of the game against hold-at-20.",
        "",
        f"It plays differently from the two-player optimum at {len(differ)} of the "
        f"{tables.num_states} positions this game reaches.",
    ]
    for obs in shown:
        names = ("hold", "roll")
        lines += [
            f"At own score {obs[0]}, opponent {obs[1]}, turn total {obs[2]} the best "
            f"response would {names[response.action(obs)]} and the optimum "
            f"{names[optimum.action(obs)]}.",
        ]
    return "\n".join(lines)


def simultaneous_equilibrium() -> str:
    """Simultaneous Hog to 20 with up to five dice: the equilibrium and plain Shapley."""
    solved = baselines.equilibrium(SIMULTANEOUS_HOG, **HOG_ARGS)
    goal = HOG_ARGS["goal"]
    mixed = [
        (i, j) for i in range(goal) for j in range(goal) if (solved.strategies[i, j] > 0).sum() > 1
    ]
    position = max(mixed, key=lambda p: (p[0] + p[1], p[0]))
    strategy = solved.strategy(position)
    worth = solved.action_values(position)
    plain = shapley_value_iteration(SimultaneousHog(goal, HOG_ARGS["max_dice"]))
    lines = [
        f"`baselines.equilibrium({SIMULTANEOUS_HOG!r}, goal=20, max_dice=5)`: value "
        f"{_number(solved.value)} at the start; {solved.mixed_positions} of the "
        f"{goal * goal} positions mix two or more numbers of dice; the largest saddle gap "
        f"of any position's strategies is {_difference(solved.saddle_gap, 0.0)}.",
        "",
        f"At own score {position[0]}, other {position[1]} (the mixed position with the "
        f"largest score sum) the equilibrium is worth {_number(solved.value_at(position))} "
        "to the player at the first score, and it throws:",
        "",
        _row("dice", "probability", "win probability of this throw"),
        "|---|---|---|",
    ]
    for action, (prob, value) in enumerate(zip(strategy, worth, strict=True)):
        lines.append(_row(action + 1, _number(prob, 4), _number(value)))
    lines += [
        "",
        "Plain Shapley value iteration (every position's matrix game re-solved from the last "
        f"sweep's values, from 1/2) took {plain.sweeps} sweeps to move no value by more than "
        f"1e-12; its largest difference from the ordered solve's values is "
        f"{_difference(np.abs(plain.values - solved.values[:goal, :goal]).max(), 0.0)}.",
    ]
    return "\n".join(lines)


def simultaneous_exploitability() -> str:
    """Named policies of Simultaneous Hog to 20 against their exact best responses."""
    lines = [
        _row("policy", "best response wins", "exploitability"),
        "|---|---|---|",
    ]
    for policy in HOG_POLICIES:
        found = baselines.exploitability(policy, SIMULTANEOUS_HOG, **HOG_ARGS)
        lines.append(_row(f"`{policy}`", _number(found.best_response_value), _number(found.value)))
    return "\n".join(lines)


SECTIONS: dict[str, Callable[[], str]] = {
    "concepts-model": exact_model,
    "concepts-evaluation": exact_evaluation,
    "concepts-gap": gap_and_agreement,
    "concepts-losses": where_lost,
    "concepts-learned-values": learned_values,
    "concepts-best-response": best_response,
    "concepts-exploitability": exploitability_scales,
    "concepts-equilibrium": simultaneous_equilibrium,
    "concepts-simultaneous-exploitability": simultaneous_exploitability,
}


def sections() -> dict[str, str]:
    """Every generated section of the page, by marker name."""
    return {name: make() for name, make in SECTIONS.items()}


def main() -> int:
    page = PAGE.read_text()
    missing = [name for name in SECTIONS if f"<!-- {name}:start -->" not in page]
    if missing:
        print(f"error: {PAGE} has no markers for {', '.join(missing)}", file=sys.stderr)
        return 2
    for name, text in sections().items():
        replace_section(name, text, PAGE)
    print(f"wrote {len(SECTIONS)} sections of {PAGE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
