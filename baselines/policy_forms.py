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
    head = CategoricalHead.of(getattr(sb3_model, "policy", None), masked)
    if head is not None:
        return head.greedy, masked

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
    head = CategoricalHead.of(policy, masked)
    if head is not None:
        return head.probabilities, masked

    def ask(rows: np.ndarray, legal: np.ndarray | None) -> np.ndarray:
        import torch

        with torch.no_grad():
            tensor, _ = policy.obs_to_tensor(rows)
            extra = {"action_masks": legal} if masked else {}
            distribution = policy.get_distribution(tensor, **extra).distribution
            return distribution.probs.cpu().numpy().astype(np.float64)

    return ask, masked


# Rows whose best two masked logits are closer than this (relative to the best, at least 1)
# take the whole probability computation for their greedy action: there float32 round-off in
# the normalisations and the softmax could tie the two (about 800 float32 ulps: it cannot).
NEAR_TIE = 1e-4
# In-place forms of the activations SB3's MlpPolicy builds (`policy_kwargs.activation_fn`).
IN_PLACE = {
    "Tanh": lambda x, module: x.tanh_(),
    "ReLU": lambda x, module: x.relu_(),
    "ELU": lambda x, module: _functional().elu_(x, module.alpha),
    "LeakyReLU": lambda x, module: _functional().leaky_relu_(x, module.negative_slope),
}


def _functional():
    import torch

    return torch.nn.functional


class CategoricalHead:
    """An SB3 actor-critic policy with a categorical action head, asked by the same torch
    operations as its `predict` and `get_distribution`, bit for bit (tests), without their
    per-call checks, their distribution objects and SB3's `preprocess_obs` (a one-hot tensor
    per component, concatenated; `network_input` writes them with one `scatter_`): the
    features, the actor's layers (in place where they are SB3's Linear and activation
    modules), the action logits; then the probabilities as torch's Categorical normalises
    them and, for a maskable policy, as sb3_contrib's MaskableCategorical masks and normalises
    them again. The greedy action skips the probabilities where they cannot change it: it is
    the best legal logit wherever the best two are not within `NEAR_TIE`."""

    def __init__(self, policy: Any, masked: bool) -> None:
        import torch

        self.policy, self.masked = policy, masked
        policy.set_training_mode(False)
        self.encode = network_input(policy)
        self.floor = torch.tensor(HUGE_NEGATIVE_LOGIT)
        extractor = type(policy.pi_features_extractor).__name__
        layers = list(getattr(policy.mlp_extractor, "policy_net", []))
        plain = all(type(m).__name__ == "Linear" or type(m).__name__ in IN_PLACE for m in layers)
        self.layers = layers if extractor == "FlattenExtractor" and plain else None

    @classmethod
    def of(cls, policy: Any, masked: bool) -> CategoricalHead | None:
        """The head of `policy`, or None where it is not such a policy (SB3 is asked then)."""
        needed = ("pi_features_extractor", "mlp_extractor", "action_net", "observation_space")
        if policy is None or not all(hasattr(policy, name) for name in needed):
            return None
        if type(getattr(policy, "action_dist", None)).__name__ not in GREEDY_DISTRIBUTIONS:
            return None
        return cls(policy, masked)

    def logits(self, rows: np.ndarray) -> Any:
        """The action logits of `rows` (call under torch.no_grad)."""
        import torch.nn.functional as F

        policy, x = self.policy, self.encode(rows)
        if self.layers is None:
            latent = policy.mlp_extractor.forward_actor(policy.pi_features_extractor(x))
            return policy.action_net(latent)
        for module in self.layers:  # FlattenExtractor leaves a batch of vectors as it is
            if type(module).__name__ == "Linear":
                x = F.linear(x, module.weight, module.bias)
            else:
                x = IN_PLACE[type(module).__name__](x, module)
        return policy.action_net(x)

    def _masked(self, logits: Any, legal: np.ndarray | None) -> Any:
        import torch

        allowed = torch.as_tensor(np.asarray(legal, bool)).reshape(logits.shape)
        return torch.where(allowed, logits, self.floor)

    def _probabilities(self, logits: Any, legal: np.ndarray | None) -> Any:
        """Categorical's probabilities of `logits` (masked as MaskableCategorical masks),
        overwriting `logits`: torch's logsumexp by its own operations (`_logsumexp`), and the
        masked normalisation without the exponentials of the masked logits where they are 0."""
        import torch

        scratch = torch.empty_like(logits)
        logits.sub_(_logsumexp(logits, scratch))
        if not self.masked:
            return torch.softmax(logits, dim=-1)
        if legal is None:
            return torch.softmax(logits.sub_(_logsumexp(logits, scratch)), dim=-1)
        normalised = _masked_log_normalised(logits, legal, scratch)
        if normalised is None:  # a row where the shortcut does not hold: SB3's own operations
            masked = self._masked(logits, legal)
            normalised = masked - masked.logsumexp(dim=-1, keepdim=True)
        return torch.softmax(normalised, dim=-1)

    def probabilities(self, rows: np.ndarray, legal: np.ndarray | None) -> np.ndarray:
        """(n, actions) float64: the policy's action probabilities, as SB3's distribution."""
        import torch

        with torch.no_grad():
            return self._probabilities(self.logits(rows), legal).numpy().astype(np.float64)

    def greedy(self, rows: np.ndarray, legal: np.ndarray | None) -> np.ndarray:
        """(n,) the most probable actions, as SB3's `predict(deterministic=True)`."""
        import torch

        with torch.no_grad():
            logits = self.logits(rows)
            if logits.shape[-1] < 2:
                return np.zeros(len(logits), dtype=np.int64)
            masked = self._masked(logits, legal) if self.masked and legal is not None else logits
            top = masked.topk(2, dim=-1)
            best, second = top.values[:, 0], top.values[:, 1]
            actions = top.indices[:, 0]
            near = (best - second) <= NEAR_TIE * best.abs().clamp(min=1.0)
            if near.any():
                rows_near = near.nonzero().reshape(-1)
                part = None if legal is None else np.asarray(legal)[rows_near.numpy()]
                probs = self._probabilities(logits[rows_near], part)
                actions[rows_near] = probs.argmax(dim=-1)
            return actions.numpy()


