"""One policy convention: every form of the same policy (a name, a table of actions or of
probabilities, a callable returning an action or probabilities, a batched callable, a mapping,
an SB3 model) gets the same exact value and the same exploitability."""

from __future__ import annotations

import numpy as np
import pytest

import baselines
from baselines.two_player import two_player_optimum
from dice_envs import make_model
from dice_envs.games.pig import HOLD, ROLL
from dice_envs.policies import batched

PIG, SIMHOG = "dice_envs/Pig-v0", "dice_envs/SimultaneousHog-v0"
PIG_ARGS, SIMHOG_ARGS = {"goal": 30}, {"goal": 12}
PIG_GRID, SIMHOG_GRID = (31, 31, 30), (13, 13)


def hold_at_20_forms() -> dict[str, object]:
    """Pig's hold-at-20 (roll while the turn total is below 20) in every form."""
    turn = np.indices(PIG_GRID)[2]
    actions = np.where(turn < 20, ROLL, HOLD)
    one_hot = np.eye(2)[actions]
    return {
        "name": "hold-at-20",
        "table of actions": actions,
        "table of probabilities": one_hot,
        "callable": lambda obs: ROLL if obs[2] < 20 else HOLD,
        "callable of probabilities": lambda obs: one_hot[tuple(obs)],
        "batched": batched(lambda obs: np.where(obs[:, 2] < 20, ROLL, HOLD)),
        "batched probabilities": batched(lambda obs: one_hot[tuple(obs.T)]),
        "mapping": {obs: int(actions[obs]) for obs in np.ndindex(PIG_GRID)},
    }


def uniform_forms() -> dict[str, object]:
    """Simultaneous Hog's uniformly random number of dice (1..10) in every form."""
    uniform = np.full(SIMHOG_GRID + (10,), 0.1)
    return {
        "name": "random",
        "table of probabilities": uniform,
        "callable of probabilities": lambda obs: np.full(10, 0.1),
        "batched probabilities": batched(lambda obs: np.full((len(obs), 10), 0.1)),
    }


def three_dice_forms() -> dict[str, object]:
    """Simultaneous Hog's three dice everywhere (action 2) in every form."""
    return {
        "name": "dice-3",
        "table of actions": np.full(SIMHOG_GRID, 2),
        "callable": lambda obs: 2,
        "batched": batched(lambda obs: np.full(len(obs), 2)),
        "mapping": {obs: 2 for obs in np.ndindex(SIMHOG_GRID)},
    }


CASES = [
    (PIG, PIG_ARGS, hold_at_20_forms),
    (SIMHOG, SIMHOG_ARGS, uniform_forms),
    (SIMHOG, SIMHOG_ARGS, three_dice_forms),
]


@pytest.mark.parametrize("env_id, kwargs, forms", CASES)
def test_every_form_evaluates_the_same(env_id, kwargs, forms):
    values = {
        form: baselines.evaluate(policy, env_id, **kwargs).value for form, policy in forms().items()
    }
    reference = values["name"]
    assert 0.0 < reference < 1.0
    for form, value in values.items():
        assert value == pytest.approx(reference, abs=1e-12), form


@pytest.mark.parametrize("env_id, kwargs, forms", CASES)
def test_every_form_is_equally_exploitable(env_id, kwargs, forms):
    values = {
        form: baselines.exploitability(policy, env_id, **kwargs).value
        for form, policy in forms().items()
    }
    reference = values["name"]
    assert reference > 0.01  # none of these is an equilibrium
    for form, value in values.items():
        assert value == pytest.approx(reference, abs=1e-12), form


@pytest.mark.parametrize("env_id, kwargs, forms", CASES)
def test_every_form_is_the_same_opponent(env_id, kwargs, forms):
    arguments = {key: value for key, value in kwargs.items()}
    values = {
        form: baselines.solve(env_id, opponent=policy, **arguments).value
        for form, policy in forms().items()
    }
    for form, value in values.items():
        assert value == pytest.approx(values["name"], abs=1e-12), form


