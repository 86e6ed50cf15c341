"""Batsim JSON workloads: reading, checking, and the job/profile objects they describe."""

import json
import math
import os
import re
import sys

from batloc.reading import WORKLOAD_BYTES, Refused, excerpt, read_bytes

from .checks import integer, non_finite_field, non_text_field, number, walltime
from .errors import EngineError
from .profiles import check_profile
from .protocol import LONG_NUMBER, rapidjson_float
from .usage_trace import TraceBudget, read_trace


class Job:
    """A job as the engine tracks it, static (from a workload) or registered dynamically."""

    __slots__ = (
        "id", "workload", "local_id", "subtime", "res", "walltime", "profile", "description",
        "state", "start", "finish", "alloc", "alloc_str", "metadata",
        "token", "runner", "activities", "phase_end", "phase_start", "pdata",
        "return_code", "written", "gone", "kill_asked", "moves_bytes", "remaining", "sleep", "replay", "transfer",
        "trail",
    )

    def __init__(self, workload, local_id, description, subtime, res, walltime, profile):
        self.workload = workload
        self.local_id = local_id
        self.id = f"{workload}!{local_id}"
        self.description = description
        self.subtime = subtime
        self.res = res
        self.walltime = walltime
        self.profile = profile
        self.state = "NOT_SUBMITTED"
        self.start = None
        self.finish = None
        self.alloc = None
        self.alloc_str = ""
        self.metadata = ""
        self.token = 0
        self.runner = None
        self.activities = None
        self.phase_end = None
        self.phase_start = None
        self.pdata = None
        self.return_code = 0
        self.written = False      # its jobs.csv row is out
        self.gone = False         # the scheduler was told it ended: Batsim has deleted it (contract §4)
        self.kill_asked = False   # a KILL_JOB named it: Batsim ignores later ones
        self.moves_bytes = False  # its phase in flight moves bytes (a Batsim message may share its links)
        self.remaining = -1.0     # timed mode: what is left of its walltime, as Batsim counts it
        self.sleep = None         # timed mode: its sleep (a delay, or its walltime's timeout) on the L07 clock
        self.replay = None        # its usage-trace phase in flight (``usage_trace.Replay``)
        self.transfer = None      # timed mode: its phase of transfers in flight on the L07 clock
        self.trail = None         # where it is in its profile tree (``profiles.phases``), for JOB_KILLED


class Workload:
    """A named set of profiles and jobs; `w0`, `w1`, … for files, any name for dynamic ones."""

    def __init__(self, name, path=None):
        self.name = name
        self.path = path
        self.profiles = {}
        self.jobs = []
        self._ids = None
        self.too_large = False   # a job asks for more resources than the platform has (warned once)
        self.traces = {}         # a usage_trace profile's `trace` -> its ranks' actions (read with the file)

    def holds(self, local_id):
        """Whether `local_id` names one of the workload's own jobs, submitted or not yet."""
        if self._ids is None:   # built at the first REGISTER_JOB into this workload only
            self._ids = {j.local_id for j in self.jobs}
        return local_id in self._ids


def _position(text, index):
    line = text.count("\n", 0, index) + 1
    col = index - (text.rfind("\n", 0, index) + 1) + 1
    return line, col


