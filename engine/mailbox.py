"""Batsim's own messages on the simulated platform: when each event reaches its server, and when the scheduler hears.

Batsim 4.2.1 runs its server as a SimGrid actor on the master host
(``server.cpp``). Every other part of it is an actor that tells the server by
a 1-byte message put into the server's mailbox (``ipp.cpp`` ``send_message``),
which crosses the simulated platform under SimGrid's L07 model: the route's
latencies, then one byte at the route's share of bandwidth. A put blocks its
sender until the server has taken it; the server takes one message at a time,
first put first taken, so messages put at once are received one after the
other:

- a job's executor, on the job's first host (its lowest resource id), tells
  the job's end (``jobs_execution.cpp``); its resources are free from the end
  itself, its jobs.csv row is written when the server hears of it;
- one submitter per workload, on the master, says hello at t = 0, then sends
  the jobs of each submission date in one message (ordered by id text), and
  sleeps until the next date *counted from before that message left*, so each
  submission is late by the previous message's time (``job_submitter.cpp``);
  it says bye after its last one;
- the scheduler's answer is read by a request-reply actor on the master
  (``network.cpp``, ``protocol.cpp``), which sends each decision as its own
  message, in order, each when its timestamp is reached, then "ready" when the answer's now is (one
  sleep until that date, then the message: a sleep ended within SimGrid's 1 ns is not slept again);
- a CALL_ME_LATER starts a waiter on the master, which sleeps until the date
  (10 µs at least) and then tells the server; a KILL_JOB starts a killer,
  which kills at once and tells the server when done.

The server sends a message to the scheduler only when the scheduler is ready
(it answered the previous one) and no message is waiting in the mailbox, so
events of one instant may come in several messages. It never sends one while
it is taking a message: events put at the very instant a message is received
are seen after its check, unless that message took no time (then SimGrid ends
it after every actor of the instant has run).

Times are computed, not simulated, where nothing can share a message's route:
(latency sum, 1/bottleneck bandwidth) per source host, cached; a message put
while a job's transfer is in flight is a real SimGrid transfer of 1 byte. A
platform where every such message takes less than 1 ns (batloc's own layout:
master_link at 10¹² B/s, no latency) runs in the engine's *instant* mode
(``server.Simulation``): everything of one instant in one message, at the
instants this model gives when every message takes no time.
"""

from collections import deque

from .errors import EngineError
from .l07_clock import L07Clock
from .timers import FIRST_SUBMISSION, INF

# A waiter sleeps at least this long (jobs_execution.cpp waiter_process: "found on trial-error")
WAITER_MIN_SLEEP = 1e-5

HELLO, SUBMIT, BYE, COMPLETED, DECISION, READY, WAITED, KILLED = range(8)


class Put:
    """A message in (or on its way into) the server's mailbox."""

    __slots__ = ("src", "what", "data", "resume")

    def __init__(self, src, what, data, resume):
        self.src = src
        self.what = what
        self.data = data
        self.resume = resume   # what the sender does once the server took it (a put blocks its sender)


