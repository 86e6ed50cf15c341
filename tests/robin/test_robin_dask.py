"""robin sweeps on Dask: the same outputs as robin's own threads, retries when a worker dies
mid-run, Ctrl-C, and nothing listening beyond loopback. Real engine and schedulers, real
LocalCluster (skipped without dask/distributed or without the engine)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

pytest.importorskip("distributed")
psutil = pytest.importorskip("psutil")

ROOT = Path(__file__).resolve().parents[2]
OUTPUTS = ("out_jobs.csv", "out_schedule.csv", "out_machine_states.csv", "out_decisions.csv")

pytestmark = pytest.mark.needs_engine


def four_runs(out: Path) -> Path:
    """experiments/sweep-small.yaml cut to 2 platforms x 2 schedulers, written beside `out`."""
    desc = yaml.safe_load((ROOT / "experiments" / "sweep-small.yaml").read_text())
    desc["output-dir"] = str(out)
    desc["schedulers"] = ["fcfs", "lea"]
    path = out.parent / f"{out.name}.yaml"
    path.write_text(yaml.safe_dump(desc))
    return path


def robin(*args, **popen):
    return subprocess.Popen([sys.executable, "-m", "batloc.robin", *map(str, args)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)


def finish(proc, timeout=300):
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def outputs(sweep: Path) -> dict:
    runs = sorted((sweep / "runs").iterdir())
    return {(run.name, name): (run / name).read_bytes() for run in runs for name in OUTPUTS}


def statuses(sweep: Path) -> dict:
    return {run.name: json.loads((run / "run.json").read_text())["status"]
            for run in sorted((sweep / "runs").iterdir()) if (run / "run.json").exists()}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The 4-run sweep by robin's own threads, two at a time."""
    out = tmp_path_factory.mktemp("threads") / "sweep"
    code, stdout, stderr = finish(robin(four_runs(out), "--jobs", "2", "--no-report"))
    assert code == 0, stdout + stderr
    return outputs(out)


def descendants(pid: int) -> list:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def engine_under_a_worker(robin_pid: int, timeout=120.0):
    """(worker process, engine process) of a run in progress on one of robin's LocalCluster workers."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for proc in descendants(robin_pid):
            try:
                if "batloc.engine" in " ".join(proc.cmdline()):
                    worker = proc.parent().parent()   # engine <- bash <- worker
                    if "spawn_main" in " ".join(worker.cmdline()):
                        return worker, proc
            except (psutil.NoSuchProcess, AttributeError):
                continue
        time.sleep(0.05)
    raise AssertionError("no run started on a Dask worker")


def listening_addresses(pids) -> set:
    found = set()
    for pid in pids:
        try:
            for conn in psutil.Process(pid).net_connections(kind="inet"):
                if conn.status == psutil.CONN_LISTEN:
                    found.add(conn.laddr.ip)
        except psutil.NoSuchProcess:
            pass
    return found


def test_local_cluster_gives_the_same_bytes_as_threads_with_a_progress_bar(tmp_path, reference):
    out = tmp_path / "sweep"
    code, stdout, stderr = finish(robin(four_runs(out), "--dask", "local:2"))
    assert code == 0, stdout + stderr
    assert outputs(out) == reference
    assert set(statuses(out).values()) == {"success"} and len(statuses(out)) == 4
    assert "Dask LocalCluster of 2 worker(s) on 127.0.0.1" in stdout
    assert "dashboard http://127.0.0.1:" in stdout
    assert "[##############################] 4/4 runs: 4 done, 0 failed" in stderr
    assert (out / "report.html").exists()
    # complete runs are skipped on Dask as with threads
    code, stdout, stderr = finish(robin(four_runs(out), "--dask", "local:2", "--no-report"))
    assert code == 0 and "4 already complete, 0 to run" in stdout, stdout + stderr


def test_a_worker_killed_mid_run_is_retried_and_leaves_no_orphan(tmp_path, reference):
    out = tmp_path / "sweep"
    proc = robin(four_runs(out), "--dask", "local:2", "--no-report")
    try:
        worker, engine = engine_under_a_worker(proc.pid)
        # scheduler, workers, dashboard, runs' schedulers: all on loopback
        pids = [proc.pid] + [p.pid for p in descendants(proc.pid)]
        assert listening_addresses(pids) == {"127.0.0.1"}
        args = engine.cmdline()
        run_dir = str(Path(args[args.index("-e") + 1]).parent)
        orphans = [p for p in psutil.process_iter(["cmdline"]) if run_dir in " ".join(p.info["cmdline"] or [])]
        assert len(orphans) >= 3   # bash + engine, bash + scheduler
        worker.send_signal(signal.SIGKILL)
        gone, alive = psutil.wait_procs(orphans, timeout=10)
        assert not alive, f"the killed worker's run lives on: {[p.cmdline() for p in alive]}"
        code, stdout, stderr = finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 0, stdout + stderr
    assert set(statuses(out).values()) == {"success"} and len(statuses(out)) == 4
    assert outputs(out) == reference   # every run whole, the retried one included


def test_ctrl_c_stops_the_runs_at_once_and_keeps_finished_ones(tmp_path):
    out = tmp_path / "sweep"
    # its own session, as a terminal's foreground job: Ctrl-C goes to robin and its workers alike
    proc = robin(four_runs(out), "--dask", "local:1", "--no-report", start_new_session=True)
    try:
        engine_under_a_worker(proc.pid)
        time.sleep(0.5)
        os.killpg(proc.pid, signal.SIGINT)
        code, stdout, stderr = finish(proc, timeout=60)   # a run stops within robin's kill grace
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert code == 128 + signal.SIGINT, stdout + stderr
    assert "sweep stopped by SIGINT" in stderr and "no report" in stderr
    recorded = statuses(out)
    assert "failure" in recorded.values(), recorded   # the run in progress, recorded as stopped
    stopped = [json.loads((out / "runs" / name / "run.json").read_text())["reason"]
               for name, status in recorded.items() if status == "failure"]
    assert all(reason.startswith("stopped by SIGINT") for reason in stopped), stopped
    assert not [p for p in psutil.process_iter(["cmdline"]) if str(out) in " ".join(p.info["cmdline"] or [])]
    # the next invocation keeps what finished and redoes the rest
    code, stdout, stderr = finish(robin(four_runs(out), "--dask", "local:2", "--no-report"))
    assert code == 0, stdout + stderr
    assert f"{list(recorded.values()).count('success')} already complete" in stdout


def test_dask_needs_a_sweep_and_a_sane_local_size(tmp_path):
    code, stdout, stderr = finish(robin(four_runs(tmp_path / "sweep"), "--dask", "local:0"))
    assert code == 1 and stderr.strip().splitlines() == ["robin: --dask local:0: expected local:N with N ≥ 1 workers"]
    single = tmp_path / "single.yaml"
    single.write_text(yaml.safe_dump({"output-dir": str(tmp_path / "one"), "platform": "platforms/rackham.xml",
                                      "workload": "experiments/small_workload.json", "scheduler": "fcfs"}))
    code, stdout, stderr = finish(robin(single, "--dask"))
    assert code == 1 and "--dask runs sweeps" in stderr
