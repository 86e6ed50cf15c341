"""Loading a pybatsim scheduler by name, and pybatsim's logging, for every launcher batloc has.

Three places start a pybatsim scheduler: ``batloc scheduler`` (over ZeroMQ),
the engine's ``--in-process`` mode (``engine/in_process.py``) and robin's
pybatsim commands (``robin/pybatsim_launcher.py``). They load it here, below
all three, so that the engine never reaches up into the commands above it.

``load`` finds the scheduler as pybatsim 3.2.1's ``instanciate_scheduler``
does (a file ``schedulers/lea.py`` is imported as ``schedulers.lea`` with its
folder's parent on ``sys.path``, and its class ``Lea`` instantiated with the
options; a bare name is batloc's policy of that name as robin names them —
``lea``, ``lea-bf`` with backfilling — else one of pybatsim's stock
schedulers), but each way it
can fail is a ``LoadError`` of one line naming the file (and the line) at
fault, where pybatsim prints a traceback, a bare "No such scheduler", or
follows a file that is not Python into ``'NoneType' object has no attribute
'loader'``. A ``SystemExit`` raised by the scheduler itself (it refused its
options and printed its own line) goes through: that is the scheduler's word.
"""

import importlib
import importlib.util
import inspect
import json
import logging
import os
import sys
import traceback
import types

from batloc.shipped import packaged, policy_named

LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR,
          "critical": logging.CRITICAL}
LOG_FORMAT = "[pybatsim - %(asctime)s - %(name)s - %(levelname)s] %(message)s"
STOCK_HINT = ("a .py file such as schedulers/lea.py, a batloc policy such as lea or lea-bf, or a pybatsim stock "
              "scheduler such as schedFcfs")


class LoadError(Exception):
    """Why a scheduler cannot be loaded, in one line."""


def options_json(text, where):
    """A scheduler's options from their JSON text (`where`: the flag or file they came in), a JSON object;
    LoadError otherwise (a list reached the scheduler as its options: "fcfs raised TypeError while loading")."""
    from batloc.reading import excerpt

    try:
        options = json.loads(text)
    except json.JSONDecodeError as e:
        raise LoadError(f"{where} is not JSON ({e.msg} at line {e.lineno} column {e.colno}): {excerpt(text)}; "
                        "options are a JSON object such as '{\"cache\": \"lru\"}'") from None
    if not isinstance(options, dict):
        raise LoadError(f"{where} is a JSON {type(options).__name__}, not an object: {excerpt(text)}; options are "
                        "a JSON object such as '{\"cache\": \"lru\"}'")
    return options


def stderr_handlers_at(level):
    """From now on, every stream handler a logger gets drops the records below `level` (files keep them).

    pybatsim's high-level schedulers (`batsim.sched`) give their loggers their own stderr handler at INFO,
    whatever the launcher's -v says; files written by those loggers (out_events.csv) keep every record."""
    add = logging.Logger.addHandler

    def add_at_level(logger, handler):
        if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
            handler.addFilter(lambda record: record.levelno >= level)
        add(logger, handler)

    logging.Logger.addHandler = add_at_level


def pybatsim_logging(verbosity):
    """pybatsim's logging at its -v level (a name of `LEVELS`), as its launcher sets it up before loading."""
    level = LEVELS[verbosity]
    stderr_handlers_at(level)
    logging.basicConfig(format=LOG_FORMAT, level=level)


def module_to_class(module):
    """pybatsim's rule: the class of ``fooBar.py`` is ``FooBar``."""
    return module[:1].upper() + module[1:]


def load(name, options):
    """The scheduler `name` (a file, a name robin takes, or a stock name) instantiated with `options`;
    LoadError if it cannot be."""
    if not name or not name.strip():
        raise LoadError(f"no scheduler named: expected {STOCK_HINT}")
    path, implied = resolve(name)
    if path is not None:
        return _from_file(str(path), {**implied, **options})
    return _stock(name, options)


def resolve(name):
    """(the file of scheduler `name`, the options its name implies), or (None, {}) for a stock name.

    A name holding '/' or '.' is a file; a name robin takes (lea, lea-bf, fcfs_bf) is batloc's policy file,
    with backfilling for '-bf' (``shipped.policy_named``); any other name is one of pybatsim's."""
    if "/" in name or "." in name:
        return name, {}
    named = policy_named(name)
    return named if named is not None else (None, {})


def batloc_policy(name) -> bool:
    """Whether `name` (as `load` takes it) is one of batloc's own policies: they take `export_prefix`."""
    path, _ = resolve(name)
    if path is None:
        return False
    path = packaged(path).resolve()
    named = policy_named(path.stem)
    return named is not None and named[0].resolve() == path