class Submitter:
    """Batsim's static job submitter of one workload (job_submitter.cpp), as a state machine."""

    def __init__(self, sim, jobs):
        self.sim = sim
        # Batsim sorts by submission time, then by job id as text ("w0!10" before "w0!2")
        self.jobs = sorted(jobs, key=lambda j: (j.subtime, j.id))
        self.i = 0
        self.batch = []
        self.date = 0.0   # Batsim's current_submission_date

    def start(self):
        self.sim.put(self.sim.platform.master, HELLO, None, self.hello_taken)

    def hello_taken(self):
        self.date = self.sim.now
        if self.jobs and self.jobs[0].subtime < FIRST_SUBMISSION and self.date < FIRST_SUBMISSION:
            # batloc: stock pybatsim schedulers fail on a job announced at t = 0 (contract §4b)
            self.sim.clock.sleep(FIRST_SUBMISSION - self.sim.now, self.first_wake)
            return
        self.advance()

    def first_wake(self):
        self.date = self.sim.now
        self.advance()

    def advance(self):
        jobs = self.jobs
        while self.i < len(jobs):
            job = jobs[self.i]
            if job.subtime > self.date:
                sleep = job.subtime - self.date   # counted from before the batch below is sent
                if self.batch:
                    batch, self.batch = self.batch, []
                    self.sim.put(self.sim.platform.master, SUBMIT, batch, lambda: self.sleep(sleep))
                else:
                    self.sleep(sleep)
                return
            self.batch.append(job)
            self.i += 1
        if self.batch:
            batch, self.batch = self.batch, []
            self.sim.put(self.sim.platform.master, SUBMIT, batch, self.bye)
        else:
            self.bye()

    def sleep(self, seconds):
        self.sim.clock.sleep(seconds, self.wake)

    def wake(self):
        self.date = self.sim.now
        self.batch.append(self.jobs[self.i])
        self.i += 1
        self.advance()

    def bye(self):
        self.sim.put(self.sim.platform.master, BYE, None, None)


