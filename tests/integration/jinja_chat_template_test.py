#!/usr/bin/env python3
"""/v1/chat/completions with the checkpoint's own Jinja chat template, through a real server.

A copy of the tiny model's directory gets a tokenizer_config.json whose chat_template uses the
constructs real templates use (bos_token, a namespace, loop.first, raise_exception, tools with
tojson, content parts, add_generation_prompt), and special_tokens_map.json its BOS/EOS. The
prompt the server renders, as ids from /tokenize and usage.prompt_tokens of a chat completion,
must equal python3-jinja2's rendering in transformers' environment (tests/hf_oracle/
hf_environment.py) tokenised independently with python3-sentencepiece: the BOS and EOS text as
their ids, the text between encoded by tokenizer.model. A template that fails answers 400 quoting
its error; a chat_template.jinja file wins over tokenizer_config.json; a named template is chosen
by the request's chat_template; a template that does not parse stops the server at start-up
naming the file.

Usage: jinja_chat_template_test.py SERVER MODEL_DIR
"""

import http.client
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "hf_oracle"))
from loopback_server import fail, start_server  # noqa: E402

try:
    import sentencepiece
    import hf_environment
except ImportError as error:
    print(f"jinja_chat_template_test: {error}; scripts/install-deps.sh installs python3-jinja2")
    sys.exit(1 if os.environ.get("CI") == "true" else 77)

TEMPLATE = """{{- bos_token }}
{%- set ns = namespace(system='', last_role='') %}
{%- if messages[0].role == 'system' %}
    {%- set ns.system = messages[0].content %}
    {%- set messages = messages[1:] %}
{%- endif %}
{%- if tools %}
    {%- set ns.system = ns.system ~ ' Tools: ' ~ (tools | map(attribute='function') | list | tojson) %}
{%- endif %}
{%- for message in messages %}
    {%- if message.role == 'user' and ns.last_role == 'user' %}
        {{- raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}
    {%- endif %}
    {%- set ns.last_role = message.role %}
    {%- if message.content is string %}
        {%- set content = message.content | trim %}
    {%- else %}
        {%- set content = message.content | map(attribute='text') | join(' ') %}
    {%- endif %}
    {%- if loop.first and ns.system %}
        {%- set content = ns.system | trim ~ '\\n\\n' ~ content %}
    {%- endif %}
    {%- if message.role == 'user' %}
        {{- ' Q: ' ~ content }}
    {%- elif message.role == 'tool' %}
        {{- ' Result: ' ~ content }}
    {%- else %}
        {{- ' A: ' ~ content }}
        {%- for call in message.tool_calls | default([]) %}
            {{- ' Call ' ~ call.function.name ~ (call.function.arguments | tojson) }}
        {%- endfor %}
        {{- eos_token }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- ' A:' }}
{%- endif %}
{%- if shout is defined and shout %}{{ ' LOUD' }}{% endif %}"""

BRIEF_TEMPLATE = "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}brief:"
FILE_TEMPLATE = "{{ bos_token }}{% for m in messages %}[{{ m.content }}]{% endfor %}"

TOOLS = [{"type": "function", "function": {
    "name": "lookup_verse", "description": "Finds a verse.",
    "parameters": {"type": "object", "properties": {"book": {"type": "string"},
                                                    "chapter": {"type": "integer"}},
                   "required": ["book"]}}}]
CONVERSATIONS = [
    {"messages": [{"role": "user", "content": "In the beginning"}]},
    {"messages": [{"role": "system", "content": "Answer from Genesis."},
                  {"role": "user", "content": "Who made the heaven?"},
                  {"role": "assistant", "content": "God created the heaven and the earth."},
                  {"role": "user", "content": [{"type": "text", "text": "And the"},
                                               {"type": "text", "text": "light?"}]}]},
    {"tools": TOOLS, "messages": [
        {"role": "user", "content": "Find Genesis 1"},
        {"role": "assistant", "content": "", "tool_calls": [{
            "id": "call_0", "type": "function",
            "function": {"name": "lookup_verse", "arguments": {"book": "Genesis", "chapter": 1}}}]},
        {"role": "tool", "tool_call_id": "call_0", "content": "Let there be light"},
        {"role": "user", "content": "Thanks"}]},
]


def request(port, path, body):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    response = connection.getresponse()
    return response.status, json.loads(response.read().decode())


def expected_ids(processor, text, bos, eos, bos_id, eos_id):
    """The oracle's ids: the BOS/EOS text as their ids, the rest encoded by SentencePiece."""
    ids = []
    while text:
        cuts = [(text.find(token), token, token_id)
                for token, token_id in ((bos, bos_id), (eos, eos_id)) if text.find(token) >= 0]
        if not cuts:
            ids += processor.encode(text)
            break
        at, token, token_id = min(cuts)
        if at > 0:
            ids += processor.encode(text[:at])
        ids.append(token_id)
        text = text[at + len(token):]
    return ids


