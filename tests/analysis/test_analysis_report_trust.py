"""The report a user can trust (issue 20): headline in human units, walltime kills counted,
invalid runs left out, paper-ready figures, per-job CSV and the evalys JobSet.

The sweep is the hand-made fcfs/lea runs plus two copies of lea's outputs:
`lem`, in which job 1 (which loaded its file) and job 7 (no file) were
killed at their walltime, and `eft`, which robin's validator found impossible.
"""

import csv
import html
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image

from batloc.analysis import load
from batloc.analysis.report import build_report
from batloc.analysis.runs import Inputs

HAND = Path(__file__).resolve().parents[1] / "data" / "analysis" / "hand"
HEADLINE = ["mean wait (h)", "mean turnaround (h)", "time waiting for files, total (h)",
            "data moved from the file system (TB)", "core-hours", "killed at walltime", "jobs rejected"]


def kill(jobs_csv: Path, job_ids) -> None:
    """Rewrite the rows of job_ids as killed at their walltime (times unchanged)."""
    with open(jobs_csv, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        if r["workload_name"] == "w0" and r["job_id"] in job_ids:
            r["final_state"], r["success"] = "COMPLETED_WALLTIME_REACHED", "0"
    with open(jobs_csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def add_run(root: Path, name: str, like: str = "lea", **meta) -> Path:
    shutil.copytree(root / like, root / name)
    run_json = json.loads((root / name / "run.json").read_text())
    run_json.update({"name": name, "scheduler": {"name": name, "policy": name}}, **meta)
    (root / name / "run.json").write_text(json.dumps(run_json))
    return root / name


def make_sweep(root: Path) -> Path:
    shutil.copytree(HAND, root)
    workload = json.loads((root / "workload.json").read_text())
    for job in workload["jobs"]:
        job["source_id"] = f"swf-{job['id']}"
    (root / "workload.json").write_text(json.dumps(workload))
    kill(add_run(root, "lem") / "out_jobs.csv", {"1", "7"})
    add_run(root, "eft", validation={"valid": False, "violations": {"core used twice": 2, "outside compute ids": 1}})
    return root


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    root = make_sweep(tmp_path_factory.mktemp("trust") / "sweep")
    messages = []
    report = build_report(root, log=messages.append)
    return root, report, messages


def headers(html_text: str) -> list[str]:
    """Every table header of the page as one line of text."""
    return [re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", h)).strip()
            for h in re.findall(r"<th[^>]*>(.*?)</th>", html_text, flags=re.S)]


def section(html_text: str, title: str) -> str:
    """The HTML from the heading containing `title` to the next h2."""
    start = html_text.index(title)
    end = html_text.find("<h2", start)
    return html_text[start:end if end >= 0 else None]


def test_headline_has_the_user_s_columns_with_units(sweep):
    root, report, _ = sweep
    page = report.html.read_text()
    head = section(page, "Headline")
    shown = headers(head)
    for column in HEADLINE:
        assert any(h.startswith(column) for h in shown), (column, shown)
    # hand values: lea's mean wait over its 6 evaluated jobs (10+8+0+5+0.2+0)/6 s, in hours
    assert f"{(10 + 8 + 0 + 5 + 0.2 + 0) / 6 / 3600:.5f}" in head
    assert "e+" not in page and "61651200000000" not in page  # never a raw exponent or byte count


def test_walltime_kills_are_counted_and_every_completed_count_agrees(sweep):
    root, report, _ = sweep
    summary = pd.read_csv(report.summary_csv).set_index("run")
    lem = summary.loc["lem"]
    assert (lem["jobs_killed"], lem["jobs_killed_by_load"], lem["jobs_rejected"]) == (2, 1, 0)
    assert (lem["jobs_evaluated"], lem["jobs_completed"], lem["jobs_not_completed"]) == (6, 4, 2)
    assert summary.loc["lea", "jobs_killed"] == 0 and summary.loc["lea", "jobs_completed"] == 6
    page = report.html.read_text()
    # the headline shows the kills with those due to the load
    assert re.search(r"<td class='key'>lem</td>.*?2 \(1\)", section(page, "Headline"), flags=re.S)
    # Khanna's table counts completed jobs the same way
    khanna = section(page, "Khanna et al.")
    assert re.search(r"<td class='key'>lem</td><td>4</td><td>2</td>", khanna)


def test_invalid_run_is_flagged_and_left_out_of_every_comparison(sweep):
    root, report, messages = sweep
    assert set(report.failed) == {"eft"}
    assert "core used twice 2" in report.failed["eft"] and "outside compute ids 1" in report.failed["eft"]
    assert str(root / "eft" / "run.json") in report.failed["eft"]
    assert any("eft" in m and "core used twice 2" in m for m in messages)
    comp = report.comparison
    assert "eft" not in comp.transfer_table.columns and "eft" not in comp.core_time_table.columns
    assert set(comp.transfer_table.columns) == {"lea", "lem"}
    assert "eft" not in set(comp.improvements["scheduler"])
    assert "eft" not in set(pd.read_csv(report.summary_csv)["run"])
    assert not [k for k in report.figures if k.endswith(":eft")]
    page = report.html.read_text()
    flagged = section(page, "Runs left out")
    assert "eft" in flagged and "core used twice 2" in flagged
    for title in ("Headline", "Tables I, II", "Table III", "Figs. 2, 7"):
        assert ">eft<" not in section(page, title), title


def test_every_png_has_an_svg_at_print_resolution_and_a_caption(sweep):
    root, report, _ = sweep
    pngs = sorted((root / "figures").glob("*.png"))
    assert len(pngs) >= 9 and set(report.figures.values()) == set(pngs)
    page = report.html.read_text()
    for png in pngs:
        assert png.with_suffix(".svg").stat().st_size > 1000, png
        assert Image.open(png).info["dpi"][0] >= 149.9, png
    for key in report.figures:
        caption = report.captions[key]
        assert len(caption.split()) >= 10 and "_" not in caption.split()[0], (key, caption)
        assert html.escape(caption) in page


def legend_colours(svg_text: str, name: str) -> set[str]:
    """Colours of the legend lines labelled `name` (matplotlib SVG, text kept as text)."""
    marker = r'(?:\s*<g>\s*<use[^>]*/>\s*</g>)?'   # a line drawn with markers
    return set(re.findall(rf'stroke: (#[0-9a-f]{{6}})[^"]*"/>{marker}\s*</g>\s*<g id="text_\d+">\s*<text[^>]*>{name}</text>',
                          svg_text))


def test_one_colour_per_scheduler_in_every_figure(sweep):
    root, report, _ = sweep
    colours = {"fcfs": set(), "lea": set(), "lem": set()}
    figures_with_legend = 0
    for svg in sorted((root / "figures").glob("*.svg")):
        text = svg.read_text()
        found = {name: legend_colours(text, name) for name in colours}
        figures_with_legend += all(found[n] for n in ("lea", "lem"))
        for name, c in found.items():
            colours[name] |= c
    assert figures_with_legend >= 3  # ECDF, utilisation, NUWT
    assert all(len(c) == 1 for c in colours.values()), colours
    assert len(set.union(*colours.values())) == 3


def test_per_job_csv_joins_the_trace(sweep):
    root, report, _ = sweep
    table = pd.read_csv(report.per_job["lem"], dtype={"job_id": str, "source_id": str}, keep_default_na=False)
    for column in ("job_id", "source_id", "submission_time", "starting_time", "finish_time", "wait",
                   "turnaround", "stretch", "file_wait", "load_time", "node", "killed"):
        assert column in table.columns
    row = table.set_index("job_id").loc["1"]
    assert row["source_id"] == "swf-1" and row["node"] == "n001"
    assert (row["killed"], row["killed_by_load"], row["final_state"]) == (1, 1, "COMPLETED_WALLTIME_REACHED")
    assert float(row["wait"]) == 10.0 and float(row["turnaround"]) == 110.0
    assert set(table["job_id"]) == {str(i) for i in range(1, 8)}  # workload jobs only, no staging


def test_jobset_counts_compute_cores_and_workload_jobs_only(tmp_path):
    from evalys.jobset import JobSet

    root = make_sweep(tmp_path / "sweep")
    raw = JobSet.from_csv(str(root / "lea" / "out_jobs.csv"))
    assert raw.MaxProcs == 7 and any(str(j).startswith("stage-") for j in raw.df["jobID"])  # the skew
    js = load.jobset(root / "lea")
    assert js.MaxProcs == 4  # the platform's cores, from run.json
    assert sorted(js.df["jobID"]) == [str(i) for i in range(1, 8)]
    assert load.jobset(root / "lea" / "out").MaxProcs == 4  # an export prefix works too


def test_jobset_stretch_is_the_reports(sweep):
    root, report, _ = sweep
    summary = pd.read_csv(report.summary_csv).set_index("scheduler")
    for name in ("fcfs", "lea", "lem"):
        df = load.jobset(root / name).df
        # jobs.csv's own stretch (turnaround / execution) stays beside it, under another name
        assert "batsim_stretch" in df and df["evaluated"].dtype == bool
        assert df.loc[df["evaluated"], "stretch"].mean() == pytest.approx(summary.loc[name, "mean_stretch"], rel=1e-6)


def test_a_run_without_run_json_needs_its_platform_for_the_stretch(tmp_path, sweep):
    """A run of `batloc-batsim` has no run.json: its stretch, without the platform's bandwidth, left the loads
    out (52 infinite stretches, the jobs killed while loading, and a mean of 115.9 where robin's run said 5.37);
    it is refused in one line instead, and with the platform it is the report's."""
    root, report, _ = sweep
    bare = tmp_path / "bare"
    bare.mkdir()
    for name in ("out_jobs.csv", "out_decisions.csv"):
        shutil.copy(root / "lem" / name, bare / name)
    with pytest.raises(load.NoPlatform, match=r"out_jobs.csv: its jobs read files, .* give the platform$"):
        load.jobset(bare / "out", workload=root / "workload.json")
    df = load.jobset(bare / "out", workload=root / "workload.json", platform=root / "platform.xml").df
    mean = pd.read_csv(report.summary_csv).set_index("scheduler").loc["lem", "mean_stretch"]
    assert df.loc[df["evaluated"], "stretch"].mean() == pytest.approx(mean, rel=1e-6)
    messages = []
    with pytest.raises(FileNotFoundError):   # the report leaves it out, saying why: no run is left
        build_report(bare, inputs=Inputs(workload=root / "workload.json"), log=messages.append)
    assert any("its jobs read files" in m and "(--platform, or --bandwidth)" in m for m in messages), messages
    alone = build_report(bare, inputs=Inputs(workload=root / "workload.json", platform=root / "platform.xml"),
                         log=lambda m: None)
    assert pd.read_csv(alone.summary_csv)["mean_stretch"].iloc[0] == pytest.approx(mean, rel=1e-6)


def ten_variants(root: Path) -> Path:
    make_sweep(root)
    shutil.rmtree(root / "eft")
    for k in range(8):
        add_run(root, f"lea-variant-with-a-long-name-{k}")
    return root


@pytest.fixture(scope="module")
def ten(tmp_path_factory):
    return build_report(ten_variants(tmp_path_factory.mktemp("ten") / "sweep"), log=lambda m: None)


def test_ten_variants_are_small_multiples(ten):
    for key in ("improvement_ecdf", "utilisation:platform / workload", "nuwt:platform / workload"):
        # a grid of panels (4 a row), not one axis with ten lines
        assert Image.open(ten.figures[key]).size[0] > 1500, key


def test_small_multiples_titles_and_labels_do_not_overprint_the_panels():
    from batloc.analysis.style import Palette, lines

    names = ["fcfs", "cons-tabu", "easybf-staged", "fcfs-staged"]
    series = {s: ([0.0, 1.0, 2.0], [0.1 * k, 0.5, 0.9]) for k, s in enumerate(names)}
    fig, axes = lines(series, Palette(names, "fcfs"), "Utilisation — platform / workload",
                      "time from the evaluation window's start (days)", "allocated cores / P")
    assert len(axes) == 4
    fig.draw_without_rendering()      # what style.save does before measuring the figure
    renderer = fig.canvas.get_renderer()
    text = {t.get_text(): t.get_window_extent(renderer) for t in fig.texts}
    title = text["Utilisation — platform / workload (grey: the others)"]
    xlabel = text["time from the evaluation window's start (days)"]
    for ax in axes:
        assert not title.overlaps(ax.title.get_window_extent(renderer)), ax.get_title()
        assert xlabel.y1 <= ax.get_tightbbox(renderer).y0, ax.get_title()   # below the tick labels


@pytest.mark.parametrize("lo, hi, size", [(0.003, 1000.0, (6, 4)), (0.02, 50.0, (6, 4)), (0.01, 150.0, (6, 4)),
                                           (0.003, 1000.0, (3.2, 2.4)), (0.2, 5.0, (3.2, 2.4))])
def test_ratio_axis_labels_do_not_run_into_each_other(lo, hi, size):
    from batloc.analysis.figures import _ratio_axis
    from batloc.analysis.style import plt

    fig, ax = plt.subplots(figsize=size)
    ax.plot([lo, 1.0, hi], [0.0, 0.5, 1.0])
    ax.set_xscale("log")
    _ratio_axis(ax.xaxis)
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    shown = [(t.get_text(), t.get_window_extent(renderer)) for t in ax.xaxis.get_ticklabels()
             if t.get_text() and lo <= float(t.get_text()) <= hi]
    plt.close(fig)
    assert len(shown) >= 3, shown
    for (a, box_a), (b, box_b) in zip(shown, shown[1:]):
        assert not box_a.overlaps(box_b), (a, b)
    if hi / lo < 3000:     # up to about three decades, the 1-2-5 labels stay
        assert {"0.5", "2", "5"} <= {text for text, _ in shown}


@pytest.mark.skipif(not (shutil.which("chromium") or shutil.which("chromium-browser")),
                    reason="headless Chromium not installed")
def test_ten_variants_fit_a_1400_px_window(ten):
    from batloc.analysis import browser

    assert browser.page_width(ten.html, 1400) <= 1400


def test_numbers_are_shown_in_human_units():
    from batloc.analysis.tables import HOUR, TB, Column, change, number, split

    assert [number(v) for v in (61651200000000.0 / TB, 23622.37, 23.6249, 2.4275, 0.012345, 0.0)] == \
        ["61.7", "23\u202f622", "23.6", "2.43", "0.0123", "0"]
    assert number(float("nan")) == "–" and number(-3.5) == "−3.50"
    assert Column("mean_wait", "mean wait (h)", 1 / HOUR).show(23901.9) == "6.64"
    assert change(2.31, 6.64) == "−65.2 %" and change(67, 178, counts=True) == "−111"
    assert change(0, 0, counts=True) == "±0" and change(1, 0) == ""
    wide = pd.DataFrame({"run": ["r"], **{f"a quite long column title {k}": ["1.00"] for k in range(20)}})
    parts = split(wide, keep=1, width=600)
    assert len(parts) > 1 and all(p.columns[0] == "run" for p in parts)
    assert sum(len(p.columns) - 1 for p in parts) == 20
