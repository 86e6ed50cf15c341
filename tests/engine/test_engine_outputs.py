"""Outputs that other tools read: evalys loads jobs.csv; remaining profile types; the progress bar."""

import pytest

from engine_harness import Fifo, platform_xml, run, write


def test_evalys_loads_jobs_csv_with_rejected_rows(tmp_path):
    evalys_jobset = pytest.importorskip("evalys.jobset")
    platform = write(tmp_path, "p.xml", platform_xml(nodes=2, cores=2))
    wl = write(tmp_path, "w.json", {"nb_res": 4, "jobs": [
        {"id": i, "subtime": 1 + i, "res": 1 + i % 2, "profile": "d", "walltime": 50} for i in range(6)],
        "profiles": {"d": {"type": "delay", "delay": 7}}})
    fifo = Fifo()

    def sched(msg):
        out = fifo(msg)
        if any(e["type"] == "JOB_SUBMITTED" and e["data"]["job_id"] == "w0!5" for e in msg["events"]):
            fifo.queue = [q for q in fifo.queue if q[0] != "w0!5"]
            out = [e for e in out if e["data"]["job_id"] != "w0!5"]
            out.append({"type": "REJECT_JOB", "data": {"job_id": "w0!5"}})
        return out

    res = run(tmp_path, platform, [wl], sched)
    assert res.returncode == 0, res.stderr
    js = evalys_jobset.JobSet.from_csv(res.prefix + "_jobs.csv")
    assert len(js.df) == 6
    ran = js.df[js.df["final_state"] == "COMPLETED_SUCCESSFULLY"]
    assert ran["execution_time"].tolist() == [7.0] * 5
    assert js.df.loc[js.df["final_state"] == "REJECTED", "starting_time"].isna().all()
    assert js.res_bounds == (0, 3)  # compute ids 0-3, storages after them


def pfs_platform():
    # lustre reaches the cores too (a node's zone is entered at its memory), so
    # parallel_homogeneous_pfs has routes to read through
    return platform_xml(nodes=1, cores=2, bandwidth=1e8)


def test_parallel_homogeneous_pfs_reads_and_writes_through_the_mapped_storage(tmp_path):
    platform = write(tmp_path, "p.xml", pfs_platform())
    wl = write(tmp_path, "w.json", {"nb_res": 2, "jobs": [{"id": 1, "subtime": 1, "res": 2, "profile": "io"}],
                                    "profiles": {"io": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 2e8,
                                                        "bytes_to_write": 1e8, "storage": "pfs"}}})

    def sched(msg):
        return [{"type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "0-1", "storage_mapping": {"pfs": 2}}}
                for e in msg["events"] if e["type"] == "JOB_SUBMITTED"]

    res = run(tmp_path, platform, [wl], sched)
    assert res.returncode == 0, res.stderr
    # FATPIPE node link at 1e8 B/s: the 2e8-byte reads (and 1e8-byte writes) run concurrently → 2 s
    assert float(res.jobs()["1"]["execution_time"]) == pytest.approx(2.0, abs=1e-6)


def test_parallel_homogeneous_total_splits_the_work_between_hosts(tmp_path):
    platform = write(tmp_path, "p.xml", platform_xml(nodes=1, cores=2))
    wl = write(tmp_path, "w.json", {"nb_res": 2, "jobs": [{"id": 1, "subtime": 1, "res": 2, "profile": "t"}],
                                    "profiles": {"t": {"type": "parallel_homogeneous_total", "cpu": 6e9, "com": 0}}})
    res = run(tmp_path, platform, [wl], Fifo())
    assert res.returncode == 0, res.stderr
    assert res.jobs()["1"]["execution_time"] == "3.000000"  # 6 Gflop over two 1 Gflop/s cores


def test_progress_bar_reports_simulated_time_and_jobs(tmp_path):
    platform = write(tmp_path, "p.xml", platform_xml(nodes=1, cores=2))
    wl = write(tmp_path, "w.json", {"nb_res": 2, "jobs": [{"id": 1, "subtime": 5, "res": 1, "profile": "d"}],
                                    "profiles": {"d": {"type": "delay", "delay": 3}}})
    res = run(tmp_path, platform, [wl], Fifo(), args=["--progress"])
    assert res.returncode == 0, res.stderr
    last = res.stderr.strip().splitlines()[-1].split("\r")[-1]
    # the clock passes the last submission while the job runs: said as such, not as "t=8s/5s"
    assert last.startswith("[" + "#" * 30 + "] jobs 1/1 ended  t=8s (last submission 5s)"), res.stderr
