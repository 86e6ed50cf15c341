"""The `batloc` umbrella command and its `demo`; robin is its own package (`batloc.robin`)."""
