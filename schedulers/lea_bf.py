"""LEA-BF: LEA with conservative backfilling (same as `lea.py -o '{"backfilling": true}'`)."""

from batloc.schedulers.lea import Lea


class Lea_bf(Lea):
    forced_options = {"backfilling": True}
