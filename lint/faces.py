"""An import-linter contract: a package is used through its face.

A module outside package P may import `P` (its `__init__`, the names it
offers) but never one of P's private modules (`P._x`). import-linter's own
`protected` contract cannot say "every private module of P" without listing
them, and a list goes stale the day a module is added.
"""

from __future__ import annotations

from grimp import ImportGraph
from importlinter import Contract, ContractCheck, fields, output


class FacesContract(Contract):
  """Configuration: `packages`, the packages whose private modules only they may import."""

  type_name = "faces"
  packages = fields.ListField(subfield=fields.StringField())

  def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
    broken = []
    for package in self.packages:  # type: ignore[attr-defined]
      for module in sorted(graph.find_descendants(package)):
        if not any(part.startswith("_") for part in module[len(package) + 1:].split(".")):
          continue
        for importer in sorted(graph.find_modules_that_directly_import(module)):
          if importer == package or importer.startswith(package + "."):
            continue
          lines = [d["line_number"] for d in graph.get_import_details(importer=importer, imported=module)]
          broken.append((importer, module, lines))
    return ContractCheck(kept=not broken, metadata={"broken": broken})

  def render_broken_contract(self, check: ContractCheck) -> None:
    for importer, module, lines in check.metadata["broken"]:
      where = ", ".join(f"l.{n}" for n in lines)
      output.print_error(f"{importer} ({where}) imports {module}: import it from its package's face")
      output.new_line()
