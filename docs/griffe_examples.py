"""A griffe extension (loaded by mkdocstrings, ``mkdocs.yml``): rlkit's docstrings title their
examples ``Example:``, which griffe's Google-style parser reads as an admonition of Markdown text;
this renames the title to ``Examples:`` so that the ``>>>`` lines render as Python sessions."""

from __future__ import annotations

import re
from typing import Any

import griffe

_EXAMPLE = re.compile(r"^(\s*)Example:[ \t]*$", flags=re.MULTILINE)


class ExampleSections(griffe.Extension):
    """Read ``Example:`` sections as griffe's examples sections."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _EXAMPLE.sub(r"\1Examples:", obj.docstring.value)
