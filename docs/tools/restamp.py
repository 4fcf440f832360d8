"""Carry committed archived runs over to the code here, without training, where it is proven.

    python -m docs.tools.restamp --base COMMIT [--budget quick full] [--vouched MODULE ...]

A run records the code that made it: the fingerprint of each module its process imported
(code.json, `training.runs.code_stamp`); until dice-envs 0.5.0 it was one fingerprint of all
the library's code (`code` in its config.yaml). When the code has changed since, the report
says the run was not made by the current code. This carries a run over only where it can be
checked that the code here computes what the code that made it computed:

1. the code at `--base` made the run: its code.json is current at `--base` (or its old
   fingerprint is the one the library at `--base` computes of itself, run in a checkout of
   that commit);
2. the modules a run of its config imports now are found by training a tiny run of the same
   config (Yahtzee on three boxes) in a subprocess, which writes their code.json;
3. each of those modules is compared between `--base` and the working tree: a module that
   differs must be named in `--vouched` (a change that does not touch what a run computes,
   such as bookkeeping or an interface around the same computation);
4. where any module differs, the run is evaluated again from its archived final policy by the
   code here, and its value, gap and agreement must equal the archived ones to 1e-12: the
   actions of its per-state arrays (every game with tables), or its archived SB3 model
   (`policy.zip`, Yahtzee's PPO runs: minutes per evaluation on the full game, greedy and, where
   the run scored it, its action distribution, the `stochastic_` keys); a run with neither
   (Yahtzee's Q-learning, archived before its policies were kept) is not carried over past a
   changed module.

A run carried over gets the new code.json (and its config.yaml loses an old `code`); the
others stay as they were. Everything checked is printed.
"""

from __future__ import annotations

import argparse
import copy
import json
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

import numpy as np
import yaml

from docs.tools.archive import POLICY_FILE
from docs.tools.readme import ROOT
from training.runs import CODE_FILE, CODE_PACKAGES, atomic_write_yaml, stale_modules

ARCHIVE = ROOT / "docs" / "training" / "runs"
TOLERANCE = 1e-12
COMPARED = ("value", "gap", "agreement")
# A tiny run of a config: its code paths, none of its cost.
TINY = {"timesteps": 128, "eval_every": 64}
TINY_PPO = {"n_envs": 2, "n_steps": 32, "batch_size": 32, "n_epochs": 1}
TINY_YAHTZEE = {"boxes": ["chance", "yahtzee", "sixes"]}

OLD_FINGERPRINT = """
import sys
from pathlib import Path
root = Path(sys.argv[1])
sys.path.insert(0, str(root))
import training.runs as runs
assert Path(runs.__file__).resolve().is_relative_to(root.resolve()), runs.__file__
old = getattr(runs, "source_fingerprint", None)  # gone since the module-by-module stamps
print(old({name: root / name for name in runs.CODE_PACKAGES}) if old else "none")
"""

TINY_RUN = """
import json, sys
from training.train import run
config = json.loads(sys.argv[1])
print(json.dumps(run(config, 0, sys.argv[2])["run_dir"]))
"""


