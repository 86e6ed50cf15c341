"""robin description files: batexpe's single-run format, and batloc's sweep form.

Single run — batexpe robin's keys, unchanged:
    output-dir, batcmd, schedcmd, simulation-timeout, ready-timeout,
    success-timeout, failure-timeout
plus batloc additions used when `batcmd` is absent (the embedded engine runs):
    platform, workload       inputs of the embedded engine
    scheduler                {policy: lea, options: {...}} or {command: "pybatsim schedFcfs"},
                             builds `schedcmd` on a free port (instead of writing schedcmd)
    engine-args              extra engine flags (list or string)
    scheduler-address        where a scheduler robin starts binds (default 127.0.0.1,
                             loopback only; "*" exposes it on every interface)
    pybatsim-verbosity       log level of the pybatsim schedulers robin starts (debug,
                             info, warning, error, critical; default warning: pybatsim
                             logs every message at info, megabytes per simulated week)
    walltime-includes-load   true (the paper's rule, default): a job's load counts against its
                             walltime, for batloc's policies and the staging proxy alike;
                             false: the engine's walltime, from the execution on, is the only kill
    in-process               true: the engine runs the scheduler inside its own process
                             (batloc-batsim --in-process: no ZeroMQ, same outputs) when it
                             can: a batloc policy, or a command `pybatsim SCHEDULER [-o …]`;
                             any other command (and a staged one) still runs over ZeroMQ
    instant                  true: the engine's instant mode (batloc-batsim --instant: every
                             event of one instant in one message, the paper's semantics)
                             instead of Batsim 4.2.1's messages (contract section 4)

Sweep — any description with `platforms`, `workloads` and `schedulers` lists:
    output-dir, platforms, workloads, schedulers (names, or mappings with
    name/policy/options or name/command; a command may add staging: true, and
    then one-node: true, the proxy's --one-node; any entry may declare
    `against: NAME`, the run the report compares it with, and a command
    `backfilling: true|false` where its name does not tell), baseline (default fcfs),
    walltime-includes-load (as above, for every run of the sweep),
    engine (command of the engine: default the embedded one; `batsim` for
    real Batsim), engine-args, scheduler-address, pybatsim-verbosity,
    in-process and instant (embedded engine only), and the four timeouts. Scheduler names and input file names become folder names
    under OUTPUT_DIR/runs: a scheduler `name` must be a plain file name.
    A scheduler robin starts runs in its run's folder (so that the files it
    writes by itself, such as pybatsim's out_events.csv, stay with its run);
    the arguments of its command that name files are made absolute first.

Commands (batcmd, schedcmd, a scheduler's command, engine) are run by a
shell, as in batexpe: a description file is a program; run only trusted ones.

Relative paths are relative to the current directory, as in batexpe;
platform and workload paths not found there are looked up in the batloc
package (so `platforms/rackham.xml` works from anywhere).
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from batloc.platforms.numbering import role_options
from batloc.schedulers.engine_mode import wants_instant_engine
from batloc.processes import LOOPBACK, scheduler_command
from batloc.reading import DESCRIPTION_BYTES, Refused, excerpt, read_bytes
from batloc.shipped import options_of, package_root, packaged, policy_of

from .process import Timeouts

TIMEOUT_KEYS = {
    "simulation-timeout": "simulation",
    "ready-timeout": "ready",
    "success-timeout": "success",
    "failure-timeout": "failure",
}
SINGLE_KEYS = {"output-dir", "batcmd", "schedcmd", "platform", "workload", "scheduler", "engine-args",
               "scheduler-address", "pybatsim-verbosity", "in-process", "instant", "walltime-includes-load",
               *TIMEOUT_KEYS}
SWEEP_KEYS = {"output-dir", "platforms", "workloads", "schedulers", "baseline", "engine", "engine-args",
              "scheduler-address", "pybatsim-verbosity", "in-process", "instant", "walltime-includes-load",
               *TIMEOUT_KEYS}
# The batloc policies that load files (planning and file-sharing families): they take the option
# walltime_includes_load; the others load nothing, so the rule does not touch them.
LOADING_POLICIES = {"fcfs", "eft", "lea", "leo", "lem", "fcfs_bf", "eft_bf", "lea_bf", "leo_bf", "lem_bf",
                    "met", "mct", "sa", "jdp_dll", "online_hps"}
# pybatsim stock schedulers that backfill (their name says so otherwise: `backfilling:` in the entry)
STOCK_BACKFILLING = ("backfill", "easy")
VERBOSITIES = ("debug", "info", "warning", "error", "critical")
PYBATSIM_VERBOSITY = "warning"
# A run folder's name part: nothing that could leave OUTPUT_DIR/runs.
SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+=-]*")


class DescriptionError(ValueError):
    pass


def resolve_input(path: str) -> Path:
    p = packaged(path)
    if p.is_dir():
        raise DescriptionError(f"input {path} is a folder, not a file")
    if p.exists() and not p.is_file():
        raise DescriptionError(f"input {path} is not a regular file (a device or a pipe never ends)")
    if p.exists():
        return p.resolve()
    raise DescriptionError(f"input file not found: {path} (looked in {Path.cwd()} and {package_root()})")


def output_folder(path) -> Path:
    """OUTPUT_DIR as an absolute path; refused in one line when it names a file."""
    if isinstance(path, (bool, list, dict)) or path is None or not str(path):
        raise DescriptionError(f"output-dir must be a folder name, not {excerpt(path)}")
    try:
        out = Path(os.path.expanduser(str(path))).resolve()
    except (RuntimeError, OSError) as exc:   # Python 3.11 raises RuntimeError on a symlink loop
        raise DescriptionError(f"output-dir {path}: cannot be resolved ({' '.join(str(exc).split()[:4])}...: a "
                               "symlink loop?)") from None
    for parent in (out, *out.parents):
        if parent.exists():
            if not parent.is_dir():
                raise DescriptionError(f"output-dir {path}: {parent} is a file, not a folder")
            break
    return out


def read_timeouts(desc: dict, defaults: Timeouts | None = None) -> Timeouts:
    t = defaults or Timeouts()
    values = {}
    for key, attr in TIMEOUT_KEYS.items():
        if key in desc:
            try:
                values[attr] = float(desc[key])
            except (TypeError, ValueError):
                raise DescriptionError(f"{key} must be a number of seconds, not {excerpt(desc[key])}") from None
            if not 0 < values[attr] <= math.inf or values[attr] != values[attr]:
                # NaN passes `<= 0` and then never times out nor fails: a typo, not a choice
                raise DescriptionError(f"{key} must be a positive number of seconds, not {excerpt(desc[key])}")
    return Timeouts(**{**t.__dict__, **values})


# What a description may hold once its YAML aliases are expanded: a sweep of a thousand runs is a few thousand
# values, while nine aliases of nine aliases, a dozen deep (a few hundred bytes), are 10^11 (the "billion laughs")
DESCRIPTION_VALUES = 1_000_000


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, but a key given twice in one mapping is an error (PyYAML keeps the last in silence)."""

    def construct_mapping(self, node, deep=False):
        seen = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":   # `<<: *defaults`: its keys may be given again
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.setdefault(key, key_node)
            except TypeError:   # an unhashable key: PyYAML's own error says it
                break
            if first is not key_node:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {excerpt(key)} given twice (line {first.start_mark.line + 1} and line "
                                f"{key_node.start_mark.line + 1}): keep one", key_node.start_mark)
        return super().construct_mapping(node, deep)


