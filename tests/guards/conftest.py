"""Fixtures for the stop-policy tests."""

from __future__ import annotations

import pytest

from loopwright.clock import MockClock


@pytest.fixture
def clock() -> MockClock:
    return MockClock()
