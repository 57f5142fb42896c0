"""Who seals records and tree heads, and how anyone checks them (issue 25, a public contract).

A record (and a tree head of the results log) is signed with **Ed25519** over its canonical
bytes: `{"algorithm": "ed25519", "key_id", "value"}`, `key_id` the first 16 hex digits of
the sha256 of the raw 32-byte public key, `value` the signature in base64url without
padding. Anyone holding the public keys (`GET /keys`) checks it; nobody without the private
key can make one.

Keys live in a key file (`REFEREE_SIGNING_KEY_FILE`): PEM PKCS#8 Ed25519 private keys, one
after the other, the last one current (`append_new_key` adds one: `referee keys rotate`).
Every key of the file stays known, so that records signed before a rotation still verify.

An operator may choose HMAC-only (`REFEREE_HMAC_ONLY=1`): records are then sealed as before
rotation to public keys, `{"algorithm": "hmac-sha256", "key_id", "value"}` with
REFEREE_SECRET, and only a holder of the secret can check them. HMAC records keep verifying
with the secret whatever the mode.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import re
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from referee.errors import RefereeError

ED25519 = "ed25519"
HMAC_SHA256 = "hmac-sha256"
ALGORITHMS = (ED25519, HMAC_SHA256)
PUBLIC_KEY_BYTES = 32
SIGNATURE_BYTES = 64
_PEM_BLOCK = re.compile(rb"-----BEGIN PRIVATE KEY-----.+?-----END PRIVATE KEY-----", re.S)

# the outcomes of checking a signature
VALID = "valid"
INVALID = "invalid"
MISSING = "missing"
UNKNOWN_KEY = "unknown-key"
NOT_CHECKED = "not-checked"


class SignatureRecord(TypedDict):
    algorithm: str
    key_id: str
    value: str


class KeyFileError(RefereeError, ValueError):
    """A key file cannot be read, or holds something other than Ed25519 private keys."""


def b64url(data: bytes) -> str:
    """base64url without padding."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def from_b64url(text: str) -> bytes:
    """The bytes of base64url text, padded or not (ValueError when it is not base64url)."""
    if not isinstance(text, str) or not re.fullmatch(r"[A-Za-z0-9_-]*={0,2}", text):
        raise ValueError("not base64url")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except binascii.Error as error:
        raise ValueError(f"not base64url: {error}") from None


def public_key_id(raw_public: bytes) -> str:
    """The contract's key id: the first 16 hex digits of sha256(raw 32-byte public key)."""
    return hashlib.sha256(raw_public).hexdigest()[:16]


