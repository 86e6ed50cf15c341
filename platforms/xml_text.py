"""A platform file's text as SimGrid reads it (a leaf module: the engine reads it without the schedulers' view).

SimGrid's parser accepts a file that starts with blank lines before ``<?xml``
(Batsim 4.2.1's ``properties_example.xml`` does); Python's XML parser refuses
the XML declaration anywhere but at the very start, so it is given the text
from ``<?xml`` on.


Read within its bound (``batloc.reading``: a regular file, ``PLATFORM_BYTES``
at most, no byte order mark, which SimGrid cannot read): ``Refused`` (a
ValueError) names the file and the bound.
"""

from batloc.reading import PLATFORM_BYTES, read_bytes


def platform_text(path):
    raw = read_bytes(path, PLATFORM_BYTES, "platform")
    return raw.lstrip() if raw.lstrip().startswith(b"<?xml") else raw
