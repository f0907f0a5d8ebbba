#!/usr/bin/env bash
# kforge-test: parallel (no timing checks: tests/run.sh may run it beside another script)
# The scripted LLM test server (tests/llm_server.py) itself: it must refuse malformed requests the way the
# real APIs do (so the client tests mean something), reply from its script by order and by rule, redact
# keys in its log and listen on loopback only. Driven with the curl command-line tool.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || { skip "python3 not installed"; finish; exit; }
command -v curl >/dev/null || { skip "curl not installed"; finish; exit; }

cat >"$TMP/script.json" <<'EOF'
{"rules": [{"match": "RULE-[0-9]+", "text": "from a rule"}],
 "replies": [{"text": "first", "tokens_in": 7, "tokens_out": 3, "request_id": "req_fixed"},
             {"text": "second", "finish_reason": "length"}]}
EOF
python3 "$TOP/tests/llm_server.py" --port 0 --port-file "$TMP/port" --script "$TMP/script.json" \
	--log "$TMP/log.jsonl" >"$TMP/server.out" 2>&1 &
srv=$!
trap 'kill $srv 2>/dev/null; wait $srv 2>/dev/null; rm -rf "$TMP"' EXIT
# up to 60 s: python starts slowly on a loaded CI box; stop early if it died
for _ in $(seq 600); do [ -s "$TMP/port" ] && break; kill -0 $srv 2>/dev/null || break; sleep 0.1; done
port=$(cat "$TMP/port" 2>/dev/null)
[ -n "$port" ] && ok "server started on port $port" || { bad "server did not start: $(cat "$TMP/server.out")"; finish; exit; }
base="http://127.0.0.1:$port"

# post PATH BODY [HEADER...]: status in $code, body in $TMP/body
post() {
	local path=$1 body=$2; shift 2
	local args=()
	for h in "$@"; do args+=(-H "$h"); done
	code=$(curl -s -o "$TMP/body" -w '%{http_code}' -X POST "$base$path" -H 'Content-Type: application/json' \
		"${args[@]}" --data "$body")
}
expect() { # expect CODE JQ-FILTER DESC
	if [ "$code" = "$1" ] && jq -e "$2" "$TMP/body" >/dev/null 2>&1; then ok "$3"; else bad "$3 (http $code: $(head -c 300 "$TMP/body"))"; fi
}

OA=/v1/chat/completions
AN=/v1/messages
KEY='Authorization: Bearer sk-integration-SECRET'
msgs='"messages":[{"role":"system","content":"s"},{"role":"user","content":"hello"}]'

post $OA "{\"model\":\"m\",$msgs,\"max_completion_tokens\":10}" "$KEY"
expect 200 '.choices[0].message.content == "first" and .usage.prompt_tokens == 7 and .choices[0].finish_reason == "stop"' \
	"openai: first scripted reply with usage"
post $OA "{\"model\":\"m\",$msgs}"
expect 200 '.choices[0].message.content == "second" and .choices[0].finish_reason == "length"' "openai: replies in order"
post $OA '{"model":"m","messages":[{"role":"user","content":"please RULE-42"}]}'
expect 200 '.choices[0].message.content == "from a rule"' "a rule matching the prompt wins over the order"
post $OA "{\"model\":\"m\",$msgs}"
expect 400 '.error.message == "script exhausted"' "exhausted script answers 400"

post $OA "{$msgs}"
expect 400 '.error.type == "invalid_request_error" and (.error.message | test("model"))' "openai: missing model is a 400"
post $OA '{"model":"m","messages":[]}'
expect 400 '.error.message | test("messages")' "openai: empty messages is a 400"
post $OA '{"model":"m","messages":[{"role":"robot","content":"x"}]}'
expect 400 '.error.message | test("role")' "openai: unknown role is a 400"
post $OA "{\"model\":\"m\",$msgs,\"max_tokens\":5,\"max_completion_tokens\":5}"
expect 400 '.error.message | test("cannot both")' "openai: both token-limit fields is a 400"
post $OA "{\"model\":\"m\",$msgs,\"temperature\":7}"
expect 400 '.error.message | test("temperature")' "openai: temperature out of range is a 400"
post $OA 'not json'
expect 400 '.error.message | test("JSON")' "openai: a body that is not JSON is a 400"

