"""The platform as the schedulers see it (locality/platform_view.py), from SIMULATION_BEGINS' resources."""

import pytest

from batloc.locality.platform_view import PlatformError, PlatformView
from batloc.testing.dry_run import make_resources


def view(nodes, **kw):
    return PlatformView.from_resources(*make_resources(nodes, **kw))


def test_node_order_is_sorted_names_and_ids_come_from_resources():
    pv = view({"n010": 2, "n002": 3})
    assert [n.name for n in pv.nodes] == ["n002", "n010"]
    assert pv.nodes[0].core_ids == (0, 1, 2) and pv.nodes[1].core_ids == (3, 4)
    assert pv.max_cores == 3


def test_memory_bandwidth_and_lustre_come_from_the_storages():
    pv = view({"n000": 2, "n001": 2}, memory_bytes={"n000": 64e9, "n001": 128e9}, bandwidth=5e8)
    assert list(pv.memory) == [64e9, 128e9] and list(pv.bandwidth) == [5e8, 5e8]
    assert pv.lustre_id == 4 and [n.mem_id for n in pv.nodes] == [5, 6]
    assert pv.node_of_core == {0: 0, 1: 0, 2: 1, 3: 1}
    assert PlatformView.from_resources(*make_resources({"n000": 1}), bandwidth_override=2e9).bandwidth[0] == 2e9


def test_a_file_larger_than_every_memory_is_named_with_the_largest():
    pv = view({"n000": 1, "n001": 1}, memory_bytes={"n000": 64e9, "n001": 128e9})
    assert pv.misfit("w0!1", "A", 128e9) is None
    assert pv.misfit("w0!2", "B", 200e9) == ("job w0!2 rejected: its file B (2e+11 bytes) exceeds the memory "
                                             "of every node (largest 1.28e+11 bytes)")


@pytest.mark.parametrize("spoil, message", [
    # a core without `node` is a node of its own (Batsim's reading), which then lacks a memory
    (lambda c, s: c[0]["properties"].pop("node"), "node 'n000_c00' has cores but no storage 'n000_c00_mem'"),
    (lambda c, s: s.pop(0), "no storage host named 'lustre'"),
    (lambda c, s: s.pop(1), "node 'n000' has cores but no storage 'n000_mem'"),
    (lambda c, s: s[1]["properties"].update(memory_bytes="nan"), "memory_bytes must be a finite number > 0"),
    (lambda c, s: s[1]["properties"].pop("bandwidth"), "lacks a numeric 'bandwidth'"),
])
def test_a_platform_off_the_contract_is_one_error_saying_what_is_missing(spoil, message):
    compute, storage = make_resources({"n000": 1, "n001": 1})
    spoil(compute, storage)
    with pytest.raises(PlatformError, match=message):
        PlatformView.from_resources(compute, storage)


def test_a_plain_batsim_platform_is_one_node_per_host_without_memory():
    # Batsim's own platforms: compute hosts without batloc's properties, no node memory, no lustre
    compute = [{"id": i, "name": name, "state": "idle", "properties": {}} for i, name in enumerate(["a0", "a1", "b0"])]
    pv = PlatformView.from_resources(compute, [{"id": 3, "name": "pfs", "properties": {"role": "storage"}}])
    assert pv.memoryless and pv.lustre_id is None
    assert [(n.name, n.core_ids, n.mem_id) for n in pv.nodes] == [("a0", (0,), None), ("a1", (1,), None),
                                                                  ("b0", (2,), None)]
    # hosts sharing a `node` property are one node, memory or not
    compute[1]["properties"]["node"] = "a0"
    assert [(n.name, n.core_ids) for n in PlatformView.from_resources(compute, []).nodes] == [("a0", (0, 1)),
                                                                                           ("b0", (2,))]


def test_a_platform_without_compute_host_says_so():
    with pytest.raises(PlatformError, match=r"^the platform has no compute host \(every host is the master or a "
                                            r"storage\)$"):
        PlatformView.from_resources([], [{"id": 0, "name": "lustre", "properties": {}}])