def test_an_sb3_model_is_the_table_of_its_actions():
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from dice_envs.envs.sb3 import DiceSB3VecEnv

    model = MaskablePPO("MlpPolicy", DiceSB3VecEnv(PIG, num_envs=2, **PIG_ARGS), seed=3)
    grid = np.indices(PIG_GRID).reshape(3, -1).T
    actions, _ = model.predict(grid, deterministic=True)
    table = actions.reshape(PIG_GRID)
    by_model = baselines.evaluate(model, PIG, **PIG_ARGS)
    by_table = baselines.evaluate(table, PIG, **PIG_ARGS)
    assert by_model.value == pytest.approx(by_table.value, abs=1e-12)
    exploit_model = baselines.exploitability(model, PIG, **PIG_ARGS).value
    exploit_table = baselines.exploitability(table, PIG, **PIG_ARGS).value
    assert exploit_model == pytest.approx(exploit_table, abs=1e-12)


def test_a_name_that_does_not_fit_the_game_lists_the_names_that_do():
    with pytest.raises(
        ValueError, match="must be one of five-dice, dice-K, random, equilibrium, optimal"
    ):
        baselines.evaluate("hold-at-20", SIMHOG, **SIMHOG_ARGS)
    with pytest.raises(ValueError, match="env_id must be a registered id.*did you mean pig"):
        baselines.evaluate("hold-at-20", "dice_envs/Pgi-v0")
    # Simultaneous Hog's default opponent is a named policy of the game like any other.
    assert baselines.evaluate("five-dice", SIMHOG, **SIMHOG_ARGS).value == pytest.approx(0.5)


def test_the_old_opponent_callable_form_is_refused_with_the_form_wanted():
    # f(own, other, turn_total), one argument per component, was deprecated in 0.5.0.
    with pytest.raises(ValueError, match=r"takes the observation, f\(observation\)"):
        baselines.solve(PIG, opponent=lambda own, other, turn: int(turn < 20), **PIG_ARGS)


def test_a_slow_form_says_what_the_fast_one_is():
    with pytest.warns(UserWarning, match="batched"):
        baselines.evaluate(lambda obs: 1, PIG, goal=100)


def test_a_batched_policy_is_asked_once_per_evaluation():
    calls = []

    def hold_at_20(obs):
        calls.append(len(obs))
        return np.where(obs[:, 2] < 20, ROLL, HOLD)

    value = baselines.evaluate(batched(hold_at_20), PIG, **PIG_ARGS).value
    assert value == pytest.approx(baselines.evaluate("hold-at-20", PIG, **PIG_ARGS).value)
    assert len(calls) == 1


def test_a_two_player_solution_and_an_equilibrium_are_policies_as_they_stand():
    """A two-player solution plays its actions from the agent's seat; an equilibrium plays its
    mixtures as mixtures (its most probable action alone is exploitable), in evaluate,
    exploitability and as an opponent."""
    pig = {"goal": 30}
    solution = two_player_optimum(make_model("dice_envs/Pig-v0", **pig).model)
    as_actions = baselines.evaluate(solution.policy, "dice_envs/Pig-v0", **pig).value
    assert baselines.evaluate(solution, "dice_envs/Pig-v0", **pig).value == pytest.approx(
        as_actions, abs=1e-12
    )
    hog = {"goal": 20, "max_dice": 5}
    mixed = baselines.equilibrium("dice_envs/SimultaneousHog-v0", **hog)
    table = mixed.probabilities()
    for measure in (baselines.evaluate, baselines.exploitability):
        given = measure(mixed, "dice_envs/SimultaneousHog-v0", **hog).value
        assert given == pytest.approx(measure(table, "dice_envs/SimultaneousHog-v0", **hog).value)
    assert baselines.exploitability(mixed, "dice_envs/SimultaneousHog-v0", **hog).value < 1e-12
    most_probable = baselines.exploitability(mixed.action, "dice_envs/SimultaneousHog-v0", **hog)
    assert most_probable.value > 1e-3
    as_opponent = baselines.solve("dice_envs/SimultaneousHog-v0", opponent=mixed, **hog)
    assert as_opponent.value == pytest.approx(0.5, abs=1e-12)
    against_most_probable = baselines.solve(
        "dice_envs/SimultaneousHog-v0", opponent=mixed.action, **hog
    )
    assert against_most_probable.value > 0.5 + 1e-3


