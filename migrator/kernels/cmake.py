"""CMake builds read statically: targets (``add_library``, ``pybind11_add_module``, ...) with
their sources from ``set``/``list(APPEND)``/``file(GLOB)``/``target_sources``, the branch each
source entered in (``if(BUILD_HIP)`` beside ``if(BUILD_CUDA)``), the targets each one links, the
definitions made only where CUDA is found, and what the build needs of CUDA: the language
turned on only when ``nvcc`` is found (a ROCm build is CPU-only), CUDA required with no HIP
path, CUDA-only libraries linked. A CMakeLists.txt that says it exists for an IDE builds nothing.

``read_cmake`` reads one file; ``settle`` decides for all of a project's CMake files together
whether a CUDA-only branch is a vendor choice (the build has a HIP branch: its CUDA sources are
never compiled for AMD) or a gate (no HIP branch: a ROCm build leaves the GPU code out)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from migrator.kernels.buildmodel import (
    BOTH,
    CMAKE,
    CUDA,
    CUDA_REQUIRED,
    GATE,
    IDE_ONLY,
    KERNEL_SUFFIXES,
    LINK,
    ROCM,
    BuildModel,
    BuildNote,
    Extension,
    Pattern,
    meet,
    under,
)
from migrator.knowledge.vendor_tokens import names_rocm

_COMMAND = re.compile(r"(?m)^[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(")
_VAR = re.compile(r"\$\{([A-Za-z0-9_]+)\}")
_HIP = re.compile(r"(?i)\bhip\b|_HIP\b|HIP_|\bROCM|USE_ROCM")
_CUDA = re.compile(r"(?<![A-Za-z])CUDA(?![a-z])|\"cuda\"|(?i:nvcc)")
_NOT = re.compile(r"(?i)\s*NOT\b")
#: The first lines of a CMakeLists.txt that exists for an IDE, not for the build.
_IDE_ONLY = re.compile(
    r"(?i)\b(?:IDE|CLion|clangd|intellisense|code completion|indexing)\b.*"
    r"|(?:only|just|merely)\s+for\s+(?:the\s+)?(?:IDE|CLion|clangd|indexing)"
)
_NOT_BUILD = re.compile(
    r"(?i)just for|only for|not (?:used|for) (?:the )?(?:build|compil)|real compilation"
)
_TARGETS = {
    "add_library": False,
    "cuda_add_library": False,
    "hip_add_library": False,
    "add_executable": False,
    "cuda_add_executable": False,
    "pybind11_add_module": True,
    "python_add_library": True,
    "python3_add_library": True,
    "nanobind_add_module": True,
    "torch_add_module": True,
}
_LIBRARY_TARGET = re.compile(
    r"^(?:-l)?(?:CUDA::)?(cudart(?:_static)?|cuda_driver|cuda|cublas(?:Lt)?(?:_static)?|culibos"
    r"|nvrtc(?:_static)?|cufft(?:_static)?|curand(?:_static)?|cusparse(?:_static)?"
    r"|cusolver(?:_static)?|nvToolsExt|nvtx3|nvjitlink|cudnn|nccl(?:_static)?)$"
)


@dataclass(slots=True)
class _Branch:
    """One open ``if`` block: the enclosing context, this branch's context and CUDA gate, and
    what the previous branch of the chain tested."""

    outer: str
    outer_gate: str
    context: str
    gate: str
    kind: str  # "rocm", "cuda" (finds CUDA), "nocuda" (NOT ...CUDA), "" (other)


def _commands(text: str) -> Iterable[tuple[str, str, int]]:
    """(command, argument text, line) of each command, comments removed; linear in the text."""
    text = re.sub(r"#[^\n]*", "", text)
    line = 1
    position = 0
    for match in _COMMAND.finditer(text):
        line += text.count("\n", position, match.start())
        position = match.start()
        depth = 0
        index = match.end() - 1
        limit = min(len(text), index + 200_000)
        while index < limit:
            char = text[index]
            if char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
                if depth == 0:
                    break
            index += 1
        yield match.group(1).lower(), text[match.end() : index], line


def _classify(condition: str) -> tuple[str, str]:
    """(context of the branch, kind of test) of an ``if`` condition."""
    negated = _NOT.match(condition) is not None
    if names_rocm(condition) or _HIP.search(condition):
        return (CUDA if negated else ROCM), "rocm"
    if _CUDA.search(condition):
        return (BOTH, "nocuda") if negated else (CUDA, "cuda")
    return BOTH, ""


def ide_only(text: str) -> bool:
    """Whether a CMakeLists.txt says, in its opening comment, that it exists for an IDE."""
    head = [line.strip() for line in text.splitlines()[:12] if line.strip().startswith("#")]
    words = " ".join(head)
    return bool(_IDE_ONLY.search(words)) and bool(_NOT_BUILD.search(words))


def read_cmake(text: str, folder: str, build: str) -> BuildModel:
    """What one CMake file builds (see the module docstring); CUDA-only branches carry their
    condition as a tentative gate that ``settle`` resolves."""
    model = BuildModel()
    if ide_only(text):
        model.notes.append(
            BuildNote(
                build,
                1,
                IDE_ONLY,
                "exists for IDE indexing (its opening comment says so): its targets are not "
                "built by the project's build",
            )
        )
        return model
    env: dict[str, list[Pattern]] = {}
    stack: list[_Branch] = []
    targets: dict[str, Extension] = {}
    folder_includes: list[str] = []
    folder_defines: list[str] = []

    def where() -> tuple[str, str]:
        return (stack[-1].context, stack[-1].gate) if stack else (BOTH, "")

    def items(arguments: str, context: str, gate: str) -> list[Pattern]:
        out: list[Pattern] = []
        for word in arguments.split():
            word = word.strip('"')
            names = _VAR.findall(word)
            if names and _VAR.fullmatch(word):
                for p in env.get(names[0], []):
                    joined = meet(context, p.context)
                    if joined is not None:
                        out.append(Pattern(p.glob, joined, gate=p.gate or gate))
            elif word.lower().endswith(KERNEL_SUFFIXES):
                path = under(folder, _VAR.sub("*", word).replace("$", ""))
                if path:
                    out.append(Pattern(path, context, gate=gate))
        return out

    for command, arguments, line in _commands(text):
        if command == "if":
            outer, outer_gate = where()
            own, kind = _classify(arguments)
            if own == ROCM:
                model.rocm_branch.append(build)
            gate = outer_gate or (
                f"`if({_short(arguments)})` ({build}:{line})" if kind == "cuda" else ""
            )
            stack.append(_Branch(outer, outer_gate, meet(outer, own) or "none", gate, kind))
            continue
        if command in {"elseif", "else"} and stack:
            previous = stack.pop()
            if command == "elseif":
                own, kind = _classify(arguments)
                gate = f"`elseif({_short(arguments)})` ({build}:{line})" if kind == "cuda" else ""
            elif previous.kind == "rocm":
                own, kind, gate = (CUDA if previous.context != CUDA else ROCM), "", ""
            elif previous.kind == "nocuda":
                own, kind = CUDA, "cuda"
                gate = f"the `else()` of a test for no CUDA ({build}:{line})"
            else:
                own, kind, gate = BOTH, "", ""
            if own == ROCM:
                model.rocm_branch.append(build)
            stack.append(
                _Branch(
                    previous.outer,
                    previous.outer_gate,
                    meet(previous.outer, own) or "none",
                    previous.outer_gate or gate,
                    kind,
                )
            )
            continue
        if command == "endif" and stack:
            stack.pop()
            continue
        context, gate = where()
        if context == "none":
            continue
        words = arguments.split()
        if not words:
            continue
        if command == "set":
            env[words[0]] = items(" ".join(words[1:]), context, gate)
            if gate and any(w.strip('"') == "CUDA" for w in words[1:]):
                model.notes.append(BuildNote(build, line, GATE, f"`set({_short(arguments)})`"))
        elif command == "list" and len(words) > 2 and words[0].upper() == "APPEND":
            env[words[1]] = env.get(words[1], []) + items(" ".join(words[2:]), context, gate)
        elif command == "file" and len(words) > 2 and words[0].upper().startswith("GLOB"):
            patterns = [
                w.strip('"')
                for w in words[2:]
                if w.upper() not in {"CONFIGURE_DEPENDS", "RELATIVE"}
            ]
            env[words[1]] = [
                Pattern(path, context, gate=gate)
                for p in patterns
                if "." in p
                and (
                    path := under(folder, _VAR.sub("*", p).replace("*/", "**/", 1).replace("$", ""))
                )
            ]
        elif command in _TARGETS:
            name = words[0]
            found = items(" ".join(words[1:]), context, gate)
            module = _TARGETS[command] or (len(words) > 1 and words[1].upper() == "MODULE")
            extension = Extension(
                name, build, line, found, context, kind=CMAKE, python_module=module
            )
            extension.include_dirs = list(dict.fromkeys(folder_includes))
            extension.defines = list(dict.fromkeys(folder_defines))
            targets[name] = extension
            model.extensions.append(extension)
            model.patterns.extend(found)
        elif command == "target_sources" and words[0] in targets:
            found = items(" ".join(words[1:]), context, gate)
            targets[words[0]].patterns.extend(found)
            model.patterns.extend(found)
        elif command == "target_link_libraries" and len(words) > 1:
            linked = [w for w in words[1:] if w.upper() not in {"PRIVATE", "PUBLIC", "INTERFACE"}]
            if words[0] in targets:
                targets[words[0]].links.extend(linked)
            _link_notes(model, build, line, linked, context, gate)
        elif command in {"link_libraries"}:
            _link_notes(model, build, line, words, context, gate)
        elif command in {"include_directories", "target_include_directories"}:
            owner = targets.get(words[0]) if command.startswith("target") else None
            found_dirs = _folders(words[1:] if command.startswith("target") else words, folder)
            for extension in [owner] if owner is not None else list(targets.values()):
                extension.include_dirs.extend(
                    d for d in found_dirs if d not in extension.include_dirs
                )
            if owner is None:
                folder_includes.extend(found_dirs)
        elif command in {
            "add_definitions",
            "add_compile_definitions",
            "target_compile_definitions",
        }:
            owner = targets.get(words[0]) if command.startswith("target") else None
            macros = _definitions(words[1:] if command.startswith("target") else words)
            for extension in [owner] if owner is not None else list(targets.values()):
                extension.defines.extend(m for m in macros if m not in extension.defines)
            if owner is None:
                folder_defines.extend(macros)
            if gate:
                for word in words:
                    macro = word[2:] if word.startswith("-D") else word
                    macro = macro.split("=", 1)[0].strip('"')
                    if (
                        re.fullmatch(r"[A-Za-z_]\w*", macro)
                        and macro.upper() == macro
                        and macro not in {"PRIVATE", "PUBLIC", "INTERFACE"}
                    ):
                        model.cuda_macros.setdefault(macro, (build, line))
        elif command in {"enable_language", "project"}:
            cuda = any(
                w.strip('"').upper() == "CUDA" for w in words[1 if command == "project" else 0 :]
            )
            if cuda and gate:
                model.notes.append(
                    BuildNote(build, line, GATE, f"`{command}({_short(arguments)})`")
                )
            elif cuda:
                model.notes.append(
                    BuildNote(build, line, CUDA_REQUIRED, f"`{command}({_short(arguments)})`")
                )
        elif command == "find_package" and words[0] in {"CUDA", "CUDAToolkit"}:
            required = "REQUIRED" in (w.upper() for w in words[1:])
            kind = GATE if gate else CUDA_REQUIRED if required else GATE
            model.notes.append(BuildNote(build, line, kind, f"`find_package({_short(arguments)})`"))
        elif command in {"find_program", "check_language"} and (
            "nvcc" in arguments.lower() or (command == "check_language" and "CUDA" in arguments)
        ):
            model.notes.append(BuildNote(build, line, GATE, f"`{command}({_short(arguments)})`"))
    return model


_SCOPE = {"PRIVATE", "PUBLIC", "INTERFACE", "SYSTEM", "BEFORE", "AFTER"}
_HERE = re.compile(r"^\$\{(?:CMAKE_CURRENT_SOURCE_DIR|CMAKE_CURRENT_LIST_DIR)\}/?")
_TOP = re.compile(r"^\$\{(?:CMAKE_SOURCE_DIR|PROJECT_SOURCE_DIR)\}/?")


def _folders(words: Sequence[str], folder: str) -> list[str]:
    """Project-relative include folders of an ``include_directories`` call (a folder named
    through a variable other than the source folders' is left out)."""
    out: list[str] = []
    for word in words:
        word = word.strip('"')
        if word.upper() in _SCOPE or word.startswith("$<"):
            continue
        if _TOP.match(word):
            path = under("", _TOP.sub("", word) or ".")
        else:
            path = under(folder, _HERE.sub("", word) or ".")
        if path is not None and "$" not in path and path not in out:
            out.append(path)
    return out


def _definitions(words: Sequence[str]) -> list[str]:
    """``NAME`` or ``NAME=VALUE`` of each definition a CMake call makes."""
    out: list[str] = []
    for word in words:
        word = word.strip('"')
        macro = word[2:] if word.startswith("-D") else word
        if macro.upper() in _SCOPE or not re.fullmatch(r"[A-Za-z_]\w*(?:=\S*)?", macro):
            continue
        if macro not in out:
            out.append(macro)
    return out


def _link_notes(
    model: BuildModel, build: str, line: int, words: Sequence[str], context: str, gate: str
) -> None:
    for word in words:
        library = _LIBRARY_TARGET.match(word.strip('"'))
        if library is not None:
            model.notes.append(
                BuildNote(
                    build,
                    line,
                    LINK,
                    f"links `{word.strip(chr(34))}`, a library only the CUDA toolkit ships"
                    + (" (in the CUDA branch)" if context == CUDA or gate else ""),
                )
            )


def settle(model: BuildModel, builds: Sequence[str]) -> None:
    """Resolve the CUDA-only branches of the CMake files ``builds`` (all read into ``model``):
    with a HIP branch anywhere among them they are a vendor choice (their sources are never
    compiled for AMD, no gate); without, they are gates: a ROCm build is CPU-only. The gate
    notes become one note per file, in words the user acts on, with what the gate turns off."""
    files = set(builds)
    has_rocm = any(build in files for build in model.rocm_branch)

    def settled(pattern: Pattern) -> Pattern:
        if pattern.build and pattern.build not in files:
            return pattern
        if not pattern.gate:
            return pattern
        if has_rocm:
            return replace(pattern, gate="")
        return replace(pattern, context=BOTH if pattern.context == CUDA else pattern.context)

    model.patterns[:] = [settled(p) for p in model.patterns]
    for extension in model.extensions:
        if extension.build in files:
            extension.patterns[:] = [settled(p) for p in extension.patterns]
    if has_rocm:
        model.notes[:] = [
            n for n in model.notes if not (n.path in files and n.kind in {GATE, CUDA_REQUIRED})
        ]
        for macro, (build, _line) in list(model.cuda_macros.items()):
            if build in files:
                del model.cuda_macros[macro]
        return
    gates = [n for n in model.notes if n.path in files and n.kind == GATE]
    gated_sources = sorted(
        {p.glob.rsplit("/", 1)[-1] for p in model.patterns if p.build in files and p.gate}
    )
    macros = sorted(m for m, (build, _) in model.cuda_macros.items() if build in files)
    kept = [n for n in model.notes if not (n.path in files and n.kind == GATE)]
    if gates and (gated_sources or macros or any("CUDA" in n.message for n in gates[1:])):
        first = gates[0]
        what = []
        if macros:
            what.append("defines " + ", ".join(f"`{m}`" for m in macros[:3]))
        if gated_sources:
            what.append("compiles " + ", ".join(f"`{s}`" for s in gated_sources[:3]))
        message = (
            f"builds its GPU code only with CUDA ({first.message}"
            + (f"; only then it {' and '.join(what)}" if what else "")
            + "): a ROCm build is CPU-only, so the GPU paths raise at run time; add a HIP "
            "branch (enable_language(HIP), or hipify the .cu sources)"
            + (f" that defines {', '.join(macros[:3])}" if macros else "")
        )
        kept.append(BuildNote(first.path, first.line, GATE, message))
    model.notes[:] = [
        replace(
            n,
            message=f"needs CUDA ({n.message}) and has no HIP path: a ROCm build stops at configure "
            "time; add a HIP branch (enable_language(HIP), find_package(hip))",
        )
        if n.path in files and n.kind == CUDA_REQUIRED and not n.message.startswith("needs")
        else n
        for n in kept
    ]
    _ = Sequence


def _short(text: str, limit: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


__all__ = ["ide_only", "read_cmake", "settle"]
