VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip

# Test workers (pytest-xdist): one file's tests stay on one worker, in order, so a module's
# fixtures start once and a file's timing tests never race each other; each example of the walk goes
# to a worker of its own (tests/conftest.py). Two more than the cores: much of the suite waits on the
# processes, emulators and sleeps it starts (with 4 workers on 2 cores the suite used 1.7 cores;
# docs/performance.md, *The test suite*).
TEST_WORKERS ?= $(shell python3 -c 'import os; print((os.cpu_count() or 1) + 2)')
PYTEST := $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile
# `make test WITH_EXAMPLES=1` (CI) runs the catalogue walk in the same pool: its examples keep the CPU
# busy while the suite's tests wait.
TEST_MARKERS := not alone$(if $(WITH_EXAMPLES),, and not examples)

.PHONY: run test test-fast test-examples install dev clean

# The suite starts several hundred Python processes (its workers, the command lines it runs, their memory
# passes): with PYTHONDONTWRITEBYTECODE set each would compile ckptbench and rewrite the test files again
# (pytest's assertion rewriting: 4.4 s of CPU a worker), where they can read what the first one wrote.
test test-examples test-fast: export PYTHONDONTWRITEBYTECODE :=

# uv resolves and installs ckptbench's ~70 wheels several times faster than pip (docs/performance.md,
# *ckptbench's own speed*); it is one wheel from PyPI itself, and the venv keeps pip for the user. A uv
# already on PATH is used as it is.
UV_ON_PATH := $(shell command -v uv 2>/dev/null)
UV := $(if $(UV_ON_PATH),$(UV_ON_PATH),$(VENV)/bin/uv)
UV_PIP := $(UV) pip install -q --python $(PY)

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(if $(UV_ON_PATH),,$(PIP) install -q uv)
	$(UV_PIP) -e .
	touch $@

# The torch and pathways extras with pip: it reads the machine's pip configuration, where a CPU-only torch
# wheel may lie (uv would fetch PyPI's CUDA build).
$(VENV)/.dev-installed: $(VENV)/.installed
	$(UV_PIP) -e '.[dev,storage,safetensors]'
	-$(PIP) install -q -e '.[torch]'
	-$(PIP) install -q -e '.[pathways]'
	touch $@

install: $(VENV)/.installed

dev: $(VENV)/.dev-installed

run: $(VENV)/.installed
	$(VENV)/bin/ckptbench run examples/quickstart.yaml -o out/quickstart --overwrite
	@echo "ckptbench is $(VENV)/bin/ckptbench; 'source $(VENV)/bin/activate' puts it on your PATH"

test: $(VENV)/.dev-installed
	$(VENV)/bin/lint-imports
	$(PYTEST) -m "$(TEST_MARKERS)"
	# Tests that judge timings over many runs, with no other test beside them.
	$(PY) -m pytest -q -m alone

# Every shipped example as a user first runs it (tests/test_example_walk.py), one per worker.
test-examples: $(VENV)/.dev-installed
	$(PYTEST) -m examples

# In-process tests only: no test that starts a Python process or a server.
test-fast: $(VENV)/.dev-installed
	$(PYTEST) -m "not slow and not alone"

clean:
	rm -rf $(VENV) out