class TimedMessages:
    """The `Simulation` methods of the timed mode (``server``): Batsim's mailbox, submitters, request-reply actor."""

    # ---- routes -------------------------------------------------------------------------------
    def route(self, src, dst):
        """(links, latency) of the route from `src` to `dst`, each link as the L07 clock takes it: (name, bandwidth,
        latency, whether FATPIPE). Cached: a platform's routes do not change."""
        key = (src, dst)
        route = self.routes.get(key)
        if route is None:
            links, latency = src.route_to(dst)
            fatpipe = self.sg.Link.SharingPolicy.FATPIPE
            route = self.routes[key] = (tuple((link.name, link.bandwidth, link.latency,
                                               link.get_sharing_policy() == fatpipe) for link in links), latency)
        return route

    # ---- the mailbox ----------------------------------------------------------------
    def put(self, src, what, data, resume):
        message = Put(src, what, data, resume)
        if self.round_puts is not None:   # SimGrid handles the round's puts once every actor of it ran
            self.round_puts.append(message)
        else:
            self.enqueue(message)

    def end_round(self):
        puts, self.round_puts = self.round_puts, None
        for message in puts:   # enqueue's work, inline (a run's every message passes here)
            if self.receiving is None and not self.box:
                # start_transfer's common case, inline
                shape = self.message_shapes.get(message.src)
                if shape is not None and (self.clock_transfers or not self.comms_in_flight):
                    self.receiving = message
                    self.clock.send(shape, self.took)
                else:
                    self.start_transfer(message)
            else:
                self.box.append(message)

    def enqueue(self, message):
        if self.receiving is None and not self.box:
            self.start_transfer(message)
        else:
            self.box.append(message)

    def start_transfer(self, message):
        self.receiving = message
        shape = self.message_shapes.get(message.src)
        if shape is not None and (self.clock_transfers or not self.comms_in_flight):   # the common case, at once
            self.clock.send(shape, self.took)
            return
        route = self.route(message.src, self.platform.master)
        if self.comms_in_flight and route[0] and not self.clock_transfers:
            # a job's transfer on SimGrid itself (a workload of Batsim's compute tasks) may share the route
            self.sync_simgrid()
            act = self.sg.Comm.sendto_async(message.src, self.platform.master, 1)
            self.acts.push(act)
            self.act_owner[act] = message
            self.act_earliest[act] = self.now + route[1]
            self.quiet_until = min(self.quiet_until, self.now + route[1])
            self.act_count += 1
        else:
            if shape is None:   # Batsim's 1-byte message from that host: the same task every time
                shape = self.message_shapes[message.src] = self.clock.shape([route + (1.0,)])
            self.clock.send(shape, self.took)

    def transfer_done(self):
        """The server took the message in transfer: handle it, maybe tell the scheduler, take the next one."""
        message = self.receiving   # still busy until its next get: puts made while handling wait in the mailbox
        self.received(message)
        if self.sched_ready and not self.box:
            self.maybe_send()
        if message.resume is not None:
            message.resume()
        self.receiving = None
        if self.box:
            self.start_transfer(self.box.popleft())

    def maybe_send(self):
        """server.cpp's main loop, after each message: tell the scheduler if it is ready and the mailbox empty."""
        if self.sched_ready and not self.box:
            if self.events:
                self.send()
            elif not self.ends_sent and self.simulation_over():
                self.ends_sent = True
                self.emit("SIMULATION_ENDS", {})
                self.send()

    def received(self, message):
        what, data = message.what, message.data
        if what == DECISION:
            self.apply_event(data)
        elif what == COMPLETED:
            self.announce_end(data)
        elif what == SUBMIT:
            for job in data:
                self.submit(job)
        elif what == READY:
            self.sched_ready = True
        elif what == WAITED:
            self.waiters -= 1
            self.emit("REQUESTED_CALL", {})
        elif what == KILLED:
            self.killers -= 1
            self.kills_done(*data)
        elif what == BYE:
            self.submitters_left -= 1
            if self.submitters_left == 0:
                self.next_static = len(self.static)
                self.emit("NOTIFY", {"type": "no_more_static_job_to_submit"})

    def simulation_over(self):
        """Batsim's is_simulation_finished: nothing left to submit, run, wait for or kill."""
        return (self.submitters_left == 0 and not self.registration_open and self.unfinished == 0
                and self.waiters == 0 and self.killers == 0)

    # ---- the request-reply actor -----------------------------------------------------
    def send(self):
        events, self.events = self.events, []
        self.out.checkpoint(self.now)   # the journal holds all up to here
        raw = self.link.exchange(self.encode_message(events), self.now)
        self.messages += 1
        self.sched_ready = False
        self.forget_sent_jobs()
        self.reqrep, self.reqrep_now = self.read_reply(raw)
        self.check_stall(self.reqrep_types)
        self.later.append(self.reqrep_step)   # an actor created now runs after those woken now

    def reqrep_types(self):
        return [str(e.get("type")) if isinstance(e, dict) else "?" for _, e in self.reqrep]

    def reqrep_step(self, woke=False):
        """Send the answer's next decision, or "ready" after the last. protocol.cpp send_message_at_time sleeps
        until the date *once*, then sends: a sleep shorter than SimGrid's 1 ns precision may end before the date
        (worn below 1 ns by a message's step), and the message leaves then (`woke`), not after another sleep."""
        queue = self.reqrep
        master = self.platform.master
        if queue:
            ts, event = queue[0]
            if ts > self.now and not woke:
                self.clock.sleep(ts - self.now, self.reqrep_woke)
                return
            queue.popleft()
            self.put(master, DECISION, event, self.reqrep_step)
            return
        if self.reqrep_now > self.now and not woke:
            self.clock.sleep(self.reqrep_now - self.now, self.reqrep_woke)
            return
        self.put(master, READY, None, None)

    def reqrep_woke(self):
        self.reqrep_step(woke=True)

    # ---- waiters and killers ------------------------------------------------------------
    def start_waiter(self, target):
        self.waiters += 1
        if target > self.now:
            self.clock.sleep(max(target - self.now, WAITER_MIN_SLEEP), self.waiter_done)
        else:   # "Time already reached, skipping sleep" (--lenient-call-me-later only: Batsim aborts before)
            self.later.append(self.waiter_done)

    def waiter_done(self):
        self.put(self.platform.master, WAITED, None, None)

    def start_killer(self, jobs):
        self.killers += 1
        self.later.append(lambda: self.kill_now(jobs))

    def defer(self, ts, event):
        """A decision dated after the answer's now (a batloc extension: Batsim refuses them): sent at its date."""
        self.clock.sleep(ts - self.now, lambda: self.put(self.platform.master, DECISION, event, None))

    def kill_now(self, jobs):
        progress = self.kill_running(jobs)
        self.put(self.platform.master, KILLED, (jobs, progress), None)

    # ---- the run ------------------------------------------------------------------------------
    def run_timed(self):
        self.clock = L07Clock(jobs=len(self.static))
        self.took = self.transfer_done   # bound once: every message's end calls it
        self.message_shapes = {}   # host -> the shape of a message from it to the master (``l07_clock.Shape``)
        # jobs' transfers on the clock too, unless SimGrid runs them (beside Batsim's compute tasks) or rates change
        self.clock_transfers = not self.opt.ptasks and not self.platform.varies
        self.later = deque()     # actors created at this instant: they run after those woken at it
        self.box = deque()
        self.receiving = None
        self.sched_ready = False
        self.ends_sent = False
        self.waiters = self.killers = 0
        self.reqrep, self.reqrep_now = deque(), 0.0
        by_workload = {}
        for job in self.static:
            by_workload.setdefault(job.workload, []).append(job)
        submitters = [Submitter(self, by_workload.get(name, [])) for name in self.workloads]
        self.submitters_left = len(submitters)
        self.round_puts = []   # t = 0: the submitters say hello as the server sends SIMULATION_BEGINS
        for submitter in submitters:
            submitter.start()
        self.emit("SIMULATION_BEGINS", self.begins())
        self.send()
        self.end_round()
        stop = self.stop
        clock = self.clock
        while not (self.ends_sent and self.sched_ready):
            if stop is not None and stop.signum is not None:
                stop.check(self.now)
            if self.later:
                self.run_later()
            if not self.act_count:
                ended = clock.quick_step()   # the common step, at once: run_round's work, inline
                if ended is not None:
                    self.now = clock.now
                    self.round_puts = []
                    for action in ended:
                        action.done()
                    self.end_round()
                    if self.later:
                        self.run_later()
                    if self.progress is not None:
                        self.progress.update(self.now)
                    continue
            delta = clock.next_delta()
            t = INF if delta is None else clock.now + delta
            if self.act_count and self.activities_until(t):
                continue
            if delta is None:
                if self.ends_sent:
                    break
                if self.unfinished == 0 and self.submitters_left == 0 and self.registration_open \
                        and self.sched_ready and not self.box and self.receiving is None:
                    self.registration_never_closed()
                    self.maybe_send()
                    continue
                self.deadlock()
            self.run_round(clock.step(delta), ())
            if self.progress is not None:
                self.progress.update(self.now)

    def activities_until(self, t):
        """Let SimGrid run the jobs' activities (and messages it times) up to `t`; True if one ended first."""
        if t + 1e-9 * (1 + t) < self.quiet_until:
            return False
        clock = self.engine.clock
        try:
            # what SimGrid ends within its precision of `t` ends at that step, before the actions due then
            done = self.acts.wait_any() if t == INF else self.acts.wait_any_for(max(t - clock, 0.0) + 1e-9)
        except self.sg.TimeoutException:
            done = None
        if done is None:
            return False
        ended = [done]
        while self.act_count - len(ended) > 0:
            other = self.acts.test_any()
            if other is None:
                break
            ended.append(other)
        self.run_round(self.clock.step(min(max(self.engine.clock - self.clock.now, 0.0), t - self.clock.now)), ended)
        return True

    def run_round(self, actions, activities):
        """One SimGrid round: the actors woken now, in the order their actions began, their messages after."""
        self.now = self.clock.now
        self.round_puts = []
        for act in activities:
            self.activity_done(act)
        for action in actions:
            action.done()
        self.end_round()
        self.run_later()

    def run_later(self):
        while self.later:
            batch, self.later = self.later, deque()
            self.round_puts = []
            for actor in batch:
                actor()
            self.end_round()


def refuse_gone(job, what, now):
    """Batsim 4.2.1 deletes a job once the message holding its end went out; a decision naming it aborts."""
    raise EngineError(f"{what} at t={now:.6f}: job {job.id!r} ended and the scheduler was already told so; Batsim "
                      f"4.2.1 has deleted it by then and aborts (jobs.cpp: \"Cannot get job '{job.id}': it does not "
                      "exist\")")
