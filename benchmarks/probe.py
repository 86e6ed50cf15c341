"""The hostile user's probe: every entry point of batloc fed what a careless or hostile user would give it.

Each case is small and bounded (a timeout on every command, loopback only, its
own temporary folder) and is judged:

- OK    — a clear error in one line naming the file, line, job, field or option at
          fault, or correct handling; nothing lost, no process left behind;
- POOR  — works, but badly: a traceback, a message that misleads or says nothing,
          a mistake accepted in silence;
- LOST  — output lost or falsified, a hang, a process left behind.

A process left behind is found by an environment variable every command of a
case inherits (`BATLOC_PROBE`); the probe ends such processes itself, by id.
This is a benchmark, not a test: it takes minutes (the first planning-scheduler
run may compile the planning core first). Batsim's own files are read from a
clone of Batsim (`$BATSIM_REPO`, else /work/.mirror/oar-team+batsim/repo, tag
v4.2.1) and WfCommons instances from a clone of wfcommons/WfInstances
(`$WFINSTANCES_REPO`); the cases that need them say SKIP without them.

    python benchmarks/probe.py                 # every case, then the table and its counts
    python benchmarks/probe.py -k robin -k api # the cases whose area or name holds a word
    python benchmarks/probe.py --list
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from pathlib import Path

PY = sys.executable
CASES = []
OK, POOR, LOST, SKIP = "OK", "POOR", "LOST", "SKIP"
BATSIM_REPO = os.environ.get("BATSIM_REPO", "/work/.mirror/oar-team+batsim/repo")
WFINSTANCES_REPO = os.environ.get("WFINSTANCES_REPO", "/work/.mirror/wfcommons+WfInstances/repo")
TRACES = Path(os.environ.get("BATLOC_TRACES", "/work/shared/data/traces"))


def case(area, text):
    def register(fn):
        CASES.append((area, fn.__name__.removeprefix("case_"), text, fn))
        return fn
    return register


# --- running a command -------------------------------------------------------------------------------------------

class Result:
    def __init__(self, cmd, rc, out, err, hung, left, seconds):
        self.cmd, self.rc, self.out, self.err = cmd, rc, out, err
        self.hung, self.left, self.seconds = hung, left, seconds

    @property
    def text(self):
        return self.out + self.err

    def lines(self):
        return [line for line in self.err.splitlines() if line.strip()]

    def last(self):
        lines = self.lines() or [line for line in self.out.splitlines() if line.strip()]
        return lines[-1] if lines else ""


def tagged(tag):
    """Pids of the processes whose environment holds BATLOC_PROBE=tag."""
    needle = f"BATLOC_PROBE={tag}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read().split(b"\0")
            with open(f"/proc/{entry}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in env and state != b"Z":
            found.append(int(entry))
    return found


def reap(tag, spare=()):
    """End the processes a case left (by id) but those in `spare`, and say which they were."""
    left = []
    for pid in tagged(tag):
        if pid in spare:
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                left.append(f.read().replace(b"\0", b" ").decode(errors="replace")[:80])
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return left


class Ctx:
    """One case's folder, its fixtures and its commands."""

    def __init__(self, root, fixtures, name):
        self.dir = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=root))
        self.fix = fixtures
        self.tag = f"{name}-{uuid.uuid4().hex[:8]}"
        self.background = []
        self.mounts = []

    def path(self, name):
        return str(self.dir / name)

    def write(self, name, content, mode="w"):
        p = self.dir / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, (dict, list)):
            content = json.dumps(content)
        with open(p, mode) as f:
            f.write(content)
        return str(p)

    def env(self, extra=None, tag=None):
        env = dict(os.environ, BATLOC_PROBE=tag or self.tag, PYTHONUNBUFFERED="1")
        env.pop("COLUMNS", None)
        env.update(extra or {})
        return env

    def start(self, cmd, cwd=None, env=None, **kw):
        """A background process of the case (a scheduler), ended at the case's end if still there."""
        # its own tag: what the case's commands leave is judged apart from what its background processes run
        p = subprocess.Popen(cmd, cwd=cwd or self.dir, env=self.env(env, tag=self.tag + "-bg"), start_new_session=True,
                             stdout=kw.pop("stdout", subprocess.DEVNULL), stderr=kw.pop("stderr", subprocess.DEVNULL),
                             **kw)
        self.background.append(p)
        return p

    def run(self, cmd, timeout=90, cwd=None, env=None, stdin=None, signal_when=None, settle=1.0):
        """Run `cmd` (a list; a str runs in bash) in the case's folder; `signal_when` = (predicate, signal):
        send the signal to the command's process once predicate(elapsed) is true. Processes left are reaped."""
        if isinstance(cmd, str):
            cmd = ["bash", "-c", cmd]
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, cwd=cwd or self.dir, env=self.env(env), start_new_session=True,
                             stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        hung = False
        out = err = b""
        if signal_when is not None:
            predicate, sig = signal_when
            sent = False
            while p.poll() is None and time.monotonic() - t0 < timeout:
                if not sent and predicate(time.monotonic() - t0):
                    p.send_signal(sig)
                    sent = True
                time.sleep(0.05)
        try:
            out, err = p.communicate(stdin.encode() if isinstance(stdin, str) else stdin,
                                     timeout=max(0.1, timeout - (time.monotonic() - t0)))
        except subprocess.TimeoutExpired:
            hung = True
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
            out, err = p.communicate()
        seconds = time.monotonic() - t0
        time.sleep(settle)
        for b in self.background:
            if b.poll() is None:
                try:
                    b.wait(timeout=3)
                except subprocess.TimeoutExpired:
                    pass
        left = reap(self.tag)
        return Result(cmd, p.returncode, out.decode(errors="replace"), err.decode(errors="replace"), hung, left,
                      seconds)

    def close(self):
        for b in self.background:
            if b.poll() is None:
                try:
                    os.killpg(b.pid, signal.SIGKILL)
                except OSError:
                    pass
                b.wait()
        reap(self.tag)
        reap(self.tag + "-bg")
        for m in self.mounts:
            subprocess.run(["umount", "-l", str(m)], capture_output=True)


# --- judging ----------------------------------------------------------------------------------------------------

def broken(r):
    """A verdict for what no case accepts: a hang or a process left behind (LOST)."""
    if r.hung:
        return LOST, f"hung (killed after {r.seconds:.0f} s); last line: {short(r.last())}"
    if r.left:
        return LOST, f"left {len(r.left)} process(es): {r.left[0]}"
    return None


def short(text, n=110):
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[:n - 3] + "..."


def error_lines(r):
    """The lines that are the error, not progress (robin's progress, the engine's header) nor argparse's usage
    block before its one-line error (the convention of every command line)."""
    out, usage = [], False
    for line in r.lines():
        usage = line.startswith("usage: ") or (usage and line.startswith(" "))
        if not usage and not line.startswith(("robin: [", "robin: sweep of ", "robin: loading the ")):
            out.append(line)
    return out


def refused(r, *names, lines=2, rc=None):
    """The command must stop (non-zero status) with a short error naming each of `names` (any spelling)."""
    bad = broken(r)
    if bad:
        return bad
    if "Traceback (most recent call last)" in r.err:
        return POOR, "traceback: " + short(r.last())
    if r.rc == 0:
        return POOR, "accepted (exit 0): " + short(r.last())
    if rc is not None and r.rc != rc:
        return POOR, f"exit status {r.rc}, not {rc}: " + short(r.last())
    errs = error_lines(r)
    if not errs:
        return POOR, f"exit {r.rc} with no message"
    if len(errs) > lines:
        return POOR, f"{len(errs)}-line error: " + short(" | ".join(errs[:3]))
    text = " ".join(errs).lower()
    missing = [n for n in names if not any(alt.lower() in text for alt in (n if isinstance(n, tuple) else (n,)))]
    if missing:
        return POOR, f"does not name {missing[0]}: " + short(errs[-1])
    return OK, short(errs[-1])


def succeeded(r, check=None):
    """The command must succeed, and `check()` (None, or the problem) hold."""
    bad = broken(r)
    if bad:
        return bad
    if "Traceback (most recent call last)" in r.err:
        return POOR, "traceback: " + short(r.last())
    if r.rc != 0:
        return POOR, f"failed (exit {r.rc}): " + short(r.last())
    if check is not None:
        problem = check()
        if problem:
            return LOST, problem
    return OK, short(r.last())


def rows(path):
    """jobs.csv's rows (dicts), or None."""
    try:
        from batloc.outputs import read_rows
        return read_rows(path)[1]
    except Exception:
        return None


def jobs_complete(prefix, n):
    """None when `prefix`_jobs.csv holds `n` rows each with a final state, else the problem."""
    rs = rows(f"{prefix}_jobs.csv")
    if rs is None:
        return f"no readable {Path(prefix).name}_jobs.csv"
    if len(rs) != n:
        return f"{len(rs)} rows in jobs.csv, not {n}"
    bad = [r for r in rs if not r["final_state"].startswith(("COMPLETED", "REJECTED"))]
    if bad:
        return f"job {bad[0]['job_id']} ended {bad[0]['final_state']}"
    return None


# --- fixtures ---------------------------------------------------------------------------------------------------

def delay_workload(n=4, res=1, nb_res=4, files=True, size=1e9, gap=5, delay=10, walltime=100):
    jobs = []
    for i in range(n):
        job = {"id": i + 1, "subtime": i * gap, "res": res, "walltime": walltime, "profile": f"d{delay}",
               "user": f"u{i % 2}"}
        if files:
            job.update(input_file=f"f{i % 2}", input_size=size, evaluated=True)
        jobs.append(job)
    return {"nb_res": nb_res, "jobs": jobs, "profiles": {f"d{delay}": {"type": "delay", "delay": delay}}}


