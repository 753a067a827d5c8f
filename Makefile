# zonelab: `make test` installs what is missing, builds and runs every test;
# `make demo` builds and runs the main job; `make experiments` regenerates
# every experiment's committed results under experiments/ (CSV, JSON, PNG,
# README.md); `make experiments-check` checks that they are current.
BUILD ?= build
TSAN_BUILD ?= build-tsan
JOBS ?= 2
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo
PYTHON ?= python3
VENV ?= .venv

.PHONY: all deps configure build test demo bench fuzz format format-check tsan clean \
	plot-deps experiments experiments-quick experiments-check install-python

all: build

deps:
	@scripts/install-deps.sh
	@scripts/fio-source.sh >/dev/null

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

# `import zonelab` from anywhere for Debian's python3 (and this user): a
# zonelab.pth in its user site-packages naming build/python (docs/python.md).
install-python: build
	@site=$$(/usr/bin/python3 -m site --user-site) && mkdir -p "$$site" && \
	  echo "$(abspath $(BUILD))/python" > "$$site/zonelab.pth" && \
	  echo "install-python: $$site/zonelab.pth -> $(abspath $(BUILD))/python"

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

# Each set and the directory its committed results live in. The
# deterministic sets (virtual time only) also keep a quick run's results in
# experiments/SET/quick, which CI checks byte for byte (ctest
# experiment_references); rocksdb-zns-vs-block, rocksdb-zenfsplus and
# flexzns-rocksdb read the wall clock.
DETERMINISTIC_EXPERIMENTS := confznspp=experiments/confznspp \
	block-tax=experiments/block-tax/results \
	zinc-softfinish=experiments/zinc-softfinish/results \
	flexzns=experiments/flexzns/results \
	zn540=experiments/zn540/results \
	confzns=experiments/confzns/results

experiments: build plot-deps
	$(BUILD)/zonelab experiment run confznspp --out experiments/confznspp
	$(BUILD)/zonelab experiment run block-tax --out experiments/block-tax/results
	$(BUILD)/zonelab experiment run zinc-softfinish --out experiments/zinc-softfinish/results
	$(BUILD)/zonelab experiment run rocksdb-zns-vs-block --out experiments/rocksdb-zns-vs-block/results
	$(BUILD)/zonelab experiment run flexzns --out experiments/flexzns/results
	$(BUILD)/zonelab experiment run zn540 --out experiments/zn540/results
	$(BUILD)/zonelab experiment run confzns --out experiments/confzns/results
	$(BUILD)/zonelab experiment run rocksdb-zenfsplus --out experiments/rocksdb-zenfsplus/results
	$(BUILD)/zonelab experiment run flexzns-rocksdb --out experiments/flexzns-rocksdb/results
	$(BUILD)/zonelab experiment run rocksdb-fs-vs-zenfs --out experiments/rocksdb-fs-vs-zenfs/results
	$(MAKE) experiments-quick
	$(PYTHON) scripts/evidence-summary.py --write docs/experiments.md

# The quick references CI compares with.
experiments-quick: build
	@for pair in $(DETERMINISTIC_EXPERIMENTS); do \
	  set=$${pair%%=*}; \
	  $(BUILD)/zonelab experiment run $$set --quick --no-plots --out experiments/$$set/quick \
	    >/dev/null || exit 1; \
	done

# Reruns every deterministic set in full and compares its CSV, JSON and
# README.md with the committed ones byte for byte (about 2 min); then the
# quick references and the evidence table in docs/experiments.md.
experiments-check: build
	@status=0; \
	for pair in $(DETERMINISTIC_EXPERIMENTS); do \
	  set=$${pair%%=*}; dir=$${pair#*=}; \
	  $(BUILD)/zonelab experiment check $$set --against $$dir 2>/dev/null || status=1; \
	  $(BUILD)/zonelab experiment check $$set --quick --against experiments/$$set/quick \
	    2>/dev/null || status=1; \
	done; \
	$(PYTHON) scripts/evidence-summary.py --check docs/experiments.md || status=1; \
	exit $$status

fuzz: deps
	scripts/fuzz.sh

clean:
	rm -rf $(BUILD) $(TSAN_BUILD)
