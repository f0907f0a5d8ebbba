#!/usr/bin/env python3
"""A scripted LLM API server for kforge's tests (stdlib only, loopback only).

Speaks OpenAI chat completions (POST /v1/chat/completions), the OpenAI Responses API (POST /v1/responses),
Anthropic messages (POST /v1/messages) and both model listings (GET /v1/models, GET /v1/models/ID), checks
request shapes the way the real APIs do (400 in the API's error format when invalid: unknown effort levels,
thinking budgets, cache_control blocks, fields a model rejects), replies from a script, logs every request
as one JSON line, and injects faults on demand, with the error codes and types the real APIs use.

Script (JSON):
  {"replies": [ENTRY, ...],                 served in order, one per request not caught by a rule
   "rules":   [{"match": REGEX, ...ENTRY}],  first rule whose regex matches the prompt text wins (reusable)
   "reject_fields": ["temperature"],        body fields answered with 400 unsupported_parameter
   "require_key": "KEY",                    answer 401 (listings too) unless this key is sent
   "models": ["gpt-x", ...],                the models that exist (listings, and 404 model_not_found for
                                            any other in a request); absent: every model exists
   "responses_only": ["gpt-x-pro"],         chat completions answers these with the API's 404
   "max_output": {"claude-3-haiku": 4096},  a max_tokens above it is a 400; the Anthropic model record
                                            states it as max_tokens
   "adaptive": ["claude-sonnet-5"]}         a manual thinking budget or a temperature is a 400
ENTRY: {"text": "...", "finish_reason": "stop"|"length", "tokens_in": 10, "tokens_out": 20, "delay_s": 0.0,
        "reasoning_tokens": 0, "cached_tokens": 0 (OpenAI cached input; Anthropic cache_read_input_tokens),
        "cache_write": 0 (Anthropic cache_creation_input_tokens), "refusal": "..." (the model refuses),
        "repeat": N (this entry serves N requests),
        "request_id": "req_1", "headers": {"x-should-retry": "false"} (extra reply headers),
        "retry_after_in_s": 2 (retry-after as an HTTP date that far ahead),
        "fault": "429" | "500" | "529" | "slow" | "truncated" | "invalid_json" | "empty_choices" | "status",
        "status": 401 (with fault "status"), "type": "...", "code": "...", "error_code": "..." (Anthropic
        details.error_code), "message": "...", "retry_after": "1", "retry_after_ms": "200",
        "quota": true (429 says a spend limit was reached, by code/type as each API does), "sleep_s": 3
        (slow), "echo_key": true (the error message repeats the key it got, to prove the client scrubs it)}
A 429 without "quota" carries OpenAI's real rate-limit text, which names billing: a client must decide by
the code, not the words. When the replies run out the server answers 400 "script exhausted". POST
/_control/script with a script as the body replaces the script, restarts the replies and empties the log
(one server per test binary).

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
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATE = {"script": {}, "next": 0, "served": 0, "lock": threading.Lock(), "log": None, "count": 0, "gen": 0}
OPENAI_ROLES = {"system", "developer", "user", "assistant", "tool"}
OPENAI_EFFORTS = {"none", "minimal", "low", "medium", "high", "xhigh"}
ANTHROPIC_EFFORTS = {"low", "medium", "high", "xhigh", "max"}
OPENAI_RATE_LIMIT = ("Rate limit reached for requests per min (RPM): Limit 500, Used 500, Requested 1. Please "
                     "try again in 120ms. Visit https://platform.openai.com/account/rate-limits to learn more. "
                     "You can increase your rate limit by adding a payment method to your account at "
                     "https://platform.openai.com/account/billing.")


def log_request(rec, gen):
    with STATE["lock"]:
        # A request still sleeping when the script was replaced belongs to an earlier test: drop it.
        if STATE["log"] and gen == STATE["gen"]:
            STATE["log"].write(json.dumps(rec) + "\n")
            STATE["log"].flush()


def content_text(c):
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        return "".join(b.get("text", "") for b in c if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def prompt_text(body):
    parts = []
    for k in ("system", "instructions"):
        if body.get(k) is not None:
            parts.append(content_text(body[k]))
    for m in (body.get("messages") or []) + (body.get("input") if isinstance(body.get("input"), list) else []):
        if isinstance(m, dict):
            parts.append(content_text(m.get("content")))
    if isinstance(body.get("input"), str):
        parts.append(body["input"])
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
        STATE["served"] += 1
        if STATE["served"] >= int(replies[i].get("repeat", 1)):
            STATE["next"] = i + 1
            STATE["served"] = 0
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

    def api_error(self, dialect, status, etype, message, extra=None, code=None, error_code=None, param=None):
        if dialect == "anthropic":
            obj = {"type": "error", "error": {"type": etype, "message": message}}
            if error_code:
                obj["error"]["details"] = {"error_code": error_code}
        else:
            obj = {"error": {"message": message, "type": etype, "param": param,
                             "code": code if code is not None else etype}}
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
        if "reasoning_effort" in body and body["reasoning_effort"] not in OPENAI_EFFORTS:
            return "Invalid value for 'reasoning_effort': must be one of %s" % sorted(OPENAI_EFFORTS)
        for f in ("input", "instructions", "max_output_tokens", "reasoning"):
            if f in body:
                return "Unrecognized request argument supplied: %s" % f
        return None

    def validate_responses(self, body):
        if not self.headers.get("Content-Type", "").startswith("application/json"):
            return "Content-Type must be application/json"
        if not isinstance(body.get("model"), str) or not body["model"]:
            return "you must provide a model parameter"
        if "messages" in body:
            return "Unsupported parameter: 'messages'. In the Responses API, this parameter has moved to 'input'."
        for f in ("max_tokens", "max_completion_tokens", "reasoning_effort"):
            if f in body:
                return "Unsupported parameter: '%s'." % f
        inp = body.get("input")
        if isinstance(inp, list):
            if not inp:
                return "'input' must not be empty"
            for i, m in enumerate(inp):
                if not isinstance(m, dict) or m.get("role") not in ("user", "assistant", "system", "developer"):
                    return "input[%d].role must be user, assistant, system or developer" % i
                if not isinstance(m.get("content"), (str, list)):
                    return "input[%d].content must be a string or a list of parts" % i
        elif not isinstance(inp, str):
            return "'input' must be a string or an array of input items"
        if "instructions" in body and not isinstance(body["instructions"], str):
            return "'instructions' must be a string"
        if "max_output_tokens" in body and (not isinstance(body["max_output_tokens"], int) or body["max_output_tokens"] < 16):
            return "max_output_tokens must be an integer >= 16"
        if "reasoning" in body:
            r = body["reasoning"]
            if not isinstance(r, dict) or set(r) - {"effort", "summary"} or \
                    ("effort" in r and r["effort"] not in OPENAI_EFFORTS):
                return "Invalid value for 'reasoning.effort': must be one of %s" % sorted(OPENAI_EFFORTS)
        if "store" in body and not isinstance(body["store"], bool):
            return "'store' must be a boolean"
        return None

    def check_blocks(self, blocks, where, counter):
        for j, b in enumerate(blocks):
            if not isinstance(b, dict) or b.get("type") != "text" or not isinstance(b.get("text"), str):
                return "%s.%d: Input should be a valid text block" % (where, j)
            if not b["text"]:
                return "%s.%d.text: text content blocks must be non-empty" % (where, j)
            if "cache_control" in b:
                cc = b["cache_control"]
                if not isinstance(cc, dict) or cc.get("type") != "ephemeral" or set(cc) - {"type", "ttl"}:
                    return "%s.%d.cache_control: Input tag does not match the expected tag 'ephemeral'" % (where, j)
                counter[0] += 1
            if set(b) - {"type", "text", "cache_control", "citations"}:
                return "%s.%d: Extra inputs are not permitted" % (where, j)
        return None

    def validate_anthropic(self, body):
        if self.headers.get("anthropic-version") is None:
            return "anthropic-version: header is required"
        if not isinstance(body.get("model"), str) or not body["model"]:
            return "model: Field required"
        if not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1:
            return "max_tokens: Field required"
        breakpoints = [0]
        if "system" in body and not isinstance(body["system"], (str, list)):
            return "system: Input should be a valid string"
        if isinstance(body.get("system"), list):
            p = self.check_blocks(body["system"], "system", breakpoints)
            if p:
                return p
        msgs = body.get("messages")
        if not isinstance(msgs, list) or not msgs:
            return "messages: at least one message is required"
        for i, m in enumerate(msgs):
            if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
                return "messages.%d.role: Input should be 'user' or 'assistant'" % i
            if not isinstance(m.get("content"), (str, list)):
                return "messages.%d.content: Field required" % i
            if isinstance(m["content"], list):
                p = self.check_blocks(m["content"], "messages.%d.content" % i, breakpoints)
                if p:
                    return p
            if i and msgs[i - 1].get("role") == m.get("role"):
                return "messages: roles must alternate between 'user' and 'assistant'"
        if msgs[0].get("role") != "user":
            return "messages: first message must use the 'user' role"
        if breakpoints[0] > 4:
            return "A maximum of 4 blocks with cache_control may be provided. Found %d." % breakpoints[0]
        if "thinking" in body:
            th = body["thinking"]
            if not isinstance(th, dict) or th.get("type") not in ("enabled", "disabled", "adaptive"):
                return "thinking: Input tag does not match any of the expected tags: 'enabled', 'disabled', 'adaptive'"
            if th.get("type") == "enabled":
                bt = th.get("budget_tokens")
                if not isinstance(bt, int) or bt < 1024:
                    return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
                if bt >= body["max_tokens"]:
                    return "`max_tokens` must be greater than `thinking.budget_tokens`."
                if "temperature" in body and body["temperature"] != 1:
                    return "`temperature` may only be set to 1 when thinking is enabled."
                if body.get("model") in STATE["script"].get("adaptive", []):
                    return "thinking.type.enabled is not supported for this model. Use thinking.type.adaptive and output_config.effort."
        if "output_config" in body:
            oc = body["output_config"]
            if not isinstance(oc, dict) or set(oc) - {"effort", "format"} or \
                    ("effort" in oc and oc["effort"] not in ANTHROPIC_EFFORTS):
                return "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'"
        if "temperature" in body and body.get("model") in STATE["script"].get("adaptive", []):
            return "temperature: setting sampling parameters to non-default values is not supported for this model"
        return None

    # ---- replies ---------------------------------------------------------------------------------
    def reply_ok(self, dialect, entry, body, rid):
        text = entry.get("text", "")
        fin = entry.get("finish_reason", "stop")
        tin = entry.get("tokens_in", 10)
        tout = entry.get("tokens_out", 20)
        reasoning = entry.get("reasoning_tokens", 0)
        cached = entry.get("cached_tokens", 0)
        refusal = entry.get("refusal")
        if dialect == "anthropic":
            stop = "refusal" if refusal is not None else {"stop": "end_turn", "length": "max_tokens"}.get(fin, fin)
            content = []
            if isinstance(body.get("thinking"), dict) and body["thinking"].get("type") == "enabled":
                content.append({"type": "thinking", "thinking": "Let me think about the kernel.", "signature": "sig"})
            if refusal is None and text:
                content.append({"type": "text", "text": text})
            write = entry.get("cache_write", 0)
            obj = {"id": "msg_test", "type": "message", "role": "assistant", "model": body.get("model"),
                   "content": content, "stop_reason": stop, "stop_sequence": None,
                   "usage": {"input_tokens": max(0, tin - cached - write), "output_tokens": tout,
                             "cache_creation_input_tokens": write, "cache_read_input_tokens": cached}}
            hdr = {"request-id": rid}
        elif dialect == "responses":
            parts = [{"type": "refusal", "refusal": refusal}] if refusal is not None else \
                ([{"type": "output_text", "text": text, "annotations": []}] if text else [])
            output = [{"id": "rs_test", "type": "reasoning", "summary": []}] if reasoning else []
            if parts:
                output.append({"id": "msg_test", "type": "message", "role": "assistant", "status": "completed",
                               "content": parts})
            incomplete = fin == "length"
            obj = {"id": "resp_test", "object": "response", "created_at": int(time.time()), "model": body.get("model"),
                   "status": "incomplete" if incomplete else "completed",
                   "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
                   "error": None, "output": output,
                   "usage": {"input_tokens": tin, "input_tokens_details": {"cached_tokens": cached},
                             "output_tokens": tout, "output_tokens_details": {"reasoning_tokens": reasoning},
                             "total_tokens": tin + tout}}
            hdr = {"x-request-id": rid}
        else:
            msg = {"role": "assistant", "content": None if refusal is not None else text}
            if refusal is not None:
                msg["refusal"] = refusal
            obj = {"id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()),
                   "model": body.get("model"),
                   "choices": [{"index": 0, "message": msg, "finish_reason": fin}],
                   "usage": {"prompt_tokens": tin, "completion_tokens": tout, "total_tokens": tin + tout,
                             "prompt_tokens_details": {"cached_tokens": cached},
                             "completion_tokens_details": {"reasoning_tokens": reasoning}}}
            hdr = {"x-request-id": rid}
        self.send_json(200, obj, hdr)

    def do_POST(self):
        t_start = time.time()
        self.t_end = None
        gen = STATE["gen"]
        path = self.path
        if path == "/_control/script":
            return self.control()
        dialect = {"/v1/messages": "anthropic", "/v1/chat/completions": "openai",
                   "/v1/responses": "responses"}.get(path)
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n > 0 else b""
        rec = {"t_start": t_start, "method": "POST", "path": path, "headers": self.redacted_headers()}
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

    def key_ok(self, dialect):
        script = STATE["script"]
        key = self.sent_key()
        if dialect == "anthropic" and not key:
            self.api_error(dialect, 401, "authentication_error", "x-api-key header is required")
            return False
        if script.get("require_key") is not None and key != script["require_key"]:
            if dialect == "anthropic":
                self.api_error(dialect, 401, "authentication_error", "invalid x-api-key")
            else:
                self.api_error("openai", 401, "invalid_request_error",
                               "Incorrect API key provided. You can find your API key at "
                               "https://platform.openai.com/account/api-keys.", code="invalid_api_key")
            return False
        return True

    def model_missing(self, dialect, model):
        models = STATE["script"].get("models")
        if models is None or model in models:
            return False
        if dialect == "anthropic":
            self.api_error(dialect, 404, "not_found_error", "model: %s" % model)
        else:
            self.api_error("openai", 404, "invalid_request_error",
                           "The model `%s` does not exist or you do not have access to it." % model,
                           code="model_not_found")
        return True

    def serve(self, dialect, body, rid):
        script = STATE["script"]
        if dialect is None:
            self.send_json(404, {"error": {"message": "unknown path", "type": "not_found"}})
            return "404"
        if not isinstance(body, dict):
            self.api_error(dialect, 400, "invalid_request_error", "body is not a JSON object")
            return "400-shape"
        key = self.sent_key()
        if not self.key_ok(dialect):
            return "401"
        problem = {"anthropic": self.validate_anthropic, "responses": self.validate_responses,
                   "openai": self.validate_openai}[dialect](body)
        if problem:
            code = "unsupported_parameter" if problem.startswith("Unsupported parameter") else None
            self.api_error(dialect, 400, "invalid_request_error", problem, code=code)
            return "400-shape"
        if self.model_missing(dialect, body.get("model")):
            return "404-model"
        if dialect == "openai" and body.get("model") in script.get("responses_only", []):
            self.api_error(dialect, 404, "invalid_request_error",
                           "This model is only supported in v1/responses and not in v1/chat/completions.",
                           code="", param="model")
            return "404-responses-only"
        cap = (script.get("max_output") or {}).get(body.get("model"))
        limit = body.get("max_tokens", body.get("max_completion_tokens", body.get("max_output_tokens")))
        if cap is not None and isinstance(limit, int) and limit > cap:
            self.api_error(dialect, 400, "invalid_request_error",
                           "max_tokens: %d > %d, which is the maximum allowed number of output tokens for %s"
                           % (limit, cap, body.get("model")))
            return "400-max-tokens"
        for f in script.get("reject_fields", []):
            if f in body:
                self.api_error(dialect, 400, "invalid_request_error",
                               "Unsupported parameter: '%s' is not supported with this model." % f,
                               code="unsupported_parameter", param=f)
                return "400-field"
        entry, which = pick_entry(body)
        if entry is None:
            self.api_error(dialect, 400, "invalid_request_error", "script exhausted")
            return "exhausted"
        rid = entry.get("request_id", rid)
        if entry.get("delay_s"):
            time.sleep(float(entry["delay_s"]))
        fault = entry.get("fault")
        extra = {"request-id" if dialect == "anthropic" else "x-request-id": rid}
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
            if entry.get("quota") and dialect == "anthropic":
                self.api_error(dialect, 429, "rate_limit_error",
                               msg or "You have reached your specified API usage limits.", extra,
                               error_code="enforced_spend_limit_reached")
            elif entry.get("quota"):
                self.api_error(dialect, 429, "insufficient_quota",
                               msg or "You exceeded your current quota, please check your plan and billing details.",
                               extra, code="insufficient_quota")
            elif dialect == "anthropic":
                self.api_error(dialect, 429, "rate_limit_error", msg or "Number of request tokens has exceeded "
                               "your per-minute rate limit", extra)
            else:
                self.api_error(dialect, 429, "requests", msg or OPENAI_RATE_LIMIT, extra, code="rate_limit_exceeded")
        elif fault == "500":
            self.api_error(dialect, 500, "api_error", msg or "Internal server error", extra)
        elif fault == "529":
            self.api_error(dialect, 529, "overloaded_error", msg or "Overloaded", extra)
        elif fault == "status":
            st = int(entry.get("status", 400))
            self.api_error(dialect, st, entry.get("type", "invalid_request_error"), msg or "error %d" % st, extra,
                           code=entry.get("code"), error_code=entry.get("error_code"))
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
            elif dialect == "responses":
                obj = {"id": "resp_test", "object": "response", "status": "completed", "output": [],
                       "usage": {"input_tokens": 5, "output_tokens": 0}}
            else:
                obj = {"id": "chatcmpl-test", "object": "chat.completion", "choices": [],
                       "usage": {"prompt_tokens": 5, "completion_tokens": 0}}
            self.send_json(200, obj, extra)
        elif fault:
            self.api_error(dialect, 500, "api_error", "unknown fault '%s' in test script" % fault)
        else:
            self.reply_ok(dialect, entry, body, rid)
        return fault or ("refusal" if entry.get("refusal") is not None else "ok")

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
            STATE["served"] = 0
            STATE["count"] = 0
            STATE["gen"] += 1
            if STATE["log"]:
                STATE["log"].seek(0)
                STATE["log"].truncate()
        self.send_json(200, {"ok": True})

    def do_GET(self):
        # The model listings: GET /v1/models (OpenAI: {"object": "list", "data": [...]}, Anthropic: with
        # has_more/first_id/last_id) and GET /v1/models/ID. The dialect is Anthropic's when its version
        # header is sent.
        t_start = time.time()
        gen = STATE["gen"]
        self.t_end = None
        rec = {"t_start": t_start, "method": "GET", "path": self.path, "headers": self.redacted_headers()}
        dialect = "anthropic" if self.headers.get("anthropic-version") else "openai"
        path = self.path.split("?")[0]
        outcome = "ok"
        if path == "/v1/models" or path.startswith("/v1/models/"):
            if not self.key_ok(dialect):
                outcome = "401"
            elif path == "/v1/models":
                ids = STATE["script"].get("models") or ["kforge-test-model"]
                data = [self.model_record(dialect, i) for i in ids]
                if dialect == "anthropic":
                    self.send_json(200, {"data": data, "has_more": False, "first_id": ids[0], "last_id": ids[-1]})
                else:
                    self.send_json(200, {"object": "list", "data": data})
            else:
                model = urllib.parse.unquote(path[len("/v1/models/"):])
                if self.model_missing(dialect, model):
                    outcome = "404-model"
                else:
                    self.send_json(200, self.model_record(dialect, model))
        else:
            self.send_json(404, {"error": {"message": "unknown path", "type": "not_found"}})
            outcome = "404"
        rec["outcome"] = outcome
        rec["t_end"] = self.t_end or time.time()
        log_request(rec, gen)

    def model_record(self, dialect, model):
        if dialect == "anthropic":
            cap = (STATE["script"].get("max_output") or {}).get(model, 0)
            return {"id": model, "type": "model", "display_name": model, "created_at": "2026-01-01T00:00:00Z",
                    "max_input_tokens": 0, "max_tokens": cap}
        return {"id": model, "object": "model", "created": 1767225600, "owned_by": "kforge-test"}


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