def make_fixtures(root):
    fix = Path(root) / "fixtures"
    fix.mkdir()
    from batloc.platforms.generator import PlatformSpec, write
    write(PlatformSpec(memory_mix=((2, 16e9),), cores=2, node_bandwidth=1e9), fix / "p.xml")
    (fix / "w.json").write_text(json.dumps(delay_workload()))
    (fix / "plain.json").write_text(json.dumps(delay_workload(files=False)))
    if os.path.isdir(BATSIM_REPO):
        (fix / "batsim").mkdir()
        tar = subprocess.run(["git", "-C", BATSIM_REPO, "archive", "v4.2.1", "platforms", "workloads"],
                             capture_output=True)
        if tar.returncode == 0:
            subprocess.run(["tar", "-x", "-C", str(fix / "batsim")], input=tar.stdout, check=False)
    if os.path.isdir(WFINSTANCES_REPO):
        (fix / "wf").mkdir()
        for name in ("helloworld/helloworld-chain-5-chameleon.json", "makeflow/blast/blast-chameleon-small-001.json"):
            shown = subprocess.run(["git", "-C", WFINSTANCES_REPO, "show", f"HEAD:{name}"], capture_output=True)
            if shown.returncode == 0:
                (fix / "wf" / Path(name).name).write_bytes(shown.stdout)
    return fix


def batsim_file(c, rel):
    p = c.fix / "batsim" / rel
    return str(p) if p.exists() else None


def wf_file(c, name):
    p = c.fix / "wf" / name
    return str(p) if p.exists() else None


# the console scripts a user types (they run the batloc that `python -c "import batloc"` finds)
BATLOC, ENGINE, ROBIN, PROXY = ["batloc"], ["batloc-batsim"], ["robin"], ["batloc-stage-proxy"]


def engine(c, workload, *args, platform=None, sched="schedFcfs", prefix="out/o", timeout=90, **kw):
    """The engine in process with a stock scheduler (no planning core to load)."""
    cmd = ENGINE + ["-p", platform or str(c.fix / "p.xml"), "-w", workload, "-e", c.path(prefix), "-q"]
    if sched:
        cmd += ["--in-process", sched]
    return c.run(cmd + list(args), timeout=timeout, **kw)


# a scripted ZeroMQ scheduler: the body answers `msg` (a dict) with `events` (a list), free to misbehave
ZMQ_SCHED = """\
import json, sys, time, zmq
sock = zmq.Context().socket(zmq.REP)
sock.setsockopt(zmq.LINGER, 0)
sock.bind("tcp://127.0.0.1:" + sys.argv[1])
state = {"n": 0, "free": None, "queue": [], "alloc": {}}
def fifo(msg):
    out = []
    for e in msg["events"]:
        t, d = e["type"], e["data"]
        if t == "SIMULATION_BEGINS":
            state["free"] = sorted(r["id"] for r in d["compute_resources"])
        elif t == "JOB_SUBMITTED":
            state["queue"].append((d["job_id"], d["job"]["res"]))
        elif t == "JOB_COMPLETED":
            state["free"] = sorted(state["free"] + state["alloc"].pop(d["job_id"]))
    while state["queue"] and state["queue"][0][1] <= len(state["free"]):
        j, res = state["queue"].pop(0)
        ids, state["free"] = state["free"][:res], state["free"][res:]
        state["alloc"][j] = ids
        out.append({"timestamp": msg["now"], "type": "EXECUTE_JOB", "data": {"job_id": j, "alloc": " ".join(map(str, ids))}})
    return out
while True:
    raw = sock.recv()
    msg = json.loads(raw)
    state["n"] += 1
BODY
    if any(e["type"] == "SIMULATION_ENDS" for e in msg["events"]):
        break
"""


def zmq_engine(c, body, workload=None, args=(), timeout=60, platform=None):
    """The engine over ZeroMQ against a scripted scheduler whose loop body is `body` (indented 4)."""
    from batloc.processes import free_port
    port = free_port()
    script = c.write("sched.py", ZMQ_SCHED.replace("BODY", textwrap.indent(textwrap.dedent(body), "    ")))
    c.start([PY, script, str(port)])
    time.sleep(0.5)
    cmd = ENGINE + ["-p", platform or str(c.fix / "p.xml"), "-w", workload or str(c.fix / "plain.json"),
                    "-e", c.path("out/o"), "-q", "-s", f"tcp://127.0.0.1:{port}", "--ready-timeout", "20"]
    return c.run(cmd + list(args), timeout=timeout)


def api(c, code, timeout=120, **kw):
    """A Python script using batloc.api (its stdout is the script's own prints)."""
    script = c.write("api_case.py", "import batloc.api as bl\n" + textwrap.dedent(code))
    return c.run([PY, script], timeout=timeout, **kw)


def api_refused(r, *names):
    """An API call must raise BatlocError (the script lets it out: one line at the end of a traceback whose
    last frame is the script's call) naming `names`; any other exception is POOR."""
    bad = broken(r)
    if bad:
        return bad
    last = r.last()
    if not last.startswith("batloc.api.errors.BatlocError:") and not last.startswith("BatlocError:"):
        if r.rc == 0:
            return POOR, "accepted: " + short(r.out.strip().splitlines()[-1] if r.out.strip() else "no error")
        return POOR, "not a BatlocError: " + short(last)
    text = last.lower()
    missing = [n for n in names if not any(a.lower() in text for a in (n if isinstance(n, tuple) else (n,)))]
    if missing:
        return POOR, f"does not name {missing[0]}: " + short(last)
    return OK, short(last.split(":", 1)[1])


# --- platform -----------------------------------------------------------------------------------------------------

GEN = BATLOC + ["platform", "generate", "--nodes", "1", "--cores", "2", "--memory", "1GB", "--node-bw", "1GB/s"]


@case("platform", "generate --name holding '--' (ends an XML comment)")
def case_generate_name_dashes(c):
    r = c.run(GEN + ["-o", "g.xml", "--name", "a--b"])
    if r.rc == 0:
        s = c.run(BATLOC + ["platform", "show", "g.xml"])
        if s.rc != 0:
            return POOR, "wrote a platform its own reader refuses: " + short(s.last())
        return succeeded(r)
    return refused(r, "name")


@case("platform", "generate --name with a non-ASCII letter")
def case_generate_name_unicode(c):
    c.write("g.xml", "previous content\n")
    r = c.run(GEN + ["-o", "g.xml", "--name", "clüster"])
    if r.rc == 0:
        s = c.run(BATLOC + ["platform", "show", "g.xml"])
        return succeeded(r, lambda: None if s.rc == 0 else "its own reader refuses it: " + short(s.last()))
    verdict = refused(r, "name")
    if Path(c.path("g.xml")).read_text(errors="replace") != "previous content\n":
        return POOR, "the refusal emptied the previous file: " + verdict[1]
    return verdict


@case("platform", "generate 10 million hosts")
def case_generate_huge(c):
    r = c.run(BATLOC + ["platform", "generate", "-o", "g.xml", "--nodes", "100000", "--cores", "100"], timeout=30)
    return refused(r, ("hosts", "cores", "nodes"))


@case("platform", "generate --memory 1e400 (infinite)")
def case_generate_inf_memory(c):
    r = c.run(BATLOC + ["platform", "generate", "-o", "g.xml", "--nodes", "1", "--memory", "1e400"])
    return refused(r, "memory")


@case("platform", "generate -o into a read-only folder")
def case_generate_readonly(c):
    (c.dir / "ro").mkdir()
    os.chmod(c.dir / "ro", 0o500)
    if os.access(c.dir / "ro", os.W_OK):    # root writes anyway: a path under a file instead
        c.write("file", "x")
        r = c.run(GEN + ["-o", "file/g.xml"])
    else:
        r = c.run(GEN + ["-o", "ro/g.xml"])
    return refused(r, ("g.xml", "file"))


@case("platform", "generate -o /dev/full (the disk is full)")
def case_generate_full(c):
    r = c.run(GEN + ["-o", "/dev/full"])
    return refused(r, ("space", "/dev/full"))


@case("platform", "show a platform whose XML expands entities a billion times")
def case_show_entity_bomb(c):
    ents = "".join(f'<!ENTITY e{i} "{("&e%d;" % (i - 1)) * 10}">' for i in range(1, 10))
    c.write("bomb.xml", f'<?xml version="1.0"?><!DOCTYPE platform [<!ENTITY e0 "ha">{ents}]>'
                        '<platform version="4.1"><zone id="z" routing="Full"><host id="&e9;" speed="1Gf"/>'
                        '</zone></platform>')
    return refused(c.run(BATLOC + ["platform", "show", "bomb.xml"], timeout=60), "bomb.xml")


@case("platform", "show a platform with an external entity naming /etc/passwd")
def case_show_xxe(c):
    c.write("xxe.xml", '<?xml version="1.0"?><!DOCTYPE platform [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
                       '<platform version="4.1"><zone id="z" routing="Full"><host id="h&x;" speed="1Gf"/>'
                       '</zone></platform>')
    r = c.run(BATLOC + ["platform", "show", "xxe.xml"])
    if "root:" in r.text:
        return LOST, "echoed /etc/passwd"
    return refused(r, "xxe.xml") if r.rc else succeeded(r)


@case("platform", "show a platform with two hosts of one name")
def case_show_duplicate_hosts(c):
    c.write("dup.xml", '<?xml version="1.0"?><platform version="4.1"><zone id="z" routing="Full">'
                       '<host id="master_host" speed="1Gf"/><host id="h" speed="1Gf"/><host id="h" speed="1Gf"/>'
                       '</zone></platform>')
    return refused(c.run(BATLOC + ["platform", "show", "dup.xml"]), "h")


@case("platform", "show a host with a negative speed")
def case_show_negative_speed(c):
    c.write("neg.xml", '<?xml version="1.0"?><platform version="4.1"><zone id="z" routing="Full">'
                       '<host id="master_host" speed="1Gf"/><host id="h" speed="-1Gf"/>'
                       '</zone></platform>')
    r = c.run(BATLOC + ["platform", "show", "neg.xml"])
    if r.rc == 0:
        e = engine(c, str(c.fix / "plain.json"), platform=c.path("neg.xml"))
        if e.rc != 0 and "Traceback" not in e.err and len(error_lines(e)) <= 2:
            return POOR, "show accepts it, the engine refuses it: " + short(e.last())
        return refused(e, "speed")
    return refused(r, "speed")


@case("platform", "show a JSON workload given as the platform")
def case_show_json(c):
    return refused(c.run(BATLOC + ["platform", "show", str(c.fix / "w.json")]), "w.json")


@case("platform", "show through a symlink loop")
def case_show_symlink_loop(c):
    os.symlink("b.xml", c.path("a.xml"))
    os.symlink("a.xml", c.path("b.xml"))
    return refused(c.run(BATLOC + ["platform", "show", "a.xml"]), "a.xml")


