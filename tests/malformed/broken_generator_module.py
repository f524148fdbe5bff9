raise RuntimeError("this module fails on import")
