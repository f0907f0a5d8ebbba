#!/usr/bin/env python3
"""A scripted LLM API server for kforge's tests (stdlib only, loopback only).

Speaks OpenAI chat completions (POST /v1/chat/completions) and Anthropic messages (POST /v1/messages),
checks request shapes the way the real APIs do (400 in the API's error format when invalid), replies from a
script, logs every request as one JSON line, and injects faults on demand.

Script (JSON):
  {"replies": [ENTRY, ...],                 served in order, one per request not caught by a rule
   "rules":   [{"match": REGEX, ...ENTRY}],  first rule whose regex matches the prompt text wins (reusable)
   "reject_fields": ["temperature"],        body fields answered with 400 (reasoning models, old servers)
   "require_key": "KEY"}                    answer 401 unless this key is sent
ENTRY: {"text": "...", "finish_reason": "stop", "tokens_in": 10, "tokens_out": 20, "delay_s": 0.0,
        "request_id": "req_1", "headers": {"x-should-retry": "false"} (extra reply headers),
        "retry_after_in_s": 2 (retry-after as an HTTP date that far ahead),
        "fault": "429" | "500" | "529" | "slow" | "truncated" | "invalid_json" | "empty_choices" | "status",
        "status": 401 (with fault "status"), "message": "...", "retry_after": "1", "retry_after_ms": "200",
        "quota": true (429 says a spend limit was reached), "sleep_s": 3 (slow), "echo_key": true (the error
        message repeats the key it got, to prove the client scrubs it)}
When the replies run out the server answers 400 "script exhausted". POST /_control/script with a script
as the body replaces the script, restarts the replies and empties the log (one server per test binary).

Usage: llm_server.py --port 0 [--port-file F] [--script F] [--log F]
"""
import argparse
import email.utils
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATE = {"script": {}, "next": 0, "lock": threading.Lock(), "log": None, "count": 0, "gen": 0}
OPENAI_ROLES = {"system", "developer", "user", "assistant", "tool"}


def log_request(rec, gen):
    with STATE["lock"]:
        # A request still sleeping when the script was replaced belongs to an earlier test: drop it.
        if STATE["log"] and gen == STATE["gen"]:
            STATE["log"].write(json.dumps(rec) + "\n")
            STATE["log"].flush()


def prompt_text(body):
    parts = []
    if isinstance(body.get("system"), str):
        parts.append(body["system"])
    for m in body.get("messages") or []:
        if isinstance(m, dict) and isinstance(m.get("content"), str):
            parts.append(m["content"])
    return "\n".join(parts)


