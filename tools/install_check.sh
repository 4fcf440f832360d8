#!/usr/bin/env bash
# Install dice-envs as a user would (`pip install .`, not editable) into a fresh virtual
# environment in a temporary folder, then check, from that folder (outside the repository),
# that gym.make, gym.make_vec, baselines.solve and baselines.evaluate work, that the installed
# version is dice_envs.__version__ and that the wheel carries the LICENSE. Core install only
# (gymnasium, numpy, scipy, pillow): no torch. Usage: tools/install_check.sh (PYTHON=python3.11
# to choose the interpreter). Leaves nothing behind, in the repository or in the temp folder.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"
scratch="$(mktemp -d "${TMPDIR:-/tmp}/dice-envs-install-check.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
start=$SECONDS

# A copy of the work tree (tracked and new files, not ignored ones): building in place would
# leave build/ and *.egg-info in the repository.
mkdir "$scratch/source"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard \
  | tar --null --files-from=- --ignore-failed-read -cf - 2>/dev/null) \
  | tar -C "$scratch/source" -xf -

echo "install-check: $("$python" --version) venv in $scratch"
"$python" -m venv "$scratch/venv"
"$scratch/venv/bin/pip" install --quiet --upgrade pip
"$scratch/venv/bin/pip" install --quiet "$scratch/source"
rm -rf "$scratch/source"
echo "install-check: installed in $((SECONDS - start)) s"

mkdir "$scratch/elsewhere"
cd "$scratch/elsewhere"
"$scratch/venv/bin/python" - "$repo" <<'PY'
import importlib.metadata
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np

import baselines
import dice_envs

repo = Path(sys.argv[1]).resolve()
where = Path(dice_envs.__file__).resolve()
assert repo not in where.parents, f"dice_envs imported from the repository: {where}"
print(f"dice_envs {dice_envs.__version__} from {where.parent}")

version = importlib.metadata.version("dice-envs")
assert version == dice_envs.__version__, (version, dice_envs.__version__)
licenses = [f for f in importlib.metadata.files("dice-envs") if f.name == "LICENSE"]
assert licenses, "the wheel carries no LICENSE"
assert "MIT License" in licenses[0].read_text()
print(f"metadata version {version}; {licenses[0]} shipped")

env = gym.make("dice_envs/Pig-v0", goal=20)
obs, info = env.reset(seed=0)
obs, reward, terminated, truncated, info = env.step(1)
print(f"gym.make Pig-v0: reset and step, observation {obs.tolist()}")

vec = gym.make_vec(
    "dice_envs/Pig-v0", num_envs=8, vectorization_mode="vector_entry_point", goal=20
)
obs, info = vec.reset(seed=0)
obs, *_ = vec.step(np.ones(8, dtype=np.int64))
print(f"gym.make_vec Pig-v0: {type(vec).__name__}, observations {obs.shape}")

solution = baselines.solve("dice_envs/Pig-v0", goal=30)
evaluation = baselines.evaluate("hold-at-20", "dice_envs/Pig-v0", goal=30)
assert 0 < evaluation.value < solution.value < 1
print(
    f"baselines.solve Pig-v0 goal 30: {solution.value:.6f}; "
    f"evaluate hold-at-20: {evaluation.value:.6f} (gap {evaluation.gap:.6f})"
)
site = where.parent.parent
print(f"configs/ installed: {(site / 'configs').exists()} (it is not part of the library)")
PY

# The console script, once the package declares one.
if [ -x "$scratch/venv/bin/dice-envs" ]; then
  "$scratch/venv/bin/dice-envs" --help >/dev/null
  echo "dice-envs --help: ok"
else
  echo "no dice-envs console script in this version"
fi
echo "install-check: passed in $((SECONDS - start)) s"
