"""Training with PPO and MaskablePPO: runs stop, resume and evaluate end to end (both
observation encodings, the native and SB3's vector envs), a stopped run resumes bit for bit,
and seeds share no env stream. Q-learning and the command lines: tests/test_training.py."""

import json
import pickle

import numpy as np
import pytest
from training_helpers import tiny_ppo

import baselines
from training.ppo import observation_scale
from training.runs import run_dir
from training.train import run


@pytest.mark.parametrize(
    "game, agent, encoding, vec_env",
    [
        ("sum_avoid", "PPO", "onehot", "native"),
        ("ten_thousand", "MaskablePPO", "onehot", "native"),
        ("sum_avoid", "PPO", "normalized", "native"),
        ("pig", "MaskablePPO", "normalized", "native"),
        ("sum_avoid", "PPO", "onehot", "dummy"),
        ("pig", "MaskablePPO", "normalized", "dummy"),
    ],
)
def test_ppo_runs_stop_resume_and_evaluate(tmp_path, game, agent, encoding, vec_env):
    config = tiny_ppo(game, encoding, vec_env=vec_env)
    stopped = run(config, seed=0, root=tmp_path, stop_after=256)
    assert stopped["stopped_at"] >= 256
    directory = run_dir(tmp_path, config, 0)
    assert (directory / "checkpoint.pkl").exists() and not (directory / "result.json").exists()
    result = run(config, seed=0, root=tmp_path)
    assert result["agent"] == agent and result["steps"] >= 512
    assert (directory / "policy.zip").exists() and (directory / "config.yaml").exists()
    curve = json.loads((directory / "curve.json").read_text())
    assert [p["steps"] for p in curve][:2] == [0, 256]
    assert all(0 <= p["agreement"] <= 1 and p["gap"] >= -1e-9 for p in curve)
    assert result["status"] == "resumed" and result["resumed_at"] == stopped["stopped_at"]
    assert result["run_dir"] == str(directory) == stopped["run_dir"]
    assert result["machine"]["torch_cpu_capability"]  # the CPU the digits depend on
    again = run(config, seed=0, root=tmp_path)  # read back, not trained again
    assert (again.pop("status"), again.pop("resumed_at")) == ("read back", None)
    assert again == {k: v for k, v in result.items() if k not in ("status", "resumed_at")}
    # The saved model, read through the encoding it was trained on (written out here), gives
    # the run's greedy value and, from its action distribution, its stochastic value.
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import PPO

    model = (MaskablePPO if agent == "MaskablePPO" else PPO).load(
        directory / "policy.zip", device="cpu"
    )
    transform = None
    if encoding == "normalized":
        scale = observation_scale(config["env_id"], config["env_kwargs"])

        def transform(obs):
            return np.asarray(obs, np.float32).reshape(-1, len(scale)) / scale

    env_id, kwargs = config["env_id"], config["env_kwargs"]
    greedy = baselines.evaluate(model, env_id, obs_transform=transform, **kwargs)
    played = baselines.evaluate(
        model, env_id, deterministic=False, obs_transform=transform, **kwargs
    )
    assert greedy.value == pytest.approx(result["value"], abs=1e-9)
    assert played.value == pytest.approx(result["stochastic_value"], abs=1e-9)


def _policy_parameters(path):
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(path, device="cpu")
    return {k: v.numpy() for k, v in model.policy.state_dict().items()}


