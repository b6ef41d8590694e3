# roomd — make run / make test work on a fresh Debian machine (root or sudo).
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
CONFIG ?= config/roles.json
PORT ?= 7880

.PHONY: deps build run test bench clean

# libwebsockets is the only system dependency; Swift packages come from SwiftPM.
deps:
	@if ! command -v pkg-config >/dev/null || ! pkg-config --exists libwebsockets; then \
	  echo "make: installing libwebsockets-dev with apt"; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libwebsockets-dev pkg-config; \
	fi

build: deps
	swift build

run: build
	.build/debug/roomd --config $(CONFIG) --port $(PORT)

# Builds roomd itself too: the integration tests run the real binary. Then
# the README's Swift snippet, built and run in a package of its own.
test: deps
	swift build --build-tests
	swift test
	scripts/readme-snippet-test.sh

# Load benchmarks (roombench, roomd vs the lws mirror server): rewrites docs/BENCHMARKS.md.
bench: deps
	swift build -c release
	scripts/bench.sh
	python3 scripts/startup-bench.py .build/release/roomd 20

clean:
	rm -rf .build
