# Every target builds its own virtual environment from nothing.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
TORCH := torch==2.13.0

.PHONY: venv test verify docs docs-check demo solve race train report bench examples install-check clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# torch first, as the CPU build on local disk; otherwise stable-baselines3 pulls a CUDA build.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet $(TORCH)
	$(BIN)/pip install --quiet -e '.[test,train,docs]'
	touch $@

venv: $(VENV)/.installed

# pytest on every core (pytest-xdist), each test file on one worker, so that a file's module
# fixtures are built once. No test here starts a Ray (those are `make verify`), and a test that
# runs past pytest-timeout's limit (pyproject.toml) fails with its stack, not the whole run.
test: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q -n auto --dist loadfile
	$(DOCS_BUILD)

# The checks the default test run leaves out (pytest marker `verify`), each tens of seconds to
# minutes: Ray sweeps on a two-node local cluster whose worker node cannot see the run store,
# Ctrl-C of a Ray sweep, real tuning searches, the three-box Yahtzee cross-checks and the
# full-game optimal policy, Chow-Robbins at a million tosses.
verify: venv
	$(BIN)/python -m pytest -q -m verify --timeout 3600

# The site (mkdocs.yml): the committed pages rendered, the API reference read from the
# docstrings; --strict fails on a broken link, a missing page or a docstring that does not
# render. It runs no solve and no training: the make targets that own the pages write them.
DOCS_BUILD = NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

docs: venv
	$(DOCS_BUILD)

# The main job: the exact solutions, then the quick training sweep and its report.
demo: race solve train

solve: venv
	$(BIN)/python -m docs.tools.solve

# Not part of `solve`: Glenn's strategies and the readings of his report against his Table 3
# (the Yahtzee page's last section) come from `python -m docs.tools.yahtzee_glenn`, some 20
# exact evaluations of minutes each, kept in docs/results/yahtzee_glenn.json (a stopped run
# resumes; only new or changed readings are computed).

# The Ten Thousand race's answer page (docs/results/ten_thousand_race.md, its figures): the
# archive docs/results/ten_thousand_race.json filled where it is not yet (about an hour from
# nothing: some 60 best responses at the full goal; a stopped run resumes), then the page.
race: venv
	$(BIN)/python -m docs.tools.ten_thousand_race --compute --write

# The sweep trains into the run store runs/ (not committed); its planned runs are then archived
# into docs/training/runs/quick/ (committed: configs, results, curves, timings, compressed
# per-state arrays; no checkpoint or policy), and the report is written from that archive.
train: venv
	$(BIN)/python -m training.sweep --budget quick --out docs/training --no-report
	$(BIN)/python -m docs.tools.training_report --budget quick --runs runs

# From the committed archive alone (a fresh clone needs no runs/): the quick report, and the
# full one where its archive exists (made by `python -m training.sweep --budget full --out
# docs/training/full --no-report`, then `python -m docs.tools.training_report --budget full
# --runs runs`).
report: venv
	$(BIN)/python -m docs.tools.training_report --budget quick
	if [ -d docs/training/runs/full ]; then $(BIN)/python -m docs.tools.training_report --budget full; fi

# How long the documentation's Python examples take here: runs every python block of the README
# and docs/*.md (a fresh process per page), writes each long one's time into the
# example-time section after it, and fails on an example that raises or a long one (over
# 5 s) that does not say how long it takes. On a quiet machine.
examples: venv
	$(BIN)/python -m docs.tools.example_times

# The AEC benchmark's peer, OpenSpiel's pig through Shimmy: not a dependency of the package or
# its tests; `make bench` adds it to the virtual environment before measuring.
# benchmarks.yahtzee solves full-game Yahtzee three times (the full-size check against the
# published optimum: make bench fails if it is not reproduced). benchmarks.sampled_gap writes
# docs/results/sampled_gap.md (exact Yahtzee evaluations of eight policies, minutes each); it
# fails if no Yahtzee policy within 10 % of the optimum has its sampled gap 5 times less noisy.
# The commit whose solves, evaluations and env steps benchmarks.against_base compares with:
# the code before issue 42's one interface for every game.
BENCH_BASE ?= c0d3334
bench: venv
	$(BIN)/pip install --quiet 'shimmy[openspiel]>=2.0'
	$(BIN)/python -m benchmarks.library
	$(BIN)/python -m benchmarks.qlearning
	$(BIN)/python -m benchmarks.yahtzee
	$(BIN)/python -m benchmarks.yahtzee_training --out docs
	$(BIN)/python -m benchmarks.sampled_gap
	$(BIN)/python -m benchmarks.against_base --base $(BENCH_BASE)
	$(BIN)/python -m benchmarks.ten_thousand_duel --cold --out docs
	$(BIN)/python -m benchmarks.sizes --write

# `pip install .` (not editable) into a fresh virtual environment in a temp folder, checked
# from outside the repository: gym.make, make_vec, solve, evaluate, version, LICENSE.
install-check:
	bash tools/install_check.sh

# A maintainer's look at the site, not part of `test`: builds it (strict), screenshots the home,
# a game and an API page at desktop and phone widths in headless Chromium (Debian's chromium
# package) into docs-check/, and reports leaked Markdown, missing images and empty tables.
docs-check: venv
	$(BIN)/python tools/docs_check.py --out docs-check

clean:
	rm -rf $(VENV) .pytest_cache site