@pytest.mark.parametrize("env_id, kwargs, forms", CASES)
def test_every_form_has_the_same_sampled_gap(env_id, kwargs, forms):
    """The sampled gap's episodes depend on the policy's actions only: every form of one
    policy plays the same episodes (one-hot probabilities draw the same action)."""
    estimates = {
        form: baselines.estimate_gap(policy, env_id, episodes=200, seed=4, **kwargs).mean
        for form, policy in forms().items()
    }
    for form, mean in estimates.items():
        assert mean == pytest.approx(estimates["name"], abs=1e-12), form


def test_paths_and_run_folders_are_forms_at_every_door(tmp_path):
    import pickle

    import gymnasium as gym
    import yaml

    from dice_envs.policies import as_policy

    actions = hold_at_20_forms()["table of actions"]
    np.save(tmp_path / "table.npy", actions)
    run = tmp_path / "run"
    run.mkdir()
    config = {"env_id": PIG, "env_kwargs": PIG_ARGS, "algo": "qlearning"}
    (run / "config.yaml").write_text(yaml.safe_dump(config))
    np.save(run / "actions.npy", actions.astype(np.int16))
    reference = {
        "evaluate": baselines.evaluate(actions, PIG, **PIG_ARGS).value,
        "exploitability": baselines.exploitability(actions, PIG, **PIG_ARGS).value,
        "opponent": baselines.solve(PIG, opponent=actions, **PIG_ARGS).value,
        "sampled": baselines.estimate_gap(actions, PIG, episodes=100, seed=1, **PIG_ARGS).mean,
    }
    for path in (tmp_path / "table.npy", run):
        found = {
            "evaluate": baselines.evaluate(path, PIG, **PIG_ARGS).value,
            "exploitability": baselines.exploitability(path, PIG, **PIG_ARGS).value,
            "opponent": baselines.solve(PIG, opponent=path, **PIG_ARGS).value,
            "sampled": baselines.estimate_gap(path, PIG, episodes=100, seed=1, **PIG_ARGS).mean,
        }
        assert found == pytest.approx(reference, abs=1e-12), path
    converted = as_policy(run, make_model(PIG, **PIG_ARGS))
    env = gym.make(PIG, opponent=converted, **PIG_ARGS)
    assert (
        pickle.loads(pickle.dumps(env)).reset(seed=2)[0].tolist() == env.reset(seed=2)[0].tolist()
    )
    with pytest.raises(ValueError, match="policy file .*missing.npy does not exist"):
        baselines.evaluate(tmp_path / "missing.npy", PIG, **PIG_ARGS)
    with pytest.raises(ValueError, match="is not a run folder"):
        baselines.evaluate(tmp_path, PIG, **PIG_ARGS)


def test_an_sb3_model_is_asked_as_its_predict_answers():
    """The greedy fast path (the network's operations without `predict`'s checks) answers
    exactly what `predict` answers, with MaskablePPO's masks, on a game with tables."""
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from dice_envs.envs.sb3 import DiceSB3VecEnv
    from dice_envs.policies import as_policy

    model = MaskablePPO("MlpPolicy", DiceSB3VecEnv(PIG, num_envs=2, **PIG_ARGS), seed=5)
    fold = make_model(PIG, **PIG_ARGS)
    grid = np.indices(PIG_GRID).reshape(3, -1).T
    legal = np.random.default_rng(0).random((len(grid), 2)) < 0.7
    legal[:, 0] = True
    asked = as_policy(model, fold)
    assert asked.needs_legal
    want = model.predict(grid, deterministic=True, action_masks=legal)[0]
    np.testing.assert_array_equal(asked.answer(grid, legal), want)
    probs = as_policy(model, fold, deterministic=False).answer(grid, legal)
    assert probs.shape == (len(grid), 2) and np.allclose(probs.sum(axis=1), 1.0)
    assert (probs[~legal] == 0).all()


