"""Emitters: tree (axes + methods + TreeArrays) -> files, through Jinja2 templates.

Emitters know nothing about benchmark tables or the command line. The targets and their typed
options are registered in targets.py; each renders an Emitted(files, notes). `render` is the one
Jinja2 environment (StrictUndefined) every emitted text and the report page go through. Templates
get numbers as Python ints or as literals text.py made from checked ints, and free text only
through the filters `c_comment`, `line_comment` and `json` (text.py).
"""
from importlib import resources

import jinja2

from collsel.sinks.emit import text

_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(str(resources.files("collsel.templates"))),
    undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
    trim_blocks=True, lstrip_blocks=True, autoescape=False)
_ENV.filters.update(c_comment=text.c_comment, line_comment=text.line_comment,
                    json=text.json_string)


def render(template, **context):
    return _ENV.get_template(template).render(**context)


def load(template):
    """Compile a template ahead of `render` (kept by the environment): the report's page is
    compiled while its workers draw the figures (a tenth of a second)."""
    _ENV.get_template(template)
