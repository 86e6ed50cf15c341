"""SA, the Switching Algorithm (Khanna et al. §5), in immediate mode.

MCT balances the load, MET exploits locality; SA uses MET until the load
becomes too unbalanced, then MCT until it is balanced again. Before each
mapping:

    load_k = max(0, ready_k - now)          (ready_k: end of k's last reservation)
    ib     = min_k load_k / max_k load_k    (0/0 counts as 1: balanced)
    mode MCT and ib >= h  ->  MET;   mode MET and ib < l  ->  MCT
    then map the job as the mode does.      (starts in MCT; l = 0.3, h = 0.7)
"""

from batloc.schedulers.filesharing.immediate import ImmediateScheduler
from batloc.schedulers.mct import mct_node
from batloc.schedulers.met import met_node


def balance_index(loads):
    high = float(loads.max())
    return 1.0 if high == 0 else float(loads.min()) / high


class Sa(ImmediateScheduler):
    policy_name = "SA"
    accepted_options = ("l", "h")

    def setup(self):
        super().setup()
        self.mode = "MCT"

    def choose(self, job, now):
        ib = balance_index(self.loads(now))
        if self.mode == "MCT" and ib >= self.opts.h:
            self.mode = "MET"
        elif self.mode == "MET" and ib < self.opts.l:
            self.mode = "MCT"
        return (met_node if self.mode == "MET" else mct_node)(self, job, now)