def read_json(path):
    """A workload file's JSON document, read within its bound (``batloc.reading``); EngineError names the file."""
    try:
        raw = read_bytes(path, WORKLOAD_BYTES, "workload")
    except FileNotFoundError:
        raise EngineError(f"workload file not found: {path}") from None
    except OSError as e:
        raise EngineError(f"cannot read workload file {path}: {e.strerror}") from None
    except Refused as e:
        raise EngineError(str(e)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line, col = _position(raw.decode("utf-8", "replace"), e.start)
        raise EngineError(f"{path}:{line}:{col}: workload is not UTF-8 text") from None
    try:
        # seconds for a million jobs, yet no call that holds the interpreter: the hook, Python, runs for every
        # object, so a signal is acted on within one (the watcher's line, not a silent 143)
        # numbers as Batsim reads them (RapidJSON's, not always the nearest double for 16 digits or more)
        data = json.loads(text, object_pairs_hook=_unique_keys,
                          parse_float=rapidjson_float if LONG_NUMBER.search(raw) else None)
    except json.JSONDecodeError as e:
        raise EngineError(f"{path}:{e.lineno}:{e.colno}: malformed JSON: {e.msg}") from None
    except _KeyTwice as e:
        key, job = e.args
        if job is not None:
            raise EngineError(f"{path}: job {excerpt(job)}: field {excerpt(key)} given twice (Batsim 4.2.1 reads "
                              "the first, a JSON reader in Python the last): keep one") from None
        raise EngineError(f"{path}: key {excerpt(key)} given twice in one object (a profile defined twice: Batsim "
                          "4.2.1 refuses the file, \"duplication of profile name\"): keep one") from None
    except RecursionError:
        raise EngineError(f"{path}: JSON nested too deeply to be a workload") from None
    if _SURROGATE_ESCAPE.search(text):   # rare: only then walk the whole document
        field = non_text_field(data)
        if field is not None:
            raise EngineError(f"{path}: {field} holds a lone UTF-16 surrogate escape (\\ud800-\\udfff), "
                              "which is not text and cannot be written out")
    return data


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class _KeyTwice(Exception):
    """A JSON object with a key given twice: (the key, the object's id when it has one)."""


def _unique_keys(pairs):
    # Python keeps the last of a key given twice, Batsim's rapidjson the first (and it refuses a profile defined
    # twice): the run would silently differ from Batsim's. +0.5 s of CPU reading a million jobs.
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen = set()
        raise _KeyTwice(next(k for k, _ in pairs if k in seen or seen.add(k)), obj.get("id"))
    return obj


def load_workload(path, name, nb_compute, data=None, traces=True, traces_anywhere=False):
    """Read one workload file (or take its document `data`, as ``read_json`` read it); every problem is reported
    with the file and the job at fault. `traces`: read its usage traces (``usage_trace.read_trace``: within
    the workload's folder unless `traces_anywhere`); a recovery, which needs only the jobs, does not."""
    if data is None:
        data = read_json(path)
    if not isinstance(data, dict):
        raise EngineError(f"{path}: a Batsim workload is a JSON object with 'jobs' and 'profiles'")
    workload = Workload(name, os.path.abspath(path))
    _check_nb_res(data, path, nb_compute)
    profiles = data.get("profiles", {})
    if not isinstance(profiles, dict):
        raise EngineError(f"{path}: 'profiles' must be an object mapping names to profiles")
    budget = TraceBudget(path, traces_anywhere)
    for pname, profile in profiles.items():
        check_profile(profile, f"{path}: profile {excerpt(pname)}", profiles)
        field = non_finite_field(profile)
        if field is not None:   # JSON cannot carry it to the scheduler
            raise EngineError(f"{path}: profile {excerpt(pname)}: {field} must be a finite number")
        if traces and profile["type"] == "usage_trace" and profile["trace"] not in workload.traces:
            workload.traces[profile["trace"]] = read_trace(path, f"{path}: profile {excerpt(pname)}",
                                                           profile["trace"], budget)
    workload.profiles = dict(profiles)
    jobs = data.get("jobs")
    if not isinstance(jobs, list):
        raise EngineError(f"{path}: 'jobs' must be a list")
    seen = set()
    for index, desc in enumerate(jobs):
        workload.jobs.append(_job_from(desc, index, path, workload, seen, nb_compute))
    return workload


def _check_nb_res(data, path, nb_compute):
    """Batsim 4.2 requires `nb_res`, a positive integer: the size of the machine the workload was made for.

    Absent, it is tolerated (the engine never uses it); beyond the platform's
    compute resources, the workload's load was drawn for a larger machine than
    the one simulated, which the run goes on with but says.
    """
    if "nb_res" not in data:
        return
    nb_res = integer(data["nb_res"], "nb_res (the machine size the workload was made for)", path, minimum=1)
    if nb_compute is not None and nb_res > nb_compute:
        print(f"batloc-batsim: warning: {path}: nb_res is {nb_res} but the platform has {nb_compute} compute "
              "resources: the workload was made for a larger machine, so the simulated load is higher",
              file=sys.stderr)


def _job_from(desc, index, path, workload, seen, nb_compute):
    if not isinstance(desc, dict):
        raise EngineError(f"{path}: job #{index} must be an object")
    if "id" not in desc:
        raise EngineError(f"{path}: job #{index} has no 'id'")
    if isinstance(desc["id"], bool) or not isinstance(desc["id"], (int, str)) or desc["id"] == "":
        raise EngineError(f"{path}: job #{index}: 'id' must be a string or an integer, got {excerpt(desc['id'])}")
    local_id = str(desc["id"])
    where = f"{path}: job {excerpt(local_id)}"
    if "!" in local_id:
        raise EngineError(f"{where}: a job id cannot contain '!' (it separates workload and job)")
    if local_id in seen:
        raise EngineError(f"{where}: duplicate job id")
    seen.add(local_id)
    for key in ("subtime", "res", "profile"):
        if key not in desc:
            raise EngineError(f"{where}: missing field {key!r}")
    subtime = number(desc["subtime"], "subtime", where, minimum=0)
    res = integer(desc["res"], "'res'", where, minimum=1)
    if nb_compute is not None and res > nb_compute and not workload.too_large:
        # Batsim 4.2.1 loads such a job; schedulers reject it (pybatsim's stock ones do)
        workload.too_large = True
        print(f"batloc-batsim: warning: {where}: asks for {res} resources but the platform has only {nb_compute} "
              "compute resources: no allocation can run it, a scheduler can only reject it (further such jobs "
              "are not named)", file=sys.stderr)
    wall = walltime(desc.get("walltime"), where)
    profile = desc["profile"]
    if not isinstance(profile, str) or profile not in workload.profiles:
        raise EngineError(f"{where}: profile {excerpt(profile)} "
                          "is not defined in the workload's profiles")
    field = non_finite_field(desc)
    if field is not None:   # a custom field: JSON cannot carry it to the scheduler
        raise EngineError(f"{where}: {field} must be a finite number")
    check_end(where, subtime, wall, profile, workload.profiles)
    return Job(workload.name, local_id, desc, subtime, res, wall, profile)


def submission_order(workloads):
    """Batsim's submitters: by date, workload, then job id as text ("w0!10" before "w0!2"). Here, not in the server,
    so that a recovery before the run (its signals not yet blocked) imports nothing that starts threads (numpy)."""
    order = ((j.subtime, wi, j.id, j) for wi, w in enumerate(workloads) for j in w.jobs)
    return [t[3] for t in sorted(order, key=lambda t: t[:3])]


def check_end(where, start, wall, profile, profiles, started="subtime"):
    """A job whose end, started at `start` (its submission at load; its start, once a scheduler's call at a huge
    time delayed it), is past the largest double: the clock would reach +inf, and inf and nan would land in its
    row (each number was finite, their sum is not)."""
    for what, seconds in (("walltime", wall if wall > 0 else 0.0), ("delays", delays(profile, profiles))):
        if not math.isfinite(start + seconds):
            raise EngineError(f"{where}: {started} {start:g} plus its {what} ({seconds:g} s) is past the largest "
                              "time a double holds (the clock would reach +inf)")


def delays(name, profiles, known=None):
    """The seconds of `delay` a profile holds, its sequences' repeats counted (other phases add what SimGrid
    makes of them, unknown here): a lower bound of its run time. Profiles are checked acyclic already."""
    known = {} if known is None else known
    if name not in known:
        profile = profiles[name]
        if profile["type"] == "delay":
            known[name] = float(profile["delay"])
        elif profile["type"] in ("sequence", "composed"):
            once = sum(delays(inner, profiles, known) for inner in profile["seq"])
            try:
                known[name] = profile.get("repeat", 1) * once
            except OverflowError:   # a repeat beyond any float
                known[name] = math.inf if once > 0 else 0.0
        else:
            known[name] = 0.0
    return known[name]
