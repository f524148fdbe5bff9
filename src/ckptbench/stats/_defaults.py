"""The default thresholds of a decision and the looks of adaptive repeats, apart from the numerics
(the command line shows them in its help; `plan` counts the rounds without numpy)."""

DEFAULT_THRESHOLD = 0.10
DEFAULT_ALPHA = 0.05  # the whole run's: 95% intervals, divided over its looks

# Rounds after which adaptive repeats look at the data: the first where the
# per-look level can be reached, then about 1.5x apart; a run's budget may stop it earlier.
AUTO_LOOKS = (8, 12, 18, 27, 40, 60)
