"""A griffe extension that mkdocstrings loads (``mkdocs.yml``) to read rlkit's docstrings as they
are meant:

* rlkit's docstrings title their examples ``Example:``, which griffe's Google-style parser reads
  as an admonition of Markdown text: the title becomes ``Examples:`` so that the ``>>>`` lines
  render as Python sessions;
* Sphinx roles (``:class:`~rlkit.Agent` ``, ``:func:`rlkit.run` ``) become code (``Agent``,
  ``rlkit.run``);
* a class made by a function call at import time (``PPO = rk.build_policy(..., doc=__doc__)``)
  is an attribute without a docstring to static analysis: it gets the class's docstring from
  the imported module.
"""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any

import griffe

_EXAMPLE = re.compile(r"^(\s*)Example:[ \t]*$", flags=re.MULTILINE)
_ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|obj|exc):`(~?)([^`]+)`")


def _code(match: re.Match) -> str:  # Sphinx's ~ shows the last part of the path only
    short, target = match.groups()
    return f"``{target.rsplit('.', 1)[-1] if short else target}``"


def _markdown(text: str) -> str:
    return _ROLE.sub(_code, _EXAMPLE.sub(r"\1Examples:", text))


class RlkitDocstrings(griffe.Extension):
    """Examples sections, and the docstrings of classes built at import time."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _markdown(obj.docstring.value)

    def on_attribute_instance(self, *, attr: griffe.Attribute, **kwargs: Any) -> None:
        if attr.docstring is not None or "(" not in str(attr.value or ""):
            return
        if not isinstance(attr.parent, griffe.Module) or attr.name.startswith("_"):
            return
        value = getattr(importlib.import_module(attr.parent.path), attr.name, None)
        if isinstance(value, type) and value.__dict__.get("__doc__"):
            text = _markdown(inspect.cleandoc(value.__doc__))
            attr.docstring = griffe.Docstring(text, parent=attr)
