# The interface: `make serve` and `make test` are all a newcomer needs.
# Every target bootstraps .venv/ (and, for tests, Debian's chromium) on its own.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export NO_MKDOCS_2_WARNING := 1
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: serve build test check bench eval audit fuzz clean

$(STAMP): requirements.lock pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	@touch $(STAMP)

NODE_STAMP := node_modules/.installed
$(NODE_STAMP): package.json package-lock.json
	npm ci --silent --no-audit --no-fund
	@touch $(NODE_STAMP)

serve: $(STAMP)
	$(BIN)/mkdocs serve --dev-addr 127.0.0.1:8000

# Build into a temporary folder and swap it in, so a failed build never leaves a partial site/.
build: $(STAMP)
	rm -rf build/site.tmp
	$(BIN)/mkdocs build --strict --quiet --site-dir build/site.tmp
	rm -rf site && mv build/site.tmp site

check: $(STAMP)
	$(BIN)/kb check
	$(BIN)/kb schema --check

test: $(STAMP) $(NODE_STAMP)
	bash scripts/ensure-chromium.sh
	$(BIN)/kb check
	$(BIN)/kb schema --check
	$(BIN)/python -m pytest -q
	node --test tests/js/

clean:
	rm -rf site build .pytest_cache
