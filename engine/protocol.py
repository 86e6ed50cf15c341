"""Reading and writing Batsim messages: JSON bytes on the wire, nothing else.

orjson when available (several times faster on the many small messages of a
run), the standard library otherwise; both give the same numbers.
"""

try:
    import orjson

    def encode(message):
        return orjson.dumps(message)

    decode = orjson.loads
except ImportError:  # pragma: no cover - orjson is a dependency, this keeps the engine usable without it
    import json

    def encode(message):
        return json.dumps(message, separators=(",", ":")).encode()

    decode = json.loads