def _from_file(name, options):
    path = packaged(name)    # schedulers/lea.py from any folder: an installed batloc's own
    if not path.is_file():
        raise LoadError(f"no scheduler file {name}" + (" (a folder)" if path.is_dir() else ""))
    if path.suffix != ".py":
        raise LoadError(f"{name} is not a Python file: a scheduler is {STOCK_HINT}")
    name = str(path)
    module_name = path.stem
    parent = os.path.split(os.path.dirname(name))[1]
    module_path = ".".join(([parent] if parent else []) + [module_name])
    # as pybatsim: the file's folder and its parent first on sys.path while it is imported (relative imports)
    sys.path[:0] = [os.path.abspath(os.path.dirname(os.path.dirname(name))), os.path.abspath(os.path.dirname(name))]
    try:
        try:
            module = importlib.import_module(module_path)
        except ModuleNotFoundError as e:
            if e.name not in (module_path, parent):
                raise
            # not importable under its folder's name: the file alone, as pybatsim falls back to
            spec = importlib.util.spec_from_file_location("schedulers." + module_name, name)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as e:  # noqa: BLE001  (a syntax error, a failed import, anything raised at import)
        raise LoadError(f"cannot load {name}: {_where(e, name)}") from None
    finally:
        del sys.path[:2]
    return _instantiate(module, module_to_class(module_name), name, options)


def _stock(name, options):
    # A stock name is imported from pybatsim's package `schedulers`: a folder of that name in the
    # current directory (this repository's root) must not stand in for it.
    here = {"", os.getcwd()}
    kept = [p for p in sys.path if p in here]
    sys.path[:] = [p for p in sys.path if p not in here]
    try:
        try:
            module = importlib.import_module(f"schedulers.{name}")
        except ModuleNotFoundError as e:
            if e.name not in (f"schedulers.{name}", "schedulers"):
                raise
            raise LoadError(f"no scheduler {name}: not a file (a path holds / or ends in .py), a batloc policy "
                            "(lea, lea-bf, fcfs, ...) nor one of pybatsim's stock schedulers (e.g. schedFcfs, "
                            "easyBackfill)") from None
        except (SystemExit, KeyboardInterrupt, LoadError):
            raise
        except BaseException as e:  # noqa: BLE001
            raise LoadError(f"cannot load pybatsim's stock scheduler {name}: {_where(e)}") from None
    finally:
        sys.path[:0] = kept
    return _instantiate(module, module_to_class(name), name, options)


def _instantiate(module, class_name, name, options):
    from batsim.batsim import BatsimScheduler

    found = module.__dict__.get(class_name)
    if found is None:
        others = sorted(k for k, v in module.__dict__.items()
                        if isinstance(v, type) and issubclass(v, BatsimScheduler) and v.__module__ == module.__name__)
        hint = f"; it defines {', '.join(others)}" if others else ""
        raise LoadError(f"{name} defines no {class_name} (pybatsim runs the class named after the file, its first "
                        f"letter upper-cased{hint})")
    if isinstance(found, types.FunctionType):
        # pybatsim's high-level API runs a function f(scheduler) at each scheduling step (its stock schedFcfs is
        # one); a function that cannot take that one argument is no such scheduler
        try:
            inspect.signature(found).bind(None)
        except TypeError:
            raise LoadError(f"{name}: {class_name} is a function that does not take one argument: pybatsim runs "
                            f"the class {class_name}(BatsimScheduler), or a function {class_name}(scheduler) that "
                            "its high-level API calls at each scheduling step") from None
        from batsim.sched import as_scheduler

        if "/" in name or "." in name:   # pybatsim's stock schedFcfs is such a function; a file's rarely is
            print(f"batloc scheduler: warning: {name}: {class_name} is a function, run as pybatsim's high-level API "
                  f"runs one: {class_name}(scheduler) at each scheduling step (a scheduler file usually holds a class "
                  f"{class_name}(BatsimScheduler))", file=sys.stderr, flush=True)
        make = as_scheduler()(found)
    elif isinstance(found, type):
        make = found
    else:
        raise LoadError(f"{name}: {class_name} is a {type(found).__name__}, not a scheduler class")
    try:
        scheduler = make(options)
        if not isinstance(scheduler, BatsimScheduler):
            scheduler = scheduler()   # pybatsim's high-level schedulers are wrapped once more
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as e:  # noqa: BLE001
        raise LoadError(f"{name}: {class_name}(options) failed: {_where(e)}") from None
    return scheduler


def _where(exc, path=None):
    """'TypeError: message (file, line N)': the exception, at the last line of the scheduler's own code."""
    text = f"{type(exc).__name__}: {exc}".rstrip(": ")
    if isinstance(exc, SyntaxError):   # its own file and line (the scheduler's, or a module it imports)
        text = f"SyntaxError: {exc.msg}"
        return f"{text} ({exc.filename}, line {exc.lineno})" if exc.filename else text
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if "importlib" not in f.filename and not f.filename.endswith(__file__)]
    if own:
        frame = own[-1]
        return f"{_one_line(text)} ({frame.filename}, line {frame.lineno})"
    return _one_line(text)


def _one_line(text):
    line = " ".join(text.split())
    return line if len(line) <= 300 else line[:297] + "..."
