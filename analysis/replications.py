"""The file-sharing family's replications (JDP+DLL) as events of `batloc validate`'s memory replay.

A replication is a staging job ``rep-<file>-<node>-<n>`` (schedulers/filesharing/state.py; n counts
the replications of the run) that holds no cores and has no decision-log row. The scheduler claims the
node's memory for it when DLL decides it (``FileSharingState.replicate``: the file held as by a user
from then, evicting to make room) and releases that use when the staging completes (loaded, unused).
jobs.csv gives only the staging's issue, which is later than that booking when the node's link was busy.

DLL decides at a job's submission (schedulers/jdp_dll.py): the job is mapped to a node (the node of
its decision-log row: it starts where it was mapped) and c(node, file) reaches the threshold. So the
bookings are the instants at which those counts, replayed over the jobs in submission order, reach the
threshold. The threshold (an option the records do not hold) is the one from 1 to ``MAX_THRESHOLD`` for
which every replication of a file matches its own such instant, in order, at or before its issue and in
the order of n, with the fewest instants left without a replication (none at the run's threshold unless
every node held the file then; a lower one leaves more; on a tie the default, 2). Without one (a file
every node held when its count reached the threshold gets no replication, which this matching cannot
tell), a replication is booked at the last submission of a job reading its file at or before its issue:
its booking whenever it was issued at once.
"""

from bisect import bisect_right

from batloc.locality.staging import STAGE_WORKLOAD
from batloc.locality.workflow import job_files

PREFIX = "rep-"
MAX_THRESHOLD = 8
DEFAULT_THRESHOLD = 2       # schedulers/filesharing/options.py
SLACK = 1e-6


def parse(job_id, node_names):
    """(file, node, n) of a replication's job id, or None; node names may hold '-' (the longest that fits)."""
    if not job_id.startswith(PREFIX) or job_id.count("-") < 3:
        return None
    head, n = job_id[len(PREFIX):].rsplit("-", 1)
    names = [name for name in node_names if head.endswith("-" + name) and len(head) > len(name) + 1]
    if not names or not n.isdigit():
        return None
    node = max(names, key=len)
    return head[:-len(node) - 1], node, int(n)


def file_of(job_id, files):
    """The file a replication ``rep-<file>-<node>-<n>`` copies, given the run's file ids, or None: the longest id
    followed by '-' (node names and file ids may both hold '-', so the id cannot be cut by counting dashes)."""
    if not job_id.startswith(PREFIX):
        return None
    body = job_id[len(PREFIX):]
    cut = body.rfind("-")
    while cut > 0:
        cut = body.rfind("-", 0, cut)
        if cut > 0 and body[:cut] in files:
            return body[:cut]
    return None


def _main_file(job):
    """The file a policy of the family sees: the first of the largest (schedulers/admission.py)."""
    files = job_files(job)
    return max(files, key=lambda fs: fs[1])[0] if files else None


def _threshold_instants(rows, jobs, decisions, threshold):
    """file -> the submission instants at which a mapping count c(node, file) reached `threshold`."""
    node_of = {d["job_id"].split("!", 1)[-1]: d["node"] for d in decisions}
    order = {jid: i for i, jid in enumerate(jobs)}
    mapped = sorted((r["_submit"], order[r["job_id"]], r["job_id"]) for r in rows
                    if r["workload_name"] != STAGE_WORKLOAD and r["job_id"] in order and r["job_id"] in node_of)
    counts, instants = {}, {}
    for t, _, jid in mapped:
        f = _main_file(jobs[jid])
        if f is None:
            continue
        key = (node_of[jid], f)
        counts[key] = counts.get(key, 0) + 1
        if counts[key] >= threshold:
            counts[key] = 0
            instants.setdefault(f, []).append(t)
    return instants


def _match(reps, instants):
    """({n: booking}, instants left without a replication) when each file's replications take its instants
    in order (each at or before its issue, bookings in the order of n), else None."""
    booked, used = {}, {}
    for n, issued, file in reps:
        times, i = instants.get(file, []), used.get(file, 0)
        if i >= len(times) or times[i] > issued + SLACK:
            return None
        booked[n], used[file] = times[i], i + 1
    ordered = [booked[n] for n, _, _ in reps]
    if any(a > b for a, b in zip(ordered, ordered[1:])):
        return None
    return booked, sum(len(times) for times in instants.values()) - len(reps)


def bookings(rows, jobs, decisions, reps):
    """{n: booking instant} of the replications `reps` ((n, issue, file), in the order of n)."""
    matches = [(*m, t) for t in range(1, MAX_THRESHOLD + 1)
               if (m := _match(reps, _threshold_instants(rows, jobs, decisions, t))) is not None]
    if matches:
        # the fewest left; among those DLL's default threshold, else the lowest
        return min(matches, key=lambda m: (m[1], m[2] != DEFAULT_THRESHOLD, m[2]))[0]
    submitted = {}
    workload_rows = {r["job_id"]: r for r in rows if r["workload_name"] != STAGE_WORKLOAD}
    for jid, job in jobs.items():
        r = workload_rows.get(jid)
        for f, _ in job_files(job) if r is not None else ():
            submitted.setdefault(f, []).append(r["_submit"])
    booked = {}
    for n, issued, file in reps:
        times = sorted(submitted.get(file, []))
        i = bisect_right(times, issued + SLACK)
        booked[n] = times[i - 1] if i else issued
    return booked


def replication_events(rows, jobs, decisions, memories):
    """Replay events (time, order, kind, payload) of the replications in jobs.csv `rows`: a booking
    ("replica", order 2: after the ends of its instant, before its starts, as a submission is) and,
    once its staging ended, its load done and its use released ("replica loaded", order 0)."""
    found = []
    for r in rows:
        if r["workload_name"] == STAGE_WORKLOAD and r["job_id"].startswith(PREFIX):
            where = parse(r["job_id"], memories)
            if where is not None:
                found.append((where[2], r, where[0], where[1]))
    if not found:
        return []
    found.sort(key=lambda x: x[0])
    booked = bookings(rows, jobs, decisions, [(n, r["_submit"], file) for n, r, file, _ in found])
    sizes = {}
    for job in jobs.values():
        for f, size in job_files(job):
            sizes.setdefault(f, size)
    events = []
    for n, r, file, node in found:
        finish = r.get("_finish") if r["starting_time"] not in ("", "-1") else None
        events.append((booked[n], 2, "replica", (node, file, sizes.get(file, 0.0), finish)))
        if finish is not None:
            events.append((finish, 0, "replica loaded", (node, file)))
    return events
