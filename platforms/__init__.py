"""batloc.platforms: SimGrid platform files in batloc's layout (docs/contract.md §1, §6).

`generator` writes a cluster from a `PlatformSpec`; `rackham` holds the four
committed Rackham variants (`*.xml` here); `reader` is the one reader of
platform files (Batsim resources in Batsim 4.2's `numbering`, and the
schedulers' platform view); `cli` is `batloc platform ...`.
"""