AH=('x-api-key: sk-ant-SECRET' 'anthropic-version: 2023-06-01')
post $AN '{"model":"m","messages":[{"role":"user","content":"x"}]}' "${AH[@]}"
expect 400 '.type == "error" and .error.message == "max_tokens: Field required"' "anthropic: max_tokens is required"
post $AN '{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}]}' 'anthropic-version: 2023-06-01'
expect 401 '.error.type == "authentication_error"' "anthropic: no x-api-key is a 401"
post $AN '{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}]}' 'x-api-key: k'
expect 400 '.error.message | test("anthropic-version")' "anthropic: anthropic-version header is required"
post $AN '{"model":"m","max_tokens":5,"messages":[{"role":"system","content":"s"},{"role":"user","content":"x"}]}' "${AH[@]}"
expect 400 '.error.message | test("role")' "anthropic: a system role inside messages is a 400"
post $AN '{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}' "${AH[@]}"
expect 400 '.error.message | test("alternate")' "anthropic: roles must alternate"
post $AN '{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":"a"}]}' "${AH[@]}"
expect 400 '.error.message | test("first message")' "anthropic: the first message must be the user's"
post $AN '{"model":"m","max_tokens":5,"system":"s","messages":[{"role":"user","content":"RULE-1"}]}' "${AH[@]}"
expect 200 '.content[0].type == "text" and .content[0].text == "from a rule" and .stop_reason == "end_turn" and (.usage.input_tokens|type) == "number"' \
	"anthropic: a valid request gets a messages reply"
post /v1/nowhere '{}'
[ "$code" = 404 ] && ok "unknown path is a 404" || bad "unknown path gave $code"

# the Responses API, reasoning and thinking fields, prompt-cache blocks, model listings: checked as strictly
curl -s -o /dev/null -X POST "$base/_control/script" --data \
	'{"models":["gpt-5.5-pro","claude-opus-4-6"],"responses_only":["gpt-5.5-pro"],"adaptive":["claude-sonnet-5"],
	  "replies":[{"text":"r1","repeat":20,"reasoning_tokens":7,"cached_tokens":3}]}'
RS=/v1/responses
post $RS '{"model":"gpt-5.5-pro","messages":[{"role":"user","content":"x"}]}'
expect 400 '.error.message | test("moved to .input.")' "responses: messages is a 400 pointing to input"
post $RS '{"model":"gpt-5.5-pro","input":[{"role":"user","content":"x"}],"max_output_tokens":8}'
expect 400 '.error.message | test(">= 16")' "responses: max_output_tokens below 16 is a 400"
post $RS '{"model":"gpt-5.5-pro","input":[{"role":"user","content":"x"}],"reasoning":{"effort":"huge"}}'
expect 400 '.error.message | test("reasoning.effort")' "responses: an unknown effort is a 400"
post $RS '{"model":"gpt-5.5-pro","instructions":"s","input":[{"role":"user","content":"x"}],"max_output_tokens":100,"reasoning":{"effort":"high"},"store":false}' "$KEY"
expect 200 '.output[-1].content[0].type == "output_text" and .output[-1].content[0].text == "r1" and .usage.output_tokens_details.reasoning_tokens == 7 and .usage.input_tokens_details.cached_tokens == 3' \
	"responses: a valid request gets output_text with reasoning and cache usage"