def checkout(commit: str, folder: Path) -> dict[str, Path]:
    """The library's packages at `commit`, extracted into `folder`."""
    data = subprocess.run(
        ["git", "archive", commit, *CODE_PACKAGES], cwd=ROOT, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(folder, filter="data")
    return {name: folder / name for name in CODE_PACKAGES}


def old_fingerprint(folder: Path) -> str:
    """What the library extracted in `folder` said its code fingerprint was."""
    found = subprocess.run(
        [sys.executable, "-c", OLD_FINGERPRINT, str(folder)],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    )
    return found.stdout.strip()


def tiny_config(config: dict) -> dict:
    """The run's config with its steps cut to a few evaluation points (same code paths)."""
    config = copy.deepcopy(config)
    config.update(TINY)
    config["evaluation"]["episodes"] = 20
    if config["algo"] == "ppo":
        config["hyperparams"].update(TINY_PPO)
    else:
        config["hyperparams"]["n_envs"] = min(config["hyperparams"].get("n_envs", 1), 2)
    if config["env_id"] == "dice_envs/Yahtzee-v0":
        config["env_kwargs"] = {**config["env_kwargs"], **TINY_YAHTZEE}
    return config


def current_stamp(config: dict, store: Path) -> dict[str, str]:
    """The code.json a tiny run of `config` writes with the code here."""
    done = subprocess.run(
        [sys.executable, "-c", TINY_RUN, json.dumps(tiny_config(config)), str(store)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the tiny run of {config['env_id']} failed:\n{done.stderr}")
    folder = Path(json.loads(done.stdout.strip().splitlines()[-1]))
    return json.loads((folder / CODE_FILE).read_text())


def reevaluated(entry: Path, identity: dict, result: dict) -> str | None:
    """Why the archived final policy does not score as archived by the code here (None: it
    does)."""
    import baselines

    env_id, kwargs = identity["env_id"], identity["env_kwargs"]
    actions = None
    if (entry / "arrays.npz").is_file():
        with np.load(entry / "arrays.npz") as arrays:
            if "actions" in arrays.files:
                actions = arrays["actions"].astype(np.int64)
    if actions is not None:
        scorings = {"": baselines.evaluate(actions, env_id, **kwargs)}
    elif (entry / POLICY_FILE).is_file():
        # The entry is a run folder (config.yaml, policy.zip): a policy form of its own.
        scorings = {"": baselines.evaluate(entry, env_id, **kwargs)}
        if "stochastic_value" in result:
            scorings["stochastic_"] = baselines.evaluate(
                entry, env_id, deterministic=False, **kwargs
            )
    else:
        return "no final policy to evaluate again"
    for prefix, scored in scorings.items():
        for key in COMPARED:
            archived = result.get(prefix + key)
            if archived is not None and abs(getattr(scored, key) - archived) > TOLERANCE:
                return f"{prefix}{key} {getattr(scored, key)!r} against the archived {archived!r}"
    return None


def made_at_base(entry: Path, identity: dict, base_roots, expected: str) -> str | None:
    """Why the code at the base commit did not make the archived run (None: it did)."""
    if "code" in identity:
        if identity["code"] != expected:
            return f"made by code {identity['code']}, not the base's {expected}"
        return None
    stamp = json.loads((entry / CODE_FILE).read_text())
    changed = stale_modules(stamp, base_roots)
    return f"made by code other than the base's in {', '.join(changed)}" if changed else None


def check_entry(entry: Path, base_roots, expected: str, stamps: dict, store: Path, vouched):
    """(code.json to write, None) if the archived run in `entry` carries over, else
    (None, why not)."""
    identity = yaml.safe_load((entry / "config.yaml").read_text())
    if "code" not in identity and not stale_modules(json.loads((entry / CODE_FILE).read_text())):
        return None, "current"
    why = made_at_base(entry, identity, base_roots, expected)
    if why:
        return None, why
    config = {k: v for k, v in identity.items() if k not in ("seed", "package", "code")}
    key = json.dumps(config, sort_keys=True)
    if key not in stamps:
        stamps[key] = current_stamp(config, store)
    stamp = stamps[key]
    changed = set(stale_modules(stamp, base_roots))
    if changed - set(vouched):
        return None, f"modules changed since the base: {', '.join(sorted(changed - vouched))}"
    if not changed:
        return stamp, None
    result = json.loads((entry / "result.json").read_text())
    why = reevaluated(entry, identity, result)
    return (None, f"{why} past {', '.join(sorted(changed))}") if why else (stamp, None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m docs.tools.restamp")
    parser.add_argument("--base", required=True, help="a commit whose old fingerprint made them")
    parser.add_argument("--budget", nargs="+", default=["quick", "full"])
    parser.add_argument("--vouched", nargs="*", default=[], help="modules changed harmlessly")
    args = parser.parse_args(argv)
    args.vouched = set(args.vouched)
    with tempfile.TemporaryDirectory() as scratch:
        base_roots = checkout(args.base, Path(scratch) / "base")
        expected = old_fingerprint(Path(scratch) / "base")
        print(f"base {args.base}: old fingerprint {expected}")
        stamps: dict[str, dict] = {}
        converted = {}
        for budget in args.budget:
            for path in sorted((ARCHIVE / budget).glob("*/*/seed*/config.yaml")):
                entry = path.parent
                stamp, why = check_entry(
                    entry, base_roots, expected, stamps, Path(scratch) / "runs", args.vouched
                )
                print(f"{entry.relative_to(ARCHIVE)}: {why or 'carries over'}", flush=True)
                if why is None:
                    converted[entry] = stamp
    for entry, stamp in converted.items():
        identity = yaml.safe_load((entry / "config.yaml").read_text())
        if "code" in identity:
            del identity["code"]
            atomic_write_yaml(entry / "config.yaml", identity)
        (entry / CODE_FILE).write_text(json.dumps(dict(sorted(stamp.items())), indent=1) + "\n")
    print(f"{len(converted)} runs carried over")
    return 0


if __name__ == "__main__":
    sys.exit(main())
