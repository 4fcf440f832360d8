"""Exact evaluation of batched policies on Yahtzee: against a plain recursion over the game with
the policy (written here, independently), on reduced games; the optimal policy scores the
optimum; the losses sum to the gap; bad input is refused."""

from collections import Counter
from itertools import product

import numpy as np
import pytest

import baselines
from baselines.yahtzee_evaluation import CHOICES, evaluate_yahtzee, optimal_solution, policy_asker
from dice_envs.envs.yahtzee import observation_of
from dice_envs.games.yahtzee import TurnState, Yahtzee, dice_index
from dice_envs.policies import batched

ENV_ID = "dice_envs/Yahtzee-v0"


def rolls(n: int) -> list[tuple[tuple[int, ...], float]]:
    counts = Counter(tuple(sorted(seq)) for seq in product(range(1, 7), repeat=n))
    return [(faces, count / 6**n) for faces, count in counts.items()]


ROLLS = {n: rolls(n) for n in range(6)}


class PlainEvaluation:
    """The policy's expected final score by memoised recursion over (state, dice, rolls left),
    asking the policy one observation at a time and playing its action as the env does."""

    def __init__(self, model: Yahtzee, policy, end=None) -> None:
        """`end`: a function of the end state; then the recursion gives its expectation (the
        rewards left out) instead of the final score."""
        self.model, self.policy, self.end = model, policy, end
        self.values: dict = {}
        self.dice_values: dict = {}

    def value(self, state: TurnState) -> float:
        if self.model.is_over(state):
            return 0.0 if self.end is None else float(self.end(state))
        if state not in self.values:
            self.values[state] = sum(p * self.dice_value(state, d, 2) for d, p in ROLLS[5])
        return self.values[state]

    def action_value(self, state, faces, rolls_left, action) -> float:
        dice = dice_index(faces)
        legal = sum(1 << b for b in self.model.legal_boxes(state, dice))
        played = Yahtzee.played_action(dice, rolls_left, legal, action)
        if played < 32:
            kept = tuple(f for i, f in enumerate(faces) if not played >> i & 1)
            return sum(
                p * self.dice_value(state, tuple(sorted(kept + new)), rolls_left - 1)
                for new, p in ROLLS[5 - len(kept)]
            )
        reward, after = self.model.score(state, dice, played - 32)
        return (reward if self.end is None else 0.0) + self.value(after)

    def dice_value(self, state, faces, rolls_left) -> float:
        key = (state, faces, rolls_left)
        if key not in self.dice_values:
            obs = observation_of((*state, dice_index(faces), rolls_left))
            answer = np.asarray(self.policy.batch(obs[None, :]))[0]
            probs = np.eye(45)[answer] if answer.ndim == 0 else answer
            self.dice_values[key] = sum(
                p * self.action_value(state, faces, rolls_left, a)
                for a, p in enumerate(probs)
                if p > 0
            )
        return self.dice_values[key]


def _hashed(obs: np.ndarray) -> np.ndarray:
    """A pseudo-random but fixed number per observation."""
    weights = np.arange(1, obs.shape[1] + 1) * 2654435761
    return (obs @ weights) % 1_000_003


def any_action(obs):
    """Any in-space action, masked or not (forbidden ones play as the env plays them)."""
    return _hashed(obs) % 45


def keep_high_then_chance(obs):
    """Reroll the dice below 4 while rolls are left, else score in the last open box."""
    faces = np.repeat(np.tile(np.arange(1, 7), (len(obs), 1)).ravel(), obs[:, :6].ravel())
    faces = faces.reshape(len(obs), 5)  # ascending, as the env numbers the dice
    low = ((faces < 4) << np.arange(5)).sum(axis=1)
    last_open = 12 - np.argmin(obs[:, 19:6:-1], axis=1)
    return np.where((obs[:, 6] > 0) & (low > 0), low, 32 + last_open)


def mixed(obs):
    """A stochastic policy over all 45 actions (forbidden ones included)."""
    rng = (_hashed(obs)[:, None] * np.arange(1, 46)) % 97 + 1.0
    rng[:, 32:] *= 3.0
    return rng / rng.sum(axis=1, keepdims=True)