post $OA '{"model":"gpt-5.5-pro","messages":[{"role":"user","content":"x"}]}'
expect 404 '.error.message | test("only supported in v1/responses")' "chat completions: a Responses-only model is a 404"
post $OA '{"model":"gpt-nope","messages":[{"role":"user","content":"x"}]}'
expect 404 '.error.code == "model_not_found"' "chat completions: an unknown model is a 404 model_not_found"
post $OA '{"model":"gpt-5.5-pro","messages":[{"role":"user","content":"x"}],"reasoning_effort":"huge"}'
expect 400 '.error.message | test("reasoning_effort")' "chat completions: an unknown reasoning_effort is a 400"
ANT='{"model":"claude-opus-4-6","max_tokens":5000,"messages":[{"role":"user","content":"x"}]'
post $AN "${ANT%?}],\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":500}}" "${AH[@]}"
expect 400 '.error.message | test("1024")' "anthropic: a thinking budget below 1024 is a 400"
post $AN "${ANT%?}],\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":6000}}" "${AH[@]}"
expect 400 '.error.message | test("greater than")' "anthropic: a budget not below max_tokens is a 400"
post $AN "${ANT%?}],\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":2000},\"temperature\":0.5}" "${AH[@]}"
expect 400 '.error.message | test("temperature")' "anthropic: a temperature with thinking is a 400"
post $AN "${ANT%?}],\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":2000},\"output_config\":{\"effort\":\"max\"}}" "${AH[@]}"
expect 200 '.content[0].type == "thinking" and .content[1].text == "r1"' "anthropic: thinking blocks come before the text"
post $AN '{"model":"claude-opus-4-6","max_tokens":50,"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},{"type":"text","text":"b"}]}]}' "${AH[@]}"
expect 200 '.usage.cache_read_input_tokens == 3' "anthropic: cache_control blocks are accepted and usage reports cache reads"
post $AN '{"model":"claude-opus-4-6","max_tokens":50,"messages":[{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"forever"}}]}]}' "${AH[@]}"
expect 400 '.error.message | test("ephemeral")' "anthropic: a bad cache_control is a 400"
post $AN '{"model":"claude-sonnet-5","max_tokens":5000,"messages":[{"role":"user","content":"x"}],"thinking":{"type":"enabled","budget_tokens":2000}}' "${AH[@]}"
expect 400 '.error.message | test("adaptive")' "anthropic: a manual budget on an adaptive model is a 400"
code=$(curl -s -o "$TMP/body" -w '%{http_code}' "$base/v1/models/gpt-5.5-pro" -H "$KEY")
expect 200 '.id == "gpt-5.5-pro" and .object == "model"' "GET /v1/models/ID for a listed model"
code=$(curl -s -o "$TMP/body" -w '%{http_code}' "$base/v1/models/gpt-nope" -H "$KEY")
expect 404 '.error.code == "model_not_found"' "GET /v1/models/ID for another model is a 404 model_not_found"
code=$(curl -s -o "$TMP/body" -w '%{http_code}' "$base/v1/models/claude-nope" -H "${AH[0]}" -H "${AH[1]}")
expect 404 '.error.type == "not_found_error"' "anthropic GET /v1/models/ID: not_found_error"
code=$(curl -s -o "$TMP/body" -w '%{http_code}' "$base/v1/models" -H "$KEY")
expect 200 '.object == "list" and (.data | map(.id)) == ["gpt-5.5-pro","claude-opus-4-6"]' "GET /v1/models lists the models"
curl -s -o /dev/null -X POST "$base/_control/script" --data '{"require_key":"right","replies":[{"fault":"429"},{"fault":"429","quota":true}]}'
code=$(curl -s -o "$TMP/body" -w '%{http_code}' "$base/v1/models/x" -H "$KEY")
expect 401 '.error.code == "invalid_api_key"' "a listing with the wrong key is a 401 invalid_api_key"
post $OA "{\"model\":\"m\",$msgs}" 'Authorization: Bearer right'
expect 429 '.error.code == "rate_limit_exceeded" and (.error.message | test("billing"))' \
	"a plain 429 is rate_limit_exceeded, with OpenAI's text that names billing"
