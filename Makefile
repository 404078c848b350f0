# qahwa — `make serve` runs the service on SQLite, `make test` runs every test (on two
# processes: TEST_WORKERS).
#
# Every install comes from the hashed locks in requirements/ (pip --require-hashes):
# nothing resolves "latest". `make lock` refreshes the locks on purpose after a change to
# pyproject.toml or verifier/pyproject.toml (keeping every other pin); `make lock-upgrade`
# moves every pin to the newest release. Both rewrite requirements/*.txt, which are then
# committed.
#
# Two distributions come from this repository: qahwa-verify (verifier/: fairness, games,
# the verify page, the `verify` command; `make verifier-dist` builds its wheel) and qahwa
# (the server: service, qahwa_client), which depends on it. A development venv has both,
# editable (the server first: a venv made before the split has `verify` from the old qahwa,
# which pip removes when it replaces that).
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# pip as the machine configures it (the locks pin every file by hash, so where a file comes
# from does not matter). Its one warning per package about index locations that a machine's
# pip configuration names but that do not exist is dropped; anything else pip says is shown.
PIP := $(BIN)/python -m pip --disable-pip-version-check
QUIET := 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
HOST ?= 127.0.0.1
PORT ?= 8000
LOCKS := requirements/verify.txt requirements/verify-certify.txt requirements/main.txt \
	requirements/dev.txt requirements/tools.txt
COMPILE = $(BIN)/uv pip compile --generate-hashes --python-version 3.11 --universal \
	--custom-compile-command "make lock" -q $(UPGRADE)
# The server's locks hold the verifier's pins (-c) and leave out qahwa-verify itself, which
# is on no index: pyproject.toml's [tool.uv.sources] resolves it from verifier/.
SERVER_COMPILE = $(COMPILE) -c requirements/verify.txt --no-emit-package qahwa-verify
# the two editable installs of a development venv
EDITABLE = PYTHONWARNINGS="ignore:Editable installation" $(PIP) install -q --no-deps \
	--no-build-isolation

.PHONY: serve test bench bench-api profile-api lint unasync play-js verify-js ts-types demo clean \
	lock lock-upgrade pyodide \
	verifier-dist certify

$(BIN)/python:
	$(PY) -m venv $(VENV)

# Runtime only (make serve): the venv, requirements/main.txt and the two editable installs,
# one line per step (tools/first_start.py; pip's output only if it fails).
$(VENV)/.installed: requirements/main.txt pyproject.toml verifier/pyproject.toml verifier/setup.py
	@$(PY) tools/first_start.py --install-only --no-pyodide

# Runtime, dev tools and the optional OpenSpiel reference (make test).
$(VENV)/.installed-dev: requirements/dev.txt pyproject.toml verifier/pyproject.toml verifier/setup.py | $(BIN)/python
	$(PIP) install -q --require-hashes -r requirements/dev.txt $(QUIET)
	$(EDITABLE) -e . $(QUIET)
	$(EDITABLE) -e ./verifier $(QUIET)
	touch $@ $(VENV)/.installed

# The Pyodide runtime the verify page replays the rules with (qahwa_page/pyodide.py): the
# pinned release from the npm registry (`npm pack`, integrity checked) into the git-ignored
# qahwa_page/static/pyodide/. Quick when it is there already; without npm or network it
# warns and everything else works (the page then says it did not replay the rules).
PYODIDE_PIN := qahwa_page/static/pyodide/.pin

$(PYODIDE_PIN): qahwa_page/pyodide.py | $(BIN)/python
	$(BIN)/python -m qahwa_page.pyodide fetch
	@if [ -f $@ ]; then touch $@; fi

pyodide: $(PYODIDE_PIN)

# The verifier's own wheel, dist/qahwa_verify-<version>-py3-none-any.whl: the packages
# listed in verifier/setup.py and the pinned Pyodide runtime, checked file by file (the
# build fails without it). Built with the locked setuptools (requirements/build.in).
verifier-dist: $(VENV)/.installed
	$(BIN)/python -m qahwa_page.pyodide fetch
	rm -rf verifier/build
	$(PIP) wheel -q --no-deps --no-build-isolation -w dist ./verifier $(QUIET)
	rm -rf verifier/build
	@ls dist/qahwa_verify-*-py3-none-any.whl

# The install and the Pyodide fetch overlap; one line per step, then the server.
serve:
	@$(PY) tools/first_start.py --host $(HOST) --port $(PORT)

# The tests on TEST_WORKERS processes (pytest-xdist), a whole file to a process (module
# fixtures start once; test_verifier_dist builds in verifier/); each process has a PostgreSQL
# test database of its own (tests/conftest.py). TEST_WORKERS=0 runs them in this process.
TEST_WORKERS ?= 2
test: lint pyodide
	$(BIN)/pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadfile

