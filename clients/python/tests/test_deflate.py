"""permessage-deflate with a real client library (websockets compresses by default): what roomd
negotiates, and compressed messages from many clients at once arriving intact (PROTOCOL.md section 1)."""
import asyncio
import hashlib
import inspect
import json
import random

import websockets
from websockets.extensions.permessage_deflate import ClientPerMessageDeflateFactory

from roomd import RoomClient

BOTH_FLAGS = "permessage-deflate; server_no_context_takeover; client_no_context_takeover"


def _extensions(ws):
    """The 101's Sec-WebSocket-Extensions (websockets >= 14, and the legacy client)."""
    response = getattr(ws, "response", None)
    headers = response.headers if response is not None else ws.response_headers
    return headers.get("Sec-WebSocket-Extensions")


async def _connect(url, **kwargs):
    if "proxy" in inspect.signature(websockets.connect).parameters:
        kwargs["proxy"] = None
    return await websockets.connect(url, max_size=None, **kwargs)


def test_the_kit_negotiates_permessage_deflate(roomd):
    async def scenario():
        client = await roomd.connect()
        assert _extensions(client._ws) == BOTH_FLAGS
        await client.close()

        plain = await _connect(roomd.url, compression=None)
        assert _extensions(plain) is None
        await plain.close()

        # A server window lws cannot answer is declined: the client connects uncompressed.
        windowed = await _connect(roomd.url, compression=None,
                                  extensions=[ClientPerMessageDeflateFactory(server_max_window_bits=10)])
        assert _extensions(windowed) is None
        await windowed.close()

    asyncio.run(scenario())


def test_a_client_that_asks_for_server_no_context_takeover_alone(roomd):
    # lws 4.1.6 swaps the two flags for a server; roomd answers both, so that the client
    # compresses every message from a fresh state and lws inflates each on its own.
    async def scenario():
        ws = await _connect(roomd.url, compression=None,
                            extensions=[ClientPerMessageDeflateFactory(server_no_context_takeover=True)])
        assert _extensions(ws) == BOTH_FLAGS
        client = RoomClient(ws)
        for _ in range(5):  # the same text again and again: back-references if a context were kept
            assert "server_time" in await client.call("ping", {})
        await client.close()

    asyncio.run(scenario())


def test_large_compressed_messages_from_many_clients_arrive_intact(roomd):
    # Each message inflates past lws' 1 KiB chunk, so lws finishes inflating it in a later
    # pass; lws 4.1.6 then read from a buffer other connections' reads had overwritten
    # (roomd hands zlib a copy: shim.h). Every broadcast must reach every peer intact.
    clients, messages = 10, 8

    def text(sender, index):
        rng = random.Random(sender * 1000 + index)
        words = " ".join(rng.choice(["live", "show", "stage", "guest", "viewer", "chat", "clap", "vote",
                                     "question", "host", "mic", "camera", "lights"]) for _ in range(600))
        body = f"{sender}:{index}:" + words[:3600]
        return hashlib.sha256(body.encode()).hexdigest() + " " + body

    async def scenario():
        peers = [await roomd.join("deflate", f"u{i}", "host") for i in range(clients)]
        for peer in peers:
            assert _extensions(peer._ws) == BOTH_FLAGS

        async def send_all(i, peer):
            await asyncio.gather(*(peer.broadcast(text(i, k)) for k in range(messages)))

        await asyncio.gather(*(send_all(i, peer) for i, peer in enumerate(peers)))
        for i, peer in enumerate(peers):
            seen = set()
            while len(seen) < (clients - 1) * messages:
                message = (await peer.next("on-broadcast", timeout=30))["info"]["message"]
                digest, body = message.split(" ", 1)
                assert hashlib.sha256(body.encode()).hexdigest() == digest, f"peer {i} got a corrupted message"
                seen.add(body.split(":", 2)[0] + ":" + body.split(":", 2)[1])
            assert len(seen) == (clients - 1) * messages
        for peer in peers:
            await peer.close()

    asyncio.run(scenario())
