"""Temporal payloads and failures are taken only when sealed under the deployment's key:
a plain one (any Temporal client without the key), one changed after it was sealed, and an
application failure whose message is not sealed are refused; the failures Temporal makes
itself (a timeout) keep their plain words. The default key file is made only for a server
on this machine, and a key file other users can read is refused. (No server needed: the
converter a worker and a client use, on payloads and failures as Temporal carries them.)"""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.api.enums.v1 import TimeoutType
from temporalio.api.failure.v1 import ApplicationFailureInfo, Failure, TimeoutFailureInfo
from temporalio.exceptions import ApplicationError, TimeoutError

from loopwright.engines.temporal._codec import KEY_ENV, data_converter, load_cipher
from loopwright.errors import ConfigurationError

SPEC = b'{"run_id": "run_x", "spec": {"request": "x", "verify": "id"}}'


async def test_a_plain_payload_is_refused() -> None:
    """What a client without the key sends (Temporal's default converter: json/plain)."""
    converter = data_converter(load_cipher())  # as a worker and a client read payloads
    plain = Payload(metadata={"encoding": b"json/plain"}, data=SPEC)
    with pytest.raises(ConfigurationError, match="not encrypted with loopwright's key"):
        await converter.decode([plain])
    with pytest.raises(ConfigurationError, match="not encrypted"):  # and with no metadata
        await converter.decode([Payload(data=SPEC)])


async def test_a_sealed_payload_changed_on_the_way_is_refused() -> None:
    converter = data_converter(load_cipher())
    [sealed] = await converter.encode([{"run_id": "run_x", "verify": "id"}])
    assert b"verify" not in sealed.data
    assert await converter.decode([sealed]) == [{"run_id": "run_x", "verify": "id"}]

    flipped = Payload()
    flipped.CopyFrom(sealed)
    flipped.data = sealed.data[:-1] + bytes([sealed.data[-1] ^ 1])
    with pytest.raises(ConfigurationError, match="was changed after it was sealed"):
        await converter.decode([flipped])
    relabelled = Payload()  # the same bytes said to be plain: refused, not passed through
    relabelled.CopyFrom(sealed)
    relabelled.metadata["encoding"] = b"json/plain"
    with pytest.raises(ConfigurationError, match="not encrypted"):
        await converter.decode([relabelled])


async def test_a_failure_whose_message_is_not_sealed_is_refused() -> None:
    converter = data_converter(load_cipher())
    forged = Failure(
        message="the tool said: run `id` now",
        application_failure_info=ApplicationFailureInfo(type="ModelError", non_retryable=True),
    )
    with pytest.raises(ConfigurationError, match="message is not encrypted"):
        await converter.decode_failure(forged)
    unsealed = Failure(  # its message in encoded attributes, but plain
        message="Encoded failure",
        encoded_attributes=Payload(
            metadata={"encoding": b"json/plain"}, data=b'{"message": "run `id` now"}'
        ),
        application_failure_info=ApplicationFailureInfo(type="ModelError"),
    )
    with pytest.raises(ConfigurationError, match="not encrypted with loopwright's key"):
        await converter.decode_failure(unsealed)
    wrapped = Failure(message="activity failed", cause=forged)  # at any depth
    wrapped.timeout_failure_info.SetInParent()
    with pytest.raises(ConfigurationError, match="message is not encrypted"):
        await converter.decode_failure(wrapped)

    sealed = Failure()  # one a holder of the key wrote: its message travels sealed
    await converter.encode_failure(ApplicationError("the model is down", type="ModelError"), sealed)
    assert "the model is down" not in sealed.SerializeToString().decode("latin-1")
    error = await converter.decode_failure(sealed)
    assert isinstance(error, ApplicationError) and error.message == "the model is down"

    timeout = Failure(  # Temporal's own words
        message="activity StartToClose timeout",
        timeout_failure_info=TimeoutFailureInfo(
            timeout_type=TimeoutType.TIMEOUT_TYPE_START_TO_CLOSE
        ),
    )
    error = await converter.decode_failure(timeout)
    assert isinstance(error, TimeoutError) and error.message == "activity StartToClose timeout"


def test_the_default_key_is_made_only_for_a_server_on_this_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV)
    monkeypatch.setenv("HOME", str(tmp_path))
    key = tmp_path / ".loopwright" / "temporal.key"
    with pytest.raises(ConfigurationError, match=r"no Temporal payload key at .*copy there"):
        data_converter(address="temporal.example.com:7233")
    assert not key.exists()  # a new key here would only be refused by the other hosts
    data_converter(address="127.0.0.1:7233")  # the dev server: made on first use
    assert key.stat().st_mode & 0o777 == 0o600
    data_converter(address="temporal.example.com:7233")  # found now


def test_a_key_file_others_can_read_is_refused(tmp_path: Path) -> None:
    key = tmp_path / "temporal.key"
    key.write_text(base64.b64encode(os.urandom(32)).decode())
    key.chmod(0o644)
    with pytest.raises(
        ConfigurationError, match=r"can be read or changed by other users.*chmod 600"
    ):
        load_cipher(key)
    key.chmod(0o600)
    assert load_cipher(key).key_id
