"""OUT and the checkpoints' places: the output directory, each run's checkpoint location, and the disk a suite needs."""
