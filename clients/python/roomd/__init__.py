"""roomd for Python: an asyncio client, a token minter and a test runner for the roomd daemon."""
from . import hooks, webhooks
from .feed import FeedError, FeedReader
from .client import (HAND_RAISE_GROUP, PUSHES, ConnectionClosed, RoomClient, RoomdError, RpcError, UnknownPush, WaitTimeout,
                     close_pushes, connect, push_summary)
from .process import RoomdProcess, find_config, find_roomd
from .token import TokenMinter

__all__ = ["RoomClient", "RoomdError", "RpcError", "ConnectionClosed", "WaitTimeout", "UnknownPush", "PUSHES",
           "close_pushes", "push_summary", "HAND_RAISE_GROUP", "connect",
           "RoomdProcess", "find_roomd", "find_config", "TokenMinter", "webhooks", "hooks",
           "FeedReader", "FeedError"]
