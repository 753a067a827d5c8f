# zonelab: `make test` installs what is missing, builds and runs every test;
# `make demo` builds and runs the main job; `make experiments` regenerates
# experiments/confznspp and experiments/block-tax/results (CSV, JSON, PNG,
# README.md).
BUILD ?= build
JOBS ?= 2
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo
PYTHON ?= python3
VENV ?= .venv

.PHONY: all deps configure build test demo bench fuzz format format-check tsan clean \
	plot-deps experiments

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

format-check: deps
	@scripts/format.sh --check

format: deps
	@scripts/format.sh

test: build format-check plot-deps
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

demo: build
	scripts/demo.sh $(BUILD)/zonelab

bench: build
	scripts/bench.sh $(BUILD)

# The plotting tool's Python packages (tools/plot/requirements.txt) in a
# virtualenv; the stamp skips the install while the requirements are unchanged.
plot-deps: $(VENV)/.requirements-installed

$(VENV)/.requirements-installed: tools/plot/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r $<
	touch $@

experiments: build plot-deps
	$(BUILD)/zonelab experiment run confznspp --out experiments/confznspp
	$(BUILD)/zonelab experiment run block-tax --out experiments/block-tax/results

fuzz: deps
	scripts/fuzz.sh

clean:
	rm -rf $(BUILD)
