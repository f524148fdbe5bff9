"""The default thresholds of a decision, apart from the numerics (the command line shows them in its help)."""

DEFAULT_THRESHOLD = 0.10
DEFAULT_ALPHA = 0.05  # the whole run's: 95% intervals, divided over its looks
