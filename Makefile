# roomd — make run / make test work on a fresh Debian machine (root or sudo).
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
CONFIG ?= config/roles.json
PORT ?= 7880

.PHONY: deps client-deps bench-deps build run cluster test test-cluster test-clients bench clean fuzz test-asan test-tsan soak format lint install deb

# System dependencies: libwebsockets, zlib (permessage-deflate, PROTOCOL.md section 1), the NATS C client
# (the cluster, section 18) and nats-server (the cluster tests start one; Debian puts it in /usr/sbin).
# Swift packages come from SwiftPM.
deps:
	@if ! command -v pkg-config >/dev/null || ! pkg-config --exists libwebsockets libnats zlib \
	    || ! { command -v nats-server || test -x /usr/sbin/nats-server; } >/dev/null; then \
	  echo "make: installing libwebsockets-dev, zlib1g-dev, libnats-dev and nats-server with apt"; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libwebsockets-dev zlib1g-dev libnats-dev nats-server pkg-config; \
	fi

build: deps
	swift build

run: build
	.build/debug/roomd --config $(CONFIG) --port $(PORT)

# nats-server and 3 nodes on loopback (ports PORT..PORT+2), Ctrl-C stops them (docs/CLUSTER.md).
# Each node runs with --drain-timeout DRAIN_TIMEOUT: SIGTERM drains it (a rolling restart).
DRAIN_TIMEOUT ?= 10
cluster: build
	CONFIG=$(CONFIG) PORT=$(PORT) DRAIN_TIMEOUT=$(DRAIN_TIMEOUT) scripts/cluster.sh

# Installs roomd (PREFIX/bin), the default template (PREFIX/share/roomd/roles.json,
# and SYSCONFDIR/roomd/roles.json unless one is there), a secret
# SYSCONFDIR/roomd/secret (48 random bytes in base64, mode 0600; only when
# none is there, never overwritten; MAKE_SECRET=no skips it, as the package
# does), the systemd unit roomd.service (UNITDIR; it runs `roomd --config
# SYSCONFDIR/roomd/roles.json` with that secret), shell completions for bash,
# zsh and fish, the man page roomd.1 (scripts/manpage.sh, from the binary's
# --help) and the README. DESTDIR stages it (make deb).
# BIN: the roomd binary to install, as it is (nothing is built; INSTALL_BIN is
# its old name); without it, a release build with the Swift runtime linked in
# statically (swift build, 10+ min cold).
PREFIX ?= /usr/local
SYSCONFDIR ?= /etc
UNITDIR ?= $(PREFIX)/lib/systemd/system
MAKE_SECRET ?= yes
BIN ?= $(INSTALL_BIN)
RELEASE_BIN := .build/release/roomd
release-bin = $(MAKE) deps && swift build -c release --static-swift-stdlib --product roomd
installed-bin = $(abspath $(or $(BIN),$(RELEASE_BIN)))
confdir = $(DESTDIR)$(SYSCONFDIR)/roomd
datadir = $(DESTDIR)$(PREFIX)/share
install:
	@if [ -z "$(BIN)" ]; then $(release-bin); fi
	@[ -f "$(installed-bin)" ] && [ -x "$(installed-bin)" ] \
	  || { echo "make install: BIN=$(installed-bin) is not an executable file" >&2; exit 1; }
	install -d $(DESTDIR)$(PREFIX)/bin $(datadir)/roomd $(confdir) $(DESTDIR)$(UNITDIR) $(datadir)/doc/roomd \
	  $(datadir)/bash-completion/completions $(datadir)/zsh/vendor-completions $(datadir)/fish/vendor_completions.d \
	  $(datadir)/man/man1
	install -m 0755 $(installed-bin) $(DESTDIR)$(PREFIX)/bin/roomd
	install -m 0644 config/roles.json $(datadir)/roomd/roles.json
	[ -e $(confdir)/roles.json ] || install -m 0644 config/roles.json $(confdir)/roles.json
	@if [ "$(MAKE_SECRET)" != no ] && [ ! -e $(confdir)/secret ]; then \
	  (set -C; umask 077; head -c 48 /dev/urandom | base64 | tr -d '\n' > $(confdir)/secret) \
	  && echo "make install: created the secret $(confdir)/secret (mode 0600)"; fi
	sed -e 's|@BINDIR@|$(PREFIX)/bin|g' -e 's|@DOCDIR@|$(PREFIX)/share/doc/roomd|g' \
	  -e 's|@CONFDIR@|$(SYSCONFDIR)/roomd|g' packaging/roomd.service.in > $(DESTDIR)$(UNITDIR)/roomd.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/roomd.service
	$(installed-bin) --generate-completion-script bash | sed '1{/^#!/d}' > $(datadir)/bash-completion/completions/roomd
	$(installed-bin) --generate-completion-script zsh > $(datadir)/zsh/vendor-completions/_roomd
	$(installed-bin) --generate-completion-script fish > $(datadir)/fish/vendor_completions.d/roomd.fish
	scripts/manpage.sh $(installed-bin) > $(datadir)/man/man1/roomd.1
	chmod 0644 $(datadir)/bash-completion/completions/roomd $(datadir)/zsh/vendor-completions/_roomd \
	  $(datadir)/fish/vendor_completions.d/roomd.fish $(datadir)/man/man1/roomd.1
	install -m 0644 README.md $(datadir)/doc/roomd/README.md

