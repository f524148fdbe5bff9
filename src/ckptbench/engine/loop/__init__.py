"""The run loop: the runner, its schedule, fixed or automatic repeats in rounds, and stopping early."""
