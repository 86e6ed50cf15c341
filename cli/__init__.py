"""Command-line entry points: the `batloc` umbrella command and `robin`."""
