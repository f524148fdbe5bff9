"""The built-in object stores, one module each; every module here defines `STORE`, registered by
its scheme on first use (storage/_registry.py). A new store is a new module here."""
