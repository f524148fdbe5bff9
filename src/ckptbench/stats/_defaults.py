"""The default thresholds of a decision and the looks of adaptive repeats, apart from the numerics
(the command line shows them in its help; `plan` counts the rounds without numpy)."""

DEFAULT_THRESHOLD = 0.10
DEFAULT_ALPHA = 0.05  # the whole run's chance of a wrong verdict: 95% (90% for equivalence) at one look, divided over looks

# Rounds after which adaptive repeats look at the data: from the first where an early
# look's level can be reached, about 1.5x apart; the last is the most rounds a run takes
# (its time budget usually stops it first).
AUTO_LOOKS = (10, 15, 22, 33, 50, 75, 110, 160, 240)

# The fewest readings of a host-memory figure the memory pass takes (stats/_settled.py): `plan` states the
# pass's runs without numpy.
MIN_READINGS = 3
