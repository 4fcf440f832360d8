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

from typing import TYPE_CHECKING, Any

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
from dice_envs.tables import Tables

if TYPE_CHECKING:
    from baselines.yahtzee_evaluation import YahtzeeEvaluation, evaluate_yahtzee

# A game's own solvers load when first used (through its registration's hooks), so what a
# process loads, and a training run's code stamp records, is what it uses: a Pig run never
# loads the Yahtzee solvers. These two load on first access.
_LAZY = {"YahtzeeEvaluation", "evaluate_yahtzee"}

__all__ = [
    "METHODS",
    "TABLE_ROWS_LIMIT",
    "Equilibrium",
    "Evaluation",
    "Exploitability",
    "SampledGap",
    "Solution",
    "Tables",
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


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from baselines import yahtzee_evaluation

    return getattr(yahtzee_evaluation, name)
