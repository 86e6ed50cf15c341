"""The authors' simulator's clock (docs/authors-simulator.md, R1-R4): when a
planning scheduler plans, what a pass plans, and the reservations that start
without a pass.

The C simulator of Gonthier et al. advances whole seconds; in a second it
ends jobs, starts the reservations planned for it, takes the submissions in,
and only then, at a tick (every 30 s), may plan: a job ended in that very
second (and the queue holds jobs) -> every reservation dropped and the queue
planned from scratch; else a job submitted in that very second -> only the
jobs of the new-job list placed, on top of the standing plan; else nothing.
A job submitted in a second that also saw an end skips the new-job list: it
joins the queue unplanned, for the next full pass. Planned reservations start
at their second on their planned cores, whatever happened since.

``Clock`` does the same on the engine's messages, per instant, once every
event of it is in (a job reaching its window's end in this instant has
ended: its kill comes back in a later message of the same instant):
1. jobs with a ``history_node`` (running before t0, R4) start on that node;
2. the other submissions of the instant join the queue or the new-job list;
3. the reservations planned for now start (R3);
4. at a tick, a full pass or a new-jobs pass (R2), whose starts are committed.
Options (``options.py``): ``tick_events``, ``submission_pass``,
``start_reservations_between_passes``, ``pin_history_node``; with
``since_last_tick`` a tick reacts to anything since the previous one (any
event but a submission counting as an end).
"""

import heapq
import math
import time as _time

from batloc.schedulers.boundary import TICK, warn
from batloc.schedulers.planning.planner import Decision

FULL, NEW_JOBS = "full", "new jobs"


