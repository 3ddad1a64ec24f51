"""Nothing in a Temporal history is plain text: every payload (a run's spec and request,
the model's messages and replies, tool results, decisions) and every failure's message is
encrypted with AES-256-GCM by `PayloadCipher` before it leaves a process, and decrypted
when a worker or client reads it (Temporal's `PayloadCodec`).

The key is a file of 32 random bytes in base64: `$LOOPWRIGHT_TEMPORAL_KEY_FILE`, else
`~/.loopwright/temporal.key`, made on first use (0600). Every client and worker of a
Temporal deployment needs the same key: copy the file to every host, or point the
variable at it. A payload encrypted with another key is refused with a message naming
both key ids and what to do.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import dataclasses
import hashlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from temporalio.api.common.v1 import Payload
from temporalio.converter import (
    DataConverter,
    DefaultFailureConverterWithEncodedAttributes,
    PayloadCodec,
)

from loopwright.errors import ConfigurationError

KEY_ENV = "LOOPWRIGHT_TEMPORAL_KEY_FILE"
DEFAULT_KEY_FILE = Path("~/.loopwright/temporal.key")
ENCODING = b"binary/loopwright-aes256gcm"
KEY_ID = "loopwright-key-id"
NONCE_BYTES = 12


class PayloadCipher(PayloadCodec):
    """Encrypts every payload (AES-256-GCM, a random nonce each) under one key."""

    def __init__(self, key: bytes, *, source: str = "") -> None:
        try:
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        except ImportError:
            raise ConfigurationError(
                "the Temporal engine needs cryptography: pip install 'loopwright[temporal]'"
            ) from None
        if len(key) != 32:
            raise ConfigurationError(f"the Temporal payload key {source} is not 32 bytes")
        self._aead = AESGCM(key)
        self.key_id = hashlib.sha256(b"loopwright-payload-key" + key).hexdigest()[:16]
        self.source = source

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        key_id = self.key_id.encode()
        return [
            Payload(
                metadata={"encoding": ENCODING, KEY_ID: key_id},
                data=self._seal(payload.SerializeToString(), key_id),
            )
            for payload in payloads
        ]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self._open(p) if p.metadata.get("encoding") == ENCODING else p for p in payloads]

    def _seal(self, plain: bytes, key_id: bytes) -> bytes:
        nonce = os.urandom(NONCE_BYTES)
        return nonce + self._aead.encrypt(nonce, plain, key_id)

    def _open(self, payload: Payload) -> Payload:
        key_id = payload.metadata.get(KEY_ID, b"").decode(errors="replace")
        if key_id != self.key_id:
            raise ConfigurationError(
                f"a Temporal payload was encrypted with key {key_id}, this process has key "
                f"{self.key_id} ({self.source}): give every loopwright client and worker of "
                f"this Temporal deployment the same key file (${KEY_ENV})"
            )
        from cryptography.exceptions import InvalidTag

        data = payload.data
        try:
            plain = self._aead.decrypt(data[:NONCE_BYTES], data[NONCE_BYTES:], key_id.encode())
        except InvalidTag:
            raise ConfigurationError(
                f"a Temporal payload under key {key_id} does not decrypt: it was changed"
            ) from None
        return Payload.FromString(plain)


def key_file() -> tuple[Path, bool]:
    """Where the key is, and whether it was named ($LOOPWRIGHT_TEMPORAL_KEY_FILE)."""
    named = os.environ.get(KEY_ENV)
    return Path(named or DEFAULT_KEY_FILE).expanduser(), bool(named)


def load_cipher(path: Path | None = None) -> PayloadCipher:
    """The cipher of the key file (the default one is made on first use; a named one
    must exist: a missing shared key must not be replaced by a new one silently)."""
    named = path is not None
    if path is None:
        path, named = key_file()
    if not path.exists():
        if named:
            raise ConfigurationError(
                f"no Temporal payload key at {path} (${KEY_ENV}): copy the key file of the "
                "hosts that run your Temporal runs there, or make a new one for a new "
                "deployment: head -c 32 /dev/urandom | base64 > KEYFILE"
            )
        _make_key(path)
    try:
        key = base64.b64decode(path.read_text(encoding="ascii").strip(), validate=True)
    except (OSError, ValueError, binascii.Error) as exc:
        raise ConfigurationError(f"cannot read the Temporal payload key {path}: {exc}") from None
    return PayloadCipher(key, source=str(path))


def _make_key(path: Path) -> None:
    """A new random key at `path`, readable by its owner only. Written aside, then linked
    into place: if two processes make it at once, both use the first one's."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, aside = tempfile.mkstemp(dir=path.parent, prefix=".temporal-key-")  # mode 0600
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(base64.b64encode(os.urandom(32)) + b"\n")
        with contextlib.suppress(FileExistsError):
            os.link(aside, path)
    finally:
        os.unlink(aside)


def data_converter(cipher: PayloadCipher | None = None) -> DataConverter:
    """Temporal's default converter with every payload and failure message encrypted."""
    return dataclasses.replace(
        DataConverter.default,
        payload_codec=cipher or load_cipher(),
        failure_converter_class=DefaultFailureConverterWithEncodedAttributes,
    )
