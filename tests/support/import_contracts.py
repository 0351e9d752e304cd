"""An import-linter contract type of the project's own (``pyproject.toml``: ``contract_types``): modules that only
some of the app's modules may import directly, parts of an external package included (``sqlalchemy.dialects``),
which the built-in contracts cannot name: they see an external package as one module."""

from __future__ import annotations

import re
from typing import Any, cast

from grimp import ImportGraph
from importlinter import Contract, ContractCheck, fields, output

_IMPORT = re.compile(r"import\s+(?P<names>.+)")
_FROM = re.compile(r"from\s+(?P<base>[\w.]+)\s+import\s+(?P<names>.+)")


def imports_module(line: str, module: str) -> bool:
    """Whether the import statement starting on ``line`` imports ``module`` or a part of it. A line this cannot
    read counts as importing it: reported rather than missed."""
    line = line.strip()
    if match := _FROM.match(line):
        base = match["base"]
        names = [part.split(" as ")[0].strip(" ()\\") for part in match["names"].split(",")]
        targets = [base, *(f"{base}.{name}" for name in names if name)]
    elif match := _IMPORT.match(line):
        targets = [part.split(" as ")[0].strip() for part in match["names"].split(",")]
    else:
        return True
    return any(target == module or target.startswith(module + ".") for target in targets)


class OnlyImportedByContract(Contract):
    """``modules`` (each a module or a part of an external package) are imported directly only by
    ``allowed_importers`` and their descendants; ``ignore_imports`` lists exceptions as "importer -> module"."""

    type_name = "only_imported_by"

    modules = fields.ListField(subfield=fields.StringField())
    allowed_importers = fields.ListField(subfield=fields.StringField())
    ignore_imports = fields.ListField(subfield=fields.StringField(), required=False)

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        # (the fields hold the parsed options once the contract is made)
        allowed = cast("list[str]", self.allowed_importers)
        ignored = set(cast("list[str] | None", self.ignore_imports) or ())
        broken: list[dict[str, Any]] = []
        for module in cast("list[str]", self.modules):
            root = module.partition(".")[0]
            if root not in graph.modules:
                continue  # imported by nobody
            for importer in sorted(graph.find_modules_that_directly_import(root)):
                if any(importer == name or importer.startswith(name + ".") for name in allowed):
                    continue
                if f"{importer} -> {module}" in ignored:
                    continue
                broken.extend(
                    {"importer": importer, "module": module, **detail}
                    for detail in graph.get_import_details(importer=importer, imported=root)
                    if imports_module(detail["line_contents"], module)
                )
        return ContractCheck(kept=not broken, metadata={"broken": broken})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for item in check.metadata["broken"]:
            output.print_error(f"{item['importer']} imports {item['module']}:", bold=True)
            output.indent_cursor()
            output.print_error(f"l.{item['line_number']}: {item['line_contents']}", bold=False)
            output.new_line()
