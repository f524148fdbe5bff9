"""Object stores as checkpoint targets: URLs, local emulators, bounded client calls, placement checks."""

from ckptbench.storage._emulator import (
    Emulator,
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
from ckptbench.storage._location import read_location, write_location
from ckptbench.storage._objects import (
    StoredObject,
    check_store,
    delete_prefix,
    list_objects,
    read_object,
    upload_directory,
    write_object,
)
from ckptbench.storage._url import StoreURL, is_store_url, parse_store_url

from ckptbench.storage._cost import checkpoint_cost
from ckptbench.storage._link import Link, link_env, parse_link, start_link
from ckptbench.storage._objects import endpoint_of
from ckptbench.storage._placement import clear_location, misplaced_bytes

__all__ = [
    "Link",
    "checkpoint_cost",
    "clear_location",
    "endpoint_of",
    "link_env",
    "misplaced_bytes",
    "parse_link",
    "start_link",
    "Emulator",
    "StoreRoofline",
    "StoreURL",
    "StoredObject",
    "check_store",
    "delete_prefix",
    "is_store_url",
    "kvstore_spec",
    "list_objects",
    "measure_store",
    "parse_store_url",
    "payload",
    "read_kvstore",
    "read_location",
    "read_object",
    "running_emulator",
    "shell_exports",
    "start_emulator",
    "stop_emulator",
    "upload_directory",
    "write_kvstore",
    "write_location",
    "write_object",
]
