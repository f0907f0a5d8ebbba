#!/usr/bin/env python3
"""Writes a script for tests/llm_server.py whose replies are kernel files of this folder, each wrapped the way
a model answers (a short sentence, then one ```cuda block). Usage: make_script.py OUT ENTRY...
ENTRY is a kernel name (compile_error, wrong, slow, fast) or a JSON object (a fault entry, used verbatim);
a kernel name may be followed by :DELAY (seconds the server waits before answering)."""
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
replies = []
for arg in sys.argv[2:]:
    if arg.startswith("{"):
        replies.append(json.loads(arg))
        continue
    name, _, delay = arg.partition(":")
    with open(os.path.join(here, name + ".cu")) as f:
        src = f.read()
    e = {"text": "Here is the kernel.\n\n```cuda\n" + src + "```\n", "tokens_in": 1000, "tokens_out": 200}
    if delay:
        e["delay_s"] = float(delay)
    replies.append(e)
with open(sys.argv[1], "w") as f:
    json.dump({"replies": replies}, f)
