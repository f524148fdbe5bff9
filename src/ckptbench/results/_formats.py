"""The export formats, apart from the exporter: the command line's parser lists them without importing the records."""

FORMATS = ("csv", "parquet")
