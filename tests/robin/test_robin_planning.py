"""A large sweep says that it plans, and Ctrl-C while it does is one line (issue 37: a 10 000-run sweep
planned for 23 s in silence, and Ctrl-C then printed a traceback)."""

import threading

from batloc.robin import cli, sweep


class Spec:
    def __init__(self, calls, stop_at, stop):
        self.calls, self.stop_at, self.stop = calls, stop_at, stop

    def state(self):
        self.calls.append(1)
        if len(self.calls) == self.stop_at:
            self.stop.set()   # as robin's SIGINT handler does
        return "new", ""


def test_a_large_sweep_says_it_plans_and_stops_planning_on_a_signal():
    said, calls, stop = [], [], threading.Event()
    specs = [Spec(calls, 1500, stop) for _ in range(3000)]
    complete, todo = sweep.plan(specs, False, False, said.append, stop)
    assert said[0] == "robin: checking which of the sweep's 3000 runs are complete"
    assert len(calls) == 1500 and len(todo) == 1500 and complete == []
    small = []
    sweep.plan([Spec([], 0, threading.Event()) for _ in range(10)], False, False, small.append)
    assert small == []   # a small sweep plans in silence, as before


def test_ctrl_c_before_robin_acts_on_signals_is_one_line(tmp_path, monkeypatch, capsys):
    def interrupted(path):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli.rd, "load_description", interrupted)
    desc = tmp_path / "d.yaml"
    desc.write_text("output-dir: out\n")
    assert cli.main([str(desc)]) == 130
    assert capsys.readouterr().err == "robin: interrupted before any run started\n"
