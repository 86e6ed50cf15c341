"""The L07 clock's own CPU, replayed: every call a default-mode run made to it, made again on two versions.

The engine's CPU on the saturated day moves by ±10 % from run to run on a
shared machine, more than a cut of a few µs per clock step can show. This
records the calls a run makes to its `L07Clock` (sleeps, messages, transfers,
cancellations, quick and general steps, in order), then replays them on the
clock of each source tree given, alternately, and prints each one's CPU per
round; it also checks that both give the same steps (the actions each step
ends and the clock's time, to the bit), so that a faster clock is shown equal
on the run's own calls.

    python benchmarks/clock_replay.py record TRACE -- <batloc-batsim arguments of a default-mode run>
    python benchmarks/clock_replay.py replay TRACE TREE_A TREE_B [--rounds 5]

(TREE: a batloc source tree, e.g. a worktree of main; its engine/l07_clock.py is loaded, with its engine/l07_wear.py
where it has one, compiled afresh: the clock then takes its compiled way, as in a run with a batloc policy in process.)
"""

import argparse
import importlib.util
import os
import pickle
import statistics
import sys
import tempfile
import time


def record(path, engine_args):
    from batloc.engine import cli, l07_clock, supervisor

    ops, ids = [], {}

    def ident(action):
        key = id(action)
        if key not in ids:
            ids[key] = (len(ids), action)   # the action kept alive: its id is not reused
        return ids[key][0]

    clock_class = l07_clock.L07Clock
    real = {name: getattr(clock_class, name) for name in
            ("sleep", "shape", "transfer", "send", "cancel", "quick_step", "next_delta", "step")}
    shapes = {}

    def sleep(self, seconds, done):
        action = real["sleep"](self, seconds, done)
        ops.append(("sleep", seconds, ident(action)))
        return action

    def shape(self, routes):
        result = real["shape"](self, routes)
        shapes.setdefault(id(result), (result, tuple(routes)))
        return result

    def routes_of(routes):
        return ("shape", shapes[id(routes)][1]) if type(routes) is l07_clock.Shape else ("routes", tuple(routes))

    def transfer(self, routes, done, message=False):
        outer = not getattr(self, "_in_call", False)
        self._in_call = True
        try:
            action = real["transfer"](self, routes, done, message)
        finally:
            self._in_call = not outer
        if outer:
            ops.append(("transfer", routes_of(routes), message, ident(action)))
        return action

    def send(self, shape_, done):
        self._in_call = True
        try:
            action = real["send"](self, shape_, done)
        finally:
            self._in_call = False
        ops.append(("send", routes_of(shape_), ident(action)))
        return action

    def cancel(self, action):
        if action is not None and action.alive:
            ops.append(("cancel", ident(action)))
        return real["cancel"](self, action)

    def quick_step(self):
        ended = real["quick_step"](self)
        ops.append(("quick", None if ended is None else [ident(a) for a in ended]))
        return ended

    def next_delta(self):
        delta = real["next_delta"](self)
        ops.append(("next", delta))
        return delta

    def step(self, delta):
        ended = real["step"](self, delta)
        ops.append(("step", delta, [ident(a) for a in ended]))
        return ended

    for name, f in dict(sleep=sleep, shape=shape, transfer=transfer, send=send, cancel=cancel,
                        quick_step=quick_step, next_delta=next_delta, step=step).items():
        setattr(clock_class, name, f)
    leave = cli._leave

    def dump_then_leave(status):   # the engine ends with os._exit: the trace is written first
        with open(path, "wb") as fh:
            pickle.dump(ops, fh, protocol=pickle.HIGHEST_PROTOCOL)
        print(f"clock_replay: {len(ops)} calls recorded to {path}", file=sys.stderr)
        leave(status)

    cli._leave = dump_then_leave
    supervisor.supervise = lambda args: (None, None)   # the run in this process, not in a supervised child
    sys.argv = ["batloc-batsim"] + engine_args
    cli.main()


def load_clock(tree, name):
    module = load_file(f"{tree}/engine/l07_clock.py", name)
    if os.path.exists(f"{tree}/engine/l07_wear.py"):   # the clock's compiled part, from the same tree
        # compiled afresh in a cache of this replay's own: a cached function names its module, here not batloc's
        os.environ.setdefault("BATLOC_NUMBA_CACHE", tempfile.mkdtemp(prefix="clock_replay_numba_"))
        wear = load_file(f"{tree}/engine/l07_wear.py", name + "_wear")
        wear.warm_up()
        module.compiled_wear = lambda: wear
    return module


def load_file(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module   # numba's cache names a compiled function's module: it must be importable
    spec.loader.exec_module(module)
    return module


def replay(module, ops):
    """Make the recorded calls on a fresh clock of `module`; returns (CPU seconds, what each step gave)."""
    clock = module.L07Clock()
    shapes = {}
    actions = {}
    out = []

    def shape_of(kind, routes):
        if kind == "routes":
            return list(routes)
        s = shapes.get(routes)
        if s is None:
            s = shapes[routes] = clock.shape(list(routes))
        return s

    ident = {}
    started = time.process_time()
    for op in ops:
        kind = op[0]
        if kind == "quick":
            ended = clock.quick_step()
            out.append(None if ended is None else [ident[id(a)] for a in ended])
        elif kind == "send":
            a = clock.send(shape_of(*op[1]), None)
            actions[op[2]] = a
            ident[id(a)] = op[2]
        elif kind == "sleep":
            a = clock.sleep(op[1], None)
            actions[op[2]] = a
            ident[id(a)] = op[2]
        elif kind == "step":
            ended = clock.step(op[1])
            out.append([ident[id(a)] for a in ended])
            out.append(clock.now)
        elif kind == "next":
            out.append(clock.next_delta())
        elif kind == "cancel":
            clock.cancel(actions[op[1]])
        elif kind == "transfer":
            a = clock.transfer(shape_of(*op[1]), None, op[2])
            actions[op[3]] = a
            ident[id(a)] = op[3]
    return time.process_time() - started, out


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "record":
        if len(sys.argv) < 4 or sys.argv[3] != "--":
            sys.exit("usage: clock_replay.py record TRACE -- <batloc-batsim arguments>")
        record(sys.argv[2], sys.argv[4:])
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["replay"])
    ap.add_argument("trace")
    ap.add_argument("trees", nargs=2)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    with open(args.trace, "rb") as fh:
        ops = pickle.load(fh)
    modules = [load_clock(tree, f"l07_clock_{i}") for i, tree in enumerate(args.trees)]
    steps = sum(1 for op in ops if op[0] in ("quick", "step"))
    print(f"{len(ops)} calls, {steps} step calls; CPU seconds per replay, the trees alternately")
    print("round  " + "  ".join(f"{t[-28:]:>28}" for t in args.trees))
    times = [[], []]
    results = [None, None]
    for r in range(args.rounds):
        row = []
        for i, module in enumerate(modules):
            cpu, out = replay(module, ops)
            times[i].append(cpu)
            row.append(cpu)
            if results[i] is None:
                results[i] = out
        print(f"{r + 1:5d}  " + "  ".join(f"{t:28.3f}" for t in row))
    best = [min(t) for t in times]
    median = [statistics.median(t) for t in times]
    print(f"best   " + "  ".join(f"{t:28.3f}" for t in best))
    print(f"median " + "  ".join(f"{t:28.3f}" for t in median))
    same = results[0] == results[1]
    print(f"the same steps on both (ended actions, deltas, times): {'yes' if same else 'NO'}; "
          f"{(median[0] - median[1]) / steps * 1e6:+.2f} µs per step call by the medians (first minus second)")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
