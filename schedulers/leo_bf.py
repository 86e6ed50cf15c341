"""LEO-BF: LEO with conservative backfilling (same as `leo.py -o '{"backfilling": true}'`)."""

from batloc.schedulers.leo import Leo


class Leo_bf(Leo):
    forced_options = {"backfilling": True}
