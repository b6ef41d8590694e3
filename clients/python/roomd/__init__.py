"""roomd for Python: an asyncio client, a token minter and a test runner for the roomd daemon."""
from . import webhooks
from .feed import FeedError, FeedReader
from .client import HAND_RAISE_GROUP, ConnectionClosed, RoomClient, RoomdError, RpcError, WaitTimeout, connect, push_summary
from .process import RoomdProcess, find_config, find_roomd
from .token import TokenMinter

__all__ = ["RoomClient", "RoomdError", "RpcError", "ConnectionClosed", "WaitTimeout", "push_summary", "HAND_RAISE_GROUP", "connect",
           "RoomdProcess", "find_roomd", "find_config", "TokenMinter", "webhooks",
           "FeedReader", "FeedError"]
