"""Writes the API reference pages of the documentation site from ``rlkit.__all__``.

Run by the mkdocs-gen-files plugin (``mkdocs.yml``) at every build, so a newly exported name
gets its entry without editing any page. Each public name is documented where it is defined
(``rlkit.learners.policy_gradient.ppo.PPO``) under the heading and anchor users write
(``rk.PPO``, anchor ``rlkit.PPO``). A public name whose docstring is missing, or has no
``Example`` section or ``>>>`` line, is logged as a warning, which fails ``mkdocs build --strict``.
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # document this checkout's rlkit, whatever is installed
    sys.path.insert(0, str(ROOT))
LOG = logging.getLogger("mkdocs.plugins.rlkit_api")

# the pages of the reference, in the order of the layers (docs/architecture.md), lowest first;
# a package not named here gets a page of its own after these (titled by its name)
GROUPS = {
    "core": "The run loop and its contracts",
    "optimizers": "Optimizer modules (rk.optimizers)",
    "envs": "Environments",
    "approximators": "Approximators",
    "trajectories": "Trajectories and samplers",
    "hooks": "Hooks",
    "schedules": "Schedules",
    "policies": "Policies, explorers and distributions",
    "learners": "Learners",
    "solvers": "Exact solvers for small games",
}


@dataclass(frozen=True)
class PublicName:
    """One name of ``rlkit.__all__`` and the object griffe found for it."""

    name: str  # as exported: rk.<name> (or rk.<subpackage>.<name>)
    path: str  # where it is defined: rlkit.<package>...<name>
    group: str  # the page it is listed on
    docstring: str  # its docstring as mkdocstrings renders it ("" when it has none)
    kind: str  # griffe's kind of the object: "class", "function", "attribute" or "module"
    built: bool = False  # a class made by a function call (rk.PPO = build_policy(...))


def _defining_path(rlkit, name: str) -> str:
    module = rlkit._LAZY.get(name)
    if module == f"rlkit.{name}":  # a lazily imported subpackage: rk.optimizers
        return module
    if module is not None:
        return f"{module}.{name}"
    return ""  # imported eagerly by rlkit/__init__.py: griffe follows the import


def public_names() -> list[PublicName]:
    """Every name of ``rlkit.__all__`` with its defining path, page and docstring, read by griffe
    as mkdocstrings reads it (with the extension of docs/griffe_rlkit.py)."""
    import griffe

    import rlkit

    extension = _load_extension()
    package = griffe.load("rlkit", search_paths=[str(ROOT)], resolve_aliases=True,
                          extensions=griffe.load_extensions(extension))
    names = []
    for name in rlkit.__all__:
        path = _defining_path(rlkit, name)
        obj = package[path.removeprefix("rlkit.")] if path else package[name]
        if obj.is_alias:
            obj = obj.final_target
        group = obj.path.split(".")[1]
        built = obj.is_attribute and isinstance(getattr(rlkit, name), type)
        docstring = obj.docstring.value if obj.docstring else ""
        names.append(PublicName(name, obj.path, group, docstring, obj.kind.value, built))
        if obj.is_module:  # a public subpackage (rk.optimizers): its own public names too
            names += _members(getattr(rlkit, name), name, obj, group)
    return names


def _members(module, name: str, obj, group: str) -> list[PublicName]:
    members = []
    for member in module.__all__:
        target = obj[member].final_target if obj[member].is_alias else obj[member]
        docstring = target.docstring.value if target.docstring else ""
        members.append(PublicName(f"{name}.{member}", f"{obj.path}.{member}", group, docstring,
                                  target.kind.value))
    return members


def _load_extension():
    import importlib.util

    path = ROOT / "docs" / "griffe_rlkit.py"
    spec = importlib.util.spec_from_file_location("rlkit_docs_griffe", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.RlkitDocstrings()


def has_example(docstring: str) -> bool:
    """Whether a docstring shows an example (an ``Example``/``Examples`` section or ``>>>``)."""
    lines = [line.strip() for line in docstring.splitlines()]
    return any(line.startswith(">>>") or line.rstrip(":") in ("Example", "Examples")
               for line in lines)


def _title(group: str) -> str:
    return GROUPS.get(group, f"rlkit.{group}")


def groups(names: list[PublicName]) -> list[str]:
    """The API pages: the packages of ``GROUPS`` that export something, then any other."""
    used = {n.group for n in names}
    return [g for g in GROUPS if g in used] + sorted(used - set(GROUPS))


def page(group: str, names: list[PublicName]) -> str:
    """The markdown of one API page: one mkdocstrings entry per public name."""
    parts = [f"# {_title(group)}\n"]
    for entry in names:
        if "." in entry.name:  # a member of a public subpackage: on the page with its package
            continue
        options = ["show_root_heading: true", "show_root_full_path: false",
                   "heading_level: 2"]
        if entry.kind == "module":  # a public subpackage: its __all__, on this page
            prefix = entry.name + "."
            members = [n.name.removeprefix(prefix) for n in names if n.name.startswith(prefix)]
            options += [f"members: {members}", "show_submodules: false"]
        body = "\n".join(f"      {option}" for option in options)
        anchor = entry.name.replace("_", "\\_")  # rk.__version__: no bold in the anchor's id
        parts.append(f"[](){{#rlkit.{anchor}}}\n\n::: {entry.path}\n    options:\n{body}\n")
    return "\n".join(parts)


def index(names: list[PublicName]) -> str:
    """The reference's first page: every public name, linked to its entry."""
    lines = ["# API reference\n",
             "Everything public is exported flat from the package: `import rlkit as rk`, then "
             "`rk.<name>`. Each entry below is generated from `rlkit.__all__` and the "
             "docstrings, at every build.\n"]
    for group in groups(names):
        members = [n for n in names if n.group == group]
        lines.append(f"## [{_title(group)}]({group}.md)\n")
        lines += [f"- [`rk.{n.name}`][rlkit.{n.name}]" if "." not in n.name
                  else f"    - [`rk.{n.name}`][{n.path}]" for n in members]
        lines.append("")
    return "\n".join(lines)


def check(names: list[PublicName]) -> list[str]:
    """What is missing: the names without a docstring or without an example."""
    problems = [f"rk.{n.name} ({n.path}) has no docstring" for n in names if not n.docstring]
    problems += [f"rk.{n.name} ({n.path}) has no example (an Example section or >>> line)"
                 for n in names if n.docstring and not has_example(n.docstring)]
    return problems


def main() -> None:
    import mkdocs_gen_files

    names = public_names()
    for problem in check(names):
        LOG.warning("API reference: %s", problem)
    nav = ["* [Overview](index.md)"]
    with mkdocs_gen_files.open("api/index.md", "w") as out:
        out.write(index(names))
    for group in groups(names):
        with mkdocs_gen_files.open(f"api/{group}.md", "w") as out:
            out.write(page(group, [n for n in names if n.group == group]))
        nav.append(f"* [{_title(group)}]({group}.md)")
    with mkdocs_gen_files.open("api/SUMMARY.md", "w") as out:
        out.write("\n".join(nav) + "\n")


if __name__ in ("__main__", "<run_path>"):
    main()