post $OA "{\"model\":\"m\",$msgs}" 'Authorization: Bearer right'
expect 429 '.error.code == "insufficient_quota"' "a quota 429 is insufficient_quota"

# faults: a new script through the control endpoint
curl -s -o /dev/null -X POST "$base/_control/script" --data \
	'{"replies":[{"fault":"429","retry_after":"3"},{"fault":"529"},{"fault":"truncated"},{"fault":"invalid_json"},{"fault":"empty_choices"},{"fault":"429","quota":true}]}'
hdr=$(curl -s -D - -o "$TMP/body" -X POST "$base$OA" -H 'Content-Type: application/json' --data "{\"model\":\"m\",$msgs}")
echo "$hdr" | grep -qi '^retry-after: 3' && echo "$hdr" | grep -q ' 429 ' && ok "fault 429 with retry-after" || bad "429 fault: $hdr"
post $OA "{\"model\":\"m\",$msgs}"
expect 529 '.error.type == "overloaded_error"' "fault 529 overloaded"
curl -s -o /dev/null -X POST "$base$OA" -H 'Content-Type: application/json' --data "{\"model\":\"m\",$msgs}"
rc=$?
[ "$rc" = 18 ] && ok "fault truncated: curl sees a partial body (exit 18)" || bad "truncated fault: curl exit $rc"
post $OA "{\"model\":\"m\",$msgs}"
[ "$code" = 200 ] && ! jq . "$TMP/body" >/dev/null 2>&1 && ok "fault invalid_json: 200 with a body that is not JSON" || bad "invalid_json fault"
post $OA "{\"model\":\"m\",$msgs}"
expect 200 '.choices == []' "fault empty_choices"
post $OA "{\"model\":\"m\",$msgs}"
expect 429 '.error.code == "insufficient_quota"' "fault 429 quota says insufficient_quota"

# the log: one line per request, keys redacted, timestamps present (the control call emptied it)
n=$(wc -l <"$TMP/log.jsonl")
[ "$n" -eq 6 ] && ok "log has one line per request since the last script ($n)" || bad "log has $n lines, want 6"
curl -s -o /dev/null -X POST "$base/_control/script" --data '{"replies":[{"text":"x"}]}'
post $OA "{\"model\":\"m\",$msgs}" "$KEY"
post $AN '{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}]}' "${AH[@]}"
sleep 0.2
grep -q SECRET "$TMP/log.jsonl" && bad "a key reached the server log" || ok "keys never reach the server log"
[ "$(jq -r 'select(.path=="/v1/chat/completions") | .headers.authorization' "$TMP/log.jsonl")" = bearer-present ] &&
	ok "log records that a bearer key was present" || bad "authorization not recorded as present"
[ "$(jq -r 'select(.path=="/v1/messages") | .headers["x-api-key"]' "$TMP/log.jsonl")" = present ] &&
	ok "log records that an x-api-key was present" || bad "x-api-key not recorded as present"
# (jq 1.6 -e exits 4 when the last input gives no output, so slurp and pick the line)
jq -se 'map(select(.path=="/v1/chat/completions"))[0] | (.t_start|type)=="number" and (.t_end >= .t_start) and .body.model=="m"' \
	"$TMP/log.jsonl" >/dev/null && ok "log lines carry timestamps and the body" || bad "log line fields: $(head -c 600 "$TMP/log.jsonl")"

# loopback only
if command -v ss >/dev/null; then
	ss -ltn | grep -q "127.0.0.1:$port " && ! ss -ltn | grep -qE "(0\.0\.0\.0|\*|\[::\]):$port " &&
		ok "listens on 127.0.0.1 only" || bad "listening sockets: $(ss -ltn | grep ":$port ")"
else
	skip "ss not installed"
fi
finish
