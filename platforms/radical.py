"""SimGrid's ``<cluster>`` and ``<cabinet>`` radicals, and the bound on the hosts a platform may declare.

A radical ("0-511", "1,3,5-7") gives the numbers of a cluster's hosts, each
named prefix + number + suffix. It is counted before it is expanded: a
cluster of two billion hosts, which SimGrid would build silently for as long
as the memory lasts, is refused in one line naming the file and the bound
(``batloc.reading.PLATFORM_HOSTS``), by the engine before SimGrid sees the file
and by every tool that reads a platform (``reader``).
"""

from batloc.reading import PLATFORM_HOSTS

CLUSTERS = ("cluster", "cabinet")


def ranges(text):
    """The (first, last) host numbers of a radical; ValueError for a part that is not a number or a range."""
    out = []
    for part in text.split(","):
        lo, _, hi = part.strip().partition("-")
        out.append((int(lo), int(hi or lo)))
    return out


def numbers(text):
    """Every host number of a radical, in its order (call `check_count` first: this expands it)."""
    return [n for lo, hi in ranges(text) for n in range(lo, hi + 1)]


def host_count(elements):
    """How many hosts these XML elements declare: one per <host>, a radical's count per <cluster>/<cabinet>."""
    count = 0
    for element in elements:
        if element.tag == "host":
            count += 1
        elif element.tag in CLUSTERS:
            count += sum(max(hi - lo + 1, 0) for lo, hi in ranges(element.get("radical", "")))
    return count


def check_count(path, count):
    """ValueError naming the file and the bound if a platform declares more hosts than batloc loads."""
    if count > PLATFORM_HOSTS:
        raise ValueError(f"{path}: the platform declares {count} hosts, more than {PLATFORM_HOSTS}, the bound "
                         "batloc loads (Rackham has 10 207): not loaded")
