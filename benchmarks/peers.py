"""The plain methods the library's solvers are measured against (`benchmarks.solves`) and
checked by (the tests): independent of the solvers they compare with, and no part of the
library's answers."""

from __future__ import annotations

import numpy as np


def pig_value_iteration(
    goal: int, face_probs: tuple[float, ...] = (1 / 6,) * 6, tol: float = 1e-9
) -> tuple[float, int]:
    """The two-player Pig optimum by plain value iteration, a method independent of the
    layered solver above (and its check): every position (own, other, turn total) updated
    from the last sweep's values, on whole arrays, from P = 0 until no value moves by more
    than `tol` (the successive substitution of Neller and Presser, "Optimal Play of the Dice
    Game Pig", The UMAP Journal, 2004). Slow: hundreds of sweeps at goal 100.

    Returns (the first player's win probability at the start, the sweeps taken).
    """
    if isinstance(goal, bool) or not isinstance(goal, int | np.integer) or goal < 2:
        raise ValueError(f"goal must be an int >= 2, got {goal!r}")
    if not tol > 0:
        raise ValueError(f"tol must be > 0, got {tol!r}")
    probs = np.asarray(face_probs, dtype=float)
    if probs.ndim != 1 or len(probs) < 2 or (probs < 0).any() or abs(probs.sum() - 1) > 1e-12:
        raise ValueError(f"face_probs must be >= 2 probabilities summing to 1, got {face_probs}")
    n, sides = int(goal), len(probs)
    own, turn = np.arange(n)[:, None, None], np.arange(n)[None, None, :]
    banked = np.minimum(own + turn, n - 1)[:, 0, :]  # [own, turn]
    live = (own + turn < n) & np.ones((1, n, 1), dtype=bool)
    padded = np.ones((n, n, n + sides + 1))  # P[own, other, turn]; a reached goal counts 1
    padded[:, :, :n][live] = 0.0
    sweeps = 0
    while True:
        sweeps += 1
        start_values = padded[:, :, 0]  # [own, other]
        roll = probs[0] * (1 - start_values.T[:, :, None])
        for face in range(2, sides + 1):
            roll = roll + probs[face - 1] * padded[:, :, face : face + n]
        hold = 1 - np.transpose(start_values[:, banked], (1, 0, 2))
        best = np.where(turn > 0, np.maximum(roll, hold), roll)
        best = np.where(live, best, 1.0)
        change = float(np.max(np.abs(best - padded[:, :, :n])))
        padded[:, :, :n] = best
        if change <= tol:
            return float(padded[0, 0, 0]), sweeps
