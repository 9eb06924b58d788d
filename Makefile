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

.PHONY: setup setup-apt setup-python demo test test-python bench clean

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
	$(PYTHON) -m pytest -q tests

clean:
	rm -rf $(BUILD) $(OUT)
