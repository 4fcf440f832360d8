"""Removed in 0.6.0: use `dice_envs.policies.named_policy`.

Only `heuristic`, the old name, is left, for baselines/game_pages.py and training/report.py,
which are being rewritten; the merge that lands them deletes this module.
"""

from __future__ import annotations

from dice_envs.policies import named_policy

heuristic = named_policy
