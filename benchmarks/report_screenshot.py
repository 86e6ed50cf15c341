"""Does report.html fit a 1 400 px window? Headless Chromium's answer, and a screenshot.

Builds the report of OUTPUT_DIR (unless --no-build), asks Chromium for the
page's scroll width in a 1 400 px window (wider: something runs off the
page) and writes a screenshot of the page's top. Not a test: run it by hand,
e.g. on the demo's sweep (`batloc demo`, then):

    python benchmarks/report_screenshot.py batloc-demo --png docs/report-screenshot.png

Needs Chromium (Debian: apt-get install chromium). Exit status 1 if the page overflows.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("output_dir", type=Path, help="a sweep's output folder (robin's output-dir)")
    ap.add_argument("--png", type=Path, help="screenshot file (default OUTPUT_DIR/report-screenshot.png)")
    ap.add_argument("--width", type=int, default=1400, help="window width in px (default 1400)")
    ap.add_argument("--height", type=int, default=2400, help="screenshot height in px (default 2400)")
    ap.add_argument("--baseline", default="fcfs")
    ap.add_argument("--no-build", action="store_true", help="use the report.html already there")
    args = ap.parse_args(argv)
    from batloc.analysis import browser
    from batloc.analysis.report import build_report

    if browser.chromium() is None:
        print("report_screenshot: headless Chromium not found (Debian: apt-get install chromium)", file=sys.stderr)
        return 2
    html = args.output_dir / "report.html"
    built = float("nan")
    if not args.no_build:
        built = build_report(args.output_dir, baseline=args.baseline, log=lambda m: None).seconds
    t0 = time.perf_counter()
    width = browser.page_width(html, args.width)
    png = browser.screenshot(html, args.png or args.output_dir / "report-screenshot.png", args.width, args.height)
    shot = time.perf_counter() - t0
    print(f"{'report':<40} {'built (s)':>9} {'window':>7} {'page width':>10} {'overflow':>8} {'chromium (s)':>12}")
    print(f"{str(html):<40} {built:>9.1f} {args.width:>7} {width:>10} {'yes' if width > args.width else 'no':>8} "
          f"{shot:>12.1f}")
    print(f"screenshot: {png}")
    return 1 if width > args.width else 0


if __name__ == "__main__":
    sys.exit(main())