bench: $(VENV)/.installed-dev pyodide
	$(BIN)/python -m bench

# The HTTP API under load against two anchors that do not use the service's code: the raw
# floor (a FastAPI endpoint on raw DB-API: sqlite3, psycopg) and plain SQLModel sessions
# (PostgreSQL too when QAHWA_TEST_PG_URL is set); prints server CPU per action and its
# ratios to the anchors' first, then rates and latency (docs/performance.md).
bench-api: $(VENV)/.installed-dev
	$(BIN)/python -m bench.api

# clients/ts/src/api.d.ts, the TypeScript client's types, from the app's OpenAPI document
# (tests/client/test_clients_ts.py fails when they are stale); npm installs from the lock only.
# qahwa_page/static/play.js, the web table's script (/play), from clients/ts/play with the
# locked esbuild, built with sealed-verify.js: the chunk-*.js they share holds the @noble
# libraries once (git rm a chunk the build no longer writes); committed, so `make serve` needs
# no node (tests/page/test_play_page.py fails when it differs from a fresh build).
play-js:
	cd clients/ts && npm ci --no-audit --no-fund && npm run build:play

# qahwa_page/static/verify.js, merkle.js, verify-worker.js and sealed-verify.js: the verify page's
# scripts, bundles of clients/ts (src/ and page/, one TypeScript core; sealed-verify.js carries
# src/sealed's cryptography with the locked @noble/curves and @noble/hashes) by the locked esbuild;
# committed (tests/page/test_verify_page_bundles.py fails when one differs from a fresh build).
verify-js:
	cd clients/ts && npm ci --no-audit --no-fund && npm run build:verify

ts-types: $(VENV)/.installed-dev
	cd clients/ts && npm ci --no-audit --no-fund
	$(BIN)/python -c "import json, pathlib, tempfile; \
	from tests.client.test_openapi_ts import openapi_document; \
	print(json.dumps(openapi_document(pathlib.Path(tempfile.mkdtemp()))))" > clients/ts/openapi.json
	cd clients/ts && node node_modules/openapi-typescript/bin/cli.js openapi.json -o src/api.d.ts
	rm clients/ts/openapi.json

# A CPU profile of a live `qahwa serve` under bench-api's load (py-spy, from the dev lock;
# it needs ptrace: root, or kernel.yama.ptrace_scope 0): profile-api/table.md (server CPU
# per action by part of the stack and by function, SQL statements and hand-offs per action),
# profile-api/profile.txt (collapsed stacks) and profile-api/flamegraph.svg.
# PROFILE_ARGS adds options (python -m bench.profile_api --help), e.g. --game tawla.
PROFILE_ARGS ?=
profile-api: $(VENV)/.installed-dev
	$(BIN)/python -m bench.profile_api $(PROFILE_ARGS)

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/python scripts/unasync.py --check
	@$(BIN)/python scripts/branches.py
	@$(BIN)/python scripts/trace_move.py

# The sync client (qahwa_client/client.py) is generated from the async one (aio.py).
unasync: $(VENV)/.installed-dev
	$(BIN)/python scripts/unasync.py

demo: $(VENV)/.installed
	$(BIN)/qahwa demo

# The lab pack (docs/certification.md): verify certify at lab sizes, a raw dump of the
# derivation with its SHA-256, and Debian's dieharder and ent run on it
# (apt-get install dieharder ent). CERTIFY_ARGS adds options, e.g. --seed S.
CERTIFY_DIR ?= certify-pack
CERTIFY_BYTES ?= 268435456
CERTIFY_ARGS ?=
certify: $(VENV)/.installed
	$(BIN)/python -m verify_cli.certify.pack --out $(CERTIFY_DIR) --bytes $(CERTIFY_BYTES) $(CERTIFY_ARGS)

lock: | $(BIN)/python
	$(PIP) install -q --require-hashes -r requirements/tools.txt $(QUIET)
	$(COMPILE) requirements/tools.in -o requirements/tools.txt
	$(COMPILE) verifier/pyproject.toml -o requirements/verify.txt
	$(SERVER_COMPILE) pyproject.toml requirements/build.in -o requirements/main.txt
	$(SERVER_COMPILE) pyproject.toml verifier/pyproject.toml requirements/build.in --extra dev \
		--extra reference --extra certify -o requirements/dev.txt
	$(COMPILE) verifier/pyproject.toml --extra certify -c requirements/dev.txt \
		-o requirements/verify-certify.txt

lock-upgrade:
	$(MAKE) lock UPGRADE=--upgrade

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis verifier/build dist
