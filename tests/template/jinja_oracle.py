#!/usr/bin/python3
"""Reference renderer for the chat-template differential test: Python's jinja2, set up the way
Hugging Face transformers' apply_chat_template sets it up.

- ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) with the loopcontrols
  extension and an extension for HF's {% generation %} tag (it renders its body, as HF's
  AssistantTracker does);
- tojson = json.dumps(x, ensure_ascii=False, indent=..., separators=..., sort_keys=...);
- globals raise_exception(msg) (raises TemplateError) and strftime_now(fmt), with the clock
  pinned to NOW so that both engines see the same time;
- render(messages=..., tools=..., documents=None, add_generation_prompt=..., bos_token=...,
  eos_token=..., **vars).

usage: jinja_oracle.py corpus TEMPLATE_DIR CONVERSATIONS.json
    Renders every template with every conversation (and, for templates that read
    enable_thinking, each conversation again with enable_thinking true and false). Prints one
    JSON array: [{"template", "conversation", "add_generation_prompt", "vars", "ok", "output"
    or "error"}...]. Output strings are ASCII-escaped JSON, so any bytes survive.
usage: jinja_oracle.py snippets SNIPPETS.json
    Renders each snippet of SNIPPETS.json with its context; prints [{"ok", "output"/"error"}].
usage: jinja_oracle.py one TEMPLATE_FILE CONVERSATIONS.json NAME [VARS_JSON]
    Renders one case and prints the raw output (for debugging).
"""
import copy
import datetime
import json
import os
import sys

import jinja2
import jinja2.ext
import jinja2.nodes
from jinja2.exceptions import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

NOW = "2026-11-29T12:00:00"
BOS = "<s>"
EOS = "</s>"


class GenerationTag(jinja2.ext.Extension):
    """{% generation %}...{% endgeneration %}: renders its body (a call block, as in HF)."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render"), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def make_env():
    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def raise_exception(message):
        raise TemplateError(message)

    def strftime_now(fmt):
        return datetime.datetime.fromisoformat(NOW).strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[GenerationTag, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def render(env, compiled, conv, extra_vars):
    kwargs = {"bos_token": BOS, "eos_token": EOS}
    kwargs.update(copy.deepcopy(conv.get("vars", {})))
    kwargs.update(extra_vars)
    # Deep copies: jinja2's sandbox lets a template mutate lists (list.pop is allowed).
    return compiled.render(messages=copy.deepcopy(conv["messages"]), tools=copy.deepcopy(conv.get("tools")),
                           documents=None, add_generation_prompt=conv.get("add_generation_prompt", False), **kwargs)


def cases(template_dir, conversations):
    for name in sorted(os.listdir(template_dir)):
        if not name.endswith(".jinja"):
            continue
        with open(os.path.join(template_dir, name), encoding="utf-8") as f:
            source = f.read()
        variants = [{}]
        if "enable_thinking" in source:
            variants = [{}, {"enable_thinking": True}, {"enable_thinking": False}]
        for conv in conversations:
            for extra in variants:
                yield name, source, conv, extra


def corpus(template_dir, conversations_path):
    with open(conversations_path, encoding="utf-8") as f:
        conversations = json.load(f)
    env = make_env()
    compiled_cache = {}
    results = []
    for name, source, conv, extra in cases(template_dir, conversations):
        entry = {"template": name, "conversation": conv["name"],
                 "add_generation_prompt": conv.get("add_generation_prompt", False),
                 "vars": {**conv.get("vars", {}), **extra}}
        try:
            if name not in compiled_cache:
                try:
                    compiled_cache[name] = env.from_string(source)
                except Exception as e:  # a template that does not compile fails every case
                    compiled_cache[name] = e
            compiled = compiled_cache[name]
            if isinstance(compiled, Exception):
                raise compiled
            entry["output"] = render(env, compiled, conv, extra)
            entry["ok"] = True
        except Exception as e:
            entry["ok"] = False
            entry["error"] = "%s: %s" % (type(e).__name__, e)
        results.append(entry)
    sys.stdout.write(json.dumps(results, ensure_ascii=True))


def snippets(path):
    with open(path, encoding="utf-8") as f:
        spec = json.load(f)
    env = make_env()
    results = []
    for src in spec["snippets"]:
        ctx = copy.deepcopy(spec["context"])
        messages, tools = ctx.pop("messages"), ctx.pop("tools")
        try:
            out = env.from_string(src).render(messages=messages, tools=tools, documents=None,
                                              add_generation_prompt=False, bos_token=BOS, eos_token=EOS, **ctx)
            results.append({"ok": True, "output": out})
        except Exception as e:
            results.append({"ok": False, "error": "%s: %s" % (type(e).__name__, e)})
    sys.stdout.write(json.dumps(results, ensure_ascii=True))


def one(template_path, conversations_path, conv_name, vars_json=None):
    with open(conversations_path, encoding="utf-8") as f:
        conversations = {c["name"]: c for c in json.load(f)}
    with open(template_path, encoding="utf-8") as f:
        source = f.read()
    env = make_env()
    extra = json.loads(vars_json) if vars_json else {}
    out = render(env, env.from_string(source), conversations[conv_name], extra)
    sys.stdout.buffer.write(out.encode("utf-8"))


if __name__ == "__main__":
    if sys.argv[1] == "corpus":
        corpus(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "snippets":
        snippets(sys.argv[2])
    elif sys.argv[1] == "one":
        one(*sys.argv[2:])
    else:
        sys.exit("unknown mode " + sys.argv[1])
