"""The Jinja environment Hugging Face transformers renders chat templates in
(transformers.utils.chat_template_utils._compile_jinja_template), rebuilt with python3-jinja2:
an ImmutableSandboxedEnvironment with trim_blocks and lstrip_blocks, the loopcontrols
extension, the {% generation %} tag, transformers' tojson (json.dumps, not jinja2's HTML-safe
one) and the globals raise_exception and strftime_now."""

import json
from datetime import datetime

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


class GenerationTag(Extension):
    """{% generation %}...{% endgeneration %}: transformers marks the assistant's text with it
    (to return an assistant mask); the rendered text is the body's."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def strftime_now(format):
    return datetime.now().strftime(format)


def compile_template(source):
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[GenerationTag, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env.from_string(source)


def render(source, variables):
    """{"text": ...} or {"error": ...}, as jinja_render_tool answers."""
    try:
        return {"text": compile_template(source).render(**variables)}
    except jinja2.exceptions.TemplateError as error:
        return {"error": str(error)}
    except Exception as error:  # a Python error inside the template: TypeError, ValueError, ...
        return {"error": f"{type(error).__name__}: {error}"}
