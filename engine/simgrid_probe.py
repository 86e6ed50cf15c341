"""SimGrid tried on the platform in a child process first: what would crash the engine is refused in one line.

On some platforms SimGrid does not raise an error the engine can word: it
aborts or segfaults, and the engine dies with it, printing nothing of its own
(over ZeroMQ the scheduler is left waiting):
- a model it does not know: Batsim 4.2.1's own ``graphene.xml`` asks for
  SimGrid 3's ``host/model: compound`` ("Unable to find host model",
  SIGABRT);
- a route it is asked for and does not have in a ``Dijkstra`` zone: batloc's
  flat layout before 2026-11 has no route from the hosts to the master, which
  every job's end message takes (contract §1; SIGSEGV right after
  SIMULATION_BEGINS); ``Floyd`` raises instead, which the engine would only
  meet at the first job end.
So before the engine builds the platform, a child process builds it with the
engine's configuration, seals it (``run_until(0)``, as the run would) and asks
for the route from every resource host to the master; the engine reads its
verdict, or how it died and SimGrid's last critical line. It costs one more
load of the platform (Rackham: 0.5 s of CPU), once: a platform that passed is
remembered by the hash of its bytes and the configuration, under the user's
cache folder (``batloc/probe``). ``platforms.routes`` finds the
former batloc layout from the XML alone, for the tools that do not run SimGrid.
"""

import hashlib
import json
import os
import signal
import sys
import time

from batloc.reading import excerpt

from .errors import EngineError

# what the parent keeps of the child's stderr (SimGrid's critical line is near its end)
STDERR_KEPT = 1 << 16


def probe(sg, path, config, master_host, roles):
    """Raise EngineError in one line if SimGrid would crash the engine on the platform at `path`."""
    passed = _passed_before(path, config, master_host, roles)
    if passed is True:
        return
    _probe(sg, path, config, master_host, roles)
    if passed is not None:
        _remember(passed)


def _passed_before(path, config, master_host, roles):
    """True if these bytes passed the probe with this configuration already; else the file that will say so once
    they pass, or None when nothing is remembered: a file that names other files (`<include>`, a speed or
    bandwidth trace), or no cache folder. The verdict of a Rackham file costs 0.5 s of CPU; its hash, 2 ms."""
    try:
        with open(path, "rb") as f:
            text = f.read()
    except OSError:
        return None
    if b"<include" in text or b"_file=" in text:
        return None
    key = hashlib.sha256(text)
    key.update(json.dumps([config, master_host, sorted((roles or {}).items()), sg_version()]).encode())
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    verdict = os.path.join(base, "batloc", "probe", key.hexdigest())
    return True if os.path.exists(verdict) else verdict


def _remember(verdict):
    try:
        os.makedirs(os.path.dirname(verdict), exist_ok=True)
        with open(verdict, "w") as f:
            f.write("ok\n")
    except OSError:
        pass   # no cache: the next run probes again


def sg_version():
    try:
        from importlib.metadata import version

        return version("simgrid")
    except Exception:  # noqa: BLE001  (a build without metadata)
        return "unknown"


def _probe(sg, path, config, master_host, roles):
    verdict_r, verdict_w = os.pipe()
    err_r, err_w = os.pipe()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:   # the child: never returns
        os.close(verdict_r)
        os.close(err_r)
        _child(sg, path, config, master_host, roles, verdict_w, err_w)
    os.close(verdict_w)
    os.close(err_w)
    try:
        verdict, err = _collect(pid, verdict_r, err_r)
        _, status = os.waitpid(pid, 0)
        pid = None
    finally:
        if pid is not None:   # interrupted: the child goes with the run
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(verdict_r)
        os.close(err_r)
    code = os.waitstatus_to_exitcode(status)
    lines = verdict.decode("utf-8", "replace").splitlines()
    last = lines[-1] if lines else ""
    if code == 0 and last.startswith("ok"):
        return
    if code == 0 and last.startswith("error "):
        raise EngineError(last[len("error "):])
    how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
    said = _critical(err)
    if last.startswith("route "):
        host, master = last[len("route "):].split(" ", 1)
        raise EngineError(f"{path}: SimGrid crashes ({how}) when asked for the route from host {excerpt(host)} to the "
                          f"master {excerpt(master)}: every host needs one, Batsim's job-end messages take it "
                          f"(batloc's flat Dijkstra layout before 2026-11 lacks them: regenerate the platform with "
                          f"`batloc platform generate`; contract §1){said}")
    raise EngineError(f"{path}: SimGrid cannot run this platform: it aborts loading it ({how}){said}")


