"""SB3 models as policies (`dice_envs.policies.as_policy` asks this module through the
`dice_envs.policy_forms` entry points): a model, or the path of one saved as a .zip."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces

from dice_envs.policies import BatchedPolicy, PolicyInput

# Observations per call of the network: bounds its memory on a large batch.
PREDICT_BATCH = 65_536
GREEDY_DISTRIBUTIONS = ("CategoricalDistribution", "MaskableCategoricalDistribution")
HUGE_NEGATIVE_LOGIT = -1e8  # what sb3_contrib's MaskableCategorical gives a masked action


def sb3_policy(
    spec: Any, model: Any, obs_transform: Any, deterministic: bool
) -> BatchedPolicy | None:
    """An SB3 model (anything with SB3's `predict`) or a saved one's path as a policy of the
    game `model`, None for any other form. Greedy: its most probable action (asked with the
    legal-action masks where its `predict` takes them, as MaskablePPO's does);
    `deterministic=False`: its action distribution's probabilities. Without `obs_transform`
    the model's observation space must be the game's."""
    if isinstance(spec, os.PathLike) and Path(spec).suffix == ".zip":
        if not Path(spec).is_file():
            raise ValueError(f"policy file {spec} does not exist")
        spec = load_sb3_model(Path(spec))
    if not callable(getattr(spec, "predict", None)):
        return None
    if obs_transform is None:
        check_space(spec, model)
    nvec = model.observation_nvec
    rows = PolicyInput(len(nvec) == 1, obs_transform)
    ask, masked = (_greedy if deterministic else _distribution)(spec)
    name = type(spec).__name__

    def chunked(observations: np.ndarray, legal: np.ndarray | None) -> np.ndarray:
        parts = []
        for lo in range(0, len(observations), PREDICT_BATCH):
            # Copies: torch warns on the read-only views a sweep hands out.
            part = ask(np.array(rows(observations[lo : lo + PREDICT_BATCH])), _part(legal, lo))
            parts.append(np.asarray(part))
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    return BatchedPolicy(chunked, int(model.num_actions), name, needs_legal=masked)


def _part(legal: np.ndarray | None, lo: int) -> np.ndarray | None:
    return None if legal is None else np.array(legal[lo : lo + PREDICT_BATCH])


def load_sb3_model(path: Path) -> Any:
    """A saved MaskablePPO or PPO model (whichever class saved it)."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import PPO

    errors = []
    for algorithm in (MaskablePPO, PPO):
        try:
            return algorithm.load(path, device="cpu")
        except (ValueError, KeyError, RuntimeError, TypeError) as error:
            errors.append(f"{algorithm.__name__}: {error}")
    raise ValueError(f"{path} is not a saved PPO or MaskablePPO model ({'; '.join(errors)})")


def check_space(sb3_model: Any, model: Any) -> None:
    """A ValueError unless the SB3 model was trained on the observations of the game `model`
    (or has no `observation_space`)."""
    nvec = tuple(int(n) for n in model.observation_nvec)
    space = getattr(sb3_model, "observation_space", None)
    if space is None:
        return
    game_space = spaces.Discrete(nvec[0]) if len(nvec) == 1 else spaces.MultiDiscrete(nvec)
    if isinstance(game_space, spaces.Discrete):
        same = isinstance(space, spaces.Discrete) and (space.n, space.start) == (nvec[0], 0)
    else:
        same = (
            isinstance(space, spaces.MultiDiscrete)
            and space.nvec.shape == game_space.nvec.shape
            and bool(np.all(space.nvec == game_space.nvec) and np.all(space.start == 0))
        )
    if not same:
        raise ValueError(
            f"the model was trained on observations {space} but {model!r} has {game_space}; "
            "pass obs_transform= if it was trained through a wrapper"
        )


def _greedy(sb3_model: Any) -> tuple[Callable, bool]:
    """ask(rows, legal) -> the model's greedy actions, and whether it takes masks."""
    masked = "action_masks" in inspect.signature(sb3_model.predict).parameters
    fast = _categorical_greedy(getattr(sb3_model, "policy", None), masked)
    if fast is not None:
        return fast, masked

    def ask(rows: np.ndarray, legal: np.ndarray | None) -> np.ndarray:
        extra = {"action_masks": legal} if masked else {}
        return np.asarray(sb3_model.predict(rows, deterministic=True, **extra)[0]).reshape(-1)

    return ask, masked


def _distribution(sb3_model: Any) -> tuple[Callable, bool]:
    """ask(rows, legal) -> the probabilities of the model's action distribution."""
    policy = getattr(sb3_model, "policy", None)
    if policy is None or not hasattr(policy, "get_distribution"):
        raise ValueError(
            "deterministic=False needs an SB3 model whose policy has get_distribution "
            f"(PPO, MaskablePPO, A2C); got {type(sb3_model).__name__}"
        )
    masked = "action_masks" in inspect.signature(policy.get_distribution).parameters

    def ask(rows: np.ndarray, legal: np.ndarray | None) -> np.ndarray:
        import torch

        with torch.no_grad():
            tensor, _ = policy.obs_to_tensor(rows)
            extra = {"action_masks": legal} if masked else {}
            distribution = policy.get_distribution(tensor, **extra).distribution
            return distribution.probs.cpu().numpy().astype(np.float64)

    return ask, masked


def _categorical_greedy(policy: Any, masked: bool) -> Callable | None:
    """`predict(obs, deterministic=True)` of an SB3 actor-critic policy with a categorical
    action head, as the same torch operations without predict's per-call checks and the
    distribution objects it builds (a third of its time on Yahtzee's batches): features,
    the actor's latent, the logits, masked logits as MaskableCategorical masks them, the
    most probable action. None for any other policy (then `predict` itself is asked)."""
    needed = ("obs_to_tensor", "pi_features_extractor", "mlp_extractor", "action_net")
    if policy is None or not all(hasattr(policy, name) for name in needed):
        return None
    if type(getattr(policy, "action_dist", None)).__name__ not in GREEDY_DISTRIBUTIONS:
        return None
    import torch
    from stable_baselines3.common.preprocessing import preprocess_obs

    policy.set_training_mode(False)
    space, images = policy.observation_space, policy.normalize_images

    def ask(rows: np.ndarray, legal: np.ndarray | None) -> np.ndarray:
        with torch.no_grad():
            tensor, _ = policy.obs_to_tensor(rows)
            features = policy.pi_features_extractor(preprocess_obs(tensor, space, images))
            logits = policy.action_net(policy.mlp_extractor.forward_actor(features))
            if masked and legal is not None:
                allowed = torch.as_tensor(np.asarray(legal), device=logits.device)
                floor = torch.tensor(HUGE_NEGATIVE_LOGIT, dtype=logits.dtype, device=logits.device)
                logits = torch.where(allowed, logits, floor)
            probs = torch.distributions.Categorical(logits=logits, validate_args=False).probs
            return probs.argmax(dim=1).cpu().numpy()

    return ask
