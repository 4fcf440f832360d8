"""Exact baselines for the dice_envs games: optimal solutions and exact policy evaluation.

import baselines
best = baselines.solve("dice_envs/SumAvoid-v0", N=10)
best.value, best.action(23)
score = baselines.evaluate(lambda s: int(s < 20), "dice_envs/SumAvoid-v0", N=10)
score.value, score.gap, score.relative_gap
sampled = baselines.estimate_gap("stop-at-20", "dice_envs/SumAvoid-v0", episodes=1000, seed=0, N=10)
sampled.mean, sampled.interval
"""

from __future__ import annotations

from baselines.evaluation import (
    Evaluation,
    policy_actions,
    policy_probabilities,
    score_actions,
    score_probabilities,
)
from baselines.exact import (
    METHODS,
    TABLE_ROWS_LIMIT,
    enumerated,
    evaluate,
    on_states,
    solve,
    tabulate,
)
from baselines.exploitability import Exploitability, exploitability
from baselines.sampled_gap import SampledGap, estimate_gap
from baselines.simultaneous import Equilibrium, equilibrium
from baselines.solvers import Solution
from baselines.value_errors import ValueErrors, value_errors
from baselines.yahtzee_evaluation import YahtzeeEvaluation, evaluate_yahtzee
from dice_envs.tables import Tables

TabularMDP = Tables  # the name before the tables moved into dice_envs (one name now: Tables)

__all__ = [
    "METHODS",
    "TABLE_ROWS_LIMIT",
    "Equilibrium",
    "Evaluation",
    "Exploitability",
    "SampledGap",
    "Solution",
    "Tables",
    "TabularMDP",
    "ValueErrors",
    "YahtzeeEvaluation",
    "enumerated",
    "equilibrium",
    "estimate_gap",
    "evaluate",
    "evaluate_yahtzee",
    "exploitability",
    "on_states",
    "policy_actions",
    "policy_probabilities",
    "score_actions",
    "score_probabilities",
    "solve",
    "tabulate",
    "value_errors",
]