def _expanded_size(value, limit, known=None) -> int:
    """How many values `value` holds with every alias expanded (shared objects counted each time), stopping
    past `limit`; each shared object is measured once."""
    known = {} if known is None else known
    if not isinstance(value, (dict, list)):
        return 1
    if id(value) in known:
        return known[id(value)]
    size = 1
    for item in (value.items() if isinstance(value, dict) else value):
        for part in (item if isinstance(value, dict) else (item,)):
            size += _expanded_size(part, limit, known)
            if size > limit:
                known[id(value)] = size
                return size
    known[id(value)] = size
    return size


def load_description(path) -> dict:
    try:
        desc = yaml.load(read_bytes(path, DESCRIPTION_BYTES, "description", bom=True).decode("utf-8"), _Loader)
    except Refused as exc:
        raise DescriptionError(str(exc)) from None
    except OSError as exc:
        raise DescriptionError(f"cannot read description file: {exc}") from None
    except UnicodeDecodeError:
        raise DescriptionError(f"{path}: not a text file (a description is YAML in UTF-8)") from None
    except yaml.MarkedYAMLError as exc:   # PyYAML's own text runs to seven lines and names "<unicode string>"
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise DescriptionError(f"invalid YAML at {where}: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise DescriptionError(f"invalid YAML in {path}: {' '.join(str(exc).split())}") from None
    except RecursionError:
        raise DescriptionError(f"{path}: YAML nested too deeply to be a description") from None
    if not isinstance(desc, dict):
        raise DescriptionError(f"{path}: a description file is a YAML mapping")
    if _expanded_size(desc, DESCRIPTION_VALUES) > DESCRIPTION_VALUES:
        raise DescriptionError(f"{path}: its YAML aliases expand to more than {DESCRIPTION_VALUES} values, the "
                               "bound robin reads (a sweep of a thousand runs is a few thousand): not read")
    return desc


def is_sweep(desc: dict) -> bool:
    return any(k in desc for k in ("platforms", "workloads", "schedulers"))


# --- commands ---------------------------------------------------------------

def engine_command(engine: str | None) -> list[str]:
    """The embedded engine by default (this Python), or the named program (e.g. real `batsim`)."""
    if engine in (None, "", "embedded", "batloc-batsim"):
        return [sys.executable, "-m", "batloc.engine"]
    return shlex.split(engine)


def schedulers_dir() -> Path:
    import batloc.schedulers

    return Path(os.path.dirname(batloc.schedulers.__file__))


@dataclass
class SchedulerSpec:
    """A batloc policy (schedulers/<policy>.py with JSON options) or any command taking `-s ENDPOINT`.

    `staging: true` on a command puts the staging proxy in front of it, so that a
    file-unaware scheduler pays the same loads as batloc's policies.
    """

    name: str
    policy: str | None = None
    options: dict = field(default_factory=dict)
    command: str | None = None
    staging: bool = False
    one_node: bool = False               # staged only: the proxy's --one-node
    walltime_includes_load: bool = True  # the sweep's rule (robin.description.walltime_rule)
    against: str | None = None           # the run the report compares it with (by name)
    backfilling: bool | None = None      # a command's, when its entry says; else read from its name

    @property
    def uses_backfilling(self) -> bool:
        """Whether the report pairs it with a backfilling baseline (a policy's option, a command's name)."""
        if self.policy:
            return bool(self.options.get("backfilling"))
        if self.backfilling is not None:
            return self.backfilling
        word = stock_name(self.command or "").lower()
        return any(k in word for k in STOCK_BACKFILLING)

    @property
    def dynamic_jobs(self) -> bool:
        # batloc policies and the staging proxy load files through dynamic jobs; stock schedulers need none
        return self.policy is not None or self.staging

    def to_json(self) -> dict:
        """What defines the run (run.json's `scheduler`, part of its configuration hash)."""
        d = {"name": self.name}
        if self.policy:
            d["policy"] = self.policy
            d["options"] = self.options
        else:
            d["command"] = self.command
            if self.staging:
                d["staging"] = True
                d["walltime_includes_load"] = self.walltime_includes_load
                if self.one_node:
                    d["one_node"] = True
            if self.backfilling is not None:
                d["backfilling"] = self.backfilling
        return d

    def command_line(self, port: int, export_prefix: Path, address: str = LOOPBACK,
                     verbosity: str = PYBATSIM_VERBOSITY) -> str:
        """The command robin starts, in the run's folder (file arguments made absolute)."""
        endpoint = f"tcp://{address}:{port}"
        if self.policy:
            script = schedulers_dir() / f"{self.policy}.py"
            opts = {**self.options, "export_prefix": str(export_prefix)}
            argv = scheduler_command() + [str(script), "-v", verbosity, "-s", endpoint,
                                          "-o", json.dumps(opts, sort_keys=True)]
        elif self.staging:
            # the proxy listens where the engine connects and gives the command its own -s
            argv = [sys.executable, "-m", "batloc.adapters.cli", "-q", "--bind", endpoint,
                    "--export-prefix", str(export_prefix)]
            argv += [] if self.walltime_includes_load else ["--walltime-excludes-load"]
            argv += ["--one-node"] if self.one_node else []
            argv += ["--"] + quiet(absolute(self.command), verbosity)
        else:
            argv = quiet(absolute(self.command), verbosity) + ["-s", endpoint]
        return shlex.join(argv)


    def in_process_args(self, export_prefix: Path, verbosity: str = PYBATSIM_VERBOSITY) -> list[str] | None:
        """The engine's flags running this scheduler inside it (--in-process), or None if it cannot:
        a command other than `pybatsim SCHEDULER [-o JSON] [-v LEVEL]`, or a staged one."""
        if self.policy:
            opts = {**self.options, "export_prefix": str(export_prefix)}
            return ["--in-process", str(schedulers_dir() / f"{self.policy}.py"),
                    "--scheduler-options", json.dumps(opts, sort_keys=True), "--scheduler-verbosity", verbosity]
        words = absolute(self.command)
        if self.staging or Path(words[0]).name != "pybatsim":
            return None
        from batloc.cli.scheduler import parse_args

        try:
            args = parse_args(words[1:] + ([] if any(w.startswith(("-v", "--verbosity")) for w in words[1:])
                                           else ["-v", verbosity]))
        except SystemExit:   # not pybatsim's arguments as batloc reads them: over ZeroMQ, as written
            return None
        if args.options_file:
            return None
        return ["--in-process", args.scheduler, "--scheduler-options", args.options,
                "--scheduler-verbosity", args.verbosity]


def in_process(desc: dict) -> bool:
    value = desc.get("in-process", False)
    if not isinstance(value, bool):
        raise DescriptionError(f"in-process must be true or false, not {excerpt(value)}")
    return value


def absolute(command: str) -> list[str]:
    """A command's words, those naming an existing file or folder made absolute (it runs elsewhere)."""
    words = []
    for w in shlex.split(command):
        flag, eq, value = w.partition("=") if w.startswith("--") else ("", "", w)
        if value and not value.startswith("-") and not os.path.isabs(value) and os.path.exists(value):
            value = os.path.abspath(value)
        words.append(flag + eq + value)
    return words


def quiet(words: list[str], verbosity: str) -> list[str]:
    """A pybatsim command through batloc's launcher (robin.pybatsim_launcher: -v holds for every logger),
    at `verbosity` unless the command sets its own (-v/--verbosity)."""
    if not words or Path(words[0]).name != "pybatsim":
        return words
    words = [sys.executable, "-m", "batloc.robin.pybatsim_launcher"] + words[1:]
    if any(w.startswith(("-v", "--verbosity")) for w in words[3:]):   # -v LEVEL, -vLEVEL, --verbosity[=]LEVEL
        return words
    return words + ["-v", verbosity]


def safe_name(text: str) -> str:
    """`text` made a plain file name: any other character becomes '_' (for names robin derives)."""
    name = re.sub(r"[^A-Za-z0-9_.+=-]", "_", text).lstrip(".-") or "_"
    return name if SAFE_NAME.fullmatch(name) else "_" + name


def checked_name(name) -> str:
    """A scheduler name given by the user; one that is not a plain file name is refused, never rewritten."""
    name = str(name)
    if not SAFE_NAME.fullmatch(name):
        raise DescriptionError(f"scheduler name {excerpt(name)} must be a plain file name (letters, digits, "
                               "'_', '.', '+', '=', '-', not starting with '.' or '-'): it names a folder "
                               "under OUTPUT_DIR/runs")
    return name


def pybatsim_verbosity(desc: dict) -> str:
    level = desc.get("pybatsim-verbosity", PYBATSIM_VERBOSITY)
    if level not in VERBOSITIES:
        raise DescriptionError(f"pybatsim-verbosity must be one of {', '.join(VERBOSITIES)}, not {excerpt(level)}")
    return level


def scheduler_address(desc: dict) -> str:
    """Where schedulers robin starts bind: loopback unless the description says otherwise."""
    address = desc.get("scheduler-address", LOOPBACK)
    if not isinstance(address, str) or not re.fullmatch(r"[A-Za-z0-9_.:*\[\]-]+", address):
        raise DescriptionError(f"scheduler-address must be a host or IP address (or '*'), not {excerpt(address)}")
    return address


def parse_scheduler(entry) -> SchedulerSpec:
    if isinstance(entry, str):
        return SchedulerSpec(name=checked_name(entry), policy=checked_policy(policy_of(entry)),
                             options=options_of(entry))
    if not isinstance(entry, dict):
        raise DescriptionError(f"a scheduler is a name or a mapping, not {excerpt(entry)}")
    unknown = set(entry) - {"name", "policy", "options", "command", "staging", "one-node", "against", "backfilling"}
    if unknown:
        raise DescriptionError(f"unknown scheduler keys: {sorted(unknown)}")
    against = entry.get("against")
    if against is not None and not isinstance(against, str):
        raise DescriptionError(f"scheduler {excerpt(entry.get('name') or entry.get('command') or entry.get('policy'))}: "
                               f"against must be a scheduler name, not {excerpt(against)}")
    if "command" in entry:
        what = f"scheduler {excerpt(entry['command'])}"
        staging, one_node = entry.get("staging", False), entry.get("one-node", False)
        for key, value in (("staging", staging), ("one-node", one_node)):
            if not isinstance(value, bool):
                raise DescriptionError(f"{what}: {key} must be true or false")
        if one_node and not staging:
            raise DescriptionError(f"{what}: one-node is an option of the staging proxy: it needs staging: true")
        backfilling = entry.get("backfilling")
        if backfilling is not None and not isinstance(backfilling, bool):
            raise DescriptionError(f"{what}: backfilling must be true or false")
        words = command_words(entry["command"])
        name = entry.get("name") or (safe_name(words[-1]) + ("-staged" if staging else "")
                                     + ("-one-node" if one_node else ""))
        return SchedulerSpec(name=checked_name(name), command=str(entry["command"]), staging=staging,
                             one_node=one_node, against=against, backfilling=backfilling)
    for key in ("one-node", "backfilling"):
        if key in entry:
            raise DescriptionError(f"scheduler {excerpt(entry.get('name') or entry.get('policy'))}: {key} is for a command "
                                   "(a policy's backfilling is its option)")
    policy = entry.get("policy") or policy_of(str(entry.get("name", "")))
    if not policy:
        raise DescriptionError(f"scheduler {excerpt(entry)} needs a policy or a command")
    policy = checked_policy(str(policy))
    given = entry.get("options") or {}
    if not isinstance(given, dict):
        raise DescriptionError(f"scheduler {excerpt(entry.get('name', policy))}: options must be a mapping, not {excerpt(given)}")
    options = {**options_of(str(entry.get("name", policy))), **given}
    name = entry.get("name") or (policy + ("-bf" if options.get("backfilling") else ""))
    return SchedulerSpec(name=checked_name(name), policy=str(policy), options=dict(options), against=against)


def stock_name(command: str) -> str:
    """The scheduler a command runs: `pybatsim easyBackfill -o …` → easyBackfill; else its last plain word."""
    try:
        words = shlex.split(command)
    except ValueError:
        return ""
    rest = [w for w in words[1:] if not w.startswith("-")]
    if words and Path(words[0]).name == "pybatsim" and rest:
        return Path(rest[0]).stem
    return Path(words[-1]).stem if words else ""


def walltime_rule(desc: dict, schedulers: list) -> bool:
    """The run's or sweep's walltime rule, set on every scheduler it touches (`schedulers` are changed).

    The description's `walltime-includes-load`, else the one the loading policies' options agree on,
    else the paper's (true). Both groups follow it: the loading policies (their option, written only
    when it is not the default, so that default runs keep their configuration) and the staging proxy.
    A policy whose own option says otherwise is refused: the groups would not be treated alike.
    """
    given = desc.get("walltime-includes-load")
    if given is not None and not isinstance(given, bool):
        raise DescriptionError(f"walltime-includes-load must be true or false, not {excerpt(given)}")
    own = {s.name: s.options["walltime_includes_load"] for s in schedulers
           if s.policy and "walltime_includes_load" in s.options}
    rule = given if given is not None else (next(iter(own.values())) if own else True)
    other = sorted(name for name, value in own.items() if value != rule)
    if other:
        raise DescriptionError(f"scheduler(s) {', '.join(other)} set walltime_includes_load to {not rule}, "
                               f"the {'description' if given is not None else 'other schedulers'} to {rule}: one "
                               "rule for every run, so that batloc's policies and the staging proxy are treated "
                               "alike (set walltime-includes-load once for the sweep)")
    for s in schedulers:
        s.walltime_includes_load = rule
        if s.policy in LOADING_POLICIES:
            if rule:
                s.options.pop("walltime_includes_load", None)
            else:
                s.options["walltime_includes_load"] = False
    return rule


def command_words(command) -> list[str]:
    """A scheduler command's words; one line for an empty command or unbalanced quotes."""
    if not isinstance(command, str):
        raise DescriptionError(f"a scheduler command is a string, not {excerpt(command)}")
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise DescriptionError(f"scheduler command {excerpt(command)}: {exc}") from None
    if not words:
        raise DescriptionError("a scheduler command is empty")
    return words


def checked_policy(policy: str) -> str:
    """A batloc policy: a file schedulers/<policy>.py (names only, never a path)."""
    if not SAFE_NAME.fullmatch(policy) or not (schedulers_dir() / f"{policy}.py").is_file():
        raise DescriptionError(f"unknown policy {excerpt(policy)}: no {schedulers_dir() / (policy + '.py')} "
                               "(for a scheduler of your own, give its command)")
    return policy




def engine_args(desc: dict, options: dict | None = None) -> list[str]:
    """The embedded engine's extra flags: the description's, and --instant if it or the scheduler's `options`
    ask for the instant mode (the authors profile: schedulers/engine_mode.py)."""
    extra = desc.get("engine-args") or []
    extra = shlex.split(extra) if isinstance(extra, str) else [str(a) for a in extra]
    wanted = instant(desc) or wants_instant_engine(options or {})
    return extra + ["--instant"] if wanted and "--instant" not in extra else extra


def instant(desc: dict) -> bool:
    value = desc.get("instant", False)
    if not isinstance(value, bool):
        raise DescriptionError(f"instant must be true or false, not {value!r}")
    return value


def embedded_batcmd(engine: list[str], platform: Path, workload: Path, prefix: Path, port: int | None,
                    dynamic_jobs: bool, extra: list[str], address: str = LOOPBACK,
                    progress_file: Path | None = None, in_process: list[str] | None = None) -> str:
    """The engine's command; with `in_process` (SchedulerSpec.in_process_args) it runs the scheduler itself."""
    argv = engine + ["-p", str(platform), "-w", str(workload), "-e", str(prefix)]
    if in_process:
        argv += in_process
    else:
        # a scheduler bound on every interface is reached on loopback too
        host = "localhost" if address in (LOOPBACK, "*", "0.0.0.0") else address
        argv += ["-s", f"tcp://{host}:{port}"]
    if dynamic_jobs:
        argv.append("--enable-dynamic-jobs")
    if progress_file is not None and is_embedded(engine):
        argv += ["--progress-file", str(progress_file)]   # robin shows it; real Batsim has no such flag
    return shlex.join(argv + extra)


def is_embedded(engine: list[str]) -> bool:
    return engine == engine_command(None)


def batcmd_inputs(batcmd: str) -> dict:
    """Platform, workload, export prefix and role options (-m, -r) named in a Batsim-style command (for
    run.json)."""
    args = shlex.split(batcmd)
    found = {}
    flags = {"-p": "platform", "--platform": "platform", "-w": "workload", "--workload": "workload",
             "-e": "export_prefix", "--export": "export_prefix"}
    for i, a in enumerate(args):
        key, value = a, None
        if "=" in a and a.startswith("--"):
            key, value = a.split("=", 1)
        elif i + 1 < len(args):
            value = args[i + 1]
        if key in flags and value is not None and flags[key] not in found:
            found[flags[key]] = value
    for key in ("platform", "workload"):
        if key in found:
            found[key] = str(Path(found[key]).resolve())
    roles = role_options(args)   # -m/-r: which hosts compute, as the validator and the report must read them
    if roles:
        found["platform_options"] = roles
    return found
