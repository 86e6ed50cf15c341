"""Batsim 4.2's roles and resource numbering (contract §1), in one place for every reader of a platform.

Roles, as Batsim 4.2.1's ``batsim.cpp`` and ``machines.cpp`` decide them: a
host's ``role`` property (absent or empty: a compute host), to which the
command line adds a role for some hosts by name: ``-m/--master-host NAME``
(default ``master_host``) makes NAME the master, ``-r HOSTS:ROLE`` gives ROLE
to each host of HOSTS. A host that already has a role property and is named
there gets both, comma-joined (``master,master``), which Batsim cannot read and
aborts on; so does any role but ``master``, ``compute_node`` and ``storage``
(batloc also reads its own ``compute``). Exactly one host must be the master.

Numbering: compute hosts come first, ids 0…n-1 in ascending host name order;
storage hosts follow, ids n… in name order as well; the master host gets no
id. pybatsim's stock schedulers allocate consecutive free compute ids, so a
storage numbered between two nodes' cores would split every multi-node
allocation. ``--mmax N`` keeps the first N compute hosts only.
"""

from batloc.reading import excerpt

COMPUTE, STORAGE, MASTER = "compute", "storage", "master"
DEFAULT_MASTER = "master_host"   # Batsim 4.2.1's default for -m/--master-host
# Batsim's role names (permissions.cpp), and batloc's own name for a compute host
KINDS = {"": COMPUTE, "compute_node": COMPUTE, COMPUTE: COMPUTE, STORAGE: STORAGE, MASTER: MASTER}


class RoleError(ValueError):
    """A host's role Batsim 4.2.1 cannot read (it aborts), or no master, or two."""


def kind_of(role):
    """A host's resource kind from its ``role`` property (absent: compute)."""
    if role == MASTER:
        return MASTER
    return STORAGE if role == STORAGE else COMPUTE


def parse_role_maps(texts):
    """``-r`` values (``host1,host2:role``) as {host: role}, later ones winning, as Batsim reads them."""
    roles = {}
    for text in texts or ():
        hosts, sep, role = text.partition(":")
        if not sep or ":" in role:
            raise RoleError(f"-r {excerpt(text)}: a role map reads HOSTS:ROLE with one ':' (e.g. host8:master)")
        for host in hosts.split(","):
            if not host:   # Batsim 4.2.1 gives the role to no host, silently
                raise RoleError(f"-r {excerpt(text)} names no host (HOSTS is a comma-separated list of host names)")
            roles[host] = role
    return roles


# Batsim's command-line options that decide roles, and the keyword of `batsim_roles`/`read_resources` each feeds
_ROLE_FLAGS = {"-m": "master_host", "--master-host": "master_host",
               "-r": "roles", "--add-role-to-hosts": "roles"}


def role_options(argv):
    """The ``-m``/``--master-host`` and ``-r``/``--add-role-to-hosts`` an engine's command line gives (a list
    of words, a whole Batsim command or only its extra arguments), as robin records them in run.json's
    ``platform_options``: ``{"master_host": NAME, "roles": ["HOSTS:ROLE", …]}``, keys only when given (the
    last -m wins, as argparse and Batsim's docopt read it). ``python -m MODULE`` is the interpreter's own -m."""
    found = {}
    words = list(argv)
    i = 0
    while i < len(words):
        word, value = words[i], None
        flag = word.split("=", 1)[0] if word.startswith("--") else word[:2] if word.startswith("-") else word
        if flag in _ROLE_FLAGS and not (flag == "-m" and i and words[i - 1].rsplit("/", 1)[-1].startswith("python")):
            if word.startswith("--") and "=" in word:
                value = word.split("=", 1)[1]
            elif not word.startswith("--") and len(word) > 2:
                value = word[2:]
            elif i + 1 < len(words):
                i += 1
                value = words[i]
            if value is not None:
                if _ROLE_FLAGS[flag] == "master_host":
                    found["master_host"] = value
                else:
                    found.setdefault("roles", []).append(value)
        i += 1
    return found


