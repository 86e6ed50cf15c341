"""I/O-aware pack scheduling, packs in char order (same as `io_pack.py -o '{"order": "char"}'`)."""

from batloc.schedulers.io_pack import Io_pack


class Io_pack_char(Io_pack):
    policy = "io_pack_char"
    forced_options = {"order": "char"}