POLICIES = {
    "any_action": batched(any_action),
    "keep_high": batched(keep_high_then_chance),
    "mixed": batched(mixed),
}
GAMES = [
    (["chance"], "forced"),
    (["fours", "yahtzee"], "forced"),  # jokers into the upper box, the Yahtzee bonus
    (["sixes", "full_house", "yahtzee"], "verhoeff"),  # jokers in full, the upper bonus
    (["twos", "small_straight", "yahtzee"], "free"),
]


CASES = [
    *[(["chance"], "forced", name) for name in POLICIES],
    (["fours", "yahtzee"], "forced", "any_action"),
    (["fours", "yahtzee"], "forced", "keep_high"),
    pytest.param(["fours", "yahtzee"], "forced", "mixed", marks=pytest.mark.verify),  # 3 min
    (["sixes", "full_house", "yahtzee"], "verhoeff", "any_action"),
    pytest.param(["sixes", "full_house", "yahtzee"], "verhoeff", "mixed", marks=pytest.mark.verify),
    pytest.param(
        ["twos", "small_straight", "yahtzee"], "free", "keep_high", marks=pytest.mark.verify
    ),
]


@pytest.mark.parametrize("boxes, joker, name", CASES, ids=str)
def test_evaluation_equals_plain_recursion_on_reduced_games(boxes, joker, name):
    solution = optimal_solution(joker, boxes)
    evaluation = evaluate_yahtzee(POLICIES[name], solution=solution, chunk=7)
    plain = PlainEvaluation(solution.model, POLICIES[name]).value(solution.model.start)
    assert evaluation.value == pytest.approx(plain, abs=1e-9)
    assert evaluation.gap == pytest.approx(solution.value - plain, abs=1e-9)
    # The losses, by turn and by choice, sum to the gap (the performance difference lemma).
    assert evaluation.losses_by_turn.sum() == pytest.approx(evaluation.gap, abs=1e-9)
    assert evaluation.losses_by_choice.sum() == pytest.approx(evaluation.gap, abs=1e-9)
    assert (evaluation.losses_by_turn >= -1e-12).all()
    assert evaluation.losses_by_turn.shape == (len(boxes), 3)
    np.testing.assert_allclose(evaluation.fills.sum(axis=1), 1.0, atol=1e-12)
    assert 0.0 <= evaluation.agreement < 1.0


COMPARED = ("value", "gap", "agreement", "losses_by_turn", "losses_by_choice", "fills",
            "optimal_fills")  # fmt: skip


@pytest.mark.parametrize("boxes, joker", GAMES, ids=str)
def test_compiled_sweep_equals_numpy_sweep(boxes, joker):
    """The compiled loops against their plain numpy oracle, every aggregate, on every reduced
    game with a deterministic, a stochastic and the optimal policy (chunks of 5 states)."""
    solution = optimal_solution(joker, boxes)
    for policy in (POLICIES["any_action"], POLICIES["mixed"], solution.batched_policy()):
        numpy = evaluate_yahtzee(policy, solution=solution, chunk=5, method="numpy")
        fast = evaluate_yahtzee(policy, solution=solution, chunk=5)
        for name in COMPARED:
            np.testing.assert_allclose(
                getattr(fast, name), getattr(numpy, name), rtol=0, atol=1e-12, err_msg=name
            )
        assert fast.decisions_asked == numpy.decisions_asked
        assert fast.turn_start_states == numpy.turn_start_states


END_GAMES = [
    (["fours", "fives", "sixes"], "forced", "keep_high"),  # the upper bonus within reach
    (["fours", "yahtzee"], "forced", "mixed"),
]


def _upper_bonus(state: TurnState) -> bool:
    return state.upper >= 63


def _fifty(state: TurnState) -> bool:
    return state.yahtzee50


