"""Object stores as checkpoint targets: one ObjectStore per URL scheme (gs, s3, and any
registered), local emulators, bounded client calls, placement checks, the shaped link, prices."""

from ckptbench.storage._cost import PRICE_TABLE_ENV, checkpoint_cost, price_table
from ckptbench.storage._directory import DirectoryStore
from ckptbench.storage._emulator import (
    DEFAULT_BUCKET,
    Emulator,
    emulator_kinds,
    running_emulator,
    shell_exports,
    start_emulator,
    stop_emulator,
)
from ckptbench.storage._kvstore import (
    StoreRoofline,
    kvstore_spec,
    measure_store,
    payload,
    read_kvstore,
    write_kvstore,
)
from ckptbench.storage._link import START_TIMEOUT_ENV as LINK_START_TIMEOUT_ENV
from ckptbench.storage._link import STATS_PATH as LINK_STATS_PATH
from ckptbench.storage._link import STATS_URL_ENV as LINK_STATS_URL_ENV
from ckptbench.storage._link import Link, LinkShape, link_env, link_upstream, parse_link, start_link
from ckptbench.storage._location import read_location, write_location
from ckptbench.storage._objects import (
    check_store,
    delete_prefix,
    list_objects,
    read_object,
    upload_directory,
    write_object,
)
from ckptbench.storage._placement import clear_location, empty_location, misplaced_bytes
from ckptbench.storage._registry import (
    is_store_url,
    orbax_write_problem,
    parse_store_url,
    register_store,
    schemes,
    store_for,
    unregister_store,
    url_forms,
    uses_fsspec,
)
from ckptbench.storage._store import ObjectStore, Prices, StoredObject
from ckptbench.storage._url import StoreURL

__all__ = [
    "DEFAULT_BUCKET",
    "LINK_START_TIMEOUT_ENV",
    "LINK_STATS_PATH",
    "LINK_STATS_URL_ENV",
    "PRICE_TABLE_ENV",
    "DirectoryStore",
    "Emulator",
    "Link",
    "LinkShape",
    "ObjectStore",
    "Prices",
    "StoreRoofline",
    "StoreURL",
    "StoredObject",
    "check_store",
    "checkpoint_cost",
    "clear_location",
    "delete_prefix",
    "emulator_kinds",
    "empty_location",
    "is_store_url",
    "kvstore_spec",
    "link_env",
    "link_upstream",
    "list_objects",
    "measure_store",
    "misplaced_bytes",
    "orbax_write_problem",
    "parse_link",
    "parse_store_url",
    "payload",
    "price_table",
    "read_kvstore",
    "read_location",
    "read_object",
    "register_store",
    "running_emulator",
    "schemes",
    "shell_exports",
    "start_emulator",
    "start_link",
    "stop_emulator",
    "store_for",
    "unregister_store",
    "upload_directory",
    "url_forms",
    "uses_fsspec",
    "write_kvstore",
    "write_location",
    "write_object",
]
