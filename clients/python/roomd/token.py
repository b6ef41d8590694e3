"""HS256 tokens minted exactly like roomd's own TokenMinter (PROTOCOL.md section 11).

Standard library only: hmac + hashlib + base64 + json.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
import uuid
from typing import Optional, Union

__all__ = ["TokenMinter"]

_HEADER = b'{"alg":"HS256","typ":"JWT"}'


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class TokenMinter:
    """Mints app tokens (for `join`) and management tokens (for the REST API).

    >>> minter = TokenMinter("a-test-secret-of-at-least-32-bytes!!")
    >>> token = minter.app_token(room="show", user="host-1", role="host", name="Ada")
    """

    def __init__(self, secret: Union[str, bytes]):
        self.secret = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)

    def app_token(
        self,
        room: str,
        user: str,
        role: str,
        name: Optional[str] = None,
        ttl: float = 24 * 3600,
        restrictions: Optional[str] = None,
        access_key: Optional[str] = None,
        now: Optional[float] = None,
    ) -> str:
        """An app token: type "app", version 2, room_id, user_id, role, optional
        name / user_restrictions (e.g. "view_and_polls_only") / access_key,
        whole-second iat, nbf = iat - 1, exp = iat + ttl, a fresh jti."""
        claims = {"type": "app", "version": 2, "room_id": room, "user_id": user, "role": role}
        if name is not None:
            claims["name"] = name
        if restrictions is not None:
            claims["user_restrictions"] = restrictions
        if access_key is not None:
            claims["access_key"] = access_key
        return self._sign(claims, ttl, now)

    def management_token(self, ttl: float = 24 * 3600, now: Optional[float] = None) -> str:
        """A management token (type "management", no room/user/role) for the REST API."""
        return self._sign({"type": "management", "version": 2}, ttl, now)

    def sign(self, claims: dict) -> str:
        """Signs arbitrary claims as given (for tests of bad tokens)."""
        payload = json.dumps(claims, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        signing_input = _b64url(_HEADER) + "." + _b64url(payload)
        mac = hmac.new(self.secret, signing_input.encode("ascii"), hashlib.sha256).digest()
        return signing_input + "." + _b64url(mac)

    def _sign(self, claims: dict, ttl: float, now: Optional[float]) -> str:
        issued = int(time.time() if now is None else now)  # whole seconds, rounded down
        claims = dict(claims)
        claims["iat"] = issued
        claims["nbf"] = issued - 1
        claims["exp"] = int(issued + ttl)
        claims["jti"] = str(uuid.uuid4()).upper()
        return self.sign(claims)
