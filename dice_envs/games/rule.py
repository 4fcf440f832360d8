"""Hand-written policies of the single-agent games: `Rule`, one function for one observation
and for a batch of them, so that exact evaluation asks a whole grid in one call."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


class Rule:
    """A policy asked in batches: `rule.batch(observations)` for a whole (n,) or (n, d) int
    array at once (exact evaluation calls that once), giving (n,) actions or (n, num_actions)
    probabilities; `rule(obs)` for one observation. `reads`: the observation components the
    rule's answer depends on (None: any), so that a player asking it one observation at a
    time keeps its answers by those alone (an opponent at a goal too large to tabulate)."""

    def __init__(
        self,
        single: Callable[[object], int],
        batch: Callable[[np.ndarray], np.ndarray],
        name: str = "rule",
        reads: tuple[int, ...] | None = None,
    ) -> None:
        self.single, self.batch, self.name, self.reads = single, batch, name, reads

    def __call__(self, obs) -> int:
        return self.single(obs)

    def __repr__(self) -> str:
        return f"Rule({self.name})"

    @classmethod
    def from_batch(
        cls,
        batch: Callable[[np.ndarray], np.ndarray],
        name: str = "rule",
        reads: tuple[int, ...] | None = None,
    ) -> Rule:
        """A rule written once, for a batch; one observation is a batch of one. The batch gives
        (n,) actions, or (n, num_actions) probabilities for a policy that mixes."""

        def single(obs):
            row = np.asarray(batch(np.asarray(obs)))[0]
            return int(row) if row.ndim == 0 else row

        return cls(single, batch, name, reads)


def parse_threshold(pattern: str, name: str) -> int | None:
    """K from a name of the form `pattern` with K in place of `{K}` ("stop-at-{K}"), else None."""
    prefix, _, suffix = pattern.partition("{K}")
    if not (name.startswith(prefix) and name.endswith(suffix)):
        return None
    digits = name[len(prefix) : len(name) - len(suffix)]
    return int(digits) if digits.isdigit() else None
