"""I/O-aware pack scheduling, packs in random order (same as `io_pack.py -o '{"order": "random"}'`)."""

from batloc.schedulers.io_pack import Io_pack


class Io_pack_random(Io_pack):
    policy = "io_pack_random"
    forced_options = {"order": "random"}