# dist/roomd_VERSION_ARCH.deb (dpkg-deb): make install into a staging tree
# (no secret in it), Depends from the libraries the binary links,
# /etc/roomd/roles.json a conffile, a postinst that creates /etc/roomd/secret,
# a postrm that removes it on purge (apt remove keeps it). BIN: package that
# binary (nothing is built); else the release build. PackagingTests builds one
# from the debug binary (uncompressed) and checks it with dpkg --contents,
# lintian and dpkg itself (install, remove, purge in a scratch root).
# DISTDIR: where the package goes.
DISTDIR ?= $(CURDIR)/dist
deb:
	@if [ -z "$(BIN)" ]; then $(release-bin); fi
	BIN=$(installed-bin) OUT=$(abspath $(DISTDIR)) scripts/deb.sh

# Lint first (a finding fails the run, so it fails CI). Builds roomd itself
# too: the integration tests run the real binary. Then the README's Swift
# snippet, built and run in a package of its own.
# At most 12 tests at once: each starts a daemon or a cluster on 2 cores.
# The tests block no thread of Swift's 2-thread pool (the blocking helpers
# of Tests/RoomServerTests/Support run on threads of their own, marked
# noasync), wait for what roomd did instead of sleeping, and run what
# races a deadline on test mode's manual clock (CONTRIBUTING.md, Test).
#
# A test process that crashes prints the crashed thread fast (full DWARF
# symbolication of every thread of the debug test bundle took over an hour
# in CI), and a pass that hangs is killed after TEST_TIMEOUT: CI gets a red
# run with a reason instead of its own 90-minute limit.
TEST_TIMEOUT ?= 25m
SWIFT_TEST_ENV := SWIFT_BACKTRACE=enable=yes,interactive=no,symbolicate=fast,threads=crashed,images=none
# Suites that run alone, after the others: HookBoundsTests holds 1,024 hook calls at once,
# and each must still be waiting when the next is refused, within timeout_ms (5 s at most):
# under the parallel run's load, opening that many hook connections took longer.
ALONE_TESTS := HookBoundsTests

test: lint deps
	swift build --build-tests
	$(SWIFT_TEST_ENV) timeout -k 30 $(TEST_TIMEOUT) swift test --experimental-maximum-parallelization-width 12 \
	  --skip $(ALONE_TESTS)
	$(SWIFT_TEST_ENV) timeout -k 30 $(TEST_TIMEOUT) swift test --skip-build --filter $(ALONE_TESTS)
	$(MAKE) test-cluster
	scripts/readme-snippet-test.sh
	$(MAKE) test-clients

# swift-format (the toolchain's `swift format`) with the rules in .swift-format
# (CONTRIBUTING.md). `make format` rewrites the files in place; `make lint`
# changes nothing and exits non-zero on any finding. It also fails when a
# type is defined twice (scripts/check-duplicate-types.sh).
SWIFT_FORMAT ?= swift format
FORMAT_PATHS := Sources Tests Fuzz Package.swift
format:
	$(SWIFT_FORMAT) format --recursive --in-place $(FORMAT_PATHS)

lint:
	$(SWIFT_FORMAT) lint --strict --recursive $(FORMAT_PATHS)
	scripts/check-duplicate-types.sh