@case("platform", "show Batsim 4.2.1's small_platform.xml")
def case_show_batsim_small(c):
    p = batsim_file(c, "platforms/small_platform.xml")
    if not p:
        return SKIP, "no Batsim clone"
    return succeeded(c.run(BATLOC + ["platform", "show", p]))


@case("platform", "annotate Batsim's cluster512.xml, then run it (ZeroMQ-free) with FCFS")
def case_annotate_batsim(c):
    p = batsim_file(c, "platforms/cluster512.xml")
    if not p:
        return SKIP, "no Batsim clone"
    r = c.run(BATLOC + ["platform", "annotate", p, "-o", "a.xml", "--memory", "16GB", "--node-bw", "1GB/s"])
    if r.rc:
        return succeeded(r)
    e = engine(c, str(c.fix / "w.json"), platform=c.path("a.xml"))
    return succeeded(e, lambda: jobs_complete(c.path("out/o"), 4))


@case("platform", "annotate a platform onto itself (-o the input)")
def case_annotate_in_place(c):
    shutil.copy(c.fix / "batsim/platforms/small_platform.xml" if batsim_file(c, "platforms/small_platform.xml")
                else c.fix / "p.xml", c.path("s.xml"))
    before = Path(c.path("s.xml")).read_bytes()
    r = c.run(BATLOC + ["platform", "annotate", "s.xml", "-o", "s.xml", "--memory", "16GB", "--node-bw", "1GB/s"])
    if r.rc == 0:   # in place, as asked: the result must be a whole annotated platform
        s = c.run(BATLOC + ["platform", "show", "s.xml"])
        return succeeded(r, lambda: None if s.rc == 0 and " GB" in s.out else "unreadable result: " + short(s.text))
    if Path(c.path("s.xml")).read_bytes() != before:
        return LOST, "the refusal changed the input"
    return refused(r, "s.xml")


@case("platform", "annotate with --memory 0")
def case_annotate_zero_memory(c):
    r = c.run(BATLOC + ["platform", "annotate", str(c.fix / "p.xml"), "-o", "a.xml", "--memory", "0",
                        "--node-bw", "1GB/s"])
    return refused(r, "memory")


@case("platform", "show a platform that is a gzip file")
def case_show_gzip(c):
    import gzip
    c.write("p.xml.gz", gzip.compress((c.fix / "p.xml").read_bytes()), mode="wb")
    return refused(c.run(BATLOC + ["platform", "show", "p.xml.gz"]), "p.xml.gz")


# --- workloads ----------------------------------------------------------------------------------------------------

WL = BATLOC + ["workload"]
SWF_LINE = "{id} {sub} 0 100 {procs} -1 -1 {procs} 200 -1 1 1 1 -1 1 -1 -1 -1\n"


def swf(n=4, procs=1):
    return "".join(SWF_LINE.format(id=i + 1, sub=i * 10, procs=procs) for i in range(n))


@case("workload", "from-swf: odd header lines (; MaxProcs: abc, ; UnixStartTime: soon)")
def case_swf_odd_header(c):
    c.write("t.swf", "; MaxProcs: abc\n; UnixStartTime: soon\n;\n" + swf())
    r = c.run(WL + ["from-swf", "t.swf", "-o", "t.json", "--platform", str(c.fix / "p.xml")])
    return succeeded(r, lambda: None if len(json.load(open(c.path("t.json")))["jobs"]) == 4 else "jobs lost")


@case("workload", "from-swf: CRLF line ends and tabs")
def case_swf_crlf(c):
    c.write("t.swf", swf().replace(" ", "\t").replace("\n", "\r\n"))
    r = c.run(WL + ["from-swf", "t.swf", "-o", "t.json", "--platform", str(c.fix / "p.xml")])
    return succeeded(r, lambda: None if len(json.load(open(c.path("t.json")))["jobs"]) == 4 else "jobs lost")


