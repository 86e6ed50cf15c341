"""Batsim JSON workloads: reading, checking, and the job/profile objects they describe."""

import json
import os

from .checks import integer, non_finite_field, number, walltime
from .errors import EngineError
from .profiles import check_profile


class Job:
    """A job as the engine tracks it, static (from a workload) or registered dynamically."""

    __slots__ = (
        "id", "workload", "local_id", "subtime", "res", "walltime", "profile", "description",
        "state", "start", "finish", "alloc", "alloc_str", "metadata",
        "token", "runner", "activities", "phase_end", "phase_start", "pdata",
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


class Workload:
    """A named set of profiles and jobs; `w0`, `w1`, … for files, any name for dynamic ones."""

    def __init__(self, name, path=None):
        self.name = name
        self.path = path
        self.profiles = {}
        self.jobs = []


def _position(text, index):
    line = text.count("\n", 0, index) + 1
    col = index - (text.rfind("\n", 0, index) + 1) + 1
    return line, col


def _read_json(path):
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise EngineError(f"workload file not found: {path}") from None
    except OSError as e:
        raise EngineError(f"cannot read workload file {path}: {e.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line, col = _position(raw.decode("utf-8", "replace"), e.start)
        raise EngineError(f"{path}:{line}:{col}: workload is not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise EngineError(f"{path}:{e.lineno}:{e.colno}: malformed JSON: {e.msg}") from None


def load_workload(path, name, nb_compute):
    """Read one workload file; every problem is reported with the file and the job at fault."""
    data = _read_json(path)
    if not isinstance(data, dict):
        raise EngineError(f"{path}: a Batsim workload is a JSON object with 'jobs' and 'profiles'")
    workload = Workload(name, os.path.abspath(path))
    profiles = data.get("profiles", {})
    if not isinstance(profiles, dict):
        raise EngineError(f"{path}: 'profiles' must be an object mapping names to profiles")
    for pname, profile in profiles.items():
        check_profile(profile, f"{path}: profile {pname!r}", profiles)
        field = non_finite_field(profile)
        if field is not None:   # JSON cannot carry it to the scheduler
            raise EngineError(f"{path}: profile {pname!r}: {field} must be a finite number")
    workload.profiles = dict(profiles)
    jobs = data.get("jobs")
    if not isinstance(jobs, list):
        raise EngineError(f"{path}: 'jobs' must be a list")
    seen = set()
    for index, desc in enumerate(jobs):
        workload.jobs.append(_job_from(desc, index, path, workload, seen, nb_compute))
    return workload


def _job_from(desc, index, path, workload, seen, nb_compute):
    if not isinstance(desc, dict):
        raise EngineError(f"{path}: job #{index} must be an object")
    if "id" not in desc:
        raise EngineError(f"{path}: job #{index} has no 'id'")
    if isinstance(desc["id"], bool) or not isinstance(desc["id"], (int, str)) or desc["id"] == "":
        raise EngineError(f"{path}: job #{index}: 'id' must be a string or an integer, got {desc['id']!r}")
    local_id = str(desc["id"])
    where = f"{path}: job {local_id!r}"
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
    if nb_compute is not None and res > nb_compute:
        raise EngineError(f"{where}: asks for {res} resources but the platform has only {nb_compute}")
    wall = walltime(desc.get("walltime"), where)
    profile = desc["profile"]
    if not isinstance(profile, str) or profile not in workload.profiles:
        raise EngineError(f"{where}: profile {profile!r} is not defined in the workload's profiles")
    field = non_finite_field(desc)
    if field is not None:   # a custom field: JSON cannot carry it to the scheduler
        raise EngineError(f"{where}: {field} must be a finite number")
    return Job(workload.name, local_id, desc, subtime, res, wall, profile)