@pytest.mark.parametrize("boxes, joker, name", END_GAMES, ids=str)
def test_end_probabilities_equal_plain_recursion(boxes, joker, name):
    """The chances of the upper bonus and of 50 in the Yahtzee box, from the sweep's
    occupancies of the end states, against the plain recursion's expectation of each
    indicator at the end; for the policy and for the optimum."""
    solution = optimal_solution(joker, boxes)
    model = solution.model
    evaluation = evaluate_yahtzee(POLICIES[name], solution=solution, chunk=7)
    end = _upper_bonus if "sixes" in boxes else _fifty
    got, optimal = (
        (evaluation.upper_bonus_probability, evaluation.optimal_upper_bonus_probability)
        if end is _upper_bonus
        else (evaluation.yahtzee_probability, evaluation.optimal_yahtzee_probability)
    )
    want = PlainEvaluation(model, POLICIES[name], end=end).value(model.start)
    want_optimal = PlainEvaluation(model, solution.batched_policy(), end=end).value(model.start)
    assert 0.0 < got < 1.0 and 0.0 < optimal < 1.0
    assert got == pytest.approx(want, abs=1e-12)
    assert optimal == pytest.approx(want_optimal, abs=1e-12)
    # The gap split by box either way sums to the gap.
    played, optimal = evaluation.losses_by_box()
    assert played.sum() == pytest.approx(evaluation.gap, abs=1e-9)
    assert optimal.sum() == pytest.approx(evaluation.gap, abs=1e-9)


@pytest.mark.parametrize("boxes, joker", GAMES, ids=str)
def test_optimal_policy_scores_the_optimum_on_reduced_games(boxes, joker):
    solution = optimal_solution(joker, boxes)
    evaluation = evaluate_yahtzee(solution.batched_policy(), solution=solution)
    assert evaluation.value == pytest.approx(solution.value, abs=1e-9)
    assert evaluation.agreement == pytest.approx(1.0, abs=1e-12)
    assert np.abs(evaluation.losses_by_choice).sum() < 1e-9
    np.testing.assert_allclose(evaluation.fills, evaluation.optimal_fills, atol=1e-12)


def test_hand_computed_sixes():
    """Sixes alone, keeping the sixes: each die ends a six with 1 - (5/6)^3, so 30 * 91/216.
    Rerolling nothing (all five are sixes) is forbidden and scores in the first legal box."""

    def keep_sixes(obs):
        return (1 << (5 - obs[:, 5])) - 1

    evaluation = baselines.evaluate(batched(keep_sixes), ENV_ID, boxes=["sixes"])
    assert evaluation.value == pytest.approx(30 * 91 / 216, abs=1e-12)
    # Keeping the sixes is optimal here: nothing lost, every decision agrees.
    assert evaluation.gap == pytest.approx(0.0, abs=1e-12)
    assert evaluation.agreement == pytest.approx(1.0)


def test_scoring_at_once_in_chance_and_where_it_loses():
    """Chance alone, scoring the first roll: 17.5; the optimum rerolls the low dice (70/3).
    The whole gap is lost at the first decision, playing Chance where the optimum rerolls."""
    evaluation = baselines.evaluate(batched(lambda obs: np.full(len(obs), 44)), ENV_ID,
                                    boxes=["chance"])  # fmt: skip
    assert evaluation.value == pytest.approx(17.5, abs=1e-12)
    assert evaluation.gap == pytest.approx(70 / 3 - 17.5, abs=1e-12)
    assert evaluation.losses_by_turn[0, 0] == pytest.approx(evaluation.gap, abs=1e-12)
    lost = evaluation.lost_by_choice(1)[0]
    assert lost[:2] == ("chance", "reroll")
    assert evaluation.losses_by_choice[CHOICES.index("chance"), 0] == pytest.approx(lost[2])
    assert lost[2] == pytest.approx(evaluation.gap, abs=1e-12)
    # Decision by decision: Chance played on each first roll the optimum rerolls.
    decisions = evaluation.where_lost(20)
    assert {loss.action for loss in decisions} == {44} and len(decisions) == 20
    assert all(loss.optimal_action < 32 and loss.observation[6] == 2 for loss in decisions)
    assert evaluation.decisions_asked == 3 * 252


