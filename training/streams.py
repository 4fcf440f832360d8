"""Independent random streams for one run, all spawned from one `numpy.random.SeedSequence`.

A run's seed is the entropy of its SeedSequence; the children below are spawned from it, so no
two streams of one run, and no streams of two runs with different seeds, overlap (NumPy's
guarantee for spawned sequences). Every consumer of randomness gets its own child:

    exploration   Q-learning's epsilon-greedy draws; self-play PPO's draws from its pool
    torch         network initialisation and PPO's action sampling
    numpy_global  NumPy's global generator (SB3 shuffles minibatches with it)
    evaluation    the Monte Carlo episodes beside each exact evaluation
    envs[i]       the dice of env copy i
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FIXED_STREAMS = ("exploration", "torch", "numpy_global", "evaluation")


@dataclass(frozen=True)
class RunStreams:
    seed: int
    exploration: np.random.SeedSequence
    torch: np.random.SeedSequence
    numpy_global: np.random.SeedSequence
    evaluation: np.random.SeedSequence
    envs: tuple[np.random.SeedSequence, ...]

    def all(self) -> dict[str, np.random.SeedSequence]:
        streams = {name: getattr(self, name) for name in FIXED_STREAMS}
        streams.update({f"env_{i}": child for i, child in enumerate(self.envs)})
        return streams


def run_streams(seed: int, n_envs: int = 1) -> RunStreams:
    """The streams of the run with `seed` and `n_envs` env copies."""
    root = np.random.SeedSequence(seed)
    children = root.spawn(len(FIXED_STREAMS) + n_envs)
    fixed = dict(zip(FIXED_STREAMS, children, strict=False))
    return RunStreams(seed=seed, envs=tuple(children[len(FIXED_STREAMS) :]), **fixed)


def generator(stream: np.random.SeedSequence) -> np.random.Generator:
    """A fresh generator on `stream` (the same stream gives the same draws every time)."""
    return np.random.Generator(np.random.PCG64(stream))


def seed_env(env, stream: np.random.SeedSequence) -> None:
    """Give a Gymnasium env (wrapped or not) the dice of `stream`."""
    env.unwrapped.np_random = generator(stream)


def torch_seed(stream: np.random.SeedSequence) -> int:
    return int(stream.generate_state(1, np.uint64)[0])


def numpy_global_seed(stream: np.random.SeedSequence) -> np.ndarray:
    return stream.generate_state(4)
