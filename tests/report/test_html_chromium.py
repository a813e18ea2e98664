"""The report page as a browser shows it: Debian's headless Chromium loads the file.

Chromium only ever opens a local ``file://`` page (which itself forbids any fetch through its CSP),
with background networking, sync and component updates turned off and a fresh profile.
Without Chromium the test is skipped, unless ``CI`` is set: CI must install it
(``.ci/run``: ``apt-get install -y chromium``).
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from karpy.report import render_html

SAMPLE = Path(__file__).parent / "sample_document.json"
WIDTH, HEIGHT = 1200, 2200
BLANK_PAGE_PNG_BYTES = 12_300
"""A blank 1200x2200 page screenshot measured ~12 KB; the report page measured ~187 KB."""
TIMEOUT = 120
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--no-default-browser-check",
    "--hide-scrollbars",
    "--mute-audio",
]


def find_chromium() -> str:
    """Path of Debian's chromium; skip (or fail under CI) when it is not installed."""
    path = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(
                "chromium is not installed: .ci/run must install it "
                "(apt-get update && apt-get install -y chromium) before running the tests"
            )
        pytest.skip("chromium not installed (apt-get install -y chromium)")
    return path


def run_chromium(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [binary, *FLAGS, f"--user-data-dir={profile}", *args]
    # its caches (chromium-headless, dconf) go under the profile, never the user's ~/.cache
    env = {**os.environ, "HOME": str(profile), "XDG_CACHE_HOME": str(profile / "cache"),
           "XDG_CONFIG_HOME": str(profile / "config")}
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, check=False, env=env)
    except subprocess.TimeoutExpired:  # pragma: no cover - environment failure
        pytest.fail(f"chromium did not finish within {TIMEOUT}s: {' '.join(cmd)}")


def screenshot(binary: str, tmp: Path, url: str, width: int, height: int, name: str) -> bytes:
    """A ``width`` x ``height`` PNG screenshot of ``url`` (checked to be one) in a fresh profile."""
    png = tmp / f"{name}.png"
    shot = run_chromium(binary, tmp / f"profile-{name}", f"--window-size={width},{height}", f"--screenshot={png}", url)
    assert shot.returncode == 0, shot.stderr[-2000:]
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    assert struct.unpack(">II", data[16:24]) == (width, height)
    return data


def png_rows(data: bytes, rows: int) -> list[list[tuple[int, int, int]]]:
    """The first ``rows`` pixel rows (RGB) of an 8-bit RGB/RGBA, non-interlaced PNG -- what Chromium
    writes -- decoded with zlib and PNG's five scanline filters (no imaging library needed)."""
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", data[16:29])
    assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
    channels = 3 if colour == 2 else 4
    idat, pos = b"", 8
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    raw, stride = zlib.decompress(idat), width * channels
    out: list[list[tuple[int, int, int]]] = []
    prev = bytearray(stride)
    for y in range(min(rows, height)):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        out.append([(line[x], line[x + 1], line[x + 2]) for x in range(0, stride, channels)])
        prev = line
    return out


def blank_screenshot_bytes(binary: str, tmp: Path, width: int, height: int) -> int:
    """PNG size of an empty page at this size, measured here (the baseline a rendered page must
    clearly exceed: flat white compresses to almost nothing)."""
    page = tmp / "blank.html"
    page.write_text("<!doctype html><html><head><meta charset=\"utf-8\"></head><body></body></html>", encoding="utf-8")
    return len(screenshot(binary, tmp, page.resolve().as_uri(), width, height, "blank"))


