# qahwa — `make serve` runs the service on SQLite, `make test` runs every test.
#
# Every install comes from the hashed locks in requirements/ (pip --require-hashes):
# nothing resolves "latest". `make lock` refreshes the locks on purpose after a change to
# pyproject.toml (keeping every other pin); `make lock-upgrade` moves every pin to the newest
# release. Both rewrite requirements/*.txt, which are then committed.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The locks pin every file by hash, so where a file comes from does not matter; installs ask
# PyPI only, overriding any extra indexes a machine's pip.conf names (this workplace's
# point at local folders that may be missing, and pip warns once per package about them).
PIP := PIP_EXTRA_INDEX_URL=https://pypi.org/simple $(BIN)/python -m pip --disable-pip-version-check
HOST ?= 127.0.0.1
PORT ?= 8000
LOCKS := requirements/main.txt requirements/dev.txt requirements/tools.txt
COMPILE = $(BIN)/uv pip compile --generate-hashes --python-version 3.11 --universal \
	--custom-compile-command "make lock" -q $(UPGRADE)

.PHONY: serve test test-all bench bench-api lint demo clean lock lock-upgrade pyodide certify

$(BIN)/python:
	$(PY) -m venv $(VENV)

# Runtime only (make serve). The editable install silences only setuptools' generic
# "Editable installation" hint, so `make serve` prints no warning.
$(VENV)/.installed: requirements/main.txt pyproject.toml | $(BIN)/python
	$(PIP) install -q --require-hashes -r requirements/main.txt
	PYTHONWARNINGS="ignore:Editable installation" $(PIP) install -q --no-deps --no-build-isolation -e .
	touch $@

# Runtime, dev tools and the optional OpenSpiel reference (make test).
$(VENV)/.installed-dev: requirements/dev.txt pyproject.toml | $(BIN)/python
	$(PIP) install -q --require-hashes -r requirements/dev.txt
	PYTHONWARNINGS="ignore:Editable installation" $(PIP) install -q --no-deps --no-build-isolation -e .
	touch $@ $(VENV)/.installed

# The Pyodide runtime the verify page replays the rules with (service/pyodide.py): the pinned
# release from the npm registry (`npm pack`, integrity checked) into the git-ignored
# service/static/pyodide/. Quick when it is there already; without npm or network it warns
# and everything else works (the page then says it did not replay the rules).
PYODIDE_PIN := service/static/pyodide/.pin

$(PYODIDE_PIN): service/pyodide.py | $(BIN)/python
	$(BIN)/python -m service.pyodide fetch
	@if [ -f $@ ]; then touch $@; fi

pyodide: $(PYODIDE_PIN)

serve: $(VENV)/.installed pyodide
	$(BIN)/qahwa serve --host $(HOST) --port $(PORT)

test: $(VENV)/.installed-dev pyodide
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/pytest -q -p no:cacheprovider

bench: $(VENV)/.installed-dev pyodide
	$(BIN)/python -m bench

# The HTTP API under load against a bare FastAPI endpoint (PostgreSQL too when
# QAHWA_TEST_PG_URL is set); prints rates and ratios (docs/performance.md).
bench-api: $(VENV)/.installed-dev
	$(BIN)/python -m bench.api

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/mypy

demo: $(VENV)/.installed
	$(BIN)/qahwa demo

# The lab pack (docs/certification.md): qahwa-certify at lab sizes, a raw dump of the
# derivation with its SHA-256, and Debian's dieharder and ent run on it
# (apt-get install dieharder ent). CERTIFY_ARGS adds options, e.g. --seed S.
CERTIFY_DIR ?= certify-pack
CERTIFY_BYTES ?= 268435456
CERTIFY_ARGS ?=
certify: $(VENV)/.installed
	$(BIN)/python -m verify_cli.certify.pack --out $(CERTIFY_DIR) --bytes $(CERTIFY_BYTES) $(CERTIFY_ARGS)

lock: | $(BIN)/python
	$(PIP) install -q --require-hashes -r requirements/tools.txt
	$(COMPILE) requirements/tools.in -o requirements/tools.txt
	$(COMPILE) pyproject.toml requirements/build.in -o requirements/main.txt
	$(COMPILE) pyproject.toml requirements/build.in --extra dev --extra reference --extra certify -o requirements/dev.txt

lock-upgrade:
	$(MAKE) lock UPGRADE=--upgrade

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
