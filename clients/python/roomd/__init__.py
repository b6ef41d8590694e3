"""roomd for Python: an asyncio client, a token minter and a test runner for the roomd daemon."""
from .client import HAND_RAISE_GROUP, ConnectionClosed, RoomClient, RoomdError, RpcError, connect
from .feed import FeedError, FeedReader
from .process import RoomdProcess, find_config, find_roomd
from .token import TokenMinter

__all__ = ["RoomClient", "RoomdError", "RpcError", "ConnectionClosed", "HAND_RAISE_GROUP", "connect",
           "RoomdProcess", "find_roomd", "find_config", "TokenMinter",
           "FeedReader", "FeedError"]
