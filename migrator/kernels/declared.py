"""The names a C/C++/CUDA source declares itself (enumerators, functions, variables, parameters,
fields, macros, types): a project's own ``cudaUnspecified`` or ``CUDA_CHECK`` is not a CUDA name
hipify left behind."""

from __future__ import annotations

from migrator.kernels.source import parse

_DECLARING = frozenset(
    {
        "enumerator",
        "function_declarator",
        "init_declarator",
        "parameter_declaration",
        "field_declaration",
        "preproc_def",
        "preproc_function_def",
        "type_definition",
        "struct_specifier",
        "class_specifier",
        "enum_specifier",
        "declaration",
        "alias_declaration",
    }
)


def declared_names(data: bytes) -> set[str]:
    """Names a file declares itself (enumerators, functions, variables, parameters, fields,
    macros, types): a project's own ``cudaUnspecified`` is not hipify's residue."""
    source = parse(data)
    names: set[str] = set()
    for node in source.nodes(*_DECLARING):
        for field_name in ("name", "declarator"):
            target = node.child_by_field_name(field_name)
            while target is not None and target.type not in {
                "identifier",
                "type_identifier",
                "field_identifier",
            }:
                target = target.child_by_field_name("declarator") or (
                    target.named_children[0] if target.named_children else None
                )
            if target is not None:
                names.add(source.text(target.start_byte, target.end_byte))
    return names


__all__ = ["declared_names"]
