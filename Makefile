# Set-up and everyday tasks. `make demo` and `make test` each do all the set-up they need.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.install-stamp
SQUADS := $(wildcard configs/squads/*.yaml)

.PHONY: install demo test test-fast test-realmodel lint docs bench messages clean

install: $(STAMP)

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "squad needs Python 3.11 or newer (set PYTHON=python3.11)")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ".[dev]"
	@touch $(STAMP)

# The main job on the example squads (offline model, no key): validate them, start the
# daemon on configs/squads/ so the squads with run_on_start run (approval gates approved
# automatically; --once exits when they are done), list the runs their workspaces' histories
# hold, let the extractor learn from a sample conversation, show what they left behind, and
# say how to open the dashboard.
demo: install
	$(BIN)/squad validate $(SQUADS)
	$(BIN)/squad daemon --once --auto-approve
	$(BIN)/squad status
	$(BIN)/squad runs list
	$(BIN)/squad memory extract examples/onboarding-chat.jsonl --squad docs-site --agent writer
	$(BIN)/squad memory show docs-site writer
	@for f in $(SQUADS); do $(BIN)/squad ws tree $$(basename $$f .yaml) --depth 2 || exit 1; done
	$(BIN)/squad ws health
	@echo
	@echo "See it in a browser: $(BIN)/squad dashboard --open   (http://127.0.0.1:8765/; it prints a login link)"

# On every core (pytest-xdist: each worker has a Postgres database of its own), then, alone,
# the few tests marked serial (they restart the Postgres server the workers use).
test: install
	$(BIN)/python -m pytest -q -n auto --dist loadgroup -m "not serial"
	$(BIN)/python -m pytest -q -m serial

# The edit loop: no test that starts a process (slow), Postgres, browser or serial test; on
# every core. SQUAD_TEST_NO_SUBPROCESS=1 makes a test that starts one anyway fail, naming the
# marker it lacks (tests/support/no_processes.py).
test-fast: install
	SQUAD_TEST_NO_SUBPROCESS=1 $(BIN)/python -m pytest -q -n auto --dist loadgroup -m "not slow and not postgres and not browser and not serial"

# Opt-in: squad on a real local model, SmolLM2-135M-Instruct served by llama.cpp on 127.0.0.1.
# The server lives in its own venv (.venv-realmodel), built once: about ten minutes of C++ on
# two cores, then reused (docs/local-models.md).
test-realmodel: install
	scripts/realmodel_env.sh
	SQUAD_REALMODEL=1 $(BIN)/python -m pytest -q -m realmodel tests/realmodel

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# The docs site (mkdocs-material) into build/site, strictly: a broken link or anchor fails
# it. Its reference pages are generated from the code by docs/hooks/reference.py.
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet -d build/site

bench: install
	$(BIN)/python -m bench

# Merge the dashboard's strings into its catalogues (squad/web/locale/*/LC_MESSAGES/messages.po);
# translate what arrives empty, then `$(BIN)/python -m squad.web.catalog --check`.
messages: install
	$(BIN)/python -m squad.web.catalog

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