def _child(sg, path, config, master_host, roles, verdict_w, err_w):
    try:
        _die_with_parent()
        os.dup2(err_w, 2)   # SimGrid's own messages: the parent quotes the critical one

        def say(text):
            os.write(verdict_w, (text.replace("\n", " ") + "\n").encode("utf-8", "replace"))

        engine = sg.Engine(["batloc-probe"] + list(config))
        try:
            engine.load_platform(path)
        except Exception:   # noqa: BLE001  (SimGrid raises its own types: the engine's load words them)
            say("ok")
            os._exit(0)
        from batloc.platforms.numbering import RoleError, batsim_roles

        hosts = {h.name: h for h in engine.all_hosts}
        try:
            _, master = batsim_roles(((n, h.get_properties().get("role")) for n, h in hosts.items()), master_host,
                                     roles)
        except RoleError:
            say("ok")   # the engine's own load refuses it in its words
            os._exit(0)
        engine.run_until(0.0)   # seals the platform: routes are computed from here on
        for name in sorted(hosts):
            if name == master:
                continue
            say(f"route {name} {master}")
            try:
                hosts[name].route_to(hosts[master])
            except ValueError:
                say(f"error {path}: no route from host {excerpt(name)} to the master {excerpt(master)}: every "
                    "host needs one, Batsim's job-end messages take it (SimGrid stops the run at the first job "
                    "end; batloc's flat layout before 2026-11 lacks them: regenerate the platform with `batloc "
                    "platform generate`; contract §1)")
                os._exit(0)
        say("ok")
        os._exit(0)
    except BaseException:  # noqa: BLE001  (whatever happens, the child never returns into the engine)
        os._exit(3)


def _die_with_parent():
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _collect(pid, verdict_r, err_r):
    """Both pipes until the child closes them; polled, so that a signal to the engine is taken meanwhile."""
    import selectors

    chunks = {verdict_r: [], err_r: []}
    kept = {verdict_r: 0, err_r: 0}
    selector = selectors.DefaultSelector()
    for fd in chunks:
        selector.register(fd, selectors.EVENT_READ)
    open_fds = set(chunks)
    while open_fds:
        for key, _ in selector.select(timeout=0.1):
            data = os.read(key.fd, 65536)
            if not data:
                selector.unregister(key.fd)
                open_fds.discard(key.fd)
                continue
            chunks[key.fd].append(data)
            kept[key.fd] += len(data)
            while kept[key.fd] > STDERR_KEPT and len(chunks[key.fd]) > 1:   # keep the end: the last lines
                kept[key.fd] -= len(chunks[key.fd].pop(0))
        time.sleep(0)
    selector.close()
    return b"".join(chunks[verdict_r]), b"".join(chunks[err_r])


def _critical(err):
    """SimGrid's last critical (or error) line, quoted short, as `: "..."`; empty if it said none."""
    lines = [line.strip() for line in err.decode("utf-8", "replace").splitlines() if line.strip()]
    for line in reversed(lines):
        if "CRITICAL" in line or "/ERROR]" in line:
            text = line.rsplit("] ", 1)[-1]
            return f": SimGrid says {excerpt(text, 200)}"
    return ""
