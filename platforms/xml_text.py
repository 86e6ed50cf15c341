"""A platform file's text as SimGrid reads it (a leaf module: the engine reads it without the schedulers' view).

SimGrid's parser accepts a file that starts with blank lines before ``<?xml``
(Batsim 4.2.1's ``properties_example.xml`` does); Python's XML parser refuses
the XML declaration anywhere but at the very start, so it is given the text
from ``<?xml`` on.


Read within its bound (``batloc.reading``: a regular file, ``PLATFORM_BYTES``
at most, no byte order mark, which SimGrid cannot read): ``Refused`` (a
ValueError) names the file and the bound.
"""

import re

from batloc.reading import PLATFORM_BYTES, read_bytes

# SimGrid 3.34's parser (flexml) reads a platform only after this declaration, and stops before anything else
# with a message that hides why ("Unexpected character `<' in prolog", "Bad declaration <!DOCTYPE"); Batsim 4.2.1
# too. Python's parser needs none, so batloc's readers look for it themselves.
DOCTYPE = '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">'
# the two locations SimGrid's parser accepts (its surfxml lexer), in either quotes
_DOCTYPE = re.compile(rb"<!DOCTYPE\s+platform\s+SYSTEM\s+([\"'])(https://simgrid\.org/simgrid\.dtd|"
                      rb"http://simgrid\.gforge\.inria\.fr/simgrid/simgrid\.dtd)\1\s*>")


def doctype_missing(path, text):
    """The one-line reason SimGrid will refuse the platform `text` (bytes) for lack of its DOCTYPE, or None."""
    start = text.find(b"<platform")
    if _DOCTYPE.search(text[:start if start >= 0 else 65536]):
        return None
    return (f"{path}: no line {DOCTYPE} before <platform>: SimGrid (and Batsim 4.2.1) reads a platform only after "
            "it (add it after the <?xml ...?> line)")


def platform_text(path):
    raw = read_bytes(path, PLATFORM_BYTES, "platform")
    return raw.lstrip() if raw.lstrip().startswith(b"<?xml") else raw
