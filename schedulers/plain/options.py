"""Options of the plain schedulers, as passed with pybatsim's ``-o '{...}'`` JSON.

Each scheduler declares its options as {name: (default, check)}; ``check``
returns an error text or None. Unknown names and bad values are one-line
errors naming the option and the known ones.
"""

from types import SimpleNamespace

from batloc.schedulers.boundary import OptionsError, finite_number


def number(minimum=None, above=None, integer=False):
    wanted = ("an integer" if integer else "a finite number") + (
        f" >= {minimum}" if minimum is not None else f" > {above}" if above is not None else "")

    def check(value):
        if (not finite_number(value, integer) or (minimum is not None and value < minimum)
                or (above is not None and value <= above)):
            return wanted
        return None
    return check


def optional(check):
    return lambda value: None if value is None else check(value)


def boolean(value):
    return None if isinstance(value, bool) else "true or false"


def one_of(*choices):
    return lambda value: None if value in choices else f"one of {', '.join(map(str, choices))}"


def text(value):
    return None if isinstance(value, str) else "a string"


COMMON = {"export_prefix": (None, optional(text))}


def parse_options(raw, spec, who):
    """`raw` (dict) checked against `spec` (plus COMMON) → a namespace of every option."""
    spec = {**COMMON, **spec}
    raw = dict(raw or {})
    unknown = sorted(set(raw) - set(spec))
    if unknown:
        raise OptionsError(f"{who}: unknown option(s) {', '.join(map(repr, unknown))}; "
                           f"known options: {', '.join(sorted(spec))}")
    values = {}
    for name, (default, check) in spec.items():
        value = raw.get(name, default)
        problem = check(value)
        if problem:
            raise OptionsError(f"{who}: option {name!r} must be {problem}, got {value!r}")
        values[name] = value
    return SimpleNamespace(**values)