@pytest.mark.parametrize("algo", ["MaskablePPO", "PPO"])
@pytest.mark.parametrize("activation", ["tanh", "relu", "elu", "leaky_relu"])
def test_an_sb3_networks_greedy_action_is_predicts_at_ties_and_near_ties(algo, activation):
    """The greedy action skips the probabilities only where they cannot change it: logits
    with exact ties, ties one float32 step apart, a masked best and wide gaps all give
    SB3's own answer (argmax of the distribution's probabilities); and the network's layers,
    run in place, give its modules' logits bit for bit, whatever the activation."""
    pytest.importorskip("sb3_contrib")
    import sb3_contrib
    import stable_baselines3
    import torch

    from baselines.policy_forms import CategoricalHead
    from dice_envs.envs.sb3 import DiceSB3VecEnv
    from training.ppo import sb3_kwargs

    cls = getattr(sb3_contrib, algo, None) or getattr(stable_baselines3, algo)
    kwargs = sb3_kwargs({"policy_kwargs": {"net_arch": [8, 8], "activation_fn": activation}})
    env = DiceSB3VecEnv("dice_envs/Yahtzee-v0", num_envs=2)
    model = cls("MlpPolicy", env, seed=2, device="cpu", **kwargs)
    masked = algo == "MaskablePPO"
    head = CategoricalHead.of(model.policy, masked)
    assert head.layers is not None  # the in-place path is the one tested
    rng = np.random.default_rng(2)
    obs = (rng.random((500, 22)) * env.observation_space.nvec).astype(np.int64)
    with torch.no_grad():
        modules = model.policy.action_net(
            model.policy.mlp_extractor.forward_actor(head.encode(obs))
        )
        assert torch.equal(head.logits(obs), modules)
    base = rng.normal(size=(6, 45)).astype(np.float32) * 3
    crafted = np.repeat(base, 8, axis=0)
    for i in range(0, len(crafted), 8):  # per row: the best two tied, or 1-3 ulps apart
        best = crafted[i].argmax()
        for j, other in enumerate((0, 44, best - 1, best + 1)):
            row = crafted[i + j]
            row[other % 45] = row[best]
            row2 = crafted[i + 4 + j]
            row2[other % 45] = np.nextafter(row2[best], np.float32(-np.inf) if j % 2 else np.inf)
    crafted = np.concatenate((crafted, rng.normal(size=(40, 45)).astype(np.float32) * 50))
    legal = rng.random(crafted.shape) < 0.8
    legal[:, 0] = True
    legal[len(base) * 8 :: 2] = True
    head.logits = lambda rows: torch.from_numpy(crafted.copy())
    got = head.greedy(np.zeros((len(crafted), 22), np.int64), legal)
    logits = torch.from_numpy(crafted)
    if masked:
        from sb3_contrib.common.maskable.distributions import MaskableCategorical

        want = MaskableCategorical(logits=logits, masks=legal).probs.argmax(dim=1)
    else:
        want = torch.distributions.Categorical(logits=logits).probs.argmax(dim=1)
    np.testing.assert_array_equal(got, want.numpy())


def test_the_masked_logits_exponentials_are_exactly_zero_where_the_shortcut_takes_them():
    """The stochastic fast path writes a masked action's exponential, torch's
    exp(HUGE_NEGATIVE_LOGIT - best) for a best legal log-probability in (FAST_FLOOR, 0], as 0:
    torch gives exactly 0 for every float32 difference that can be."""
    import torch

    from baselines.policy_forms import FAST_FLOOR, HUGE_NEGATIVE_LOGIT

    lowest = np.float32(HUGE_NEGATIVE_LOGIT) - np.float32(0.0)
    highest = np.float32(HUGE_NEGATIVE_LOGIT) - np.float32(FAST_FLOOR)
    bits = np.arange(highest.view(np.int32), lowest.view(np.int32) + 1, dtype=np.int32)
    differences = bits.view(np.float32)
    assert differences.min() == lowest and differences.max() == highest and len(bits) > 10**5
    assert (torch.exp(torch.from_numpy(differences)) == 0).all()


def test_logsumexp_by_torchs_own_operations_is_torchs():
    """The fast path's logsumexp is torch's bit for bit, also on rows with infinite maxima
    (taken as 0), all -inf, NaN and huge values."""
    import torch

    from baselines.policy_forms import _logsumexp

    rows = np.random.default_rng(5).normal(size=(40, 45)).astype(np.float32)
    rows[:10] *= np.float32(1e3)
    rows[10:12, 4] = np.inf
    rows[12:14] = -np.inf
    rows[14, 6], rows[15, 7] = -np.inf, np.nan
    rows[16:18] = np.float32(3e38)
    values = torch.from_numpy(rows)
    want = values.logsumexp(dim=-1, keepdim=True).numpy()
    got = _logsumexp(values, torch.empty_like(values)).numpy()
    np.testing.assert_array_equal(got, want)
    assert np.isposinf(want[10:12]).all() and np.isneginf(want[12:14]).all()


