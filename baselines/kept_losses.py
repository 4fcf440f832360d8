"""What the structure-aware evaluations (Yahtzee's, the Ten Thousand race's) share: the summary
every `Evaluation` prints and gives as a dict, and `where_lost` over the largest single-decision
losses their sweeps keep (they hold no per-state arrays to rank)."""

from __future__ import annotations

from baselines.protocols import LOSS_TOLERANCE, Loss, check_count


class KeptLosses:
    """A mixin for dataclasses with `value`, `optimal_value`, `gap`, `relative_gap`,
    `agreement`, `seconds`, `top_losses` (largest first) and `losses_kept`; `evaluator` names
    the function whose `keep_losses=` keeps more."""

    evaluator = "evaluate"

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(value={self.value:.6g},"
            f" optimal_value={self.optimal_value:.6g}, gap={self.gap:.3g},"
            f" relative_gap={self.relative_gap:.3g}, agreement={self.agreement:.3g})"
        )

    def as_dict(self) -> dict[str, float]:
        keys = ("value", "optimal_value", "gap", "relative_gap", "agreement", "seconds")
        return {key: float(getattr(self, key)) for key in keys}

    def where_lost(self, count: int = 10) -> list[Loss]:
        """The `count` decisions where the policy loses the most (`Loss`: the value lost
        there, weighted by how often the policy reaches it; the observation; the action it
        plays and the optimal one), largest first; only decisions that lose more than
        round-off. At most `losses_kept` (evaluate with a larger `keep_losses` for more)."""
        if check_count(count) > self.losses_kept:
            raise ValueError(
                f"count must be at most {self.losses_kept}, the losses the evaluation kept "
                f"({self.evaluator}(..., keep_losses={count}) keeps more); got {count}"
            )
        floor = LOSS_TOLERANCE * max(1.0, abs(self.optimal_value))
        return [loss for loss in self.top_losses[:count] if loss.loss > floor]