class Collect(HTMLParser):
    """Attributes of every element, and the text under each id'd element."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.text_by_id: dict[str, str] = {}
        self._open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.elements.append((tag, a))
        if "id" in a and tag in ("dd", "section", "h3"):
            self.text_by_id.setdefault(a["id"], "")
            self._open.append(a["id"])
        elif tag in ("dd", "section", "h3"):
            self._open.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("dd", "section", "h3") and self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for ident in self._open:
            if ident:
                self.text_by_id[ident] += data


def render_in_chromium(tmp: Path, document: dict[str, Any], width: int, height: int) -> dict[str, Any]:
    """Write the report of ``document``, dump its DOM and take a ``width`` x ``height`` screenshot."""
    binary = find_chromium()
    page = tmp / "report.html"
    page.write_text(render_html(document), encoding="utf-8")
    url = page.resolve().as_uri()
    dom = run_chromium(binary, tmp / "profile-dom", "--dump-dom", url)
    png = tmp / "report.png"
    shot = run_chromium(binary, tmp / "profile-shot", f"--window-size={width},{height}", f"--screenshot={png}", url)
    return {"dom": dom, "shot": shot, "png": png}


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return render_in_chromium(tmp_path_factory.mktemp("report"), json.loads(SAMPLE.read_text(encoding="utf-8")),
                              WIDTH, HEIGHT)


def test_dumped_dom_shows_totals_and_nodepool_costs(rendered: dict[str, Any]) -> None:
    result = rendered["dom"]
    assert result.returncode == 0, result.stderr[-2000:]
    parser = Collect()
    parser.feed(result.stdout)
    assert parser.text_by_id["summary-total"] == "$0.51580/h"
    assert parser.text_by_id["summary-pods"] == "9 running, 2 pending, 1 deleted"
    assert "Pending pods (2)" in parser.text_by_id["pending-pods"]
    pool_bars = {a["data-nodepool"]: a["data-cost"] for t, a in parser.elements if t == "g" and "data-nodepool" in a}
    assert pool_bars == {"general": "0.33730", "compute": "0.17850"}
    pool_rows = {a["data-nodepool"]: a["data-cost"] for t, a in parser.elements if t == "tr" and "data-nodepool" in a}
    assert pool_rows == pool_bars
    section = parser.text_by_id["cost-by-nodepool"]
    assert "$0.33730/h" in section and "$0.17850/h" in section
    # Chromium built real SVG rectangles for the bars (it parsed the inline SVG)
    assert sum(1 for t, _ in parser.elements if t == "rect") == 4
    assert not any(t == "script" for t, _ in parser.elements)


def test_screenshot_is_a_real_picture_of_the_page(rendered: dict[str, Any]) -> None:
    result, png = rendered["shot"], rendered["png"]
    assert result.returncode == 0, result.stderr[-2000:]
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    assert struct.unpack(">II", data[16:24]) == (WIDTH, HEIGHT)
    # a blank page of the same size is ~12 KB; text, tables and bars make it several times larger
    assert len(data) > 5 * BLANK_PAGE_PNG_BYTES, len(data)


# -- the "Over time" charts of a Scenario run (karpy/report/timecharts.py) ------------------------------
TIMELINE_SAMPLE = Path(__file__).parent / "sample_timeline_document.json"


def timeline_document() -> dict[str, Any]:
    return json.loads(TIMELINE_SAMPLE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def rendered_timeline(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return render_in_chromium(tmp_path_factory.mktemp("timecharts"), timeline_document(), 1200, 3000)


def test_timeline_report_charts_in_the_dumped_dom(rendered_timeline: dict[str, Any]) -> None:
    result = rendered_timeline["dom"]
    assert result.returncode == 0, result.stderr[-2000:]
    parser = Collect()
    parser.feed(result.stdout)
    ids = {a.get("id") for _, a in parser.elements}
    assert {"over-time", "chart-gantt", "chart-pending", "chart-cost"} <= ids
    bars = [a for t, a in parser.elements if t == "g" and a.get("class") == "gantt-bar"]
    assert len(bars) == sum(1 for n in timeline_document()["nodeclaims"] if n["launched"])
    assert sum(1 for t, _ in parser.elements if t == "polyline") == 2
    assert "Over time" in parser.text_by_id["over-time"]


def test_timeline_report_screenshot(rendered_timeline: dict[str, Any]) -> None:
    result, png = rendered_timeline["shot"], rendered_timeline["png"]
    assert result.returncode == 0, result.stderr[-2000:]
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", data[16:24]) == (1200, 3000)
    assert len(data) > 60_000, len(data)
