"""Batsim 4.2's numbering (contract §1): compute hosts by name, then storages by name, no master."""

from batloc.platforms.numbering import number_hosts


def test_compute_first_then_storage_each_by_name():
    hosts = [("master", "master"), ("lustre", "storage"), ("n001_mem", "storage"), ("n000_c01", None),
             ("n000_mem", "storage"), ("n001_c00", None), ("n000_c00", "compute")]
    assert number_hosts(hosts) == [
        (0, "n000_c00", "compute"), (1, "n000_c01", "compute"), (2, "n001_c00", "compute"),
        (3, "lustre", "storage"), (4, "n000_mem", "storage"), (5, "n001_mem", "storage")]


def test_names_compare_as_strings_not_numbers():
    # Batsim sorts names, so a10 comes before a2: why the generator zero-pads.
    assert [n for _, n, _ in number_hosts([("a2", None), ("a10", None)])] == ["a10", "a2"]