def test_batched_action_values_equal_one_at_a_time():
    solution = optimal_solution("verhoeff", ["sixes", "full_house", "yahtzee"])
    model = solution.model
    filled, upper, flag = model.turn_start_states()
    rng = np.random.default_rng(1)
    rows = rng.integers(0, len(filled), 200)
    dice, left = rng.integers(0, 252, 200), rng.integers(0, 3, 200)
    states = [(int(filled[i]), int(upper[i]), bool(flag[i])) for i in rows]
    obs = np.array([observation_of((*s, d, r)) for s, d, r in zip(states, dice, left, strict=True)])
    want = np.array(
        [solution.turn_action_values(s, d, r) for s, d, r in zip(states, dice, left, strict=True)]
    )
    np.testing.assert_allclose(solution.action_values_batch(obs), want, atol=1e-12)
    best = np.nanargmax(want, axis=1)
    np.testing.assert_array_equal(solution.batched_policy().batch(obs), best)


def test_bad_input_is_refused():
    solution = optimal_solution("forced", ["chance"])
    with pytest.raises(ValueError, match="in batches"):
        evaluate_yahtzee(lambda obs: 44, solution=solution)
    with pytest.raises(ValueError, match="actions are 0..44"):
        evaluate_yahtzee(batched(lambda obs: np.full(len(obs), 45)), solution=solution)
    with pytest.raises(ValueError, match="sum to 1"):
        evaluate_yahtzee(batched(lambda obs: np.full((len(obs), 45), 0.5)), solution=solution)
    with pytest.raises(ValueError, match="method must be one of"):
        evaluate_yahtzee(solution, solution=solution, method="fortran")
    with pytest.raises(ValueError, match="chunk"):
        evaluate_yahtzee(solution, solution=solution, chunk=0)
    with pytest.raises(ValueError, match="disagree"):
        evaluate_yahtzee(solution, "free", solution=solution)
    with pytest.raises(ValueError, match="deterministic=False"):
        evaluate_yahtzee(solution, solution=solution, deterministic=False)
    with pytest.raises(ValueError, match="no named policies|must be one of"):
        baselines.evaluate("no-such-policy", ENV_ID, boxes=["chance"])
    with pytest.raises(ValueError, match="not one of"):
        solution.action_values_batch(np.zeros((1, 22), dtype=np.int64))


