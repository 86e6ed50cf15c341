"""EFT-BF: EFT with conservative backfilling (same as `eft.py -o '{"backfilling": true}'`)."""

from batloc.schedulers.eft import Eft


class Eft_bf(Eft):
    forced_options = {"backfilling": True}
