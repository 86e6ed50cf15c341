"""I/O-aware pack scheduling, packs in max order (same as `io_pack.py -o '{"order": "max"}'`)."""

from batloc.schedulers.io_pack import Io_pack


class Io_pack_max(Io_pack):
    policy = "io_pack_max"
    forced_options = {"order": "max"}
