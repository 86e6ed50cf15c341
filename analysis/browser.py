"""The report as a browser shows it: headless Chromium's page width and screenshots.

Whether a table runs off the page depends on the browser's layout, not on
the HTML alone, so the check asks Chromium: a copy of report.html with one
script that writes the document's scroll width into the DOM, which
`--dump-dom` prints. Used by the tests and benchmarks/report_screenshot.py;
nothing here is needed to build a report.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

WINDOW = 1400
_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars"]
_PROBE = ('<script>document.body.setAttribute("data-scroll-width", '
          "document.documentElement.scrollWidth)</script></body>")


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _run(args: list[str], timeout: float) -> str:
    exe = chromium()
    if exe is None:
        raise FileNotFoundError("headless Chromium not found (Debian: apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="batloc-chromium-") as profile:
        out = subprocess.run([exe, *_FLAGS, f"--user-data-dir={profile}", *args],
                             capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"chromium exited {out.returncode}: {out.stderr.strip().splitlines()[-1:]}")
    return out.stdout


def page_width(html_path, window: int = WINDOW, timeout: float = 60.0) -> int:
    """The document's scroll width in px in a window `window` px wide (> window: it overflows)."""
    html_path = Path(html_path)
    probe = html_path.with_name(f".{html_path.stem}-width-probe.html")   # beside it, so relative links still load
    probe.write_text(html_path.read_text().replace("</body>", _PROBE, 1))
    try:
        dom = _run([f"--window-size={window},900", "--dump-dom", probe.resolve().as_uri()], timeout)
    finally:
        probe.unlink()
    found = re.search(r'data-scroll-width="(\d+)"', dom)
    if not found:
        raise RuntimeError(f"{html_path}: Chromium gave no page width")
    return int(found.group(1))


def screenshot(html_path, png, window: int = WINDOW, height: int = 3000, timeout: float = 60.0) -> Path:
    """A PNG of the page's first `height` px in a window `window` px wide."""
    png = Path(png).resolve()
    _run([f"--window-size={window},{height}", f"--screenshot={png}", Path(html_path).resolve().as_uri()], timeout)
    return png
