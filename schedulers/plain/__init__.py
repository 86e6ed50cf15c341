"""What the schedulers without input files share: pybatsim callbacks, options, one-line fatal errors."""