def pick_entry(body):
    script = STATE["script"]
    text = prompt_text(body)
    for rule in script.get("rules", []):
        if re.search(rule.get("match", ""), text):
            return rule, "rule"
    with STATE["lock"]:
        i = STATE["next"]
        replies = script.get("replies", [])
        if i >= len(replies):
            return None, "exhausted"
        STATE["next"] = i + 1
        return replies[i], i


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet: the JSON log is the record
        pass

    def redacted_headers(self):
        out = {}
        for k, v in self.headers.items():
            lk = k.lower()
            if lk == "authorization":
                out[lk] = "bearer-present" if re.fullmatch(r"Bearer \S+", v) else "malformed"
            elif lk == "x-api-key":
                out[lk] = "present" if re.fullmatch(r"\S+", v) else "malformed"
            else:
                out[lk] = v
        return out

    def sent_key(self):
        auth = self.headers.get("Authorization")
        if auth and auth.startswith("Bearer "):
            return auth[7:]
        return self.headers.get("x-api-key")

    def mark_end(self):
        self.t_end = time.time()

    def send_json(self, status, obj, extra=None):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.mark_end()
        self.wfile.write(data)

    def api_error(self, dialect, status, etype, message, extra=None):
        if dialect == "anthropic":
            obj = {"type": "error", "error": {"type": etype, "message": message}}
        else:
            obj = {"error": {"message": message, "type": etype, "param": None, "code": etype}}
        self.send_json(status, obj, extra)

    # ---- request validation, as the real APIs answer -------------------------------------------
    def validate_openai(self, body):
        if not self.headers.get("Content-Type", "").startswith("application/json"):
            return "Content-Type must be application/json"
        if not isinstance(body.get("model"), str) or not body["model"]:
            return "you must provide a model parameter"
        msgs = body.get("messages")
        if not isinstance(msgs, list) or not msgs:
            return "'messages' must be a non-empty array"
        for i, m in enumerate(msgs):
            if not isinstance(m, dict) or m.get("role") not in OPENAI_ROLES:
                return "messages[%d].role must be one of %s" % (i, sorted(OPENAI_ROLES))
            if not isinstance(m.get("content"), str):
                return "messages[%d].content must be a string" % i
        if "max_tokens" in body and "max_completion_tokens" in body:
            return "max_tokens and max_completion_tokens cannot both be set"
        for f in ("max_tokens", "max_completion_tokens"):
            if f in body and (not isinstance(body[f], int) or body[f] < 1):
                return "%s must be a positive integer" % f
        if "temperature" in body and not (isinstance(body["temperature"], (int, float)) and 0 <= body["temperature"] <= 2):
            return "temperature must be between 0 and 2"
        return None

    def validate_anthropic(self, body):
        if self.headers.get("anthropic-version") is None:
            return "anthropic-version: header is required"
        if not isinstance(body.get("model"), str) or not body["model"]:
            return "model: Field required"
        if not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1:
            return "max_tokens: Field required"
        if "system" in body and not isinstance(body["system"], (str, list)):
            return "system: Input should be a valid string"
        msgs = body.get("messages")
        if not isinstance(msgs, list) or not msgs:
            return "messages: at least one message is required"
        for i, m in enumerate(msgs):
            if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
                return "messages.%d.role: Input should be 'user' or 'assistant'" % i
            if not isinstance(m.get("content"), (str, list)):
                return "messages.%d.content: Field required" % i
            if i and msgs[i - 1].get("role") == m.get("role"):
                return "messages: roles must alternate between 'user' and 'assistant'"
        if msgs[0].get("role") != "user":
            return "messages: first message must use the 'user' role"
        return None

    # ---- replies ---------------------------------------------------------------------------------
    def reply_ok(self, dialect, entry, body, rid):
        text = entry.get("text", "")
        fin = entry.get("finish_reason", "stop")
        tin = entry.get("tokens_in", 10)
        tout = entry.get("tokens_out", 20)
        if dialect == "anthropic":
            stop = {"stop": "end_turn", "length": "max_tokens"}.get(fin, fin)
            obj = {"id": "msg_test", "type": "message", "role": "assistant", "model": body.get("model"),
                   "content": [{"type": "text", "text": text}], "stop_reason": stop, "stop_sequence": None,
                   "usage": {"input_tokens": tin, "output_tokens": tout}}
            hdr = {"request-id": rid}
        else:
            obj = {"id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()),
                   "model": body.get("model"),
                   "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                "finish_reason": fin}],
                   "usage": {"prompt_tokens": tin, "completion_tokens": tout, "total_tokens": tin + tout}}
            hdr = {"x-request-id": rid}
        self.send_json(200, obj, hdr)

    def do_POST(self):
        t_start = time.time()
        self.t_end = None
        gen = STATE["gen"]
        path = self.path
        if path == "/_control/script":
            return self.control()
        dialect = "anthropic" if path == "/v1/messages" else "openai" if path == "/v1/chat/completions" else None
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n > 0 else b""
        rec = {"t_start": t_start, "path": path, "headers": self.redacted_headers()}
        try:
            body = json.loads(raw.decode("utf-8")) if raw else None
        except (ValueError, UnicodeDecodeError):
            body = None
        rec["body"] = body if body is not None else raw.decode("utf-8", "replace")
        with STATE["lock"]:
            STATE["count"] += 1
            rid = "req_%d" % STATE["count"]
        rec["request_id"] = rid
        try:
            outcome = self.serve(dialect, body, rid)
        except (BrokenPipeError, ConnectionResetError):
            outcome = "client-gone"
        rec["outcome"] = outcome
        # t_end: when the reply started to go out, so a client's next request always starts after it
        rec["t_end"] = getattr(self, "t_end", None) or time.time()
        log_request(rec, gen)

    def serve(self, dialect, body, rid):
        script = STATE["script"]
        if dialect is None:
            self.send_json(404, {"error": {"message": "unknown path", "type": "not_found"}})
            return "404"
        if not isinstance(body, dict):
            self.api_error(dialect, 400, "invalid_request_error", "body is not a JSON object")
            return "400-shape"
        key = self.sent_key()
        if dialect == "anthropic" and not key:
            self.api_error(dialect, 401, "authentication_error", "x-api-key header is required")
            return "401"
        if script.get("require_key") is not None and key != script["require_key"]:
            self.api_error(dialect, 401, "authentication_error" if dialect == "anthropic" else "invalid_api_key",
                           "invalid x-api-key" if dialect == "anthropic" else "Incorrect API key provided")
            return "401"
        problem = self.validate_anthropic(body) if dialect == "anthropic" else self.validate_openai(body)
        if problem:
            self.api_error(dialect, 400, "invalid_request_error", problem)
            return "400-shape"
        for f in script.get("reject_fields", []):
            if f in body:
                self.api_error(dialect, 400, "invalid_request_error",
                               "Unsupported parameter: '%s' is not supported with this model." % f)
                return "400-field"
        entry, which = pick_entry(body)
        if entry is None:
            self.api_error(dialect, 400, "invalid_request_error", "script exhausted")
            return "exhausted"
        rid = entry.get("request_id", rid)
        if entry.get("delay_s"):
            time.sleep(float(entry["delay_s"]))
        fault = entry.get("fault")
        extra = {"x-request-id" if dialect == "openai" else "request-id": rid}
        if entry.get("retry_after") is not None:
            extra["retry-after"] = str(entry["retry_after"])
        if entry.get("retry_after_ms") is not None:
            extra["retry-after-ms"] = str(entry["retry_after_ms"])
        for k, v in (entry.get("headers") or {}).items():
            extra[k] = str(v)
        if entry.get("retry_after_in_s") is not None:  # retry-after as an HTTP date this far ahead
            extra["retry-after"] = email.utils.formatdate(time.time() + float(entry["retry_after_in_s"]), usegmt=True)
        msg = entry.get("message", "")
        if entry.get("echo_key"):
            msg = (msg + " key=%s" % key).strip()
        if fault == "429":
            if entry.get("quota"):
                self.api_error(dialect, 429, "insufficient_quota",
                               msg or "You exceeded your current quota, please check your plan and billing details.",
                               extra)
            else:
                self.api_error(dialect, 429, "rate_limit_error", msg or "Rate limit reached", extra)
        elif fault == "500":
            self.api_error(dialect, 500, "api_error", msg or "Internal server error", extra)
        elif fault == "529":
            self.api_error(dialect, 529, "overloaded_error", msg or "Overloaded", extra)
        elif fault == "status":
            st = int(entry.get("status", 400))
            self.api_error(dialect, st, entry.get("type", "invalid_request_error"), msg or "error %d" % st, extra)
        elif fault == "slow":
            time.sleep(float(entry.get("sleep_s", 5)))
            self.reply_ok(dialect, entry, body, rid)
        elif fault == "truncated":
            data = json.dumps({"choices": [{"message": {"content": "cut"}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data) + 100))
            for k, v in extra.items():
                self.send_header(k, v)
            self.end_headers()
            self.mark_end()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
        elif fault == "invalid_json":
            data = b'{"choices": [{"message": {"content": "unterminated'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in extra.items():
                self.send_header(k, v)
            self.end_headers()
            self.mark_end()
            self.wfile.write(data)
        elif fault == "empty_choices":
            if dialect == "anthropic":
                obj = {"id": "msg_test", "type": "message", "role": "assistant", "content": [],
                       "stop_reason": "end_turn", "usage": {"input_tokens": 5, "output_tokens": 0}}
            else:
                obj = {"id": "chatcmpl-test", "object": "chat.completion", "choices": [],
                       "usage": {"prompt_tokens": 5, "completion_tokens": 0}}
            self.send_json(200, obj, extra)
        elif fault:
            self.api_error(dialect, 500, "api_error", "unknown fault '%s' in test script" % fault)
        else:
            self.reply_ok(dialect, entry, body, rid)
        return fault or "ok"

    def control(self):
        # Lets one server serve a whole test binary: a new script, the reply counter back to 0, the log
        # emptied. Loopback only, like the rest.
        n = int(self.headers.get("Content-Length") or 0)
        try:
            script = json.loads(self.rfile.read(n) or b"{}")
        except ValueError:
            self.send_json(400, {"error": {"message": "script is not JSON", "type": "invalid_request_error"}})
            return
        with STATE["lock"]:
            STATE["script"] = script
            STATE["next"] = 0
            STATE["count"] = 0
            STATE["gen"] += 1
            if STATE["log"]:
                STATE["log"].seek(0)
                STATE["log"].truncate()
        self.send_json(200, {"ok": True})

    def do_GET(self):
        self.send_json(404, {"error": {"message": "unknown path", "type": "not_found"}})


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--script")
    ap.add_argument("--log")
    a = ap.parse_args()
    if a.script:
        with open(a.script) as f:
            STATE["script"] = json.load(f)
    if a.log:
        STATE["log"] = open(a.log, "w")
    srv = Server(("127.0.0.1", a.port), Handler)  # loopback only, never a public interface
    port = srv.server_address[1]
    if a.port_file:
        tmp = a.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.rename(tmp, a.port_file)
    print(port, flush=True)
    try:
        srv.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
