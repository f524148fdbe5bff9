"""Host memory: whether a suite's data fits, and the memory pass that measures each run's host memory in a fresh process."""
