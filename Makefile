VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip

.PHONY: run test install dev clean

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e .
	touch $@

$(VENV)/.dev-installed: $(VENV)/.installed
	$(PIP) install -q -e '.[dev,storage]'
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
	$(PY) -m pytest -q

clean:
	rm -rf $(VENV) out
