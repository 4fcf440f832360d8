"""The structure of Tijms's stopping games read off exact solutions: the die game's rule per
rolls left and the card game's thresholds, for their pages (docs.tools.stopping) and tests.

Source: H. Tijms, "Stochastic games and dynamic programming", Asia Pacific Mathematics
Newsletter (2012).
"""

from __future__ import annotations

import numpy as np

import baselines
from dice_envs import make_model
from dice_envs.games.stopping import STOP

DIE = "dice_envs/DieStopping-v0"
CARDS = "dice_envs/RedBlackCards-v0"


def die_stop_faces(rolls: int = 5, sides: int = 6) -> dict[int, int | None]:
    """For each number j of rolls still permitted after the face showing (j = 1..rolls-1), the
    least face at which stopping is optimal (None: never; ties go to rolling on)."""
    solution = baselines.solve(DIE, rolls=rolls, sides=sides)
    rule = {}
    for left in range(1, rolls):
        faces = [f for f in range(1, sides + 1) if solution.action((left, f)) == STOP]
        assert faces == list(range(min(faces, default=sides + 1), sides + 1)), "not a threshold"
        rule[left] = min(faces, default=None)
    return rule


def red_black_stop_leads(red: int = 26, black: int = 26) -> list[int | None]:
    """For each number k of cards drawn (k = 1..red+black-1), the least lead (red minus black
    drawn) among the states after k draws at which stopping is optimal; None where no reachable
    lead stops. Checked to be a threshold: every larger lead stops too."""
    solution = baselines.solve(CARDS, red=red, black=black)
    model = make_model(CARDS, red=red, black=black)
    leads = []
    for k in range(1, red + black):
        left = red + black - k
        states = [(r, left - r) for r in range(max(0, left - black), min(red, left) + 1)]
        stop = sorted((model.lead(r, b), solution.action((r, b)) == STOP) for r, b in states)
        stopping = [lead for lead, stops in stop if stops]
        if stopping:
            assert all(stops for lead, stops in stop if lead >= stopping[0]), "not a threshold"
        leads.append(stopping[0] if stopping else None)
    return leads


def effective_thresholds(thresholds: list[int], draws: int) -> np.ndarray:
    """'Stop once the lead is beta_k or more' as a least lead: after k draws the lead has the
    parity of k, so a beta_k of the other parity means beta_k + 1; a least lead above k can not
    be reached (never stop)."""
    k = np.arange(1, draws + 1)
    beta = np.asarray(thresholds[:draws])
    least = beta + (beta - k) % 2
    return np.where(least > k, -1, least)  # -1: never
