# zonelab: `make test` installs what is missing, builds and runs every test;
# `make demo` builds and runs the main job; `make experiments` regenerates
# every experiment's committed results under experiments/ (CSV, JSON, PNG,
# README.md).
BUILD ?= build
TSAN_BUILD ?= build-tsan
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

test: build format-check plot-deps tsan
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The multi-threaded code's tests (the real-time driver, the stack over it,
# the file system from many threads)
# under ThreadSanitizer, in their own build directory; only that test binary
# is built. Any report fails the run.
tsan: deps
	@test -f $(TSAN_BUILD)/build.ninja || \
	  cmake -S . -B $(TSAN_BUILD) -G Ninja $(CMAKE_FLAGS) -DZONELAB_TSAN=ON
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target zonelab_concurrency_tests
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 $(TSAN_OPTIONS)" \
	  $(TSAN_BUILD)/zonelab_concurrency_tests --gtest_filter='Realtime*:StackRealtime*:FsRealtime*' \
	  --gtest_brief=1

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
	$(BUILD)/zonelab experiment run zinc-softfinish --out experiments/zinc-softfinish/results
	$(BUILD)/zonelab experiment run rocksdb-zns-vs-block --out experiments/rocksdb-zns-vs-block/results
	$(BUILD)/zonelab experiment run flexzns --out experiments/flexzns/results
	$(BUILD)/zonelab experiment run zn540 --out experiments/zn540/results

fuzz: deps
	scripts/fuzz.sh

clean:
	rm -rf $(BUILD) $(TSAN_BUILD)
