"""`python -m dice_envs_cli`: the `dice-envs` command, run from a checkout without installing."""

import sys

from dice_envs_cli import main

sys.exit(main())
