"""Nothing in a Temporal history is plain text, and nothing a worker or client reads from it
is taken unless a holder of the key wrote it: every payload (a run's spec and request,
the model's messages and replies, tool results, decisions) and every failure's message is
encrypted and authenticated with AES-256-GCM by `PayloadCipher` before it leaves a process,
and opened when a worker or client reads it (Temporal's `PayloadCodec`). A payload that is
not sealed under this process's key (plain JSON from any other Temporal client, another
key's, one changed on the way) is refused, never passed through: the codec says so (a
warning) and hands on a refusal in its place, which the payload converter reads as the
ConfigurationError it is (`SealedOnlyPayloads`). So a refused payload fails what it came
with, and only that: a run's start (the run never starts), an activity's input, a
decision (the Update is rejected, the Signal dropped: the run goes on as if it never came).
A failure written by code (an application failure) whose message is not sealed is refused
too (`SealedFailures`). Only the failures Temporal itself makes (a timeout, a cancel, a
termination, the wrappers that say which activity failed) carry its own plain words.

The key is a file of 32 random bytes in base64: `$LOOPWRIGHT_TEMPORAL_KEY_FILE`, else
`~/.loopwright/temporal.key`. The default file is made on first use (0600) only for a
Temporal server on this machine (a loopback address: the dev server); for any other, the
key file must exist (every client and worker of a deployment needs the same key: a new
one made on one host would only be refused by the others). A key file other users can
read or change is refused. There is no unencrypted mode.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import dataclasses
import hashlib
import logging
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from temporalio.api.common.v1 import Payload
from temporalio.api.failure.v1 import Failure
from temporalio.converter import (
    CompositePayloadConverter,
    DataConverter,
    DefaultFailureConverterWithEncodedAttributes,
    DefaultPayloadConverter,
    EncodingPayloadConverter,
    JSONPlainPayloadConverter,
    PayloadCodec,
    PayloadConverter,
)

from loopwright._net import is_loopback
from loopwright.engines.temporal._payload_json import PayloadJSON
from loopwright.errors import ConfigurationError

KEY_ENV = "LOOPWRIGHT_TEMPORAL_KEY_FILE"
DEFAULT_KEY_FILE = Path("~/.loopwright/temporal.key")
ENCODING = b"binary/loopwright-aes256gcm"
REFUSED = b"binary/loopwright-refused"
"""What the codec hands on in place of a payload it refused (its data: why)."""
KEY_ID = "loopwright-key-id"
NONCE_BYTES = 12
KEY_MODE_REFUSED = 0o026
"""A key file its group may change, or others may read or change, is not a secret."""
TEMPORALS_OWN = frozenset(
    {
        "timeout_failure_info",
        "canceled_failure_info",
        "terminated_failure_info",
        "server_failure_info",
        "activity_failure_info",
        "child_workflow_execution_failure_info",
    }
)
"""The failures Temporal's server and SDK make themselves, with plain messages of their own;
every other failure is written by code, through `SealedFailures`, its message sealed."""
log = logging.getLogger("loopwright.engines.temporal")


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
        """The payloads opened; in place of one not sealed under this key, a refusal (the
        converter reads it as a ConfigurationError), with a warning."""
        return [self._open_or_refuse(p) for p in payloads]

    def _open_or_refuse(self, payload: Payload) -> Payload:
        try:
            return self._open(payload)
        except ConfigurationError as exc:
            log.warning("%s", exc)
            return Payload(metadata={"encoding": REFUSED}, data=str(exc).encode())

    def seal_text(self, text: str, context: str) -> str:
        """`text` sealed (base64) for a row of its own: `context` names the row, so a
        sealed text moved to another row does not open."""
        aad = f"{self.key_id}/{context}".encode()
        return base64.b64encode(self._seal(text.encode("utf-8"), aad)).decode("ascii")

    def open_text(self, sealed: str, key_id: str, context: str) -> str:
        """What `seal_text` sealed under `key_id` for the row `context`; a ConfigurationError
        if it was sealed with another key, for another row, or changed."""
        from cryptography.exceptions import InvalidTag

        if key_id != self.key_id:
            raise ConfigurationError(
                f"{context} was sealed with key {key_id[:40]}, this process has key "
                f"{self.key_id} ({self.source}): give every loopwright worker of this "
                f"deployment the same key file (${KEY_ENV})"
            )
        data = base64.b64decode(sealed)
        try:
            plain = self._aead.decrypt(
                data[:NONCE_BYTES], data[NONCE_BYTES:], f"{key_id}/{context}".encode()
            )
        except InvalidTag:
            raise ConfigurationError(f"{context} does not open: it was changed or moved") from None
        return plain.decode("utf-8")

    def _seal(self, plain: bytes, key_id: bytes) -> bytes:
        nonce = os.urandom(NONCE_BYTES)
        return nonce + self._aead.encrypt(nonce, plain, key_id)

    def _open(self, payload: Payload) -> Payload:
        encoding = payload.metadata.get("encoding", b"").decode(errors="replace")
        if encoding != ENCODING.decode():
            raise ConfigurationError(
                f"refused a Temporal payload that is not encrypted with loopwright's key "
                f"(its encoding: {encoding[:40]!r}): only the clients and workers holding "
                f"this deployment's key file (${KEY_ENV}) may start, signal or decide runs"
            )
        key_id = payload.metadata.get(KEY_ID, b"").decode(errors="replace")[:40]
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
                f"refused a Temporal payload under key {key_id} that does not decrypt: it "
                "was changed after it was sealed"
            ) from None
        return Payload.FromString(plain)


class RefusedPayloads(EncodingPayloadConverter):
    """Reads a payload the codec refused as the ConfigurationError saying why; writes none."""

    @property
    def encoding(self) -> str:
        return REFUSED.decode()

    def to_payload(self, value: object) -> Payload | None:
        return None

    def from_payload(self, payload: Payload, type_hint: type | None = None) -> object:
        raise ConfigurationError(payload.data.decode("utf-8", "replace"))


class SealedOnlyPayloads(CompositePayloadConverter):
    """Temporal's default payload converter, its JSON the engine's (_payload_json.py: the
    same JSON, made and read with less CPU), which also reads the codec's refusals (as the
    ConfigurationError each is)."""

    def __init__(self) -> None:
        defaults = [
            PayloadJSON() if isinstance(c, JSONPlainPayloadConverter) else c
            for c in DefaultPayloadConverter.default_encoding_payload_converters
        ]
        super().__init__(*defaults, RefusedPayloads())


class SealedFailures(DefaultFailureConverterWithEncodedAttributes):
    """Temporal's failure converter with every failure's message and stack trace moved
    into its encoded attributes (which the codec seals). Reading one, a failure written by
    code whose attributes are not there (so were not sealed under the key: the codec
    refuses those it cannot open) is refused, at every level of its causes."""

    def from_failure(self, failure: Failure, payload_converter: PayloadConverter) -> BaseException:
        kind = failure.WhichOneof("failure_info")
        attributes = failure.encoded_attributes
        if attributes.metadata.get("encoding") == REFUSED:  # the codec refused them
            raise ConfigurationError(attributes.data.decode("utf-8", "replace"))
        if kind not in TEMPORALS_OWN and not failure.HasField("encoded_attributes"):
            raise ConfigurationError(
                f"refused a Temporal failure ({kind or 'without a kind'}) whose message is "
                "not encrypted with loopwright's key: only the clients and workers holding "
                f"this deployment's key file (${KEY_ENV}) may report failures"
            )
        return super().from_failure(failure, payload_converter)


def key_file() -> tuple[Path, bool]:
    """Where the key is, and whether it was named ($LOOPWRIGHT_TEMPORAL_KEY_FILE)."""
    named = os.environ.get(KEY_ENV)
    return Path(named or DEFAULT_KEY_FILE).expanduser(), bool(named)


MAKE_KEY = "(umask 077; head -c 32 /dev/urandom | base64 > KEYFILE)"


def load_cipher(path: Path | None = None, *, make: bool = True) -> PayloadCipher:
    """The cipher of the key file. The default file is made on first use when `make` (a
    Temporal server on this machine); a named one must exist (a missing shared key must
    not be replaced by a new one silently), and so must the default one for a server
    elsewhere. A key file other users may read or change is refused."""
    named = path is not None
    if path is None:
        path, named = key_file()
    if not path.exists():
        if named or not make:
            where = f"${KEY_ENV}" if named else f"the default key file; ${KEY_ENV} names another"
            raise ConfigurationError(
                f"no Temporal payload key at {path} ({where}): copy there the key file of "
                "the hosts that run your Temporal runs (every client and worker needs the "
                f"same key), or make one for a new deployment: {MAKE_KEY}"
            )
        _make_key(path)
    _check_private(path)
    try:
        key = base64.b64decode(path.read_text(encoding="ascii").strip(), validate=True)
    except (OSError, ValueError, binascii.Error) as exc:
        raise ConfigurationError(f"cannot read the Temporal payload key {path}: {exc}") from None
    return PayloadCipher(key, source=str(path))


def _check_private(path: Path) -> None:
    """Refuse a key file other users may read or change (a key others know seals nothing)."""
    try:
        mode = path.stat().st_mode & 0o777
    except OSError as exc:
        raise ConfigurationError(f"cannot read the Temporal payload key {path}: {exc}") from None
    if mode & KEY_MODE_REFUSED:
        raise ConfigurationError(
            f"the Temporal payload key {path} can be read or changed by other users (mode "
            f"{mode:04o}): make it yours only (chmod 600 {path}), and if others could read "
            "it, make a new key for every host"
        )


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


def data_converter(cipher: PayloadCipher | None = None, *, address: str = "") -> DataConverter:
    """Temporal's default converter with every payload and failure message sealed, and
    nothing unsealed taken. Without `cipher`, the key file's: the default one is made
    on first use only for a Temporal server at a loopback `address`."""
    return dataclasses.replace(
        DataConverter.default,
        payload_converter_class=SealedOnlyPayloads,
        payload_codec=cipher or load_cipher(make=on_this_machine(address)),
        failure_converter_class=SealedFailures,
    )


def on_this_machine(address: str) -> bool:
    """Is the Temporal frontend at HOST:PORT `address` on this machine (loopback)?"""
    host = address.rsplit(":", 1)[0].strip("[]") if address else ""
    return is_loopback(host)
