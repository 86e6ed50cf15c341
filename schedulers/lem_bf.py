"""LEM-BF: LEM with conservative backfilling (same as `lem.py -o '{"backfilling": true}'`)."""

from batloc.schedulers.lem import Lem


class Lem_bf(Lem):
    forced_options = {"backfilling": True}