def make_model(base, root, name, tokenizer_config, extra_files=None):
    model = root / name
    shutil.copytree(base, model)
    (model / "tokenizer_config.json").write_text(json.dumps(tokenizer_config))
    (model / "special_tokens_map.json").write_text(json.dumps(
        {"bos_token": {"content": "<s>", "lstrip": False}, "eos_token": "</s>"}))
    for file_name, text in (extra_files or {}).items():
        (model / file_name).write_text(text)
    return model


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    server, base = sys.argv[1], pathlib.Path(sys.argv[2])
    processor = sentencepiece.SentencePieceProcessor(model_file=str(base / "tokenizer.model"))
    config = json.loads((base / "config.json").read_text())
    bos_id, eos_id = config["bos_id"], config["eos_id"]
    with tempfile.TemporaryDirectory() as scratch:
        root = pathlib.Path(scratch)
        model = make_model(base, root, "listed", {"chat_template": [
            {"name": "default", "template": TEMPLATE}, {"name": "brief", "template": BRIEF_TEMPLATE}]})
        process, port, _ = start_server(server, model)
        try:
            checks = 0
            for conversation in CONVERSATIONS:
                for add_generation_prompt in (True, False):
                    for kwargs in ({}, {"shout": True}):
                        variables = {"messages": conversation["messages"],
                                     "tools": conversation.get("tools"), "documents": None,
                                     "add_generation_prompt": add_generation_prompt,
                                     "bos_token": "<s>", "eos_token": "</s>", **kwargs}
                        rendered = hf_environment.render(TEMPLATE, variables)
                        if "text" not in rendered:
                            fail(f"the oracle failed on {variables}: {rendered}")
                        want = expected_ids(processor, rendered["text"], "<s>", "</s>", bos_id,
                                            eos_id)
                        body = {**conversation, "add_generation_prompt": add_generation_prompt,
                                "chat_template_kwargs": kwargs}
                        status, answer = request(port, "/tokenize", body)
                        if status != 200 or answer.get("tokens") != want:
                            fail(f"/tokenize {json.dumps(body)[:300]}: HTTP {status} {answer}\n"
                                 f"  python3-jinja2 rendered {rendered['text']!r} = {want}")
                        checks += 1
                status, answer = request(port, "/v1/chat/completions",
                                         {**conversation, "max_tokens": 2})
                want = expected_ids(processor, hf_environment.render(TEMPLATE, {
                    "messages": conversation["messages"], "tools": conversation.get("tools"),
                    "documents": None, "add_generation_prompt": True, "bos_token": "<s>",
                    "eos_token": "</s>"})["text"], "<s>", "</s>", bos_id, eos_id)
                if status != 200 or answer["usage"]["prompt_tokens"] != len(want):
                    fail(f"chat completion: HTTP {status} {answer}; want {len(want)} prompt tokens")
                checks += 1

            # The named template, by the request's chat_template.
            messages = [{"role": "user", "content": "Let there be light"}]
            status, answer = request(port, "/tokenize",
                                     {"messages": messages, "chat_template": "brief"})
            brief = hf_environment.render(BRIEF_TEMPLATE, {"messages": messages})["text"]
            if status != 200 or answer.get("tokens") != [bos_id] * 0 + processor.encode(brief):
                fail(f"chat_template \"brief\": HTTP {status} {answer}, want {brief!r}")
            status, answer = request(port, "/tokenize",
                                     {"messages": messages, "chat_template": "{{ 1 }}"})
            if status != 400 or "not accepted per request" not in answer["error"]["message"]:
                fail(f"a template's text per request: HTTP {status} {answer}")

            # The template's own error is a 400 that quotes it.
            status, answer = request(port, "/v1/chat/completions", {"messages": [
                {"role": "user", "content": "one"}, {"role": "user", "content": "two"}]})
            message = answer.get("error", {}).get("message", "")
            if status != 400 or "Conversation roles must alternate" not in message:
                fail(f"roles not alternating: HTTP {status} {answer}")
            checks += 3
        finally:
            process.terminate()
            process.wait(timeout=30)

        # chat_template.jinja wins over tokenizer_config.json's.
        model = make_model(base, root, "file", {"chat_template": TEMPLATE},
                           {"chat_template.jinja": FILE_TEMPLATE})
        process, port, _ = start_server(server, model)
        try:
            messages = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
            status, answer = request(port, "/tokenize", {"messages": messages})
            want = [bos_id] + processor.encode("[a][b]")
            if status != 200 or answer.get("tokens") != want:
                fail(f"chat_template.jinja: HTTP {status} {answer}, want {want}")
            checks += 1
        finally:
            process.terminate()
            process.wait(timeout=30)

        # A template that does not parse: refused at start-up, naming the file and the error.
        model = make_model(base, root, "broken", {"chat_template": "{% for m in messages %}"})
        result = subprocess.run([server, f"--model={model}", "--listen=127.0.0.1:0",
                                 "--http-listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0"],
                                capture_output=True, text=True, timeout=60)
        if result.returncode == 0 or "tokenizer_config.json: chat_template" not in result.stderr \
                or "endfor" not in result.stderr:
            fail(f"a broken template: exit {result.returncode}, stderr {result.stderr[-600:]}")
        checks += 1
    print(f"jinja_chat_template_test: {checks} checks passed")


if __name__ == "__main__":
    main()