@pytest.mark.parametrize("vec_env", ["native", "dummy"])
def test_ppo_resume_continues_from_the_checkpoint_bit_for_bit(tmp_path, monkeypatch, vec_env):
    """Stop after the first checkpoint; the resumed session starts at its step with its
    parameters, and ends exactly where an uninterrupted run ends (one more interval)."""
    from training.ppo import PPOAgent

    config = tiny_ppo("pig", timesteps=512, vec_env=vec_env)
    whole = run(config, seed=3, root=tmp_path / "whole")
    stopped = run(config, seed=3, root=tmp_path / "split", stop_after=256)
    directory = run_dir(tmp_path / "split", config, 3)
    checkpoint = pickle.loads((directory / "checkpoint.pkl").read_bytes())
    assert checkpoint["step"] == stopped["stopped_at"] == 256
    (tmp_path / "checkpointed.zip").write_bytes(checkpoint["model"])
    saved = _policy_parameters(tmp_path / "checkpointed.zip")
    initial = PPOAgent(config, __import__("training.streams").streams.run_streams(3, 2), True)
    assert any(  # the checkpoint is not the initial network, so ignoring it would show
        not np.array_equal(v, saved[k]) for k, v in initial.parameters().items()
    )
    seen = {}
    restore = PPOAgent.restore

    def spying_restore(agent, state):
        restore(agent, state)
        seen["step"], seen["parameters"] = agent.step, agent.parameters()

    monkeypatch.setattr(PPOAgent, "restore", spying_restore)
    resumed = run(config, seed=3, root=tmp_path / "split")
    assert seen["step"] == 256
    assert all(np.array_equal(v, saved[k]) for k, v in seen["parameters"].items())
    assert {k: resumed[k] for k in ("value", "steps")} == {k: whole[k] for k in ("value", "steps")}
    ends = [
        _policy_parameters(run_dir(tmp_path / x, config, 3) / "policy.zip")
        for x in ("whole", "split")
    ]
    assert all(np.array_equal(v, ends[1][k]) for k, v in ends[0].items())
    for name in ("curve.json", "result.json"):
        whole_text = (run_dir(tmp_path / "whole", config, 3) / name).read_text()
        assert (directory / name).read_text() == whole_text, name


@pytest.mark.parametrize("vec_env", ["native", "dummy"])
def test_ppo_seeds_share_no_env_stream(tmp_path, vec_env):
    """Different seeds: different dice in every env copy, so different first observations
    and actions (SB3's seed + rank gave seeds 0 and 1 seven env streams in common)."""
    from training.ppo import PPOAgent
    from training.streams import run_streams

    config = tiny_ppo("pig", vec_env=vec_env)
    buffers, first_draws = [], set()
    for seed in (0, 1):
        agent = PPOAgent(config, run_streams(seed, 2), masked=True)
        generators = (
            [agent._native().np_random]
            if vec_env == "native"
            else [env.unwrapped.np_random for env in agent.env.envs]
        )
        for rng in generators:
            first_draws.add(rng.bit_generator.random_raw())
        agent.learn(128, 10_000, lambda: None)
        buffer = agent.model.rollout_buffer  # flattened by training, env copy by env copy
        buffers.append([buffer.observations.reshape(2, 64, -1), buffer.actions.reshape(2, 64)])
    (obs_a, act_a), (obs_b, act_b) = buffers
    for i in range(2):
        for j in range(2):
            assert not np.array_equal(obs_a[i], obs_b[j])
            assert not np.array_equal(act_a[i], act_b[j])
    assert len(first_draws) == (2 if vec_env == "native" else 4)


def test_ppo_trains_bit_for_bit_the_same_without_distribution_checks(monkeypatch):
    """`unchecked_distributions` skips torch's argument checks while SB3 trains (a tenth of
    MaskablePPO's time on Yahtzee): the parameters after training equal those of a run that
    keeps the checks, the checks really were off inside, and the setting is back after."""
    import contextlib

    import torch

    import training.ppo as ppo
    from training.streams import run_streams

    config = tiny_ppo("pig", timesteps=512)
    seen = []
    distribution_init = torch.distributions.Distribution.__init__

    def spying_init(self, *args, **kwargs):
        seen.append(torch.distributions.Distribution._validate_args)
        distribution_init(self, *args, **kwargs)

    monkeypatch.setattr(torch.distributions.Distribution, "__init__", spying_init)

    def trained() -> dict:
        agent = ppo.PPOAgent(config, run_streams(5, 2), masked=True)
        agent.learn(512, 1 << 30, lambda: None)
        return agent.parameters()

    before = torch.distributions.Distribution._validate_args
    unchecked = trained()
    assert seen and not any(seen)
    assert torch.distributions.Distribution._validate_args == before
    seen.clear()
    monkeypatch.setattr(ppo, "unchecked_distributions", contextlib.nullcontext)
    checked = trained()
    assert seen and all(seen) == before
    assert all(np.array_equal(v, checked[k]) for k, v in unchecked.items())
