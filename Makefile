# roomd — make run / make test work on a fresh Debian machine (root or sudo).
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
CONFIG ?= config/roles.json
PORT ?= 7880

.PHONY: deps client-deps build run cluster test test-clients bench clean

# System dependencies: libwebsockets, the NATS C client (the cluster, PROTOCOL.md
# section 18) and nats-server (the cluster tests start one; Debian puts it in /usr/sbin). Swift packages come from SwiftPM.
deps:
	@if ! command -v pkg-config >/dev/null || ! pkg-config --exists libwebsockets libnats \
	    || ! { command -v nats-server || test -x /usr/sbin/nats-server; } >/dev/null; then \
	  echo "make: installing libwebsockets-dev, libnats-dev and nats-server with apt"; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libwebsockets-dev libnats-dev nats-server pkg-config; \
	fi

build: deps
	swift build

run: build
	.build/debug/roomd --config $(CONFIG) --port $(PORT)

# nats-server and 3 nodes on loopback (ports PORT..PORT+2), Ctrl-C stops them (docs/CLUSTER.md).
cluster: build
	CONFIG=$(CONFIG) PORT=$(PORT) scripts/cluster.sh

# Builds roomd itself too: the integration tests run the real binary. Then
# the README's Swift snippet, built and run in a package of its own.
test: deps
	swift build --build-tests
	swift test
	scripts/readme-snippet-test.sh
	$(MAKE) test-clients

# The Python client (clients/python) and roomd.js in headless Chromium (clients/browser),
# against .build/debug/roomd. Debian's pip refuses the system interpreter, hence the venv.
VENV := .venv-test
test-clients: client-deps $(VENV)/.installed
	ROOMD_BIN=$(CURDIR)/.build/debug/roomd $(VENV)/bin/pytest -q clients/python/tests clients/browser

$(VENV)/.installed: clients/python/pyproject.toml Makefile
	rm -rf $(VENV)
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check websockets pytest selenium jsonschema openapi-spec-validator pyyaml
	$(VENV)/bin/pip install -q --disable-pip-version-check -e clients/python
	touch $@

# python3-venv (ensurepip), chromium and chromium-driver from apt when missing.
client-deps:
	@if ! python3 -c 'import ensurepip' 2>/dev/null || ! command -v chromium >/dev/null \
	    || ! command -v chromedriver >/dev/null; then \
	  echo "make: installing python3-venv, chromium and chromium-driver with apt"; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv chromium chromium-driver; \
	fi

# Load benchmarks (roombench, roomd vs the lws mirror server): rewrites docs/BENCHMARKS.md.
bench: deps
	swift build -c release
	scripts/bench.sh
	python3 scripts/startup-bench.py .build/release/roomd 20

clean:
	rm -rf .build $(VENV)