def played_decisions(games: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of every kind of Yahtzee decision (three, two and no rolls left,
    every turn of the game, jokers and bonuses as they come): `games` whole games of uniformly
    random legal play in the native vector env."""
    import gymnasium as gym

    env = gym.make_vec(ENV_ID, num_envs=games)
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    seen, masks = [], []
    for _ in range(13 * 3):
        legal = info["action_mask"].astype(bool)
        seen.append(obs)
        masks.append(legal)
        weights = rng.random(legal.shape) * legal
        obs, _, _, _, info = env.step(weights.argmax(axis=1))
    return np.concatenate(seen), np.concatenate(masks)


def sb3_model(algo: str, net_arch: list[int], seed: int):
    import gymnasium as gym
    import sb3_contrib
    import stable_baselines3

    cls = getattr(sb3_contrib, algo, None) or getattr(stable_baselines3, algo)
    return cls(
        "MlpPolicy", gym.make(ENV_ID), seed=seed, policy_kwargs={"net_arch": net_arch}, device="cpu"
    )


@pytest.mark.parametrize("algo", ["MaskablePPO", "PPO"])
def test_sb3_models_answer_as_their_predict(algo):
    """The evaluation asks an SB3 model (the 2x128 network of configs/yahtzee/ppo.yaml)
    through its torch modules, not `predict`: on decisions of every kind its actions are
    `predict`'s, masked where the model takes masks, and its probabilities (deterministic=False)
    are those of SB3's own action distribution, bit for bit."""
    import torch
    from stable_baselines3.common.preprocessing import preprocess_obs

    from baselines.policy_forms import network_input

    model = sb3_model(algo, [128, 128], seed=3)
    obs, masks = played_decisions(games=128, seed=3)
    assert set(np.unique(obs[:, 6])) == {0, 1, 2}  # every number of rolls left
    asker = policy_asker(model, Yahtzee())
    assert asker.needs_legal == (algo == "MaskablePPO")
    extra = {"action_masks": masks} if asker.needs_legal else {}
    want = model.predict(obs, deterministic=True, **extra)[0]
    np.testing.assert_array_equal(asker.ask(obs, masks), want)
    if asker.needs_legal:
        assert masks[np.arange(len(obs)), want].all()
    policy = model.policy
    with torch.no_grad():
        tensor = policy.obs_to_tensor(obs)[0]
        assert torch.equal(
            network_input(policy)(obs), preprocess_obs(tensor, policy.observation_space)
        )
        sb3_probs = policy.get_distribution(tensor, **extra).distribution.probs.numpy()
    probs = policy_asker(model, Yahtzee(), deterministic=False).ask(obs, masks)
    assert probs.dtype == np.float64
    np.testing.assert_array_equal(probs, sb3_probs.astype(np.float64))


def test_an_sb3_model_is_never_asked_through_predict(monkeypatch):
    """Neither SB3's `predict` nor its `get_distribution` is called when the evaluation asks
    a model, greedy or stochastic (tests/test_yahtzee_training.py: nor in a run)."""

    def refused(*args, **kwargs):
        raise AssertionError("SB3's own per-call path was taken")

    model = sb3_model("MaskablePPO", [16], seed=0)
    monkeypatch.setattr(type(model), "predict", refused)
    monkeypatch.setattr(type(model.policy), "get_distribution", refused)
    solution = optimal_solution("forced", ["chance"])
    greedy = evaluate_yahtzee(model, solution=solution)
    played = evaluate_yahtzee(model, solution=solution, deterministic=False)
    assert 0 < played.value <= solution.value and 0 < greedy.value <= solution.value


@pytest.mark.parametrize("boxes", [["chance"], ["yahtzee"]], ids=str)
def test_an_sb3_models_played_policy_scores_as_the_plain_recursion(boxes):
    """deterministic=False scores the policy a MaskablePPO plays, its action distribution:
    the sweep (asking the fast path in batches) equals the plain recursion asking SB3's own
    `get_distribution` one observation at a time, masked as the env masks."""
    import torch

    from training.qlearning import legal_masks

    model = sb3_model("MaskablePPO", [32, 32], seed=1)
    game = Yahtzee(boxes=boxes)

    def sb3_probabilities(obs):
        with torch.no_grad():
            tensor = model.policy.obs_to_tensor(obs)[0]
            masks = legal_masks(game, obs)
            distribution = model.policy.get_distribution(tensor, action_masks=masks)
            probs = distribution.distribution.probs.numpy().astype(np.float64)
        return probs / probs.sum(axis=1, keepdims=True)  # as every evaluation takes float32's

    expected = PlainEvaluation(game, batched(sb3_probabilities)).value(game.start)
    solution = optimal_solution("forced", boxes)
    played = evaluate_yahtzee(model, solution=solution, deterministic=False)
    assert played.value == pytest.approx(expected, abs=1e-9)
    greedy = evaluate_yahtzee(model, solution=solution)
    assert played.value != pytest.approx(greedy.value, abs=1e-6)  # not its greedy policy


def test_policies_get_read_only_observations():
    """The observations handed to a policy are views of one reused buffer: writing to them
    is refused rather than allowed to corrupt the next batch."""

    def overwrites_its_input(obs):
        obs[:, 0] = 0
        return np.full(len(obs), 44)

    with pytest.raises(ValueError, match="read-only"):
        evaluate_yahtzee(
            batched(overwrites_its_input), solution=optimal_solution("forced", ["chance"])
        )


@pytest.mark.verify
def test_optimal_policy_scores_the_optimum_on_the_full_game(verhoeff_solution):
    """The full game once: the batched optimal policy, asked for every decision state (215
    million; about 2 minutes on a loaded machine, most of it the policy parsing them)."""
    solution = verhoeff_solution
    evaluation = evaluate_yahtzee(solution.batched_policy(), solution=solution)
    assert evaluation.value == pytest.approx(solution.value, abs=1e-9)
    assert evaluation.agreement == pytest.approx(1.0, abs=1e-12)
