"""API keys: one namespace each, stored hashed; plus one admin key for every namespace.

A key reads ``enf_<id>_<secret>``: the id finds the stored row, the secret is checked against
its SHA-256 in constant time. The secret is shown once, at creation, and never stored. A key
asking for another namespace is told that namespace does not exist (404), so keys cannot
probe which namespaces are in use.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from enfold.errors import ConfigError, InputError, NotFound
from enfold.model import now, valid_namespace
from enfold.store.base import ApiKey, KeyStore, Store

PREFIX = "enf"


class Unauthorized(Exception):
    """No usable credentials (missing, malformed, unknown or revoked key): HTTP 401."""


class Hidden(Exception):
    """The key is valid but not for this namespace: answered as 404, never as 403."""


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def key_store(store: Store) -> KeyStore:
    """The store's API-key table, or a ConfigError naming the backend that lacks one."""
    if not isinstance(store, KeyStore):
        raise ConfigError(f"the store {store.url} cannot hold API keys; "
                          "use --no-auth (loopback only) or the admin key alone")
    return store


def create_key(store: Store, namespace: str, *, label: str | None = None
               ) -> tuple[ApiKey, str]:
    """Create a key for ``namespace``; returns the stored row and the full key (shown once)."""
    if not valid_namespace(namespace):
        raise InputError(f"invalid namespace {namespace!r}")
    key_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    row = ApiKey(key_id, namespace, _digest(secret), label, now())
    key_store(store).create_api_key(row)
    return row, f"{PREFIX}_{key_id}_{secret}"


def revoke_key(store: Store, key_id: str) -> None:
    if not key_store(store).revoke_api_key(key_id, now()):
        raise NotFound(f"no active API key {key_id!r}")


def list_keys(store: Store, namespace: str | None = None) -> list[ApiKey]:
    return key_store(store).list_api_keys(namespace)


@dataclass(frozen=True)
class Principal:
    """Who a request is: the admin (every namespace) or a key of one namespace."""

    admin: bool
    namespace: str | None = None
    key_id: str | None = None


class Authenticator:
    """Checks bearer tokens against the admin key and the store's key table."""

    def __init__(self, store: Store, *, admin_key: str | None, enabled: bool = True) -> None:
        self.enabled = enabled
        self._admin = _digest(admin_key) if admin_key else None
        self._keys = store if isinstance(store, KeyStore) else None
        if enabled and self._admin is None and self._keys is None:
            key_store(store)  # raises: nothing could ever authenticate

    def principal(self, authorization: str | None) -> Principal:
        """The caller of an ``Authorization`` header value; raises :class:`Unauthorized`."""
        if not self.enabled:
            return Principal(admin=True)
        scheme, _, token = (authorization or "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise Unauthorized("missing bearer token: send 'Authorization: Bearer <key>'")
        digest = _digest(token)
        if self._admin is not None and hmac.compare_digest(digest, self._admin):
            return Principal(admin=True)
        prefix, _, rest = token.partition("_")
        key_id, _, secret = rest.partition("_")
        row = self._keys.get_api_key(key_id) if self._keys and prefix == PREFIX else None
        # Compare even when the row is missing, so timing does not reveal which ids exist.
        stored = row.key_hash if row is not None else _digest(secrets.token_hex(8))
        if not hmac.compare_digest(_digest(secret), stored) or row is None \
                or row.revoked_at is not None:
            raise Unauthorized("unknown or revoked API key")
        return Principal(admin=False, namespace=row.namespace, key_id=row.id)

    def active(self, who: Principal) -> bool:
        """Whether ``who``'s credentials still hold: the admin's always do; a key's until it
        is revoked (or deleted) in the store — by this process or any other."""
        if who.admin:
            return True
        row = self._keys.get_api_key(who.key_id) if self._keys and who.key_id else None
        return row is not None and row.revoked_at is None

    def authorize(self, authorization: str | None, namespace: str) -> Principal:
        """The caller, if allowed on ``namespace``; :class:`Hidden` if its key is for
        another namespace."""
        who = self.principal(authorization)
        if not who.admin and who.namespace != namespace:
            raise Hidden(namespace)
        return who