class Clock:
    def __init__(self, scheduler):
        self.s = scheduler
        opts = scheduler.opts
        self.period = float(opts.scheduling_period)
        self.same_second = opts.tick_events == "same_second"
        self.new_jobs_only = opts.submission_pass == "new_jobs_only"
        self.on_their_own = opts.start_reservations_between_passes
        self.pin = opts.pin_history_node
        self.arrived = []          # (QueuedJob, file id, history node) not yet routed
        self.new_jobs = []         # the new-job list: (QueuedJob, file id)
        self.last_end = -math.inf  # instant of the latest job end
        self.last_other = -math.inf   # of the latest event that is neither an end nor a submission
        self.last_submit = -math.inf
        self.last_tick = -math.inf
        self.deadlines = []        # heap of (window end, job id) of the jobs started
        self.due = []              # heap of (planned start, job id) of standing reservations
        self.stalled = False       # nothing runs or is due, jobs wait, none is to come: plan them all
        scheduler.queue.park = True

    def waiting(self):
        """Submitted jobs not in the queue yet."""
        return len(self.arrived) + len(self.new_jobs)

    # ---- events ---------------------------------------------------------
    def submitted(self, job, fid, history_node):
        self.arrived.append((job, fid, history_node))

    def ended(self, now):
        self.last_end = now

    def other_event(self, now):
        self.last_other = now

    # ---- one instant --------------------------------------------------------
    def step(self, now):
        if self.same_second:
            second = self._second(now)
            if now - second < TICK / 2:
                # A second's events are taken one protocol tick after it, where the
                # engine also announces the jobs submitted at 0 (contract §4b):
                # what starts then ends on that grid too, in its second.
                self.s.call_at(second + TICK)
                return
        else:
            second = now
        if self._ends_pending(now):
            return
        ended_now = self.same_second and self.last_end > -math.inf and self._second(self.last_end) == second
        submitted_now = self._route(now, ended_now)
        tick = self._is_tick(second)
        kind = None
        if tick and self.last_tick < second:
            kind = self._pass_kind(ended_now, submitted_now)
            self.last_tick = second
        if self.on_their_own or kind is not None:
            self._start_due(now)
        if kind is None and tick and self.stalled:
            self._flush_new_jobs()
            kind = FULL
        if kind == FULL:
            self._timed(now, self._full_pass)
        elif kind == NEW_JOBS:
            self._timed(now, self._new_jobs_pass)
        elif not self.same_second and self.period and not tick and max(
                self.last_end, self.last_other, self.last_submit) > self.last_tick:
            self.s.call_at(math.ceil(now / self.period) * self.period)
        self._watch_stall(now, second)

    def _watch_stall(self, now, second):
        """The C simulator would wait for ever when nothing runs, nothing is
        planned and no job is to come (its keep-alive jobs see that it never
        does): batloc plans the queue from scratch at the next tick instead."""
        s = self.s
        self.stalled = (bool(len(s.queue) or self.new_jobs) and not s.state.held and s.bs.no_more_static_jobs
                        and not (self.on_their_own and self.due))
        if self.stalled and self.period:
            tick = (math.floor(second / self.period) + 1) * self.period
            s.call_at(tick + (TICK if self.same_second else 0.0))

    @staticmethod
    def _second(t):
        """The whole second an instant falls in (up to float error below it)."""
        return math.floor(t + 1e-7)

    def _ends_pending(self, now):
        """Whether a started job reaches its window's end in this instant and has not ended yet."""
        held, heap = self.s.state.held, self.deadlines
        while heap and heap[0][0] < now - TICK:
            heapq.heappop(heap)
        # the entries of this instant: the heap's top, down to the first later one on each branch
        todo = [0] if heap else []
        while todo:
            i = todo.pop()
            end, jid = heap[i]
            if end > now + TICK:
                continue
            if jid in held:
                return True
            todo.extend(c for c in (2 * i + 1, 2 * i + 2) if c < len(heap))
        return False

    def _is_tick(self, second):
        if not self.period:
            return True
        k = round(second / self.period)
        on_grid = abs(second - k * self.period) <= max(TICK, 1e-9 * abs(second))
        return on_grid and (k >= 1 or not self.same_second)

    def _route(self, now, ended_now):
        """The instant's arrivals to their place; whether a job (not pinned) was submitted."""
        submitted = False
        queue = self.s.queue
        if self.same_second:
            # The C simulator takes a second's submissions in its input file's order; the engine
            # announces jobs of one date in text order ("w0!10" before "w0!2"), as Batsim does.
            self.arrived.sort(key=lambda a: _natural(a[0].id))
        for job, fid, node in self.arrived:
            if self.pin and node is not None:
                self._pin(job, fid, node, now)
                continue
            submitted = True
            if self.new_jobs_only and not (self.same_second and ended_now):
                self.new_jobs.append((job, fid))
            else:
                queue.append(job, fid)
        self.arrived = []
        if submitted:
            self.last_submit = now
        return submitted

    def _pass_kind(self, ended_now, submitted_now):
        queue = self.s.queue
        if self.same_second:
            if ended_now and len(queue):
                return FULL
            if submitted_now:
                return NEW_JOBS if self.new_jobs_only else FULL
            return None
        since = self.last_tick
        if max(self.last_end, self.last_other) > since and (len(queue) or self.new_jobs):
            self._flush_new_jobs()
            return FULL
        if self.last_submit > since:
            return NEW_JOBS if self.new_jobs_only else FULL
        return None

    # ---- passes -------------------------------------------------------------
    def _timed(self, now, run):
        s = self.s
        waiting, t0, c0 = s.unstarted(), _time.perf_counter(), s.cpu_clock()
        run(now)
        done = _time.perf_counter()
        s.pass_cpu += s.cpu_clock() - c0
        s.pass_times.append((waiting, done - t0))
        if s.first_pass_seconds is None:
            s.first_pass_seconds = done - s.born

    def _flush_new_jobs(self):
        for job, fid in self.new_jobs:
            self.s.queue.append(job, fid)
        self.new_jobs = []

    def _full_pass(self, now):
        s = self.s
        s.commit_all(s.planned(lambda: s.planner.plan(now, s.queue)), now)
        self.due = []
        self._book(now, 0)

    def _new_jobs_pass(self, now):
        s = self.s
        first = len(s.queue)
        self._flush_new_jobs()
        s.commit_all(s.planned(lambda: s.planner.plan_new(now, s.queue, first)), now)
        self._book(now, first)      # only new jobs started: the others keep their positions

    def _book(self, now, first):
        """The planned starts of the queued jobs from position ``first`` on, to start on their own."""
        for start, jid in self.s.planner.planned_starts(self.s.queue, first):
            if start > now + TICK:
                heapq.heappush(self.due, (start, jid))
                if self.on_their_own:
                    self.s.call_at(start)

    def _start_due(self, now):
        """The standing reservations planned for now start on their planned cores (R3)."""
        ids = set()
        while self.due and self.due[0][0] <= now + TICK:
            start, jid = heapq.heappop(self.due)
            if start >= now - TICK:
                ids.add(jid)
        if not ids:
            return
        s = self.s
        starts = []
        for i, job in enumerate(s.queue.jobs):
            if job.id not in ids:
                continue
            d = s.planner.reservation(s.queue, i)
            if d is None or abs(d.start - now) > TICK:
                continue
            if not s.state.cores_free(d.node, d.positions):
                warn(f"job {job.id}: its cores on node {s.platform.nodes[d.node].name} are still held at its "
                     f"planned start {now:g}; it waits for the next full pass")
                continue
            d.start = now
            d.t_file = now + s.load_time(job.size, d.node)
            starts.append(d)
        s.commit_all(starts, now)

    def _pin(self, job, fid, node, now):
        """R4: a job running before t0 starts on its historical node now, else joins the queue."""
        s = self.s
        positions = s.state.free_positions(node)[:job.cores]
        if len(positions) < job.cores:
            s.queue.append(job, fid)
            return
        d = Decision(job, node, positions, now, now + s.load_time(job.size, node), "", None, None)
        s.commit(d, now)

    def started(self, held):
        """A job took its cores (any path): its window's end will end it in that instant."""
        if math.isfinite(held.deadline):
            heapq.heappush(self.deadlines, (held.deadline, held.job.id))


def _natural(job_id):
    """A job id's order in its workload file: "w0!10" after "w0!2" (numbers compared as numbers)."""
    prefix, _, local = job_id.rpartition("!")
    return (prefix, 0, int(local), "") if local.isdigit() else (prefix, 1, 0, local)
