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


def test_the_master_is_found_as_batsim_finds_it():
    import pytest
    from batloc.platforms.numbering import RoleError, batsim_roles, parse_role_maps

    # by name (Batsim's -m default), by role, by -m, and -r roles
    assert batsim_roles([("master_host", None), ("a", None)])[1] == "master_host"
    assert batsim_roles([("m", "master"), ("a", None)])[1] == "m"
    assert batsim_roles([("boss", None), ("a", None)], master_host="boss")[1] == "boss"
    roles, master = batsim_roles([("h0", None), ("h1", None), ("m", "master")], roles=parse_role_maps(["h1:storage"]))
    assert (roles["h1"], master) == ("storage", "m")
    # Batsim reads role "master,master" and aborts: refused, as no master or two
    with pytest.raises(RoleError, match="reads role 'master,master' and aborts"):
        batsim_roles([("master_host", "master"), ("a", None)])
    with pytest.raises(RoleError, match="no master host"):
        batsim_roles([("a", None)])
    with pytest.raises(RoleError, match="are all masters"):
        batsim_roles([("m1", "master"), ("m2", "master")])
    with pytest.raises(RoleError, match="knows only master, compute_node and storage"):
        batsim_roles([("m", "master"), ("a", "gpu")])


def test_a_role_map_for_no_host_or_a_host_the_platform_lacks_is_refused():
    import pytest
    from batloc.platforms.numbering import RoleError, batsim_roles, parse_role_maps

    # Batsim 4.2.1 ignores both silently: the role the user meant to give is given to no host
    with pytest.raises(RoleError, match=r"-r ':master' names no host"):
        parse_role_maps([":master"])
    with pytest.raises(RoleError, match=r"-r names host 'nosuch', which the platform does not have"):
        batsim_roles([("m", "master"), ("a", None)], roles=parse_role_maps(["nosuch:storage"]))


def test_a_master_host_with_role_master_is_not_said_to_come_from_m_when_m_was_not_given():
    import pytest
    from batloc.platforms.numbering import RoleError, batsim_roles

    hosts = [("master_host", "master"), ("a", None)]
    with pytest.raises(RoleError, match=r"is the master by its name \('master_host' is Batsim's default") as default:
        batsim_roles(hosts)
    assert "-m/--master-host)" not in str(default.value)
    with pytest.raises(RoleError, match=r"is also given role 'master' on the command line \(-m/--master-host\)"):
        batsim_roles(hosts, master_host="master_host")
