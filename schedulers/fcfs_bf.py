"""FCFS-BF: FCFS with conservative backfilling (same as `fcfs.py -o '{"backfilling": true}'`)."""

from batloc.schedulers.fcfs import Fcfs


class Fcfs_bf(Fcfs):
    forced_options = {"backfilling": True}
