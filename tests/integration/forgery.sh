#!/usr/bin/env bash
# The timing-forgery corpus (tests/forgery/README.md) on `kforge profile`, cpu backend: no forgery is a
# significant speedup above 1.15x; the genuinely faster control stays significant; and the protocol's
# facts are in the output (A/A noise band, checked rounds, the parent's clock).
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { skip "python3 not installed"; finish; exit; }

TASK=$TOP/tasks/examples/matmul_f32/task.json
F=$TOP/tests/forgery
# profile_json KERNEL: the --json result in $TMP/p.json (exit codes 0 and 1 are both answers)
profile_json() {
	"$KFORGE" profile "$TASK" "$1" --backend cpu --json >"$TMP/p.json" 2>"$TMP/p.err"
	local rc=$?
	[ "$rc" -le 1 ] || { echo "exit $rc: $(head -c 400 "$TMP/p.err")"; return 1; }
}
for k in poison_sniff memo_pointer memo_content memo_fingerprint; do
	if ! why=$(profile_json "$F/$k.cu"); then bad "$k: $why"; continue; fi
	r=$(python3 - "$TMP/p.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
shapes = d.get("profile", {}).get("shapes", []) if d["status"] == "pass" else []
bad = [s for s in shapes if s["speedup"]["significant"] and s["speedup"]["point"] > 1.15]
print("FORGED %.2fx" % bad[0]["speedup"]["point"] if bad else
      "%s%s" % (d["status"], "".join(" %.2fx (band %.3f)" % (s["speedup"]["point"], s["noise_band"]) for s in shapes)))
PY
)
	case "$r" in
	FORGED*) bad "$k: $r, reported as a significant speedup" ;;
	*) ok "$k: no significant speedup ($r)" ;;
	esac
done

# the control, and what the output says about the protocol
if why=$(profile_json "$F/honest_rows.cu"); then
	why=$(python3 - "$TMP/p.json" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "pass", (d["status"], d.get("reason"))
s = d["profile"]["shapes"][0]
assert s["speedup"]["significant"] and s["speedup"]["lo"] > 1 + s["noise_band"], s["speedup"]
assert s["noise_band"] >= 0.03 and "aa" in s and s["aa"]["reference_twin"]["samples"] == s["reference"]["samples"], s
assert 1 <= s["checked_rounds"] <= s["candidate"]["samples"], s["checked_rounds"]
assert s["candidate"]["clock_read_by"] == "parent" and s["candidate"]["worker_clock_median_ns"] > 0, s["candidate"]
PY
) && ok "honest_rows: still significantly faster, with the A/A band and checked rounds beside it" ||
		bad "honest_rows: $(tail -n 2 <<<"$why" | head -c 600)"
else
	bad "honest_rows: $why"
fi

# the poison sniffer passes verification and is timed (checked rounds): never a significant win, where the
# uncalibrated, unpoisoned protocol made it 7-9x
if profile_json "$F/poison_sniff.cu" >/dev/null; then
	python3 - "$TMP/p.json" <<'PY' && ok "poison_sniff: verified, then timed doing all its work" || bad "poison_sniff: $(head -c 600 "$TMP/p.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] in ("pass", "stateful"), d["status"]
if d["status"] == "pass":
    s = d["profile"]["shapes"][0]
    assert s["checked_rounds"] >= 1, s
    assert not (s["speedup"]["significant"] and s["speedup"]["point"] > 1.15), s["speedup"]
PY
fi
finish