# Rows whose best legal log-probability lies in (FAST_FLOOR, 0] take the masked
# normalisation's shortcut: there every masked logit's exponential, exp(HUGE_NEGATIVE_LOGIT -
# best) with the difference in [-1e8, -9.9e7], is exactly 0 in torch (a test tries them all).
FAST_FLOOR = -1e6


def _logsumexp(values: Any, scratch: Any) -> Any:
    """(n, 1) `values.logsumexp(dim=-1, keepdim=True)` for (n, k) float32 `values`, bit for bit
    (tests), by torch's own CPU operations: the row maxima (an infinite one taken as 0),
    exp_ of the differences (into `scratch`), their sum over the same contiguous rows, its log
    plus the maxima. The per-row steps that are exact IEEE operations run in numpy: on an
    (n, 1) tensor every torch operation is one more parallel region."""
    import torch

    top = values.amax(dim=-1, keepdim=True)
    top_rows = top.numpy()
    top_rows[np.isinf(top_rows)] = 0.0
    total = torch.sub(values, top, out=scratch).exp_().sum(dim=-1, keepdim=True).log_()
    total_rows = total.numpy()
    total_rows += top_rows
    return total


def _masked_log_normalised(log_probs: Any, legal: np.ndarray, scratch: Any) -> Any | None:
    """MaskableCategorical's normalised masked logits of the (n, k) float32 `log_probs`
    (Categorical's normalised logits), bit for bit (tests), or None when a row cannot take the
    shortcut (the caller then takes SB3's operations). The masked logits `floor + log_probs *
    legal` are `torch.where(legal, log_probs, HUGE_NEGATIVE_LOGIT)`, several times faster (an
    infinite log-probability makes its row NaN, which fails the shortcut; a -0 becomes +0,
    which changes no probability); their logsumexp is torch's with the masked entries'
    exponentials, exactly 0, written as exp(log_probs - max) * 0 instead of torch's
    exp(-1e8 - max), an underflow that takes its slow path (20 times an ordinary exp)."""
    import torch

    keep = np.asarray(legal, bool).reshape(log_probs.shape).astype(np.float32)
    floor = (keep - np.float32(1.0)) * np.float32(-HUGE_NEGATIVE_LOGIT)
    keep_tensor = torch.from_numpy(keep)
    masked = torch.addcmul(torch.from_numpy(floor), log_probs, keep_tensor)
    top = masked.amax(dim=-1, keepdim=True)
    top_rows = top.numpy()
    if not ((top_rows > FAST_FLOOR) & (top_rows <= 0.0)).all():  # NaN fails too
        return None
    exps = torch.sub(log_probs, top, out=scratch).exp_().mul_(keep_tensor)
    total = exps.sum(dim=-1, keepdim=True)
    total_rows = total.numpy()
    if np.isnan(total_rows).any():  # an unmasked exponential overflowed: inf * 0
        return None
    total.log_()
    total_rows += top_rows
    return masked.sub_(total)


def network_input(policy: Any) -> Callable:
    """encode(rows) -> what SB3's `preprocess_obs(policy.obs_to_tensor(rows)[0], ...)` gives
    the policy's features extractor (equal to it: a test): for a MultiDiscrete space the
    one-hot of every component written by one `scatter_` into one float32 tensor, for a
    Discrete space its one-hot, for a Box that is not an image the rows as float32; any other
    space through SB3's own functions."""
    import torch
    from stable_baselines3.common.preprocessing import is_image_space, preprocess_obs

    space = policy.observation_space
    if isinstance(space, spaces.MultiDiscrete) and space.nvec.ndim == 1:
        nvec = space.nvec.astype(np.int64)
        offsets = torch.as_tensor(np.concatenate(([0], np.cumsum(nvec)[:-1])))
        width = int(nvec.sum())

        def one_hot(rows: np.ndarray) -> Any:
            index = torch.as_tensor(np.asarray(rows, np.int64).reshape(-1, len(nvec))) + offsets
            return torch.zeros((len(index), width)).scatter_(1, index, 1.0)

        return one_hot
    if isinstance(space, spaces.Discrete):
        size, start = int(space.n), int(space.start)

        def discrete(rows: np.ndarray) -> Any:
            index = torch.as_tensor(np.asarray(rows, np.int64).reshape(-1) - start)
            return torch.nn.functional.one_hot(index, size).float()

        return discrete
    if isinstance(space, spaces.Box) and not is_image_space(space):

        def box(rows: np.ndarray) -> Any:
            return torch.as_tensor(np.asarray(rows, np.float32).reshape((-1, *space.shape)))

        return box

    def generic(rows: np.ndarray) -> Any:
        tensor, _ = policy.obs_to_tensor(rows)
        return preprocess_obs(tensor, space, policy.normalize_images)

    return generic
