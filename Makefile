# The interface: `make serve` and `make test` are all a newcomer needs.
# Every target bootstraps .venv/ (and, for tests, Debian's chromium) on its own.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export NO_MKDOCS_2_WARNING := 1
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: serve serve-search build test check bench eval audit fuzz clean

$(STAMP): requirements.lock pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	@touch $(STAMP)

NODE_STAMP := node_modules/.installed
$(NODE_STAMP): package.json package-lock.json
	npm ci --silent --no-audit --no-fund
	@touch $(NODE_STAMP)

# --dirty: a save re-renders only the pages whose Markdown changed (the hook keeps generated pages as files
# and forces a full render when the navigation or theme changes); --no-strict: MkDocs warns that dirty
# builds may be stale, which strict mode would turn into a failure. `make build` and CI stay strict.
# Site search (Pagefind) is indexed only with `make serve-search`, which re-indexes after every save.
SERVE := $(BIN)/mkdocs serve --dirty --no-strict --dev-addr 127.0.0.1:8000
serve: $(STAMP) $(NODE_STAMP)
	$(SERVE)

serve-search: $(STAMP) $(NODE_STAMP)
	KB_SERVE_SEARCH=1 $(SERVE)

# Build into a temporary folder and swap it in, so a failed build never leaves a partial site/.
build: $(STAMP) $(NODE_STAMP)
	rm -rf build/site.tmp
	$(BIN)/mkdocs build --strict --site-dir build/site.tmp
	rm -rf site && mv build/site.tmp site

check: $(STAMP) $(NODE_STAMP)
	$(BIN)/kb check
	$(BIN)/kb schema --check

test: $(STAMP) $(NODE_STAMP)
	bash scripts/ensure-chromium.sh
	$(BIN)/kb check
	$(BIN)/kb schema --check
	$(BIN)/python -m pytest -q
	node --test tests/js/

# The matcher's accuracy on the real logs (both splits), Material's search as the baseline, index sizes.
# EVAL_SCALE entries in the generated KB for the sizes; 10000 takes about half an hour on two cores.
EVAL_SCALE ?= 1000
eval: $(STAMP)
	bash scripts/ensure-chromium.sh
	$(BIN)/python bench/eval.py --scale $(EVAL_SCALE)

# Build time, memory and sizes of synthetic KBs against plain Material (with the pipeline's own time per
# size), edit-to-refresh under `make serve` (three kinds of edit, SERVE_EDITS each, at SERVE_SIZES: "real"
# is a copy of entries/), then the calculator's and the matcher's own measures.
# A quicker run: make bench BENCH_SIZES=100,1000 SERVE_SIZES=real,1000
BENCH_SIZES ?= 100,1000,10000
SERVE_SIZES ?= real,1000,10000
SERVE_EDITS ?= 3
bench: $(STAMP) $(NODE_STAMP)
	$(BIN)/python bench/scale.py --sizes $(BENCH_SIZES)
	$(BIN)/python bench/serve_refresh.py --sizes $(SERVE_SIZES) --edits $(SERVE_EDITS)
	@if [ -f bench/accuracy.py ]; then echo "$(BIN)/python bench/accuracy.py"; $(BIN)/python bench/accuracy.py; fi
	@if [ -f bench/eval.py ]; then bash scripts/ensure-chromium.sh && echo "$(BIN)/python bench/eval.py --scale $(EVAL_SCALE)" && $(BIN)/python bench/eval.py --scale $(EVAL_SCALE); fi

# Lighthouse (npm, pinned in bench/audit/) on the home, errors, entry, guide, calculator and paste-box pages.
AUDIT_STAMP := bench/audit/node_modules/.installed
$(AUDIT_STAMP): bench/audit/package.json bench/audit/package-lock.json
	npm ci --prefix bench/audit --silent --no-audit --no-fund
	@touch $(AUDIT_STAMP)

audit: $(STAMP) $(AUDIT_STAMP)
	bash scripts/ensure-chromium.sh
	$(BIN)/python bench/audit.py

# Hypothesis against the loader, the Markdown guard and the matcher, FUZZ_SECONDS in all.
FUZZ_SECONDS ?= 120
fuzz: $(STAMP)
	$(BIN)/python tests/fuzz.py --seconds $(FUZZ_SECONDS)

clean:
	rm -rf site build .pytest_cache
