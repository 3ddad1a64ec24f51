"""The dashboard's screenshots in docs/ (taken by tests/server/test_browser_dashboard.py
with LOOPWRIGHT_SCREENSHOTS=docs) are there, referenced, and real pictures of the pages."""

from __future__ import annotations

import re
from pathlib import Path

from dashboard_scene import png_size

DOCS = Path(__file__).resolve().parents[2] / "docs"
SCREENS = ("dashboard-runs.png", "dashboard-spans.png", "dashboard-gate.png",
           "dashboard-subagent.png", "dashboard-conversation.png", "dashboard-fork.png",
           "dashboard-waiting.png")  # fmt: skip


def test_each_screenshot_is_in_the_docs_and_is_a_real_picture() -> None:
    text = (DOCS / "dashboard.md").read_text(encoding="utf-8")
    referenced = re.findall(r"!\[[^\]]+\]\(([^)]+\.png)\)", text)
    assert set(SCREENS) <= set(referenced)
    for name in referenced:
        width, height = png_size(DOCS / name)
        assert width == 1400 and height >= 500, name
        assert (DOCS / name).stat().st_size > 30_000, name  # not a blank page
    assert "(dashboard.md)" in (DOCS / "server.md").read_text(encoding="utf-8")
