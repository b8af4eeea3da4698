# Two commands for a newcomer: `make run` (app on a bundled example) and `make test` (whole suite).
# Each creates .venv and installs the pinned dependencies itself.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test test-fast lint schema bench bench-diagnosis browser fixtures

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt -e '.[test]'
	touch $(STAMP)

browser:
	@command -v chromium >/dev/null 2>&1 || ( \
	  echo "installing Debian chromium for the browser tests"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium >/dev/null )

run: $(STAMP)
	GRADIO_ANALYTICS_ENABLED=False $(PY) app.py --example

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(PY) -m doctor.schema --check
	@command -v node >/dev/null 2>&1 || ( \
	  echo "installing Debian nodejs for pyright"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq nodejs >/dev/null )
	$(VENV)/bin/pyright --pythonpath $(PY)

# Regenerate docs/report.schema.json and the field reference of docs/report-schema.md from doctor/model.
schema: $(STAMP)
	$(PY) -m doctor.schema

test: $(STAMP) browser lint
	@GRADIO_ANALYTICS_ENABLED=False PERF_DOCTOR_REQUIRE_BROWSER=1 $(PY) -m pytest; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing on purpose" >&2; exit 1; fi; exit $$rc

# The developers' lane: no slow, browser or MindSpore tests (CI runs everything with `make test`), on
# every core (pytest-xdist), a test module per worker so that its cached runs are read once.
test-fast: $(STAMP)
	@GRADIO_ANALYTICS_ENABLED=False $(PY) -m pytest -q -n auto --dist loadfile -m "not slow and not browser and not mindspore"; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing on purpose" >&2; exit 1; fi; exit $$rc

bench: $(STAMP)
	$(PY) bench/run.py

# Diagnosis accuracy: causes injected into real and generated profiles, healthy pairs (bench/DIAGNOSIS.md).
bench-diagnosis: $(STAMP)
	$(PY) bench/diagnosis.py

# Regenerate the real MindSpore fixtures (sequential; a few minutes on 2 cores).
fixtures: $(STAMP)
	$(PY) tests/fixtures/cpu/generate.py --all
	$(PY) tests/fixtures/mindir/generate.py
	$(PY) assets/examples/generate.py
	$(PY) tests/fixtures/cpu/export_mindir.py
	$(PY) tests/fixtures/cpu/export_mindir.py --out assets/examples/amp_train_vs_fp32_infer
