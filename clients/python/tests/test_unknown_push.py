"""A misspelled push name fails at once, naming the close ones, instead of waiting out the timeout
(issue 38): the Python kit over a real socket (roomd.js: clients/browser/test_node.py)."""
import asyncio
import time

import pytest

from roomd import PUSHES, UnknownPush, close_pushes


def test_close_pushes_names_at_most_three_prefix_and_suffix_first():
    assert close_pushes("on-role-change-requested") == ["on-role-change-request", "on-role-change-rejected"]
    assert close_pushes("peer-join") == ["on-peer-join"]
    assert close_pushes("zzzzzzzzzz") == []
    assert len(close_pushes("on-")) == 3
    assert "on-stage-status" in PUSHES


def test_a_misspelled_push_fails_at_once_with_the_close_ones(roomd):
    async def scenario():
        client = await roomd.join("show", "host-1", "host")
        started = time.monotonic()
        with pytest.raises(UnknownPush) as raised:
            await client.next("on-role-change-requested", timeout=30)
        elapsed = time.monotonic() - started
        with pytest.raises(ValueError, match="did you mean on-peer-join"):
            await client.next("peer-join", where=lambda p: True, timeout=30)
        await client.close()
        return raised.value, elapsed

    error, elapsed = asyncio.run(scenario())
    assert elapsed < 1
    assert str(error) == ('unknown push "on-role-change-requested": did you mean on-role-change-request, '
                          'on-role-change-rejected?')
    assert error.suggestions == ["on-role-change-request", "on-role-change-rejected"]
