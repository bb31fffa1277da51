# balgen: `make demo` fills the default suite and imports it into a local geth;
# `make test` runs the project's tests. Both install what they need first.

PYTHON ?= python3

# Python writes and reuses its bytecode cache (a machine that sets PYTHONDONTWRITEBYTECODE would make each
# pytest worker and each balgen process compile balgen and the rewritten tests again: collection 7.6 CPU-s
# a worker instead of 3.0, and about 0.3 CPU-s more for each of make test's balgen processes).
unexport PYTHONDONTWRITEBYTECODE
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test tools venv fill benchmark clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

tools:
	./scripts/install-tools.sh

demo: venv tools
	$(PY) -m balgen.commands.demo

# Four workers on two cores: a worker waiting on a client it started, or on a shared fill another worker
# makes, leaves a core idle, and the others fill it (quiet machine, same code: 315 s wall with two, 294 s
# with three; 2026-11-29, the tests then 470 CPU-s: 254 s with three, 249 s with four, the same CPU).
test: venv tools
	$(PY) -m pytest tests -n 4 --dist loadfile --no-loadscope-reorder --durations=10

fill: venv tools
	$(VENV)/bin/balgen fill

benchmark: venv tools
	$(PY) benchmarks/fill_speed.py

clean:
	rm -rf fixtures results
