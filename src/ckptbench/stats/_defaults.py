"""The default thresholds of a comparison, apart from the numerics (the command line shows them in its help)."""

DEFAULT_THRESHOLD = 0.10  # a relative change below this is "same"
DEFAULT_ALPHA = 0.01  # the significance level of a difference
CONFIDENCE_LEVEL = 0.95  # of the intervals shown