@case("workload", "from-swf: a truncated .gz")
def case_swf_truncated_gz(c):
    import gzip
    data = gzip.compress(swf(2000).encode())
    c.write("t.swf.gz", data[: len(data) // 2], mode="wb")
    r = c.run(WL + ["from-swf", "t.swf.gz", "-o", "t.json", "--platform", str(c.fix / "p.xml")])
    if r.rc == 0:
        return POOR, "a truncated trace converted without a word: " + short(r.last())
    return refused(r, "t.swf.gz")


@case("workload", "from-swf: a .gz that is not gzip")
def case_swf_not_gzip(c):
    c.write("t.swf.gz", swf())
    r = c.run(WL + ["from-swf", "t.swf.gz", "-o", "t.json", "--platform", str(c.fix / "p.xml")])
    return refused(r, "t.swf.gz") if r.rc else succeeded(r)


@case("workload", "from-swf: NUL bytes inside a line")
def case_swf_nul(c):
    c.write("t.swf", swf(2) + "3 30 0 100 1\0\0 -1 1 200 -1 1 1 1 -1 1 -1 -1 -1\n" + swf(1))
    r = c.run(WL + ["from-swf", "t.swf", "-o", "t.json", "--platform", str(c.fix / "p.xml")])
    return succeeded(r) if r.rc == 0 else refused(r, "t.swf")


@case("workload", "from-swf: -o names the trace itself")
def case_swf_output_is_input(c):
    c.write("t.swf", swf())
    before = Path(c.path("t.swf")).read_bytes()
    r = c.run(WL + ["from-swf", "t.swf", "-o", "t.swf", "--platform", str(c.fix / "p.xml")])
    if Path(c.path("t.swf")).read_bytes() != before:
        return LOST, "the trace was overwritten by its conversion"
    return refused(r, "t.swf")


@case("workload", "from-swf: the shared KTH trace, whole, with stats")
def case_swf_kth(c):
    trace = TRACES / "KTH-SP2-1996-2.1-cln.swf.gz"
    if not trace.exists():
        return SKIP, "no KTH trace"
    r = c.run(WL + ["from-swf", str(trace), "-o", "k.json", "--platform", str(c.fix / "p.xml")], timeout=240)
    if r.rc:
        return succeeded(r)
    return succeeded(c.run(WL + ["stats", "k.json", "--platform", str(c.fix / "p.xml")], timeout=120))


@case("workload", "from-sacct: a header missing the columns batloc needs")
def case_sacct_missing_columns(c):
    c.write("s.txt", "JobID|User\n1|alice\n2|bob\n")
    return refused(c.run(WL + ["from-sacct", "s.txt", "-o", "s.json"]), ("column", "Submit", "NCPUS", "AllocCPUS"))


@case("workload", "from-sacct: an empty file")
def case_sacct_empty(c):
    c.write("s.txt", "")
    return refused(c.run(WL + ["from-sacct", "s.txt", "-o", "s.json"]), "s.txt")


@case("workload", "from-sacct: 'Unknown' and 'None' times on every line")
def case_sacct_unknown(c):
    head = "JobID|User|Submit|Start|End|AllocCPUS|Timelimit|State|NNodes\n"
    c.write("s.txt", head + "".join(f"{i}|u|Unknown|None|Unknown|1|01:00:00|COMPLETED|1\n" for i in range(3)))
    return refused(c.run(WL + ["from-sacct", "s.txt", "-o", "s.json"]), "s.txt")


@case("workload", "from-gonthier: random binary bytes")
def case_gonthier_binary(c):
    c.write("g.txt", os.urandom(4096), mode="wb")
    return refused(c.run(WL + ["from-gonthier", "g.txt", "-o", "g.json"]), "g.txt")


@case("workload", "from-wfcommons: a real WfInstances instance (blast, makeflow)")
def case_wfcommons_real(c):
    inst = wf_file(c, "blast-chameleon-small-001.json")
    if not inst:
        return SKIP, "no WfInstances clone"
    r = c.run(WL + ["from-wfcommons", inst, "-o", "wf.json", "--platform", str(c.fix / "p.xml")])
    if r.rc:
        return succeeded(r)
    e = engine(c, c.path("wf.json"), "--enable-dynamic-jobs", sched="fcfs", timeout=400)
    return succeeded(e, lambda: None if rows(c.path("out/o") + "_jobs.csv") else "no jobs.csv")


@case("workload", "from-wfcommons: a cycle in the tasks' parents")
def case_wfcommons_cycle(c):
    tasks = [{"name": n, "id": n, "parents": [p], "children": [p], "inputFiles": [], "outputFiles": [],
              "runtimeInSeconds": 10} for n, p in (("a", "b"), ("b", "a"))]
    c.write("i.json", {"name": "cyc", "schemaVersion": "1.5", "workflow": {"specification": {"tasks": tasks,
            "files": []}, "execution": {"tasks": [{"id": "a", "runtimeInSeconds": 10},
                                                  {"id": "b", "runtimeInSeconds": 10}]}}})
    return refused(c.run(WL + ["from-wfcommons", "i.json", "-o", "wf.json", "--platform", str(c.fix / "p.xml")]),
                   "i.json")


@case("workload", "from-wfcommons: a file with a negative size")
def case_wfcommons_negative_size(c):
    inst = {"name": "neg", "schemaVersion": "1.5", "workflow": {
        "specification": {"tasks": [{"name": "a", "id": "a", "parents": [], "children": [], "inputFiles": ["f"],
                                     "outputFiles": []}], "files": [{"id": "f", "sizeInBytes": -5}]},
        "execution": {"tasks": [{"id": "a", "runtimeInSeconds": 10}]}}}
    c.write("i.json", inst)
    return refused(c.run(WL + ["from-wfcommons", "i.json", "-o", "wf.json", "--platform", str(c.fix / "p.xml")]),
                   ("size", "sizeInBytes"))


@case("workload", "synth --jobs-per-file 0")
def case_synth_jobs_per_file_zero(c):
    return refused(c.run(WL + ["synth", "-o", "s.json", "--duration", "1h", "--jobs-per-file", "0",
                               "--platform", str(c.fix / "p.xml")]), ("jobs-per-file", "jobs per file"))


@case("workload", "synth --load nan")
def case_synth_load_nan(c):
    return refused(c.run(WL + ["synth", "-o", "s.json", "--duration", "1h", "--load", "nan",
                               "--platform", str(c.fix / "p.xml")]), "load")


@case("workload", "synth --users 0")
def case_synth_users_zero(c):
    return refused(c.run(WL + ["synth", "-o", "s.json", "--duration", "1h", "--users", "0",
                               "--platform", str(c.fix / "p.xml")]), "users")


@case("workload", "synth --core-mix with a job wider than the machine")
def case_synth_core_mix_wide(c):
    r = c.run(WL + ["synth", "-o", "s.json", "--duration", "1h", "--core-mix", "64:1",
                    "--platform", str(c.fix / "p.xml")])
    return refused(r, ("core-mix", "core mix", "64"))


@case("workload", "synth --seed -1")
def case_synth_seed_negative(c):
    r = c.run(WL + ["synth", "-o", "s.json", "--duration", "1h", "--seed", "-1", "--platform", str(c.fix / "p.xml")])
    return succeeded(r) if r.rc == 0 else refused(r, "seed")


@case("workload", "window --start after the last job")
def case_window_after(c):
    r = c.run(WL + ["window", str(c.fix / "w.json"), "-o", "x.json", "--start", "100d", "--length", "1d"])
    return refused(r, ("no job", "empty", "window"))


@case("workload", "window --length -1d")
def case_window_negative(c):
    return refused(c.run(WL + ["window", str(c.fix / "w.json"), "-o", "x.json", "--start", "0",
                               "--length=-1d"]), "length")


@case("workload", "window --start as a date on a workload without epoch")
def case_window_date_no_epoch(c):
    return refused(c.run(WL + ["window", str(c.fix / "w.json"), "-o", "x.json", "--start", "2022-01-03",
                               "--length", "1d"]), ("epoch", "date"))


@case("workload", "stats on Batsim's own test_various_profile_types.json (ids such as 'delay')")
def case_stats_batsim(c):
    w = batsim_file(c, "workloads/test_various_profile_types.json")
    if not w:
        return SKIP, "no Batsim clone"
    r = c.run(WL + ["stats", w])
    # batloc's tools read delay profiles and integer ids: a refusal must say so
    return succeeded(r) if r.rc == 0 else refused(r, ("integer", "delay"))


@case("workload", "stats on a workload with an empty job list")
def case_stats_empty(c):
    c.write("e.json", {"nb_res": 4, "jobs": [], "profiles": {}})
    r = c.run(WL + ["stats", "e.json"])
    return succeeded(r) if r.rc == 0 else refused(r, ("no job", "empty"))


@case("workload", "stats on a workload nested 100 000 lists deep")
def case_stats_deep(c):
    c.write("deep.json", "[" * 100000 + "]" * 100000)
    return refused(c.run(WL + ["stats", "deep.json"]), "deep.json")


@case("workload", "synth-khanna --jobs 0")
def case_khanna_zero(c):
    return refused(c.run(WL + ["synth-khanna", "-o", "k.json", "--jobs", "0"]), "jobs")


@case("workload", "stats | head -1 (the reader leaves)")
def case_stats_pipe(c):
    r = c.run(f"{' '.join(WL)} stats {c.fix / 'w.json'} | head -1; exit ${{PIPESTATUS[0]}}")
    bad = broken(r)
    if bad:
        return bad
    if "Traceback" in r.err or "BrokenPipe" in r.err:
        return POOR, "traceback on a closed pipe"
    return OK, f"exit {r.rc}, quiet"


# --- the engine ---------------------------------------------------------------------------------------------------

@case("engine", "two profiles of one name (Batsim 4.2.1 refuses: duplication of profile name)")
def case_engine_duplicate_profile(c):
    text = json.dumps(delay_workload(files=False))
    text = text.replace('"profiles": {', '"profiles": {"d10": {"type": "delay", "delay": 99}, ')
    w = c.write("w.json", text)
    r = engine(c, w)
    if r.rc == 0:
        return LOST, "ran with one of the two profiles, chosen in silence (Batsim refuses the file)"
    return refused(r, "d10")


@case("engine", "a job object with its 'res' key twice")
def case_engine_duplicate_key(c):
    w = c.write("w.json", '{"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 1, "res": 3, "walltime": 100, '
                          '"profile": "d"}], "profiles": {"d": {"type": "delay", "delay": 1}}}')
    r = engine(c, w)
    if r.rc == 0:
        return LOST, "ran with one of the two values, chosen in silence"
    return refused(r, "res")


@case("engine", "job ids holding '!' and unicode")
def case_engine_odd_ids(c):
    wl = delay_workload(files=False, n=2)
    wl["jobs"][0]["id"] = "a!b"
    wl["jobs"][1]["id"] = "ジョブ,\"x\""
    w = c.write("w.json", wl)
    r = engine(c, w)
    if r.rc:
        return refused(r, "a!b")
    return succeeded(r, lambda: jobs_complete(c.path("out/o"), 2))


@case("engine", "a job asking for 0 resources")
def case_engine_zero_res(c):
    wl = delay_workload(files=False, n=2)
    wl["jobs"][1]["res"] = 0
    return refused(engine(c, c.write("w.json", wl)), ("res", "'2'"))


@case("engine", "a profile referenced but missing")
def case_engine_missing_profile(c):
    wl = delay_workload(files=False, n=2)
    wl["jobs"][1]["profile"] = "nope"
    return refused(engine(c, c.write("w.json", wl)), "nope")


@case("engine", "nb_res 10^18")
def case_engine_huge_nb_res(c):
    wl = delay_workload(files=False, n=2)
    wl["nb_res"] = 10 ** 18
    r = engine(c, c.write("w.json", wl))
    return succeeded(r, lambda: jobs_complete(c.path("out/o"), 2)) if r.rc == 0 else refused(r, "nb_res")


@case("engine", "a workload with no job at all")
def case_engine_empty(c):
    r = engine(c, c.write("w.json", {"nb_res": 4, "jobs": [], "profiles": {}}))
    return succeeded(r, lambda: None if rows(c.path("out/o") + "_jobs.csv") == [] else "no empty jobs.csv")


@case("engine", "a delay of 1e300 s")
def case_engine_huge_delay(c):
    wl = delay_workload(files=False, n=1)
    wl["profiles"] = {"d10": {"type": "delay", "delay": 1e300}}
    wl["jobs"][0]["walltime"] = -1
    r = engine(c, c.write("w.json", wl))
    if r.rc == 0:
        rs = rows(c.path("out/o") + "_jobs.csv") or []
        if rs and any(v in ("inf", "nan") for v in rs[0].values()):
            return LOST, "wrote inf/nan into jobs.csv"
        return succeeded(r, lambda: jobs_complete(c.path("out/o"), 1))
    return refused(r, ("delay", "d10", "time"))


@case("engine", "Batsim 4.2.1's test_various_profile_types.json on small_platform.xml")
def case_engine_batsim_profiles(c):
    p, w = batsim_file(c, "platforms/small_platform.xml"), batsim_file(c, "workloads/test_various_profile_types.json")
    if not (p and w):
        return SKIP, "no Batsim clone"
    r = engine(c, w, platform=p, sched="easyBackfill", timeout=240)
    n = len(json.load(open(w))["jobs"])
    return succeeded(r, lambda: jobs_complete(c.path("out/o"), n))


@case("engine", "Batsim 4.2.1's test_usage_trace.json on small_platform_usage_replay.xml")
def case_engine_batsim_usage_trace(c):
    p = batsim_file(c, "platforms/small_platform_usage_replay.xml")
    w = batsim_file(c, "workloads/test_usage_trace.json")
    if not (p and w):
        return SKIP, "no Batsim clone"
    # pybatsim's own schedulers fail on usage_trace profiles (its Profiles.Unknown): a scripted FIFO instead
    r = zmq_engine(c, 'sock.send(json.dumps({"now": msg["now"], "events": fifo(msg)}).encode())', workload=w,
                   platform=p, timeout=240)
    n = len(json.load(open(w))["jobs"])
    return succeeded(r, lambda: jobs_complete(c.path("out/o"), n))


@case("engine", "ZeroMQ: nobody listens, --ready-timeout 3")
def case_engine_nobody(c):
    from batloc.processes import free_port
    r = c.run(ENGINE + ["-p", str(c.fix / "p.xml"), "-w", str(c.fix / "plain.json"), "-e", c.path("o"),
                        "-s", f"tcp://127.0.0.1:{free_port()}", "--ready-timeout", "3"], timeout=60)
    return refused(r, ("listen", "answer", "ready"))


@case("engine", "ZeroMQ: the scheduler answers bytes that are not JSON")
def case_engine_garbage(c):
    r = zmq_engine(c, 'sock.send(b"\\xff\\xfe garbage")')
    v = refused(r, ("JSON", "answer"))
    return v if v[0] != OK else (v if rows(c.path("out/o") + "_jobs.csv") is not None else (LOST, "no jobs.csv"))


@case("engine", "ZeroMQ: an EXECUTE_JOB for a job never submitted")
def case_engine_unknown_job(c):
    r = zmq_engine(c, """\
        ev = fifo(msg)
        if state["n"] == 2:
            ev.append({"timestamp": msg["now"], "type": "EXECUTE_JOB", "data": {"job_id": "w0!999", "alloc": "0"}})
        sock.send(json.dumps({"now": msg["now"], "events": ev}).encode())
    """)
    v = refused(r, "w0!999")
    return v if v[0] != OK else (v if rows(c.path("out/o") + "_jobs.csv") is not None else (LOST, "no jobs.csv"))


@case("engine", "ZeroMQ: an allocation of 0-4294967295 (four billion resources)")
def case_engine_huge_alloc(c):
    r = zmq_engine(c, """\
        ev = fifo(msg)
        for e in ev:
            e["data"]["alloc"] = "0-4294967295"
        sock.send(json.dumps({"now": msg["now"], "events": ev}).encode())
    """, timeout=60)
    return refused(r, ("alloc", "4294967295"))


@case("engine", "ZeroMQ: the scheduler's clock goes backwards (Batsim 4.2.1 takes it as now)")
def case_engine_time_backwards(c):
    r = zmq_engine(c, """\
        ev = fifo(msg)
        now = msg["now"] - 100 if state["n"] > 2 else msg["now"]
        for e in ev:
            e["timestamp"] = now
        sock.send(json.dumps({"now": now, "events": ev}).encode())
    """)
    v = succeeded(r, lambda: jobs_complete(c.path("out/o"), 4))
    return v if v[0] != OK or "past" in r.err else (POOR, "no word of the dates in the past")


@case("engine", "ZeroMQ: CALL_ME_LATER at t = 1e308")
def case_engine_call_far(c):
    r = zmq_engine(c, """\
        ev = fifo(msg)
        if state["n"] == 1:
            ev.append({"timestamp": msg["now"], "type": "CALL_ME_LATER", "data": {"timestamp": 1e308}})
        sock.send(json.dumps({"now": msg["now"], "events": ev}).encode())
    """)
    if r.rc == 0:
        return succeeded(r, lambda: jobs_complete(c.path("out/o"), 4))
    return refused(r, ("CALL_ME_LATER", "timestamp"))


@case("engine", "ZeroMQ: the scheduler dies after SIMULATION_BEGINS (--reply-timeout 5)")
def case_engine_sched_dies(c):
    r = zmq_engine(c, """\
        if state["n"] == 2:
            import os; os._exit(3)
        sock.send(json.dumps({"now": msg["now"], "events": fifo(msg)}).encode())
    """, args=["--reply-timeout", "5"])
    v = refused(r, ("answer", "reply", "scheduler"))
    if v[0] == OK and rows(c.path("out/o") + "_jobs.csv") is None:
        return LOST, "no jobs.csv"
    return v


@case("engine", "ZeroMQ: the scheduler answers a 50 MB message of noise events")
def case_engine_big_answer(c):
    r = zmq_engine(c, """\
        ev = fifo(msg)
        if state["n"] == 1:
            ev += [{"timestamp": msg["now"], "type": "NOTIFY", "data": {"type": "x" * 50}}] * 500000
        sock.send(json.dumps({"now": msg["now"], "events": ev}).encode())
    """, timeout=120)
    return refused(r, ("NOTIFY", "type"))


@case("engine", "ZeroMQ: JSON with NaN in an event's timestamp")
def case_engine_nan_timestamp(c):
    r = zmq_engine(c, """\
        ev = fifo(msg)
        for e in ev:
            e["timestamp"] = float("nan")
        sock.send(json.dumps({"now": msg["now"], "events": ev}).encode())
    """)
    return refused(r, ("timestamp", "NaN"))


@case("engine", "SIGHUP to the engine mid-run (in process): outputs kept")
def case_engine_sighup(c):
    wl = delay_workload(files=False, n=200, gap=1, delay=50)
    w = c.write("w.json", wl)
    r = engine(c, w, "--progress-file", c.path("progress"),
               signal_when=(lambda t: os.path.exists(c.path("progress")), signal.SIGHUP))
    bad = broken(r)
    if bad:
        return bad
    rs = rows(c.path("out/o") + "_jobs.csv")
    if rs is None or len(rs) != 200:
        return LOST, f"{'no' if rs is None else len(rs)} rows in jobs.csv, not 200"
    return (OK if r.rc != 0 and "Traceback" not in r.err else POOR), short(r.last())


@case("engine", "--recover a prefix whose journal is a FIFO")
def case_engine_recover_fifo(c):
    os.makedirs(c.path("out"))
    os.mkfifo(c.path("out/o_journal.4242.tmp"))
    return refused(c.run(ENGINE + ["--recover", c.path("out/o")], timeout=30), ("journal", "FIFO"))


@case("engine", "a run over a prefix beside which a FIFO poses as a dead run's journal")
def case_engine_run_fifo_journal(c):
    os.makedirs(c.path("out"))
    os.mkfifo(c.path("out/o_journal.4242.tmp"))
    r = engine(c, str(c.fix / "plain.json"), timeout=60)
    return succeeded(r, lambda: jobs_complete(c.path("out/o"), 4))


CLUSTER_100K = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="c" prefix="h" suffix="" radical="0-99999" speed="1Gf" bw="1GBps" lat="0us"/>
</platform>
"""


def rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024
    except (OSError, StopIteration):
        return 0.0


@case("engine", "ZeroMQ: SIGTERM while SimGrid builds a <cluster> of 100 000 hosts")
def case_engine_sigterm_platform(c):
    from batloc.processes import free_port
    platform = c.write("cl.xml", CLUSTER_100K)
    seen = []
    # SimGrid's call grows the engine from about 100 to 400 MB: a signal at 150 and at 250 MB lands inside it
    for mb in (150, 250):
        cmd = ENGINE + ["-p", platform, "-w", str(c.fix / "plain.json"), "-e", c.path("out/o"), "-q", "-m", "h0",
                        "-s", f"tcp://127.0.0.1:{free_port()}", "--ready-timeout", "3"]

        def big(t, mb=mb):
            pids = tagged(c.tag)
            return any(rss_mb(pid) >= mb for pid in pids)
        r = c.run(cmd, timeout=120, settle=0.2, signal_when=(big, signal.SIGTERM))
        bad = broken(r)
        if bad:
            return bad
        if r.rc not in (128 + signal.SIGTERM, -signal.SIGTERM):   # its exit status, or killed by the signal
            continue   # it ended before the signal (nobody listens): no signal case
        if "Traceback" in r.err:
            return POOR, f"at {mb} MB: traceback: " + short(r.last())
        if "interrupted by SIGTERM" not in r.err:
            return POOR, f"at {mb} MB: exit 143 with no line"
        seen.append(r.last())
    return (OK, short(seen[-1])) if seen else (SKIP, "each run ended before its signal")


LATE_SCHED = """
from batsim.batsim import BatsimScheduler


class Late(BatsimScheduler):
    def onJobSubmission(self, job):
        self.job = job
        self.bs.wake_me_up_at(1.7e308)

    def onRequestedCall(self):
        self.job.allocation = "0"
        self.bs.execute_jobs([self.job])
"""


@case("engine", "--in-process: CALL_ME_LATER at 1.7e308, then a job of 1e308 s starts (its end past any double)")
def case_engine_late_start(c):
    w = c.write("w.json", {"nb_res": 4, "jobs": [{"id": 1, "subtime": 1, "res": 1, "profile": "d"}],
                           "profiles": {"d": {"type": "delay", "delay": 1e308}}})
    r = engine(c, w, sched=c.write("late.py", LATE_SCHED))
    v = refused(r, "EXECUTE_JOB", ("largest", "overflow", "+inf"))
    if v[0] == OK and rows(c.path("out/o") + "_jobs.csv") is None:
        return LOST, "no jobs.csv"
    return v


def small_disk(c, name="full", size="48k"):
    """A tmpfs of `size` at the case's `name` (root only; unmounted at the case's end), or None."""
    path = c.dir / name
    path.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                                           capture_output=True).returncode:
        return None
    c.mounts.append(path)
    return path


@case("engine", "-e on a full disk (a 48 KiB tmpfs)")
def case_engine_full_disk(c):
    disk = small_disk(c)
    if disk is None:
        return SKIP, "needs root for a tmpfs"
    w = c.write("w.json", delay_workload(files=False, n=400, gap=1, delay=5))
    return refused(engine(c, w, prefix=str(disk / "o")), ("space", "full"))


@case("robin", "a sweep whose output folder is on a full disk")
def case_robin_full_disk(c):
    disk = small_disk(c)
    if disk is None:
        return SKIP, "needs root for a tmpfs"
    c.write("long.json", delay_workload(files=False, n=400, gap=1, delay=5))
    y = c.write("s.yaml", f"output-dir: {disk / 'sw'}\nplatforms: [{c.fix / 'p.xml'}]\n"
                          f"workloads: [{c.path('long.json')}]\n"
                          "schedulers: [{name: fcfs, command: pybatsim schedFcfs}]\n")
    return refused(c.run(ROBIN + [y, "--jobs", "1"], timeout=120), ("space", "full"), lines=4)


@case("report", "a report onto a full disk: one line, nothing half written")
def case_report_full_disk(c):
    disk = small_disk(c, size="160k")
    if disk is None:
        return SKIP, "needs root for a tmpfs"
    bad = one_sweep(c)
    if bad:
        return bad
    run = next(c.dir.glob("sw/runs/*"))
    shutil.copytree(run, disk / "r", ignore=shutil.ignore_patterns("log", "cmd", "out_events.csv"))
    r = c.run(BATLOC + ["report", str(disk)], timeout=120)
    junk = [p.name for p in disk.glob(".report*")]
    if junk:
        return LOST, f"left {junk[0]} on the full disk"
    return refused(r, ("space", "full"), lines=3)


@case("engine", "-e prefix under a file")
def case_engine_prefix_under_file(c):
    c.write("out", "a file")
    return refused(engine(c, str(c.fix / "plain.json")), "out")


@case("engine", "--in-process: a scheduler file that raises at import")
def case_engine_sched_import_error(c):
    s = c.write("bad_sched.py", "raise RuntimeError('broken on purpose')\n")
    return refused(engine(c, str(c.fix / "plain.json"), sched=s), ("bad_sched.py", "broken on purpose"))


@case("engine", "--in-process: a scheduler that calls sys.exit(0) at its first event")
def case_engine_sched_exits(c):
    s = c.write("exits.py", textwrap.dedent("""\
        import sys
        from batsim.batsim import BatsimScheduler
        class Exits(BatsimScheduler):
            def onSimulationBegins(self):
                sys.exit(0)
    """))
    r = engine(c, str(c.fix / "plain.json"), sched=s)
    v = refused(r, ("exit", "scheduler"))
    if rows(c.path("out/o") + "_jobs.csv") is None:
        return LOST, "no jobs.csv: " + v[1]
    return v


@case("engine", "--in-process: --scheduler-options is a JSON list")
def case_engine_options_list(c):
    return refused(engine(c, str(c.fix / "plain.json"), "--scheduler-options", "[1, 2]", sched="fcfs"),
                   "scheduler-options")


@case("engine", "--recover a prefix that never ran")
def case_engine_recover_nothing(c):
    return refused(c.run(ENGINE + ["--recover", c.path("nothing/o")]), ("journal", "nothing"))


@case("engine", "-m a host the platform does not have")
def case_engine_master_missing(c):
    p = batsim_file(c, "platforms/small_platform.xml")
    if not p:
        return SKIP, "no Batsim clone"
    return refused(engine(c, str(c.fix / "plain.json"), "-m", "nosuch", platform=p), "nosuch")


@case("engine", "-w the same file twice (w0 and w1)")
def case_engine_same_workload_twice(c):
    r = engine(c, str(c.fix / "plain.json"), "-w", str(c.fix / "plain.json"))
    return succeeded(r, lambda: jobs_complete(c.path("out/o"), 8))


# --- robin ----------------------------------------------------------------------------------------------------------

def sweep_yaml(c, name="s.yaml", out="sw", schedulers=None, extra=""):
    scheds = schedulers or "[{name: fcfs, command: pybatsim schedFcfs}]"
    return c.write(name, f"output-dir: {out}\nplatforms: [{c.fix / 'p.xml'}]\nworkloads: [{c.fix / 'plain.json'}]\n"
                         f"schedulers: {scheds}\n{extra}")


@case("robin", "description with invalid YAML")
def case_robin_bad_yaml(c):
    c.write("s.yaml", "output-dir: x\nplatforms: [p.xml\nworkloads: a: b\n")
    return refused(c.run(ROBIN + ["s.yaml"]), ("s.yaml", "line"))


@case("robin", "description with a key given twice")
def case_robin_duplicate_key(c):
    y = sweep_yaml(c, extra=f"workloads: [{c.fix / 'w.json'}]\n")
    return refused(c.run(ROBIN + [y, "--jobs", "1", "--no-report"], timeout=120), "workloads")


@case("robin", "description whose engine-args is a billion-laughs alias bomb")
def case_robin_alias_bomb(c):
    text = "engine-args:\n  - &a0 [x, x, x, x, x, x, x, x, x]\n"
    text += "".join(f"  - &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 12))
    y = sweep_yaml(c, extra=text)
    # refused by the YAML reader, before any key is read: naming the file and its aliases is the right line
    return refused(c.run(ROBIN + [y, "--jobs", "1", "--no-report"], timeout=40), ("engine-args", "s.yaml"), "alias")


@case("robin", "simulation-timeout: .nan")
def case_robin_timeout_nan(c):
    y = sweep_yaml(c, extra="simulation-timeout: .nan\n")
    return refused(c.run(ROBIN + [y, "--jobs", "1", "--no-report"], timeout=120), "simulation-timeout")


@case("robin", "--ready-timeout nan on the command line")
def case_robin_flag_timeout_nan(c):
    y = sweep_yaml(c)
    return refused(c.run(ROBIN + [y, "--jobs", "1", "--no-report", "--ready-timeout", "nan"], timeout=120),
                   "ready-timeout")


@case("robin", "two robins on one output folder")
def case_robin_two(c):
    wl = delay_workload(files=False, n=300, gap=2, delay=30)
    c.write("long.json", wl)
    y = c.write("s.yaml", f"output-dir: sw\nplatforms: [{c.fix / 'p.xml'}]\nworkloads: [{c.path('long.json')}]\n"
                          "schedulers: [{name: fcfs, command: pybatsim schedFcfs}]\n")
    first = c.start(ROBIN + [y, "--jobs", "1", "--no-report"])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list(c.dir.glob("sw/runs/*/log")):
        time.sleep(0.2)
    second = c.run(ROBIN + [y, "--jobs", "1", "--no-report"], timeout=60, settle=0)
    first.wait(timeout=300)
    v = refused(second, ("in use", "another robin", "sw"))
    if first.returncode != 0:
        return LOST, f"the first robin failed (exit {first.returncode}) beside the refused second"
    return v


@case("robin", "SIGTERM during a sweep, then the same sweep again")
def case_robin_resume(c):
    scheds = "[{name: a, command: pybatsim schedFcfs}, {name: b, command: pybatsim schedFcfs -v error}]"
    wl = delay_workload(files=False, n=200, gap=2, delay=30)
    c.write("long.json", wl)
    y = c.write("s.yaml", f"output-dir: sw\nplatforms: [{c.fix / 'p.xml'}]\nworkloads: [{c.path('long.json')}]\n"
                          f"schedulers: {scheds}\nbaseline: a\n")
    r1 = c.run(ROBIN + [y, "--jobs", "1", "--no-report"], timeout=120,
               signal_when=(lambda t: bool(list(c.dir.glob("sw/runs/*/log/progress"))), signal.SIGTERM))
    bad = broken(r1)
    if bad:
        return bad
    if r1.rc != 128 + signal.SIGTERM:
        return POOR, f"exit {r1.rc} after SIGTERM, not 143"
    r2 = c.run(ROBIN + [y, "--jobs", "1"], timeout=240)
    return succeeded(r2, lambda: None if all(
        json.load(open(p))["status"] == "success" for p in c.dir.glob("sw/runs/*/run.json")) else "a run not redone")


@case("robin", "SIGTERM while the sweep's report is written")
def case_robin_sigterm_report(c):
    y = sweep_yaml(c)
    r = c.run(ROBIN + [y, "--jobs", "1"], timeout=180,
              signal_when=(lambda t: any(c.dir.glob("sw/.report*")) or any(c.dir.glob("sw/report*"))
                           or any(c.dir.glob("sw/figures*")), signal.SIGTERM))
    bad = broken(r)
    if bad:
        return bad
    leftovers = [p.name for p in c.dir.glob("sw/*") if p.name.startswith((".", "tmp")) and "lock" not in p.name]
    if "Traceback" in r.err:
        return POOR, "traceback: " + short(r.last())
    if leftovers:
        return POOR, f"left {leftovers[0]} in the folder"
    return OK, f"exit {r.rc}: " + short(r.last())


@case("robin", "output-dir is a symlink loop")
def case_robin_output_loop(c):
    os.symlink("b", c.path("a"))
    os.symlink("a", c.path("b"))
    return refused(c.run(ROBIN + [sweep_yaml(c, out=c.path("a")), "--jobs", "1"]), "a")


@case("robin", "a scheduler name that is not a plain file name")
def case_robin_bad_name(c):
    y = sweep_yaml(c, schedulers="[{name: ../evil, command: pybatsim schedFcfs}]")
    return refused(c.run(ROBIN + [y, "--jobs", "1"]), "../evil")


@case("robin", "a workload the engine refuses: the run fails, named, with the engine's line")
def case_robin_engine_refuses(c):
    wl = delay_workload(files=False, n=2)
    wl["jobs"][1]["profile"] = "nope"
    c.write("bad.json", wl)
    y = c.write("s.yaml", f"output-dir: sw\nplatforms: [{c.fix / 'p.xml'}]\nworkloads: [{c.path('bad.json')}]\n"
                          "schedulers: [{name: fcfs, command: pybatsim schedFcfs}]\n")
    r = c.run(ROBIN + [y, "--jobs", "1", "--no-report"], timeout=120)
    return refused(r, "nope", lines=8)


@case("robin", "flag form with a platform path holding spaces and unicode")
def case_robin_odd_paths(c):
    shutil.copy(c.fix / "p.xml", c.path("my plätform.xml"))
    y = c.write("s.yaml", f"output-dir: sw\nplatforms: ['{c.path('my plätform.xml')}']\n"
                          f"workloads: [{c.fix / 'plain.json'}]\n"
                          "schedulers: [{name: fcfs, command: pybatsim schedFcfs}]\n")
    return succeeded(c.run(ROBIN + [y, "--jobs", "1"], timeout=180))


@case("robin", "single run: a batcmd that exits at once with 0 beside a real scheduler")
def case_robin_batcmd_true(c):
    from batloc.processes import free_port
    port = free_port()
    r = c.run(ROBIN + ["--output-dir", "one", "--batcmd", f"true -s tcp://localhost:{port}",
                       "--schedcmd", f"pybatsim schedFcfs -s tcp://127.0.0.1:{port}", "--success-timeout", "10"],
              timeout=120)
    if r.rc == 0:
        return POOR, "a run that simulated nothing counted as a success"
    return refused(r, ("batcmd", "Batsim", "engine", "output"), lines=8)


@case("robin", "a run folder moved after the sweep: report and validate the moved copy")
def case_robin_moved(c):
    y = sweep_yaml(c)
    r = c.run(ROBIN + [y, "--jobs", "1", "--no-report"], timeout=120)
    if r.rc:
        return succeeded(r)
    shutil.move(c.path("sw"), c.path("moved"))
    run = next(c.dir.glob("moved/runs/*"))
    v = c.run(BATLOC + ["validate", str(run)])
    rep = c.run(BATLOC + ["report", c.path("moved")], timeout=120)
    if v.rc == 0 and rep.rc == 0:
        return OK, "both read the moved folder"
    bad = v if v.rc else rep
    return refused(bad, "moved")


@case("robin", "--dask local: one stock run")
def case_robin_dask(c):
    try:
        import distributed  # noqa: F401
    except ImportError:
        return SKIP, "no dask"
    y = sweep_yaml(c)
    return succeeded(c.run(ROBIN + [y, "--jobs", "1", "--dask", "local:1", "--no-report"], timeout=240))


@case("robin", "--dask on an address where nothing listens")
def case_robin_dask_nobody(c):
    try:
        import distributed  # noqa: F401
    except ImportError:
        return SKIP, "no dask"
    from batloc.processes import free_port
    y = sweep_yaml(c)
    r = c.run(ROBIN + [y, "--jobs", "1", "--dask", f"tcp://127.0.0.1:{free_port()}", "--no-report"], timeout=120)
    return refused(r, ("dask", "127.0.0.1"))


@case("robin", "SIGHUP to a sweep (a closed terminal)")
def case_robin_sighup(c):
    wl = delay_workload(files=False, n=200, gap=2, delay=30)
    c.write("long.json", wl)
    y = c.write("s.yaml", f"output-dir: sw\nplatforms: [{c.fix / 'p.xml'}]\nworkloads: [{c.path('long.json')}]\n"
                          "schedulers: [{name: fcfs, command: pybatsim schedFcfs}]\n")
    r = c.run(ROBIN + [y, "--jobs", "1", "--no-report"], timeout=120,
              signal_when=(lambda t: bool(list(c.dir.glob("sw/runs/*/log/progress"))), signal.SIGHUP))
    bad = broken(r)
    if bad:
        return bad
    meta = [json.load(open(p)) for p in c.dir.glob("sw/runs/*/run.json")]
    if not meta or meta[0].get("status") == "success" and r.rc != 0:
        return LOST, "run.json not written as stopped"
    return (OK if r.rc == 128 + signal.SIGHUP else POOR), f"exit {r.rc}: " + short(r.last())


@case("robin", "the workload file changes while the sweep runs")
def case_robin_changed_midway(c):
    wl = delay_workload(files=False, n=300, gap=2, delay=30)
    c.write("long.json", wl)
    y = c.write("s.yaml", f"output-dir: sw\nplatforms: [{c.fix / 'p.xml'}]\nworkloads: [{c.path('long.json')}]\n"
                          "schedulers: [{name: fcfs, command: pybatsim schedFcfs}]\n")

    def change(t):
        if list(c.dir.glob("sw/runs/*/log/progress")):
            c.write("long.json", delay_workload(files=False, n=3))
            return True
        return False
    r = c.run(ROBIN + [y, "--jobs", "1", "--no-report"], timeout=180, signal_when=(change, 0))
    bad = broken(r)
    if bad:
        return bad
    meta = json.load(open(next(c.dir.glob("sw/runs/*/run.json"))))
    if meta["status"] == "success":
        r2 = c.run(ROBIN + [y, "--jobs", "1", "--no-report", "--refuse-changed"], timeout=120)
        if r2.rc == 0:
            return LOST, "a run of the old file is kept as complete for the new one"
        return refused(r2, "long.json")
    if meta["reason"].startswith("invalid schedule"):
        return POOR, "recorded as failed for another reason: " + short(meta["reason"])
    return OK, short(meta["reason"])


# --- report, validate, study ------------------------------------------------------------------------------------

def one_sweep(c):
    y = sweep_yaml(c)
    r = c.run(ROBIN + [y, "--jobs", "1", "--no-report"], timeout=120)
    return None if r.rc == 0 else succeeded(r)


@case("report", "--bandwidth -1")
def case_report_negative_bandwidth(c):
    return one_sweep(c) or refused(c.run(BATLOC + ["report", "sw", "--bandwidth", "-1"], timeout=120), "bandwidth")


@case("report", "--bandwidth nan")
def case_report_nan_bandwidth(c):
    return one_sweep(c) or refused(c.run(BATLOC + ["report", "sw", "--bandwidth", "nan"], timeout=120), "bandwidth")


@case("report", "--gantt-range nan:inf")
def case_report_gantt_nan(c):
    return one_sweep(c) or refused(c.run(BATLOC + ["report", "sw", "--gantt-range", "nan:inf"], timeout=120),
                                   "gantt-range")


@case("report", "--gantt-window 5h:2h (ends before it starts)")
def case_report_gantt_backwards(c):
    return one_sweep(c) or refused(c.run(BATLOC + ["report", "sw", "--gantt-window", "5h:2h"], timeout=120),
                                   "gantt-window")


@case("report", "a run whose jobs.csv was cut in the middle of a line")
def case_report_cut_jobs(c):
    bad = one_sweep(c)
    if bad:
        return bad
    jobs = next(c.dir.glob("sw/runs/*/out_jobs.csv"))
    data = jobs.read_bytes()
    jobs.write_bytes(data[: len(data) - 30])
    r = c.run(BATLOC + ["report", "sw"], timeout=120)
    if r.rc == 0:
        return LOST, "a cut jobs.csv reported as whole"
    return refused(r, "out_jobs.csv", lines=4)


@case("report", "SIGTERM during the report: the previous report stays whole")
def case_report_sigterm(c):
    bad = one_sweep(c)
    if bad:
        return bad
    first = c.run(BATLOC + ["report", "sw"], timeout=120)
    if first.rc:
        return succeeded(first)
    before = Path(c.path("sw/report.html")).read_bytes()
    r = c.run(BATLOC + ["report", "sw"], timeout=120, signal_when=(lambda t: t > 2.0, signal.SIGTERM))
    bad = broken(r)
    if bad:
        return bad
    if not os.path.exists(c.path("sw/report.html")):
        return LOST, "report.html gone"
    if r.rc != 0 and Path(c.path("sw/report.html")).read_bytes() != before:
        return LOST, "report.html changed by a report that was stopped"
    junk = [p.name for p in c.dir.glob("sw/*") if p.name.startswith(".") and "lock" not in p.name]
    if "Traceback" in r.err:
        return POOR, "traceback"
    if junk:
        return POOR, f"left {junk[0]}"
    return OK, f"exit {r.rc}: {short(r.last())}"


@case("report", "a folder with out_jobs.csv written by hand (CRLF, extra column), no run.json")
def case_report_hand_jobs(c):
    (c.dir / "r").mkdir()
    head = ("job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,success,"
            "final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,stretch,"
            "allocated_resources,consumed_energy,metadata,extra")
    row = '1,w0,d10,0,1,100,1,COMPLETED_SUCCESSFULLY,0,10,10,0,10,1,0,0,"",x'
    c.write("r/out_jobs.csv", head + "\r\n" + row + "\r\n")
    r = c.run(BATLOC + ["report", "r", "--workload", str(c.fix / "plain.json"), "--platform", str(c.fix / "p.xml")],
              timeout=120)
    return succeeded(r) if r.rc == 0 else refused(r, "out_jobs.csv", lines=4)


@case("validate", "a run folder whose out_jobs.csv is a directory")
def case_validate_jobs_dir(c):
    bad = one_sweep(c)
    if bad:
        return bad
    jobs = next(c.dir.glob("sw/runs/*/out_jobs.csv"))
    jobs.unlink()
    jobs.mkdir()
    return refused(c.run(BATLOC + ["validate", str(jobs.parent)]), "out_jobs.csv")


@case("validate", "a run folder whose run.json is not JSON")
def case_validate_bad_runjson(c):
    bad = one_sweep(c)
    if bad:
        return bad
    meta = next(c.dir.glob("sw/runs/*/run.json"))
    meta.write_text("{not json")
    return refused(c.run(BATLOC + ["validate", str(meta.parent)]), "run.json")


@case("study", "study paper --trace a missing file")
def case_study_missing_trace(c):
    return refused(c.run(BATLOC + ["study", "paper", "--trace", "nope.swf.gz", "-o", "st", "--prepare-only"]),
                   "nope.swf.gz")


@case("study", "study paper --windows 0")
def case_study_zero_windows(c):
    trace = TRACES / "KTH-SP2-1996-2.1-cln.swf.gz"
    if not trace.exists():
        return SKIP, "no KTH trace"
    return refused(c.run(BATLOC + ["study", "paper", "--windows", "0", "--trace", str(trace), "-o", "st",
                                   "--prepare-only"], timeout=300), "windows")


@case("study", "study paper --options that is not JSON")
def case_study_bad_options(c):
    return refused(c.run(BATLOC + ["study", "paper", "--options", "{oops", "-o", "st", "--prepare-only"]), "options")


@case("study", "study paper -o a file")
def case_study_output_file(c):
    c.write("st", "a file")
    return refused(c.run(BATLOC + ["study", "paper", "-o", "st", "--prepare-only"]), "st")


@case("study", "study paper --load nan")
def case_study_load_nan(c):
    return refused(c.run(BATLOC + ["study", "paper", "--load", "nan", "-o", "st", "--prepare-only"]), "load")


@case("study", "study paper --prepare-only on the SDSC trace")
def case_study_sdsc(c):
    trace = TRACES / "SDSC-SP2-1998-4.2-cln.swf.gz"
    if not trace.exists():
        return SKIP, "no SDSC trace"
    r = c.run(BATLOC + ["study", "paper", "--trace", str(trace), "-o", "st", "--prepare-only"], timeout=400)
    return succeeded(r)


# --- the staging proxy ----------------------------------------------------------------------------------------------

def proxy_run(c, proxy_args, sched=("schedFcfs",), workload=None, timeout=120):
    from batloc.processes import free_port, pybatsim_command
    port = free_port()
    proxy = c.start(PROXY + ["-s", f"tcp://127.0.0.1:{port}", *proxy_args, "--", *pybatsim_command(), *sched],
                    stderr=subprocess.PIPE)
    time.sleep(1)
    r = c.run(ENGINE + ["-p", str(c.fix / "p.xml"), "-w", workload or str(c.fix / "w.json"), "-e", c.path("out/o"),
                        "-q", "-s", f"tcp://127.0.0.1:{port}", "--enable-dynamic-jobs", "--ready-timeout", "60"],
              timeout=timeout)
    try:
        proxy.wait(timeout=30)
        err = proxy.stderr.read().decode(errors="replace")
    except subprocess.TimeoutExpired:
        err = ""
    return r, proxy, err


@case("proxy", "--decisions into a folder that does not exist (made for it)")
def case_proxy_decisions_missing_dir(c):
    r, proxy, err = proxy_run(c, ["--decisions", c.path("nope/d.csv")])
    bad = broken(r)
    if bad:
        return bad
    if "Traceback" in err:
        return POOR, "traceback in the proxy"
    if proxy.returncode == 0 and r.rc == 0:
        return (OK, "the folder was made, the log written") if rows(c.path("nope/d.csv")) else (LOST, "no log")
    lines = [line for line in err.splitlines() if line.startswith("batloc-stage-proxy: error")]
    return (OK if lines and "nope" in lines[-1] else POOR), short(lines[-1] if lines else "no message")


@case("proxy", "-s on a port already in use")
def case_proxy_port_in_use(c):
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    port = s.getsockname()[1]
    try:
        r = c.run(PROXY + ["-s", f"tcp://127.0.0.1:{port}", "--", "sleep", "30"], timeout=30)
    finally:
        s.close()
    return refused(r, str(port))


@case("proxy", "SIGTERM to the proxy mid-run: its wrapped scheduler ends with it")
def case_proxy_sigterm(c):
    from batloc.processes import free_port, pybatsim_command
    port = free_port()
    wl = delay_workload(n=300, gap=2, delay=30)
    w = c.write("long.json", wl)
    proxy = c.start(PROXY + ["-s", f"tcp://127.0.0.1:{port}", "--", *pybatsim_command(), "schedFcfs"])
    time.sleep(1)
    r = c.run(ENGINE + ["-p", str(c.fix / "p.xml"), "-w", w, "-e", c.path("out/o"), "-q", "--enable-dynamic-jobs",
                        "-s", f"tcp://127.0.0.1:{port}", "--reply-timeout", "10", "--progress-file",
                        c.path("progress")], timeout=120,
              signal_when=(lambda t: os.path.exists(c.path("progress")) and proxy.send_signal(signal.SIGTERM) is None,
                           0))
    bad = broken(r)
    if bad:
        return bad
    if rows(c.path("out/o") + "_jobs.csv") is None:
        return LOST, "the engine wrote no jobs.csv"
    return (OK if r.rc != 0 else POOR), short(r.last())


@case("proxy", "a wrapped scheduler that dies at once")
def case_proxy_sched_dies(c):
    from batloc.processes import free_port
    port = free_port()
    r = c.run(PROXY + ["-s", f"tcp://127.0.0.1:{port}", "--", "bash", "-c", "exit 7"], timeout=60)
    return refused(r, ("exit", "7", "wrapped"))


@case("proxy", "a wrapped scheduler that leaves a daemon outside its process group (setsid)")
def case_proxy_sched_daemon(c):
    r = c.run(PROXY + ["--bind", "tcp://127.0.0.1:0", "--ready-timeout", "5", "--", "bash", "-c",
                       "setsid sleep 300 < /dev/null > /dev/null 2>&1 & exit 3"], timeout=60)
    return refused(r, ("wrapped", "exit"), lines=3)


@case("robin", "a scheduler command that leaves a daemon outside its process group (setsid)")
def case_robin_sched_daemon(c):
    wrapper = c.write("daemon.sh", 'setsid sleep 300 < /dev/null > /dev/null 2>&1 &\nexec pybatsim schedFcfs "$@"\n')
    y = sweep_yaml(c, schedulers=f"[{{name: d, command: bash {wrapper}}}]")
    r = c.run(ROBIN + [y, "--no-report"], timeout=180)
    return succeeded(r, lambda: None if all(json.load(open(p))["status"] == "success"
                                            for p in c.dir.glob("sw/runs/*/run.json")) else "the run failed")


# --- the Python API ---------------------------------------------------------------------------------------------

@case("api", "platform(memory=float('nan'))")
def case_api_platform_nan(c):
    return api_refused(api(c, "p = bl.platform(nodes=1, cores=2, memory=float('nan')); print(p.xml[:0])"), "memory")


@case("api", "platform(node_bw=float('inf'))")
def case_api_platform_inf(c):
    return api_refused(api(c, "p = bl.platform(nodes=1, cores=2, node_bw=float('inf')); print(p.xml[:0])"),
                       ("node_bw", "bandwidth"))


@case("api", "platform(nodes=10**9, cores=10**6)")
def case_api_platform_huge(c):
    return api_refused(api(c, "p = bl.platform(nodes=10**9, cores=10**6); print(len(p.xml))", timeout=40),
                       ("hosts", "cores", "nodes"))


@case("api", "workload: a job with res=10**20")
def case_api_workload_huge_res(c):
    return api_refused(api(c, "bl.workload([dict(subtime=0, res=10**20, walltime=10, delay=5, input_file='f', "
                              "input_size=1)])"), "res")


@case("api", "workload(seed='x')")
def case_api_seed(c):
    return api_refused(api(c, "bl.workload(duration='1h', seed='x', platform=bl.platform(nodes=1, cores=2))"), "seed")


@case("api", "run(options='{\"cache\": \"lru\"}') (a JSON text, not a dict)")
def case_api_options_text(c):
    return api_refused(api(c, f"bl.run({str(c.fix / 'p.xml')!r}, {str(c.fix / 'w.json')!r}, 'fcfs', "
                              "options='{\"cache\": \"lru\"}')"), "options")


@case("api", "sweep of a platform named '../../escape'")
def case_api_name_escape(c):
    r = api(c, f"""\
        p = bl.platform(nodes=1, cores=2, memory='16GB', node_bw='1GB/s', name='../../escape')
        bl.sweep(p, {str(c.fix / 'plain.json')!r}, [{{"name": "f", "command": "pybatsim schedFcfs"}}], 'out/sw',
                 report=False)
    """, timeout=180)
    escaped = [str(p) for p in c.dir.rglob("escape*") if "out/sw" not in str(p)]
    if escaped:
        return LOST, f"wrote outside its folder: {escaped[0]}"
    if r.rc == 0:
        return succeeded(r)
    return api_refused(r, "name")


@case("api", "run(...) interrupted by SIGINT: KeyboardInterrupt, no process left")
def case_api_sigint(c):
    wl = delay_workload(files=False, n=300, gap=2, delay=30)
    w = c.write("long.json", wl)
    r = api(c, f"""\
        try:
            bl.run({str(c.fix / 'p.xml')!r}, {w!r}, 'schedFcfs', output_dir='run', progress=False)
        except KeyboardInterrupt:
            print("interrupted")
    """, timeout=120, signal_when=(lambda t: bool(list(c.dir.glob("run/log/progress"))), signal.SIGINT))
    bad = broken(r)
    if bad:
        return bad
    if "interrupted" not in r.out:
        return POOR, "no KeyboardInterrupt: " + short(r.last())
    return OK, "KeyboardInterrupt, run stopped"


@case("api", "Run(folder) on a folder whose run.json is a list")
def case_api_run_bad_meta(c):
    (c.dir / "r").mkdir()
    c.write("r/run.json", "[1, 2]")
    return api_refused(api(c, "print(bl.Run('r').jobs)"), "run.json")


@case("api", "run(..., output_dir=<an existing file>)")
def case_api_output_file(c):
    c.write("f", "x")
    return api_refused(api(c, f"bl.run({str(c.fix / 'p.xml')!r}, {str(c.fix / 'plain.json')!r}, 'schedFcfs', "
                              "output_dir='f')"), "f")


@case("api", "workload(DataFrame) with NaN in the optional user column")
def case_api_dataframe_nan(c):
    r = api(c, """\
        import pandas as pd
        df = pd.DataFrame([dict(subtime=0, res=1, walltime=10, delay=5, input_file='f', input_size=1, user='a'),
                           dict(subtime=1, res=1, walltime=10, delay=5, input_file='f', input_size=1, user=None)])
        w = bl.workload(df, nb_res=4)
        print(w.jobs.to_dict('records'))
        w.save('w.json')
    """)
    if r.rc == 0:
        text = Path(c.path("w.json")).read_text() if os.path.exists(c.path("w.json")) else ""
        if "NaN" in text or '"nan"' in text:
            return LOST, "wrote NaN into the workload"
        return succeeded(r)
    return api_refused(r, "user")


@case("api", "sweep(schedulers='fcfs,lea') (a text, not a list)")
def case_api_sweep_text(c):
    r = api(c, f"bl.sweep({str(c.fix / 'p.xml')!r}, {str(c.fix / 'w.json')!r}, 'schedFcfs,easyBackfill', 'sw', "
               "report=False)", timeout=180)
    return api_refused(r, "schedulers") if r.rc else succeeded(r)


@case("api", "run with a workload that is not there")
def case_api_missing_workload(c):
    return api_refused(api(c, f"bl.run({str(c.fix / 'p.xml')!r}, 'nope.json', 'schedFcfs')"), "nope.json")


@case("api", "run(..., reply_timeout='soon')")
def case_api_bad_engine_value(c):
    return api_refused(api(c, f"bl.run({str(c.fix / 'p.xml')!r}, {str(c.fix / 'plain.json')!r}, 'schedFcfs', "
                              "reply_timeout='soon')"), "reply")


# --- the scheduler command --------------------------------------------------------------------------------------

@case("scheduler", "batloc scheduler with -o that is not JSON")
def case_scheduler_bad_options(c):
    return refused(c.run(BATLOC + ["scheduler", "fcfs", "-o", "{oops", "-s", "tcp://127.0.0.1:1"]), ("-o", "JSON",
                                                                                                     "options"))


@case("scheduler", "batloc scheduler on a port already in use")
def case_scheduler_port_in_use(c):
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    port = s.getsockname()[1]
    try:
        r = c.run(BATLOC + ["scheduler", "schedFcfs", "-s", f"tcp://127.0.0.1:{port}"], timeout=60)
    finally:
        s.close()
    return refused(r, str(port))


@case("scheduler", "batloc scheduler with an unknown option for LEA")
def case_scheduler_unknown_option(c):
    return refused(c.run(BATLOC + ["scheduler", "lea", "-o", '{"cahce": "lru"}', "-s", "tcp://127.0.0.1:1"],
                         timeout=300), "cahce")


# --- the table ---------------------------------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-k", action="append", default=[], help="run only the cases whose area or name holds this word")
    ap.add_argument("--list", action="store_true", help="list the cases and stop")
    ap.add_argument("--keep", action="store_true", help="keep the cases' folders (printed)")
    args = ap.parse_args(argv)
    chosen = [c for c in CASES if not args.k or any(k in c[0] or k in c[1] for k in args.k)]
    if args.list:
        for area, name, text, _ in chosen:
            print(f"{area:10} {name:32} {text}")
        return 0
    root = tempfile.mkdtemp(prefix="batloc-probe-")
    fixtures = make_fixtures(root)
    # the planning core compiled (or loaded) once before the cases: a cold cache is no case's fault
    t = time.monotonic()
    subprocess.run([PY, "-c", "from batloc.schedulers.planning.planner import warm_up; warm_up()"], check=True)
    print(f"planning core ready in {time.monotonic() - t:.0f} s", file=sys.stderr)
    results = []
    t0 = time.monotonic()
    for i, (area, name, text, fn) in enumerate(chosen, 1):
        c = Ctx(root, fixtures, name)
        started = time.monotonic()
        try:
            verdict, note = fn(c)
        except Exception as exc:   # the probe's own mistake, said as such
            verdict, note = "ERROR", f"probe: {type(exc).__name__}: {short(exc)}"
        finally:
            c.close()
        results.append((area, name, verdict, note))
        print(f"[{i}/{len(chosen)}] {verdict:5} {area}/{name} ({time.monotonic() - started:.0f} s): {note}",
              file=sys.stderr, flush=True)
    print()
    print(f"{'area':10} {'case':34} {'verdict':7} note")
    for area, name, verdict, note in results:
        print(f"{area:10} {name:34} {verdict:7} {note}")
    counts = {v: sum(1 for r in results if r[2] == v) for v in (OK, POOR, LOST, SKIP, "ERROR")}
    print(f"\n{len(results)} cases: " + ", ".join(f"{n} {v}" for v, n in counts.items() if n)
          + f"  ({time.monotonic() - t0:.0f} s; load average {os.getloadavg()[0]:.1f})")
    if args.keep:
        print(f"folders kept in {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if counts[POOR] or counts[LOST] else 0


if __name__ == "__main__":
    sys.exit(main())
