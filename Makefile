# zonelab: `make test` installs what is missing, builds and runs every test;
# `make demo` builds and runs the main job.
BUILD ?= build
JOBS ?= 2
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo

.PHONY: all deps configure build test demo bench fuzz format format-check tsan clean

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

test: build format-check
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

demo: build
	scripts/demo.sh $(BUILD)/zonelab

bench: build
	scripts/bench.sh $(BUILD)

fuzz: deps
	scripts/fuzz.sh

clean:
	rm -rf $(BUILD)
