# collsel: see README.md. `make setup` installs system packages with apt-get and needs root.
SHELL := /bin/bash
PYTHON ?= python3
OUT ?= out
CC ?= gcc
CFLAGS ?= -O2 -std=c99 -Wall -Wextra -Werror -pedantic
MPICC ?= mpicc
BUILD := build

APT_PACKAGES := openmpi-bin libopenmpi-dev mpich libmpich-dev catch2 chromium \
                build-essential clang

.PHONY: setup setup-apt setup-python demo test test-python integration bench bench-encode bench-program clean

setup: setup-apt setup-python

setup-apt:
	@if [ "$$(id -u)" != 0 ]; then echo "make setup: apt-get needs root (run as root or with sudo)"; exit 1; fi
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(APT_PACKAGES)
	@# Debian installs both MPIs; collsel drives Open MPI through the plain names.
	update-alternatives --set mpi /usr/bin/mpicc.openmpi >/dev/null 2>&1 || true
	update-alternatives --set mpirun /usr/bin/mpirun.openmpi >/dev/null 2>&1 || true

setup-python:
	$(PYTHON) -m pip install -q -e '.[test]'

test: test-python

test-python:
	$(PYTHON) -m pytest -q tests --ignore=tests/integration

# Real MPI libraries end to end (Open MPI rules, patched Open MPI, MPICH JSON, report in Chromium).
integration:
	$(PYTHON) -m pytest -q tests/integration

# The main job: measured tables in bench-data/ -> stats, trees and C for bcast and reduce in out/.
DEMO_COLLECTIVES := bcast reduce
demo:
	@for c in $(DEMO_COLLECTIVES); do \
	  tables=$$(ls bench-data/*$$c*.csv 2>/dev/null); \
	  if [ -z "$$tables" ]; then echo "make demo: no bench-data/*$$c*.csv (see bench-data/README.md)"; exit 1; fi; \
	  set -e; echo "== $$c: $$tables"; mkdir -p $(OUT)/$$c; \
	  collsel stats $$tables --collective $$c --depths 6 > $(OUT)/$$c/stats.txt; \
	  head -2 $(OUT)/$$c/stats.txt; \
	  collsel build $$tables --collective $$c --out $(OUT)/$$c/exact; \
	  collsel build $$tables --collective $$c --max-depth 3 --out $(OUT)/$$c/depth3; \
	  collsel build $$tables --collective $$c --threshold 90 --leaf penalty --out $(OUT)/$$c/threshold90; \
	  $(CC) $(CFLAGS) -c $(OUT)/$$c/depth3/decision.c -o $(OUT)/$$c/depth3/decision.o; \
	done
	@echo "make demo: outputs in $(OUT)/ (stats.txt, and tree.json, stats.json, decision.c/h, Open MPI dec_fixed per tree)"

bench: bench-encode

# Exact tree + stats of a 1024 x 1024 x 40 map as a ratio to one NumPy pass (target <= 20).
bench-encode:
	$(PYTHON) bench/encode_speed.py

# The MPI benchmark `collsel sweep` runs (the sweep also builds it on first use, in ~/.cache/collsel).
bench-program: $(BUILD)/collsel_bench

$(BUILD)/collsel_bench: runtime/bench/collsel_bench.c
	@mkdir -p $(BUILD)
	$(MPICC) $(CFLAGS) -o $@ $< -lm

clean:
	rm -rf $(BUILD) $(OUT)

# --- analytical models (collsel model; issue 7) --------------------------------------------
# model-validate: fit the models on this machine from the section-5 experiments (real Open MPI,
# under the measurement lock; reuses build/model/experiments.csv when it exists), then score
# the model's choices on the shipped measured bcast sweep. model-paper: preset choices at the
# P of the paper's Table 3 beside the paper's.
.PHONY: model-validate model-paper
model-validate:
	mkdir -p $(BUILD)/model
	flock /tmp/collsel-measure.lock collsel model fit --out $(BUILD)/model/params.json \
	    --experiments $(BUILD)/model/experiments.csv
	collsel model validate $(BUILD)/model/params.json --measured bench-data/bcast-sweep.csv \
	    --json $(BUILD)/model/validate.json

model-paper:
	collsel model paper