def hmac_key_id(secret: str) -> str:
    """The public name of an HMAC secret: the start of a digest of it."""
    return hashlib.sha256(b"referee-key-id/" + secret.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class SigningKey:
    """One Ed25519 private key and its public half."""

    private: Ed25519PrivateKey

    @classmethod
    def generate(cls) -> SigningKey:
        return cls(Ed25519PrivateKey.generate())

    @property
    def public_raw(self) -> bytes:
        return self.private.public_key().public_bytes(serialization.Encoding.Raw,
                                                      serialization.PublicFormat.Raw)

    @property
    def key_id(self) -> str:
        return public_key_id(self.public_raw)

    def pem(self) -> bytes:
        return self.private.private_bytes(serialization.Encoding.PEM,
                                          serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption())

    def sign(self, message: bytes) -> SignatureRecord:
        return {"algorithm": ED25519, "key_id": self.key_id,
                "value": b64url(self.private.sign(message))}


def read_key_file(path: str | Path) -> list[SigningKey]:
    """Every key of a key file, oldest first (the last is current); KeyFileError saying
    what is wrong with it."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise KeyFileError(f"cannot read the key file {path}: {error.strerror}") from None
    blocks = _PEM_BLOCK.findall(data)
    if not blocks:
        raise KeyFileError(f"{path} holds no PEM private key (-----BEGIN PRIVATE KEY-----)")
    keys = []
    for number, block in enumerate(blocks, 1):
        try:
            private = serialization.load_pem_private_key(block, password=None)
        except (ValueError, TypeError, UnsupportedAlgorithm) as error:
            raise KeyFileError(f"{path}: key {number} cannot be read: {error}") from None
        if not isinstance(private, Ed25519PrivateKey):
            raise KeyFileError(f"{path}: key {number} is not an Ed25519 key")
        keys.append(SigningKey(private))
    return keys


def append_new_key(path: str | Path) -> SigningKey:
    """Add a new current key at the end of the key file (made, mode 0600, when absent),
    whole or not at all: the file is rewritten beside and renamed over."""
    path = Path(path)
    old = path.read_bytes() if path.exists() else b""
    if old:
        read_key_file(path)  # never append to a file that is not a key file
    key = SigningKey.generate()
    text = old + (b"" if not old or old.endswith(b"\n") else b"\n") + key.pem()
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return key


@dataclass(frozen=True)
class Sealer:
    """What a process seals records and tree heads with: its current Ed25519 key (with the
    older keys of its file, to publish), else an HMAC secret, else nothing (unsigned)."""

    keys: tuple[SigningKey, ...] = ()
    secret: str = ""

    @classmethod
    def from_key_file(cls, path: str | Path, secret: str = "") -> Sealer:
        return cls(tuple(read_key_file(path)), secret)

    @classmethod
    def hmac(cls, secret: str) -> Sealer:
        return cls((), secret)

    @property
    def current(self) -> SigningKey | None:
        return self.keys[-1] if self.keys else None

    @property
    def key_id(self) -> str | None:
        """The id of the key it signs with (None: it does not sign)."""
        if self.current is not None:
            return self.current.key_id
        return hmac_key_id(self.secret) if self.secret else None

    def sign(self, message: bytes) -> SignatureRecord | None:
        """The signature of `message`: Ed25519 with the current key, else HMAC-SHA256 with
        the secret, else None."""
        if self.current is not None:
            return self.current.sign(message)
        if self.secret:
            return {"algorithm": HMAC_SHA256, "key_id": hmac_key_id(self.secret),
                    "value": hmac_value(self.secret, message)}
        return None


def hmac_value(secret: str, message: bytes) -> str:
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Verifier:
    """What a signature may be checked against: public keys by key id, and secrets."""

    public: Mapping[str, bytes] = field(default_factory=dict)
    hmac_secrets: tuple[str, ...] = ()

    @classmethod
    def of(cls, public: Iterable[bytes] = (), hmac_secrets: Iterable[str] = ()) -> Verifier:
        return cls({public_key_id(raw): raw for raw in public},
                   tuple(secret for secret in hmac_secrets if secret))

    @property
    def empty(self) -> bool:
        return not self.public and not self.hmac_secrets

    def check(self, signature: object, message: bytes) -> str:
        """VALID, INVALID, MISSING, UNKNOWN_KEY or NOT_CHECKED (no key at all) for a
        signature object over `message`."""
        if not signature:
            return MISSING
        if not isinstance(signature, Mapping) or not all(
                isinstance(signature.get(part), str) for part in ("algorithm", "key_id",
                                                                   "value")):
            return INVALID
        if self.empty:
            return NOT_CHECKED
        algorithm, key_id, value = (signature["algorithm"], signature["key_id"],
                                    signature["value"])
        if algorithm == ED25519:
            return self._check_ed25519(key_id, value, message)
        if algorithm == HMAC_SHA256:
            secret = next((s for s in self.hmac_secrets if hmac_key_id(s) == key_id), None)
            if secret is None:
                return UNKNOWN_KEY
            expected = hmac_value(secret, message).encode()
            return VALID if hmac.compare_digest(value.encode(), expected) else INVALID
        return INVALID

    def _check_ed25519(self, key_id: str, value: str, message: bytes) -> str:
        raw = self.public.get(key_id)
        if raw is None:
            return UNKNOWN_KEY
        try:
            signature = from_b64url(value)
            Ed25519PublicKey.from_public_bytes(raw).verify(signature, message)
        except (ValueError, InvalidSignature):
            return INVALID
        return VALID
