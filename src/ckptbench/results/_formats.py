"""The export formats, apart from the exporter: the command line's parser lists them without importing the records."""

FORMATS = ("csv", "parquet")  # a table: a row per run x metric
# A benchmark x metric's repeats, in the files other tools read: pyperf's JSON, and
# benchmark-action/github-action-benchmark's custom list.
BENCHMARK_FORMATS = ("pyperf", "github-action-benchmark")
