"""Traces of play for the tests that hold an env's fast paths to a plain sampler: what an env
shows step by step, and the same sampled by a model from given draws."""

from __future__ import annotations


def without_mask(info: dict) -> dict:
    """An info without its action mask (what a model's sampler gives)."""
    return {key: value for key, value in info.items() if key != "action_mask"}


def env_trace(env, actions) -> list:
    """The env's state, reward, end and events after each of `actions`, from where it is (a
    reset, and its state and events, where an episode ended)."""
    trace = []
    for action in actions:
        _, reward, terminated, _, info = env.step(action)
        trace.append((env.state, reward, terminated, without_mask(info)))
        if terminated:
            _, info = env.reset()
            trace.append((env.state, without_mask(info)))
    return trace


def model_trace(model, state, uniform, actions) -> list:
    """The same trace sampled by `model` from `state`, drawing with `uniform()`."""
    trace = []
    for action in actions:
        state, reward, terminated, info = model.sample_step(state, action, uniform)
        trace.append((state, reward, terminated, info))
        if terminated:
            state, info = model.sample_start(uniform)
            trace.append((state, info))
    return trace