HAZARDS = ("nothing legal", "overflow", "infinite")


def crafted_logits(rng: np.random.Generator, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """(logits, legal) rows of 45 actions: rows the masked normalisation's shortcut takes
    ("shortcut"), or ordinary rows with a few of one kind it must leave to SB3's operations."""
    rows = rng.normal(size=(64, 45)).astype(np.float32) * 2
    legal = rng.random(rows.shape) < 0.5
    legal[:, 3] = True
    if kind == "shortcut":
        rows[:8] = np.round(rows[:8])  # exact ties
        legal[8:16] = False  # one legal action
        legal[8:16, 40] = True
        rows[16:24] += np.float32(1e6)  # a huge offset
        rows[24:32] *= np.float32(5e3)  # a huge spread, its best action legal
        legal[24:32, rows[24:32].argmax(axis=1)] = True
        rows[32:40, 7] = 100.0  # one action sure, legal
        legal[32:40, 7] = True
    elif kind == "nothing legal":  # a uniform distribution
        legal[5] = False
    elif kind == "overflow":  # an illegal action e^200 likelier than any legal one
        rows[5:9, 9] = rows[5:9].max(axis=1) + 200
        legal[5:9, 9] = False
    else:  # impossible actions, legal or not, and one sure action, rows of NaN
        rows[5:8, 11] = -np.inf
        legal[5, 11], legal[6:8, 11] = True, False
        rows[8, 12] = np.inf
    return rows, legal


@pytest.mark.parametrize("algo", ["MaskablePPO", "PPO"])
@pytest.mark.parametrize("kind", ["shortcut", *HAZARDS])
def test_an_sb3_networks_probabilities_are_its_distributions_on_crafted_logits(algo, kind):
    """The probabilities (deterministic=False) compose torch's logsumexp by its own operations
    and mask without the masked actions' exponentials: on ties, one legal action, huge offsets
    and spreads they equal SB3's distribution bit for bit (masked, with masks of None and
    unmasked) without ever calling torch's logsumexp; a batch with a row where the shortcut
    cannot hold (nothing legal, an overflowing exponential, infinite logits) is SB3's too."""
    pytest.importorskip("sb3_contrib")
    import sb3_contrib
    import stable_baselines3
    import torch
    from sb3_contrib.common.maskable.distributions import MaskableCategorical

    from baselines.policy_forms import CategoricalHead
    from dice_envs.envs.sb3 import DiceSB3VecEnv

    cls = getattr(sb3_contrib, algo, None) or getattr(stable_baselines3, algo)
    env = DiceSB3VecEnv("dice_envs/Yahtzee-v0", num_envs=2)
    model = cls("MlpPolicy", env, seed=4, device="cpu", policy_kwargs={"net_arch": [8]})
    masked = algo == "MaskablePPO"
    head = CategoricalHead.of(model.policy, masked)
    crafted, legal = crafted_logits(np.random.default_rng(4), kind)
    head.logits = lambda rows: torch.from_numpy(crafted.copy())
    logits = torch.from_numpy(crafted)
    if masked:
        wants = {
            "masked": (legal, MaskableCategorical(logits=logits, masks=legal, validate_args=False)),
            "masks None": (None, MaskableCategorical(logits=logits, validate_args=False)),
        }
    else:
        categorical = torch.distributions.Categorical(logits=logits, validate_args=False)
        wants = {"unmasked": (None, categorical)}
    logsumexp, calls = torch.Tensor.logsumexp, []

    def counted(*args, **kwargs):
        calls.append(1)
        return logsumexp(*args, **kwargs)

    for name, (masks, distribution) in wants.items():
        want = distribution.probs.numpy().astype(np.float64)
        calls.clear()
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(torch.Tensor, "logsumexp", counted)
            got = head.probabilities(np.zeros((len(crafted), 22), np.int64), masks)
        np.testing.assert_array_equal(got, want, err_msg=name)
        assert bool(calls) == (kind in HAZARDS and name == "masked"), name
    if kind == "infinite":
        assert np.isnan(want[8]).all() and not np.isnan(np.delete(want, 8, axis=0)).any()