def role_arguments(options):
    """run.json's ``platform_options`` (``role_options``) as `read_resources`' keywords (master_host, roles);
    RoleError names what cannot be read."""
    options = options or {}
    if not isinstance(options, dict):
        raise RoleError("platform_options is not an object ({'master_host': NAME, 'roles': ['HOSTS:ROLE', ...]})")
    master, roles = options.get("master_host"), options.get("roles") or []
    if master is not None and not isinstance(master, str) or not isinstance(roles, list) \
            or not all(isinstance(r, str) for r in roles):
        raise RoleError("platform_options holds a master_host that is not a name or roles that are not "
                        "'HOSTS:ROLE' strings")
    return {"master_host": master, "roles": parse_role_maps(roles) or None}


def batsim_roles(hosts, master_host=None, roles=None):
    """``hosts``: iterable of (name, role property or None). Returns {name: role} with the command line's roles
    applied as Batsim does, and the name of the master; RoleError names the host Batsim would abort on, and a
    host of ``-r`` the platform does not have (Batsim ignores it silently). ``master_host``: Batsim's -m as
    given, or None when not given (Batsim's default, ``master_host``, applies then)."""
    named = master_host or DEFAULT_MASTER
    given = {named: MASTER}
    given.update(roles or {})
    out, masters = {}, []
    for name, role in hosts:
        if name in given:
            extra = given[name]
            if role is not None:
                if name not in (roles or {}) and master_host is None:
                    how = (f"is the master by its name ({DEFAULT_MASTER!r} is Batsim's default for -m/--master-host, "
                           "given or not)")
                else:
                    how = (f"is also given role {extra!r} on the command line "
                           f"({'-r' if name in (roles or {}) else '-m/--master-host'})")
                raise RoleError(f"host {excerpt(name)} has the property role={excerpt(role)} and {how}: Batsim 4.2.1 reads role "
                                f"{excerpt(role + ',' + extra)} and aborts; drop one of them")
            role = extra
        if (role or "") not in KINDS:
            raise RoleError(f"host {excerpt(name)} has role {excerpt(role)}: Batsim 4.2.1 knows only master, compute_node and "
                            "storage (no role: compute_node)")
        if KINDS[role or ""] == MASTER:
            masters.append(name)
        out[name] = role
    unknown = sorted(set(roles or {}) - set(out))
    if unknown:
        raise RoleError(f"-r names host {excerpt(unknown[0])}, which the platform does not have"
                        + (f" ({len(unknown)} such hosts)" if len(unknown) > 1 else "")
                        + " (Batsim 4.2.1 ignores it silently)")
    if not masters:
        raise RoleError(f"no master host: no host has the property role=master and none is named {excerpt(named)} "
                        "(Batsim's -m/--master-host, default master_host)" + _master_candidates(out))
    if len(masters) > 1:
        raise RoleError(f"hosts {', '.join(sorted(masters))} are all masters; Batsim 4.2.1 needs exactly one")
    return out, masters[0]


def _master_candidates(roles) -> str:
    """The hosts a user may have meant as the master, named so that the one line says what would do."""
    named = sorted(name for name in roles if "master" in name.lower())
    if not named:
        return "; name one of its hosts with -m, or give it the property role=master"
    shown = ", ".join(named[:5]) + (f" and {len(named) - 5} more" if len(named) > 5 else "")
    return (f"; {'a host is' if len(named) == 1 else 'hosts are'} named like one: {shown} "
            f"(-m {named[0]} makes it the master, as on Batsim)")


def number_hosts(hosts, limit=0):
    """``hosts``: iterable of (name, role). Returns [(id, name, kind)] in id order, master left out; with
    ``limit`` > 0 only the first ``limit`` compute hosts by name (Batsim's --mmax)."""
    compute, storage = [], []
    for name, role in hosts:
        kind = kind_of(role)
        if kind == COMPUTE:
            compute.append(name)
        elif kind == STORAGE:
            storage.append(name)
    compute.sort()
    if limit:
        if limit > len(compute):
            raise RoleError(f"cannot keep {limit} compute hosts (--mmax): the platform has {len(compute)}")
        compute = compute[:limit]
    ordered = [(n, COMPUTE) for n in compute] + [(n, STORAGE) for n in sorted(storage)]
    return [(rid, name, kind) for rid, (name, kind) in enumerate(ordered)]
