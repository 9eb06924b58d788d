"""Emitters: tree (axes + methods + TreeArrays) -> text files, through Jinja2 templates.

Emitters know nothing about benchmark tables. Each target renders a dict {file name: text}.
"""
from importlib import resources

import jinja2

_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(str(resources.files("collsel.templates"))),
    undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
    trim_blocks=True, lstrip_blocks=True, autoescape=False)


def render(template, **context):
    return _ENV.get_template(template).render(**context)
