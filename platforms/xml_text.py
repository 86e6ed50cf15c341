"""A platform file's text as SimGrid reads it (a leaf module: the engine reads it without the schedulers' view).

SimGrid's parser accepts a file that starts with blank lines before ``<?xml``
(Batsim 4.2.1's ``properties_example.xml`` does); Python's XML parser refuses
the XML declaration anywhere but at the very start, so it is given the text
from ``<?xml`` on.
"""


def platform_text(path):
    with open(path, "rb") as f:
        raw = f.read()
    return raw.lstrip() if raw.lstrip().startswith(b"<?xml") else raw
