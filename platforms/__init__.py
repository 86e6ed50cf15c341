"""batloc.platforms: SimGrid platform files in batloc's layout (docs/contract.md §1, §6).

`generator` writes a cluster from a `PlatformSpec`; `rackham` holds the four
committed Rackham variants (`*.xml` here); `reader` summarises any platform
following the layout; `cli` is `batloc platform ...`.
"""