# The server integration tests again, each daemon a 3-node cluster on its own nats-server
# (peers of a room spread round-robin over the nodes; docs/CLUSTER.md). Eight tests at a
# time: each one runs four processes.
test-cluster: deps
	ROOMD_TEST_CLUSTER=1 $(SWIFT_TEST_ENV) timeout -k 30 $(TEST_TIMEOUT) \
	  swift test --skip-build --experimental-maximum-parallelization-width 8 --filter RoomServerTests \
	  --skip $(ALONE_TESTS)
	ROOMD_TEST_CLUSTER=1 $(SWIFT_TEST_ENV) timeout -k 30 $(TEST_TIMEOUT) \
	  swift test --skip-build --filter $(ALONE_TESTS)

# The Python client (clients/python) and roomd.js in headless Chromium (clients/browser),
# against .build/debug/roomd. Debian's pip refuses the system interpreter, hence the venv.
VENV := .venv-test
test-clients: client-deps $(VENV)/.installed
	ROOMD_BIN=$(CURDIR)/.build/debug/roomd $(VENV)/bin/pytest -q clients/python/tests clients/browser

$(VENV)/.installed: clients/python/pyproject.toml Makefile
	rm -rf $(VENV)
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check websockets pytest selenium jsonschema openapi-spec-validator pyyaml build setuptools wheel
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

# Load benchmarks (roombench: roomd vs nats-server over WebSocket, the lws mirror as a floor;
# 10-s steps, a fresh server per step, 3 runs each, ~38 min, at most ~43): rewrites docs/BENCHMARKS.md.
# `make bench QUICK=1`: 1 short run per step (~2 min) into /tmp/BENCHMARKS.quick.md, to check the machinery.
bench: deps client-deps bench-deps $(VENV)/.installed
	swift build -c release
	QUICK=$(QUICK) scripts/bench.sh
	python3 scripts/startup-bench.py .build/release/roomd 20

# The feed section's load tool and baseline (wrk, nginx), from apt when missing.
bench-deps:
	@if ! command -v wrk >/dev/null || ! { command -v nginx || test -x /usr/sbin/nginx; } >/dev/null; then \
	  echo "make: installing wrk and nginx with apt"; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk nginx; \
	fi

# --- Reliability runs (docs/RELIABILITY.md). Not part of `make test` / CI. ---

# libFuzzer targets (JSON parser, template loader, dispatcher, HTTP path), each
# run for FUZZ_SECONDS; built in .build-fuzz. FUZZ_TARGETS picks some.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= json template dispatcher http
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh $(FUZZ_TARGETS)

# The whole test suite with the sanitizer compiled into the tests and into the
# roomd binary they start (ROOMD_BIN). Every sanitizer report (test process or
# daemon) is written under .build-{asan,tsan}/reports; any report fails the run.
test-asan: deps
	swift build --build-tests --sanitize=address --scratch-path .build-asan
	scripts/sanitized-test.sh address .build-asan

test-tsan: deps
	swift build --build-tests --sanitize=thread --scratch-path .build-tsan
	scripts/sanitized-test.sh thread .build-tsan

# Churn against one daemon for MINUTES, RSS and open fds sampled every 10 s into
# .build-soak/soak.csv; fails on more than 10 % growth after the warm-up (half the run, 15 min at most)
# or a call unanswered. CLUSTER=1: 3 nodes on a nats-server instead, node3
# killed (-9) and restarted every KILL_EVERY s, node2 or node3 drained (SIGTERM,
# exit 0, restarted) every DRAIN_EVERY s between the kills, every room's history
# checked for the answered messages; samples in soak-cluster.csv.
# SOAK_ARGS: more scripts/soak.py options (--workers, --seed, …; see its --help).
MINUTES ?= 30
SOAK_BIN ?= .build/debug/roomd
CLUSTER ?= 0
KILL_EVERY ?= 180
DRAIN_EVERY ?= 180
SOAK_ARGS ?=
soak: deps
	swift build --product roomd
	scripts/soak.sh --minutes $(MINUTES) --binary $(SOAK_BIN) \
	  $(if $(filter-out 0,$(CLUSTER)),--cluster 3 --kill-every $(KILL_EVERY) --drain-every $(DRAIN_EVERY)) $(SOAK_ARGS)

clean:
	rm -rf .build dist $(VENV) .build-fuzz .build-asan .build-tsan .build-soak
