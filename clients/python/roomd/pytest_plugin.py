"""pytest plugin (registered through the ``pytest11`` entry point): the ``roomd`` fixture.

    def test_hello(roomd):            # a fresh daemon on a free port
        async def scenario():
            host = await roomd.join("show", "host-1", "host")
            ...
        asyncio.run(scenario())

``roomd_factory(config=..., args=[...], binary=..., webhooks=...)`` starts more
daemons or other templates; ``webhook_sink`` is a webhook receiver whose
verified events a test asserts (``roomd_factory(webhooks=webhook_sink)``,
``await webhook_sink.next("peer.join.success")``); ``hook_server`` is the app's hook
whose answers a test sets per call (``roomd_factory(hooks=hook_server)``,
``hook_server.answer(roomd.hooks.deny("no"))``). Every daemon is stopped with SIGTERM at teardown; when the
test fails, its stderr is added to the report ("roomd stderr" section).
"""
from __future__ import annotations

from typing import Callable, List

import pytest

from .process import RoomdProcess
from .hooks import HookServer
from .webhooks import WebhookSink


@pytest.fixture
def roomd_factory(request: pytest.FixtureRequest):
    started: List[RoomdProcess] = []
    request.node._roomd_processes = started

    def start(**kwargs) -> RoomdProcess:
        process = RoomdProcess(**kwargs).start()
        started.append(process)
        return process

    yield start
    for process in started:
        process.stop()


@pytest.fixture
def roomd(roomd_factory: Callable[..., RoomdProcess]) -> RoomdProcess:
    """A roomd started for this test on 127.0.0.1, port 0, a fresh secret,
    the shipped config/roles.json (binary: $ROOMD_BIN or .build/debug/roomd)."""
    return roomd_factory()


@pytest.fixture
def webhook_sink():
    """A :class:`roomd.webhooks.WebhookSink` on a free loopback port, closed at teardown."""
    sink = WebhookSink()
    yield sink
    sink.close()


@pytest.fixture
def hook_server():
    """A :class:`roomd.hooks.HookServer` on a free loopback port, closed at teardown."""
    server = HookServer()
    yield server
    server.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    processes = getattr(item, "_roomd_processes", None)
    if report.failed and processes:
        for index, process in enumerate(processes):
            title = "roomd stderr" if len(processes) == 1 else f"roomd {index + 1} stderr"
            report.sections.append((title, process.stderr or "(empty)"))
