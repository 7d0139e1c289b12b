#!/usr/bin/env bash
# compare_outputs.sh BASE_BINARY NEW_BINARY [WORKDIR]
#
# Runs the same scenarios with two `geotrigger` binaries and compares what they wrote, byte for
# byte: events (standard output or -o), --rejects, --state-out, --map files, checkpoint folders
# (every snapshot file's bytes), generated scenarios, exit statuses, and the stderr summaries
# with only the figures that legitimately vary masked (times, rates, peak memory, wall-clock
# dates, broker ports). For `consume` (one member on a mock cluster of its own binary) the
# events topic, GROUP-rejects and GROUP-state are read back with kcat (events sorted by their
# "id", state chunks with their random snapshot number masked).
#
# Exit 0: every scenario identical. Exit 1: the scenarios and files that differ are listed, each
# with its first differing line (or byte). Exit 2: bad usage or a missing tool/dataset.
# See tools/compare/README.md.
set -uo pipefail

usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; }
if [ $# -lt 2 ] || [ $# -gt 3 ]; then usage >&2; exit 2; fi
for b in "$1" "$2"; do
  [ -x "$b" ] || { echo "compare: $b is not an executable" >&2; exit 2; }
done
BASE_BIN=$(realpath "$1")
NEW_BIN=$(realpath "$2")
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SHARED=${GEOTRIGGER_SHARED_DATASETS:-$REPO/../shared/datasets}
[ -d "$SHARED" ] || SHARED=/work/shared/datasets
if [ $# -eq 3 ]; then
  WORK=$(mkdir -p "$3" && cd "$3" && pwd)
else
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/geotrigger-compare.XXXXXX")
fi
for tool in python3 kcat cmp realpath; do
  command -v "$tool" >/dev/null || { echo "compare: $tool is needed (scripts/bootstrap installs kcat)" >&2; exit 2; }
done
for f in "$SHARED/liverpool_bus_route14/route14_outbound.csv" "$SHARED/ble_position_annotated_cc0/trk"; do
  [ -e "$f" ] || { echo "compare: $f is missing (set GEOTRIGGER_SHARED_DATASETS to the shared datasets folder)" >&2; exit 2; }
done

START=$(date +%s)
D=$WORK/data          # inputs, the same files for both binaries
STAGE=$WORK/stage     # every run happens here: the same absolute paths for both binaries
OUT=$WORK/out         # out/base/SCENARIO and out/new/SCENARIO: what each run wrote
rm -rf "$D" "$STAGE" "$OUT"
mkdir -p "$D" "$OUT/base" "$OUT/new"
LOG=$WORK/compare.log
: > "$LOG"
say() { printf '%s\n' "$*" | tee -a "$LOG"; }

SCENARIOS=0
FILES=0
FAILED=()
NOTES=()

bin_of() { if [ "$1" = base ]; then echo "$BASE_BIN"; else echo "$NEW_BIN"; fi; }

# Masks the figures of a stderr summary that vary from run to run, and nothing else.
mask_stderr() {
  sed -E \
    -e 's/(peak memory )[0-9.,]+ MiB/\1# MiB/' \
    -e 's/(elapsed )[0-9.,]+ s, [0-9,]+ records\/s/\1# s, # records\/s/' \
    -e 's/(loaded and indexed in )[0-9.,]+ s/\1# s/' \
    -e 's/(checkpoints: [0-9,]+ written in )[0-9.,]+ s/\1# s/' \
    -e 's/^(geotrigger: map .* bytes in )[0-9]+ ms$/\1# ms/' \
    -e 's/(resumed from snapshots in )[0-9.,]+ s/\1# s/' \
    -e 's/^(geotrigger: snapshots: .* MiB in )[0-9.,]+ s/\1# s/' \
    -e 's/^(geotrigger: .* assigned: .*) in [0-9.,]+ s$/\1 in # s/' \
    -e 's/^(geotrigger: consuming: [0-9,]+ records from ).*$/\1# to #, # s (#)/' \
    -e 's/^(geotrigger: CPU while consuming: )[0-9.,]+ s(.*, )[0-9.,]+ s/\1# s\2# s/' \
    -e 's/127\.0\.0\.1:[0-9]+/127.0.0.1:#/g'
}

# Moves what a run left in the stage into out/SIDE/NAME/files.
collect() {
  local dir=$1
  mkdir -p "$dir/files"
  shopt -s dotglob nullglob
  local f
  for f in "$STAGE"/*; do mv "$f" "$dir/files/"; done
  shopt -u dotglob nullglob
}

# Prints where two differing files first differ: a line for text, a byte for binary.
first_difference() {
  local a=$1 b=$2 rel=$3
  if [ ! -e "$a" ]; then echo "    $rel: only the new binary wrote it"; return; fi
  if [ ! -e "$b" ]; then echo "    $rel: only the base binary wrote it"; return; fi
  local c line byte
  c=$(cmp "$a" "$b" 2>&1 | head -1)
  if grep -qaP '[\x00-\x08\x0e-\x1f]' "$a" "$b" 2>/dev/null || [[ $rel == *.gtc ]]; then
    byte=$(sed -nE 's/.* differ: (char|byte) ([0-9]+).*/\2/p' <<< "$c")
    echo "    $rel: binary, first difference at byte ${byte:-?} (sizes $(stat -c %s "$a") and $(stat -c %s "$b") bytes)"
    return
  fi
  if [[ $c == *"EOF on"* ]]; then
    echo "    $rel: $c (sizes $(stat -c %s "$a") and $(stat -c %s "$b") bytes)"
    line=$(( $(wc -l < "$a") < $(wc -l < "$b") ? $(wc -l < "$a") + 1 : $(wc -l < "$b") + 1 ))
  else
    line=$(sed -E 's/.* line ([0-9]+).*/\1/' <<< "$c")
    echo "    $rel: first difference at line $line"
  fi
  # The two lines, from a little before their first differing column (long lines: state, hex).
  python3 - "$a" "$b" "$line" <<'PY'
import sys
a, b, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
def nth(path):
    with open(path, "rb") as f:
        for k, l in enumerate(f, 1):
            if k == n: return l.rstrip(b"\n").decode("utf-8", "replace")
    return "(no such line)"
x, y = nth(a), nth(b)
col = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
start = max(0, col - 80) if col > 200 else 0
where = f" (from column {start + 1}; they differ at column {col + 1})" if start else ""
print(f"      base{where}: {x[start:start + 400]}")
print(f"      new:  {y[start:start + 400]}")
PY
}

# Compares out/base/NAME with out/new/NAME (every file under them; stderr.raw is kept for
# reading but its masked copy is what is compared).
compare_scenario() {
  local name=$1 a=$OUT/base/$1 b=$OUT/new/$1
  local rel different=()
  SCENARIOS=$((SCENARIOS + 1))
  while IFS= read -r rel; do
    FILES=$((FILES + 1))
    if ! cmp -s "$a/$rel" "$b/$rel"; then different+=("$rel"); fi
  done < <( (cd "$a" && find . -type f ! -name stderr.raw ! -path './ignored/*'; cd "$b" && find . -type f ! -name stderr.raw ! -path './ignored/*') | sed 's|^\./||' | sort -u)
  if [ ${#different[@]} -eq 0 ]; then
    say "  same  $name"
  else
    say "  DIFF  $name"
    FAILED+=("$name")
    for rel in "${different[@]}"; do first_difference "$a/$rel" "$b/$rel" "$rel" | tee -a "$LOG"; done
  fi
}

# run_case NAME [--stdin FILE] [--expect STATUS] [--also ARGS...] -- ARGS...
# Runs `geotrigger ARGS` with each binary in the stage; --expect is the base binary's expected
# exit status (a scenario whose base run fails unexpectedly tests nothing, so it is a failure).
run_case() {
  local name=$1; shift
  local stdin=/dev/null expect=0
  while [ "$1" != "--" ]; do
    case $1 in
      --stdin) stdin=$2; shift 2 ;;
      --expect) expect=$2; shift 2 ;;
      *) echo "run_case: unknown option $1" >&2; exit 2 ;;
    esac
  done
  shift
  local side dir status
  for side in base new; do
    dir=$OUT/$side/$name
    rm -rf "$STAGE" "$dir"; mkdir -p "$STAGE" "$dir"
    (cd "$STAGE" && exec "$(bin_of $side)" "$@") < "$stdin" > "$dir/stdout" 2> "$dir/stderr.raw"
    status=$?
    echo "$status" > "$dir/status"
    mask_stderr < "$dir/stderr.raw" > "$dir/stderr"
    collect "$dir"
    if [ $side = base ] && [ "$status" != "$expect" ]; then
      NOTES+=("$name: the base binary exited $status, expected $expect (see $dir/stderr.raw)")
      FAILED+=("$name (base exit status $status, expected $expect)")
    fi
  done
  compare_scenario "$name"
}

# A replay killed with SIGKILL once snapshot number KILL_AT exists, then resumed with the same
# command: the final events, --rejects, --state-out and exit status are compared (not the
# checkpoint folder, whose snapshot numbers depend on where the kill landed).
run_kill_case() {
  local name=$1 kill_at=$2; shift 2
  local side dir pid status n f killed
  for side in base new; do
    dir=$OUT/$side/$name
    rm -rf "$STAGE" "$dir"; mkdir -p "$STAGE" "$dir/ignored"
    (cd "$STAGE" && exec "$(bin_of $side)" "$@") < /dev/null > "$dir/ignored/killed.stdout" 2> "$dir/ignored/killed.stderr" &
    pid=$!
    killed=no
    for _ in $(seq 1 3000); do
      n=0
      for f in "$STAGE"/ck/checkpoint-*.gtc; do
        [ -e "$f" ] || continue
        f=${f##*checkpoint-}; f=${f%.gtc}
        [ $((10#$f)) -gt $n ] && n=$((10#$f))
      done
      if [ $n -ge "$kill_at" ]; then kill -9 "$pid" 2>/dev/null && killed=yes; break; fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.005
    done
    { wait "$pid"; } 2> /dev/null
    echo "$?" > "$dir/ignored/killed.status"
    if [ $killed = no ]; then
      NOTES+=("$name ($side): the run ended before snapshot $kill_at existed, so it was not killed partway")
    else
      say "  ($name, $side: killed with SIGKILL at snapshot $n; $(wc -l < "$STAGE/events.ndjson" 2>/dev/null || echo 0) event lines written by then)"
    fi
    (cd "$STAGE" && exec "$(bin_of $side)" "$@") < /dev/null > "$dir/stdout" 2> "$dir/ignored/resumed.stderr"
    status=$?
    echo "$status" > "$dir/status"
    grep -q 'checkpoint: resumed after record' "$dir/ignored/resumed.stderr" || [ $killed = no ] \
      || NOTES+=("$name ($side): the second run did not say it resumed")
    mkdir -p "$dir/files"
    for f in events.ndjson rejects.tsv state.json; do [ -e "$STAGE/$f" ] && mv "$STAGE/$f" "$dir/files/"; done
    mv "$STAGE" "$dir/ignored/stage"
    if [ $side = base ] && [ "$status" != 0 ]; then
      FAILED+=("$name (base resumed run exited $status)")
    fi
  done
  compare_scenario "$name"
}

# Reads a topic back as text. events: "partition<TAB>key<TAB>value" sorted by the event's id
# (input partition, offset, index), exact repeats dropped (delivery is at least once);
# rejects: the same, sorted; state: one line per chunk, "partition key hex", with the
# chunk's random snapshot number (bytes 4-11) zeroed, sorted.
read_topic() {
  local brokers=$1 topic=$2 kind=$3
  kcat -C -b "$brokers" -t "$topic" -e -q -f '%p %K %S\n%k%s\n' 2>/dev/null | python3 -c '
import re, sys
kind = sys.argv[1]
data = sys.stdin.buffer.read()
i, rows = 0, []
while i < len(data):
    j = data.index(b"\n", i)
    p, klen, vlen = data[i:j].split(b" ")
    klen, vlen = max(0, int(klen)), max(0, int(vlen))
    key = data[j + 1:j + 1 + klen]
    value = data[j + 1 + klen:j + 1 + klen + vlen]
    i = j + 1 + klen + vlen + 1
    if kind == "state":
        value = value[:4] + bytes(8) + value[12:]
        rows.append((p, key, b"", p + b"\t" + key + b"\t" + value.hex().encode()))
    else:
        m = re.match(rb"\{\"id\":\"(\d+)-(\d+)-(\d+)\"", value)
        order = tuple(int(x) for x in m.groups()) if m else (0, 0, 0)
        rows.append((order, p, key, p + b"\t" + key + b"\t" + value))
rows.sort()
seen, out, repeats = set(), [], 0
for r in rows:
    if r[-1] in seen:
        repeats += 1
        continue
    seen.add(r[-1])
    out.append(r[-1])
sys.stdout.buffer.write(b"".join(x + b"\n" for x in out))
if repeats:
    sys.stderr.write(f"{repeats} repeated messages dropped\n")
' "$kind"
}

# consume with one member on a mock cluster started by the same binary: readings produced with
# kcat (keyed by device; the live region records to every partition, at their place), then the
# member runs until idle; the events, rejects and state topics are read back.
run_consume_case() {
  local name=$1; shift
  local side dir bin mock brokers status seg p
  for side in base new; do
    dir=$OUT/$side/$name
    bin=$(bin_of $side)
    rm -rf "$STAGE" "$dir"; mkdir -p "$STAGE" "$dir/files" "$dir/ignored"
    "$bin" mock-kafka --topic readings:4 --topic events:3 --topic g1-state:2 --topic g1-rejects:1 \
      > "$dir/ignored/broker.txt" 2> "$dir/ignored/mock.stderr" &
    mock=$!
    for _ in $(seq 1 200); do [ -s "$dir/ignored/broker.txt" ] && break; sleep 0.05; done
    brokers=$(head -1 "$dir/ignored/broker.txt")
    if [ -z "$brokers" ]; then
      FAILED+=("$name ($side: mock-kafka printed no address)"); kill "$mock" 2>/dev/null; wait "$mock" 2>/dev/null; continue
    fi
    for seg in "$D"/consume/segment-*; do
      if [[ $seg == *.keyed ]]; then
        kcat -P -b "$brokers" -t readings -K '|' < "$seg" 2>> "$dir/ignored/kcat.stderr"
      else
        for p in 0 1 2 3; do kcat -P -b "$brokers" -t readings -p $p < "$seg" 2>> "$dir/ignored/kcat.stderr"; done
      fi
    done
    (cd "$STAGE" && exec "$bin" consume "$@" --brokers "$brokers" --topic readings --group g1 --events-topic events \
       --exit-when-idle 8) < /dev/null > "$dir/stdout" 2> "$dir/stderr.raw"
    status=$?
    echo "$status" > "$dir/status"
    # Lines from several partitions interleave as the batches came: compared sorted.
    mask_stderr < "$dir/stderr.raw" | LC_ALL=C sort > "$dir/stderr"
    read_topic "$brokers" events events > "$dir/files/events-topic.txt" 2> "$dir/ignored/events-read.stderr"
    read_topic "$brokers" g1-rejects rejects > "$dir/files/rejects-topic.txt" 2> "$dir/ignored/rejects-read.stderr"
    read_topic "$brokers" g1-state state > "$dir/files/state-topic.txt" 2> "$dir/ignored/state-read.stderr"
    kill "$mock" 2>/dev/null; wait "$mock" 2>/dev/null
    collect "$dir"
    if [ $side = base ] && [ "$status" != 0 ]; then FAILED+=("$name (base consume exited $status)"); fi
    if [ $side = base ] && [ ! -s "$dir/files/events-topic.txt" ]; then FAILED+=("$name (no events read back)"); fi
    say "  ($name, $side: $(wc -l < "$dir/files/events-topic.txt") events, $(wc -l < "$dir/files/rejects-topic.txt") rejects, $(wc -l < "$dir/files/state-topic.txt") state chunks read back)"
  done
  compare_scenario "$name"
}

say "compare: base $BASE_BIN"
say "compare: new  $NEW_BIN"
say "compare: work folder $WORK"

# ------------------------------------------------------------------------------------------
# Inputs. The repository's data is copied, so a tree being edited meanwhile cannot change them.
R=$D/repo
mkdir -p "$R"
cp -r "$REPO/datasets" "$REPO/examples" "$R/"
cp -r "$REPO/Tests/GeotriggerCLITests/Fixtures" "$R/Fixtures"
F=$R/Fixtures
SC=$R/datasets/regions/slovenia-croatia

say "compare: generating scenario data with both binaries (compared), inputs from the base binary's"
run_case scenario-city -- scenario city --seed 1 --regions 20000 --devices 2000 --seconds 200 --out gen
run_case scenario-city-small -- scenario city --seed 11 --regions 3000 --devices 100 --seconds 150 --out gen
run_case scenario-world -- scenario world --seed 2 --regions 5000 --devices 300 --seconds 100 \
  --places "$R/datasets/poi_geonames/cities15000.csv" --out gen
run_case scenario-beacons -- scenario beacons --seed 3 --regions 300 --devices 200 --seconds 150 --out gen
for s in city city-small world beacons; do cp -r "$OUT/base/scenario-$s/files/gen" "$D/$s"; done

say "compare: converting the bus fleet, the BLE walks and writing the other inputs"
python3 - "$SHARED" "$D" "$F" <<'PY' || { echo "compare: preparing the inputs failed" >&2; exit 2; }
import csv, json, os, sys, random
shared, D, F = sys.argv[1:4]
def write(name, text, mode="w"):
    path = os.path.join(D, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode) as f: f.write(text)
    return path

# --- The Liverpool bus fleet, converted exactly as tools/oracle/bus_fleet.py and BusFleetTests do.
with open(os.path.join(shared, "liverpool_bus_route14", "route14_outbound.csv"), encoding="utf-8", newline="") as f:
    rows = list(csv.DictReader(f))
rows.sort(key=lambda r: r["timestamp"])
def line(r):
    t = r["timestamp"].replace(" ", "T") + "Z"
    return f'{{"t":"{t}","device":{json.dumps(r["vehicle_id"])},"lat":{r["latitude"]},"lon":{r["longitude"]}}}'
bus = [line(r) for r in rows]
text = "".join(l + "\n" for l in bus)
h = 0xCBF29CE484222325
for b in text.encode():
    h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
recorded = json.load(open(os.path.join(F, "bus-fleet.regions.geojson")))["properties"]["converted"]
if f"{h:016x}" != recorded["fnv1a64"] or len(bus) != recorded["fixes"]:
    sys.exit("bus fleet: the conversion differs from the one the fixtures record")
write("bus.ndjson", text)
devices = sorted({r["vehicle_id"] for r in rows})
even = [r for r in rows if devices.index(r["vehicle_id"]) % 2 == 0]
odd = [r for r in rows if devices.index(r["vehicle_id"]) % 2 == 1]
write("bus-even.ndjson", "".join(line(r) + "\n" for r in even))
def csv_text(rs, header="device,t,lat,lon"):
    out = [header]
    for r in rs:
        t = r["timestamp"].replace(" ", "T") + "Z"
        fields = {"device": f'"{r["vehicle_id"]}"', "t": t, "lat": r["latitude"], "lon": r["longitude"],
                  "accuracy": str(5 + int(r["id"]) % 30)}
        out.append(",".join(fields[k.strip('"')] for k in header.split(",")))
    return "\r\n".join(out) + "\r\n"
write("bus.csv", csv_text(rows))
write("bus-odd.csv", csv_text(odd, 'lon,lat,"device",accuracy,t'))
first_t = rows[0]["timestamp"].replace(" ", "T") + "Z"
# Requests on the bus stops: location (repeating, exit only), a repeating interval, a calendar
# trigger in Europe/London, a push one; control records for some buses.
write("bus-requests.json", json.dumps([
    {"id": "at-stop-01", "content": {"title": "Stop 1", "body": "Queen Square"}, "trigger": {"type": "location", "region": "stop-01", "repeats": True}},
    {"id": "left-terminus", "content": {"title": "Departed"}, "trigger": {"type": "location", "region": "terminus", "notifyOnEntry": False}},
    {"id": "stop-05", "content": {"title": "Stop 5", "badge": 2, "sound": "default"}, "trigger": {"type": "location", "region": "stop-05"}},
    {"id": "every-15", "content": {"title": "Quarter hour"}, "trigger": {"type": "timeInterval", "seconds": 900, "repeats": True}},
    {"id": "teatime", "content": {"title": "17:00"}, "trigger": {"type": "calendar", "components": {"hour": 17, "minute": 0}, "timeZone": "Europe/London"}},
    {"id": "news", "content": {"title": "Service update"}, "trigger": {"type": "push"}},
    {"id": "only-4720", "content": {"title": "Hello 4720"}, "devices": ["4720"], "trigger": {"type": "timeInterval", "seconds": 1200}},
], indent=1))
ctl = []
for k, r in enumerate(rows):
    if k % 97 != 40: continue
    t, d = r["timestamp"].replace(" ", "T") + "Z", r["vehicle_id"]
    j = (k // 97) % 5
    if j == 0: ctl.append({"t": t, "device": d, "op": "push", "id": "news"})
    elif j == 1: ctl.append({"t": t, "device": d, "op": "push", "id": "flash", "content": {"title": "Diversion"}})
    elif j == 2: ctl.append({"t": t, "device": d, "op": "add", "request": {"id": f"later-{k}", "content": {"body": "ten minutes on"}, "trigger": {"type": "timeInterval", "seconds": 600}}})
    elif j == 3: ctl.append({"t": t, "device": d, "op": "removePending", "ids": ["every-15", "no-such-id"]})
    else: ctl.append({"t": t, "device": d, "op": "respond", "id": "nothing-delivered", "action": "default"})
write("bus-controls.ndjson", "".join(json.dumps(c, separators=(",", ":")) + "\n" for c in ctl))

# --- Bad records of every kind among the first 700 fixes (for --rejects), a file with a byte
# order mark and CRLF ends, and a file whose line 700 is bad (for --strict).
bad = [
    '{"t":"2026-01-26T16:00:00Z","device":"4716","lat":91,"lon":-2.9}',
    '{"t":"2026-01-26T16:00:00Z","device":"4716","lat":53.4,"lon":200}',
    '{"t":"yesterday","device":"4716","lat":53.4,"lon":-2.9}',
    '{"device":"4716","lat":53.4,"lon":-2.9}',
    '{"t":"2026-01-26T16:00:00Z","lat":53.4,"lon":-2.9}',
    '{"t":"2026-01-26T16:00:00Z","device":"4716","lat":53.4,',
    '[1,2,3]',
    'not json at all',
    '{"t":"2026-01-26T16:00:00Z","device":"4716","lat":53.4,"lon":-2.9,"accuracy":-5}',
    '{"t":"2026-01-26T16:00:00Z","device":"4716","lat":1e999,"lon":-2.9}',
    '{"t":"2026-01-26T16:00:00Z","device":"4716","uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":1,"rssi":0}',
    '{"t":"2026-01-26T16:00:00Z","device":"4716","uuid":"not-a-uuid","major":1,"minor":1,"rssi":-60}',
    '{"t":"2026-01-26T16:00:00Z","device":"' + "x" * 300 + '","lat":53.4,"lon":-2.9}',
    '{"t":"10000-01-01T00:00:00Z","device":"4716","lat":53.4,"lon":-2.9}',
    '{"t":253402300800,"device":"4716","lat":53.4,"lon":-2.9}',
    '{"t":"2026-01-26T15:00:00Z","device":"4716","lat":53.4,"lon":-2.9}',
    '{"t":"2026-01-26T16:00:00Z","device":"4716","op":"frobnicate"}',
    '{"t":"2026-01-26T16:00:00Z","device":"4716","op":"respond","id":"nope","action":"default"}',
    '{"t":"2026-01-26T16:00:00Z","op":"removeRegion","id":"no-such-region"}',
    '{"t":"2026-01-26T16:00:00Z","device":"4716","op":"push","id":"x","payload":{"aps":{"alert":5}}}',
    '',
    '   ',
]
out = []
for k, l in enumerate(bus[:700]):
    out.append(l.encode())
    if k % 23 == 11:
        b = bad[(k // 23) % len(bad)]
        # keep the times near the fix's so "older than previous" is what the old time causes
        out.append(b.replace("2026-01-26T16:00:00Z", rows[k]["timestamp"].replace(" ", "T") + "Z").encode())
out.insert(300, b'{"t":"2026-01-26T16:10:00Z","device":"4716","lat":53.4,"lon":-2.9,"name":"\xff\xfe"}')
out.insert(400, b'{"t":"2026-01-26T16:10:00Z","device":"4716","lat":53.4,"lon":-2.9,"pad":"' + b"p" * (1 << 20) + b'"}')
write("bad.ndjson", b"".join(l + b"\n" for l in out), "wb")
write("bom.ndjson", b"\xef\xbb\xbf" + b"".join(l.replace("4716", "bom-bus").encode() + b"\r\n" for l in bus[700:760]), "wb")
strict = bus[:699] + ['{"t":"2026-01-26T17:00:00Z","device":"4716","lat":95,"lon":-2.9}'] + bus[699:]
write("strict.ndjson", "".join(l + "\n" for l in strict))

# --- Live regions: the hand-computed stream of LiveRegionsTests, and city readings with region
# records among them (as LiveRegionsTests.liveInputs makes them).
def circle(i, lon, lat, r):
    return {"type": "Feature", "id": i, "geometry": {"type": "Point", "coordinates": [lon, lat]}, "properties": {"radius": r}}
write("live/regions.geojson", json.dumps({"type": "FeatureCollection", "features": [circle("a", 16.0, 48.0, 100), circle("b", 16.01, 48.0, 100)]}))
write("live/requests.json", '[{"id":"bye-a","content":{"title":"bye"},"trigger":{"type":"location","region":"a","notifyOnEntry":false,"notifyOnExit":true}}]')
c = lambda i, lon, lat, r: json.dumps(circle(i, lon, lat, r), separators=(",", ":"))
write("live/in.ndjson", "\n".join([
    '{"t":1000,"device":"d1","lat":48.0,"lon":16.0}',
    '{"t":1000,"device":"d2","lat":48.0,"lon":16.0}',
    '{"t":1001,"device":"d3","lat":48.0,"lon":16.01}',
    '{"t":1005,"op":"removeRegion","id":"a"}',
    '{"t":1006,"device":"d1","lat":48.0,"lon":16.0}',
    '{"t":1007,"op":"addRegion","region":' + c("c", 16.0, 48.0, 50) + '}',
    '{"t":1008,"op":"addRegion","region":' + c("b", 16.0101, 48.0, 200) + '}',
    '{"t":1009,"device":"d1","lat":48.0,"lon":16.0}',
    '{"t":1010,"device":"d3","lat":48.0,"lon":16.01}',
    '{"t":1011,"device":"d2","op":"add","request":{"id":"late","content":{"title":"late"},"trigger":{"type":"location","region":"a"}}}',
    '{"t":1020,"op":"addRegion","region":' + c("a", 16.0, 48.0, 100) + '}',
    '{"t":1021,"device":"d2","lat":48.0,"lon":16.0}',
    '{"t":1022,"device":"d2","lat":48.01,"lon":16.0}',
    '{"t":1023,"op":"addRegion","region":{"type":"Feature","id":"p","geometry":{"type":"Polygon","coordinates":[[[16,48],[16.01,48.01],[16.01,48],[16,48.01],[16,48]]]}}}',
    '{"t":1024,"op":"addRegion","region":{"type":"Feature","id":"sq","geometry":{"type":"Polygon","coordinates":[[[15.999,47.999],[16.001,47.999],[16.001,48.001],[15.999,48.001],[15.999,47.999]]]}}}',
    '{"t":1025,"device":"d1","lat":48.0,"lon":16.0}',
    '{"t":1026,"op":"addRegion","region":{"type":"Feature","id":"bk","geometry":null,"properties":{"beacon":{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"}}}}',
    '{"t":1027,"device":"d1","op":"removeRegion","id":"c"}',
    '{"t":1030,"device":"d1","lat":48.0,"lon":16.0}',
    '']))
def live_city(regions_csv, readings, every):
    rows = [l.split(",") for l in open(regions_csv).read().split("\n")[1:] if l]
    out, k, centres = [], 0, {}
    for i, l in enumerate(open(readings).read().split("\n")):
        if not l: continue
        out.append(l)
        if i % every != every - 1: continue
        o = json.loads(l)
        t, lat, lon = o["t"], o["lat"], o["lon"]
        g = k // 5
        j = k % 5
        if j == 0: rec = {"op": "addRegion", "region": circle(f"new{g - 2}" if g >= 2 else "first", lon, lat, 250)}
        elif j == 1: rec = {"op": "removeRegion", "id": f"new{g - 1}" if g >= 1 else rows[0][0]}
        elif j == 2:
            centres[g] = (lat, lon); rec = {"op": "addRegion", "region": circle(f"new{g}", lon, lat, 300)}
        elif j == 3: rec = {"op": "addRegion", "region": circle(f"new{g}", centres[g][1], centres[g][0], 600)}
        else: rec = {"op": "removeRegion", "id": f"new{g - 1}" if g >= 1 else rows[0][0]}
        out.append(json.dumps({"t": t, **rec}, separators=(",", ":")))
        k += 1
    return "".join(l + "\n" for l in out)
write("live/city.ndjson", live_city(os.path.join(D, "city-small/regions.csv"), os.path.join(D, "city-small/readings.ndjson"), 97))

# --- Ever-new devices for --expire: device i reports 10 times, 1 s apart, and never again
# (10 alive at a time), walking through the small city's circles.
regions = [l.split(",") for l in open(os.path.join(D, "city-small/regions.csv")).read().split("\n")[1:] if l]
N, t0, ev = 4000, 1700000000, []
for s in range(N + 9):
    for i in range(max(0, s - 9), min(N, s + 1)):
        _, lat, lon, rad = regions[i % len(regions)]
        step = (s - i) - 4.5   # metres-ish steps through the circle's centre
        ev.append(f'{{"t":{t0 + s},"device":"n{i}","lat":{float(lat) + step * 0.0006:.6f},"lon":{float(lon):.6f}}}')
write("evernew.ndjson", "".join(l + "\n" for l in ev))

# --- The city (400,000 fixes) with bad records, for the checkpoint runs; requests for it.
lines = open(os.path.join(D, "city/readings.ndjson")).read().split("\n")
out = []
for k, l in enumerate(lines):
    if not l: continue
    out.append(l)
    if k % 9973 == 500:
        o = json.loads(l)
        out.append(json.dumps({"t": o["t"], "device": o["device"], "lat": 91, "lon": o["lon"]}, separators=(",", ":")))
    if k % 7919 == 300:
        o = json.loads(l)
        out.append(json.dumps({"t": o["t"], "device": o["device"], "op": "push", "id": "news", "content": {"title": "Road works"}}, separators=(",", ":")))
write("city-ck.ndjson", "".join(l + "\n" for l in out))
city_regions = [l.split(",")[0] for l in open(os.path.join(D, "city/regions.csv")).read().split("\n")[1:] if l]
write("city-requests.json", json.dumps(
    [{"id": f"at-{r}", "content": {"title": f"Near {r}"}, "trigger": {"type": "location", "region": r, "repeats": k % 2 == 0, "notifyOnExit": k % 3 == 0}}
     for k, r in enumerate(city_regions[:200:7])]
    + [{"id": "stretch", "content": {"title": "Stretch"}, "trigger": {"type": "timeInterval", "seconds": 90, "repeats": True}},
       {"id": "news", "content": {"title": "News"}, "trigger": {"type": "push"}}]))

# --- consume: the small city's readings keyed by device with bad records and pushes mixed in
# (at most 20 bad ones, so that stderr reports them all whatever the interleaving), and two live
# region records produced to every partition at their place in the stream.
lines = [l for l in open(os.path.join(D, "city-small/readings.ndjson")).read().split("\n") if l]
keyed = []
for k, l in enumerate(lines):
    o = json.loads(l)
    d, t = o["device"], o["t"]
    keyed.append(f"{d}|{l}")
    if k % 1997 == 500: keyed.append(f'{d}|{{"t":{t},"device":"{d}","lat":91,"lon":16.3}}')
    if k % 2999 == 700: keyed.append(f'{d}|{{"t":{t},"device":"{d}","lat":48.2,')
    if k % 1201 == 300: keyed.append(f'{d}|{{"t":{t},"device":"{d}","op":"push","id":"news","content":{{"title":"Road works"}}}}')
    if k % 3001 == 900: keyed.append(f'{d}|{{"t":{t - 100},"device":"{d}","lat":48.2,"lon":16.3}}')
n = len(keyed)
small_regions = [l.split(",") for l in open(os.path.join(D, "city-small/regions.csv")).read().split("\n")[1:] if l]
t_add = json.loads(keyed[n // 2].split("|", 1)[1])["t"]
t_remove = json.loads(keyed[n * 7 // 10].split("|", 1)[1])["t"]
_, lat, lon, _ = small_regions[5]
write("consume/segment-1.keyed", "".join(x + "\n" for x in keyed[:n // 2]))
write("consume/segment-2.all", json.dumps({"t": t_add, "op": "addRegion", "region": circle("added-1", float(lon), float(lat), 600)}, separators=(",", ":")) + "\n")
write("consume/segment-3.keyed", "".join(x + "\n" for x in keyed[n // 2:n * 7 // 10]))
write("consume/segment-4.all", json.dumps({"t": t_remove, "op": "removeRegion", "id": small_regions[7][0]}, separators=(",", ":")) + "\n")
write("consume/segment-5.keyed", "".join(x + "\n" for x in keyed[n * 7 // 10:]))
write("consume/until.txt", str(json.loads(keyed[-1].split("|", 1)[1])["t"] + 300))
small_ids = [r[0] for r in small_regions]
write("consume/requests.json", json.dumps(
    [{"id": f"at-{r}", "content": {"title": f"Near {r}"}, "trigger": {"type": "location", "region": r, "repeats": k % 2 == 0, "notifyOnExit": k % 3 == 0}}
     for k, r in enumerate(small_ids[:60:3])]
    + [{"id": "stretch", "content": {"title": "Stretch"}, "trigger": {"type": "timeInterval", "seconds": 90, "repeats": True}},
       {"id": "news", "content": {"title": "News"}, "trigger": {"type": "push"}}]))

# --- Inputs for the exit statuses of bad files.
write("bad-regions.geojson", '{"type":"FeatureCollection","features":[{"type":"Feature","id":"x","geometry":{"type":"Point","coordinates":[16,48]},"properties":{"radius":-5}}]}')
write("bad-requests.json", '[{"id":"r1","content":{"title":"t"},"trigger":{"type":"location","region":"no-such-region"}}]')
PY

# The BLE walks: receivers as beacons, converted by the repository's own tool, with and
# without positions (as tools/ble/evaluate.py and BLEWalkQualityTests feed them).
WALKS=()
for mbd in "$SHARED"/ble_position_annotated_cc0/trk/*_all_sensors.mbd; do
  walk=$(basename "$mbd" _all_sensors.mbd)
  WALKS+=("$walk")
  python3 "$REPO/tools/ble/convert.py" "$mbd" --out "$D/ble/$walk-plain" > /dev/null \
    && python3 "$REPO/tools/ble/convert.py" "$mbd" --out "$D/ble/$walk-positions" --positions > /dev/null \
    || { echo "compare: tools/ble/convert.py failed on $walk" >&2; exit 2; }
done

# ------------------------------------------------------------------------------------------
say "compare: replay scenarios"
EXACT=(--hysteresis 0 --max-accuracy 0 --initial enter)
GPX=$R/datasets/gpxpy_tracks
BUSR=$F/bus-fleet.regions.geojson

# The README's demo command, map included.
run_case readme-demo -- replay --regions "$SC.geojson" --requests "$R/examples/demo/requests.json" --dwell 600 \
  --map demo-map.html "$GPX/cerknicko-jezero.gpx" "$R/examples/demo/pushes.ndjson"
cp "$OUT/base/readme-demo/stdout" "$D/demo-events.ndjson"
run_case map-svg -- map --regions "$SC.geojson" --events "$D/demo-events.ndjson" "$GPX/cerknicko-jezero.gpx" -o map.svg
run_case map-html-all-tracks -- map --regions "$SC.geojson" --title "All four" --width 800 --height 600 \
  "$GPX/Mojstrovka.gpx" "$GPX/around-visnjan-with-car.gpx" "$GPX/cerknicko-jezero.gpx" "$GPX/korita-zbevnica.gpx" -o map.html

# GPX: the four demo tracks merged (Mojstrovka's corrupt 1901 times rejected), CSV regions, --device.
run_case gpx-all-merged -- replay --regions "$SC.geojson" --dwell 300 --echo-properties --rejects rejects.tsv \
  --state-out state.json "$GPX/Mojstrovka.gpx" "$GPX/around-visnjan-with-car.gpx" "$GPX/cerknicko-jezero.gpx" "$GPX/korita-zbevnica.gpx"
run_case gpx-all-csv-regions-exact -- replay --regions "$SC.csv" "${EXACT[@]}" -o events.ndjson \
  "$GPX/Mojstrovka.gpx" "$GPX/around-visnjan-with-car.gpx" "$GPX/cerknicko-jezero.gpx" "$GPX/korita-zbevnica.gpx"
run_case gpx-device-initial-none -- replay --regions "$SC.geojson" --device hiker --initial none --hysteresis 5 \
  --state-out state.json "$GPX/korita-zbevnica.gpx"
run_case gpx-stdin-format --stdin "$GPX/korita-zbevnica.gpx" -- replay --regions "$SC.geojson" --format gpx --device walker
run_case gpx-strict-mojstrovka --expect 65 -- replay --regions "$SC.geojson" --strict --rejects rejects.tsv "$GPX/Mojstrovka.gpx"

# Notifications: the README's Cerknica command (calendar trigger reached through --until), and
# what follows a delivery (categories, responses, authorization, payloads, a service extension).
run_case notifications-cerknica-until -- replay --regions "$SC.geojson" --requests "$F/cerknicko-requests.json" \
  --until 2010-08-05T17:00:00Z --state-out state.json --rejects rejects.tsv "$F/cerknicko-jezero.ndjson" "$F/cerknicko-controls.ndjson"
run_case notifications-after-delivery -- replay --regions "$SC.geojson" --state-out state.json --rejects rejects.tsv \
  --service-extension "sh $R/examples/notifications/extension.sh" "$R/examples/notifications/records.ndjson"

# The bus fleet (NDJSON from ../shared/datasets): --jobs 1, 2, 4 with dwell, requests, controls.
for j in 1 2 4; do
  run_case bus-fleet-jobs$j -- replay --regions "$BUSR" --dwell 60 --requests "$D/bus-requests.json" --jobs $j \
    -o events.ndjson --rejects rejects.tsv --state-out state.json "$D/bus.ndjson" "$D/bus-controls.ndjson"
done
run_case bus-fleet-exact-stdin --stdin "$D/bus.ndjson" -- replay --regions "$BUSR" "${EXACT[@]}"
run_case bus-fleet-csv -- replay --regions "$BUSR" --dwell 60 --max-accuracy 20 --state-out state.json "$D/bus.csv"
run_case bus-fleet-csv-stdin --stdin "$D/bus.csv" -- replay --regions "$BUSR" --format csv --hysteresis 0
run_case bus-fleet-several-inputs -- replay --regions "$BUSR" --requests "$D/bus-requests.json" --dwell 120 \
  --rejects rejects.tsv --state-out state.json "$D/bus-even.ndjson" "$D/bus-odd.csv" "$D/bus-controls.ndjson" "$D/bom.ndjson"
run_case bus-fleet-several-inputs-jobs2 -- replay --regions "$BUSR" --requests "$D/bus-requests.json" --dwell 120 --jobs 2 \
  --rejects rejects.tsv --state-out state.json "$D/bus-even.ndjson" "$D/bus-odd.csv" "$D/bus-controls.ndjson" "$D/bom.ndjson"
for j in 1 2; do
  run_case bus-fleet-expire-jobs$j -- replay --regions "$BUSR" --expire 120 --dwell 60 --requests "$D/bus-requests.json" \
    --jobs $j --state-out state.json "$D/bus.ndjson" "$D/bus-controls.ndjson"
done
run_case bus-fleet-until -- replay --regions "$BUSR" --dwell 600 --requests "$D/bus-requests.json" \
  --until 2026-01-26T20:00:00Z --state-out state.json "$D/bus.ndjson"
run_case bus-fleet-until-jobs2 -- replay --regions "$BUSR" --dwell 600 --requests "$D/bus-requests.json" --jobs 2 \
  --until 1769461200 --state-out state.json "$D/bus.ndjson"

# Rejects and --strict.
for j in 1 2; do
  run_case rejects-jobs$j -- replay --regions "$BUSR" --requests "$D/bus-requests.json" --jobs $j --rejects rejects.tsv \
    --state-out state.json -o events.ndjson "$D/bad.ndjson" "$D/bom.ndjson"
  run_case strict-jobs$j --expect 65 -- replay --regions "$BUSR" --strict --jobs $j --rejects rejects.tsv -o events.ndjson \
    --state-out state.json "$D/strict.ndjson"
done
run_case strict-quiet --expect 65 -- replay --regions "$BUSR" --strict -q "$D/bad.ndjson"

# Exact mode (the oracle fixtures: across the antimeridian, over the poles) and the other
# decision options.
for f in antimeridian polar-north polar-south; do
  run_case exact-$f -- replay --regions "$F/$f.regions.geojson" "${EXACT[@]}" "$F/$f.ndjson"
done

# The city: --jobs 1, 2, 4, both trees, the plain path, dwell, --until, --state-out.
CITY_UNTIL=$(( $(tail -1 "$D/city/readings.ndjson" | sed -E 's/^\{"t":([0-9]+).*/\1/') + 600 ))
for j in 1 2 4; do
  run_case city-exact-dwell-jobs$j -- replay --regions "$D/city/regions.csv" "${EXACT[@]}" --dwell 45 --until "$CITY_UNTIL" \
    --jobs $j -o events.ndjson --state-out state.json "$D/city/readings.ndjson"
done
run_case city-default-requests -- replay --regions "$D/city/regions.csv" --requests "$D/city-requests.json" --dwell 60 \
  -o events.ndjson --rejects rejects.tsv --state-out state.json "$D/city-ck.ndjson"
run_case city-index-geos -- replay --regions "$D/city/regions.csv" --index geos --dwell 60 -o events.ndjson "$D/city/readings.ndjson"
run_case city-plain-path -- replay --regions "$D/city/regions.csv" --safe-distance 0 --hysteresis 30 -o events.ndjson "$D/city/readings.ndjson"
run_case world -- replay --regions "$D/world/regions.csv" --dwell 30 --state-out state.json -o events.ndjson "$D/world/readings.ndjson"
run_case world-jobs2 -- replay --regions "$D/world/regions.csv" --dwell 30 --jobs 2 --state-out state.json -o events.ndjson "$D/world/readings.ndjson"

# Beacons: the lobby demo, the beacons scenario, and the five real BLE walks with and without
# positions (default options, as tools/ble/evaluate.py runs them).
run_case beacons-lobby-demo -- replay --regions "$R/datasets/beacons/lobby.geojson" --requests "$R/datasets/beacons/requests.json" \
  --until 2025-11-22T08:30:00Z --state-out state.json "$R/datasets/beacons/walk.ndjson"
for j in 1 2; do
  run_case beacons-scenario-jobs$j -- replay --regions "$D/beacons/regions.geojson" --beacon-exit 10 --dwell 30 --jobs $j \
    -o events.ndjson --state-out state.json "$D/beacons/readings.ndjson"
done
for walk in "${WALKS[@]}"; do
  for mode in plain positions; do
    run_case ble-$walk-$mode -- replay --regions "$D/ble/$walk-$mode/regions.geojson" --state-out state.json \
      "$D/ble/$walk-$mode/sightings.ndjson"
  done
done

# Live regions: the hand-computed stream (polygons, a beacon region refused, a device-carrying
# region record refused) and the city with region records, --jobs 1 and 2, the GEOS tree.
run_case live-regions-hand -- replay --regions "$D/live/regions.geojson" --requests "$D/live/requests.json" --dwell 4 \
  --rejects rejects.tsv --state-out state.json "$D/live/in.ndjson"
for j in 1 2; do
  run_case live-regions-city-jobs$j -- replay --regions "$D/city-small/regions.csv" --dwell 15 --jobs $j \
    --rejects rejects.tsv --state-out state.json -o events.ndjson "$D/live/city.ndjson"
done
run_case live-regions-city-geos -- replay --regions "$D/city-small/regions.csv" --dwell 15 --index geos \
  --rejects rejects.tsv -o events.ndjson "$D/live/city.ndjson"

# Expiry on ever-new devices.
for j in 1 2; do
  run_case expire-evernew-jobs$j -- replay --regions "$D/city-small/regions.csv" --expire 60 --dwell 3 --jobs $j \
    --state-out state.json -o events.ndjson "$D/evernew.ndjson"
done

# Exit statuses of bad usage and bad files.
run_case error-missing-input --expect 66 -- replay --regions "$BUSR" "$D/no-such-file.ndjson"
run_case error-missing-regions --expect 66 -- replay --regions "$D/no-such-regions.geojson" "$D/bus.ndjson"
run_case error-bad-regions --expect 65 -- replay --regions "$D/bad-regions.geojson" "$D/bus.ndjson"
run_case error-bad-requests --expect 65 -- replay --regions "$BUSR" --requests "$D/bad-requests.json" "$D/bus.ndjson"
run_case error-usage --expect 64 -- replay --regions "$BUSR" --jobs 0 "$D/bus.ndjson"

# ------------------------------------------------------------------------------------------
say "compare: checkpoints"
CK=(replay --regions "$D/city/regions.csv" --requests "$D/city-requests.json" --dwell 60 -o events.ndjson
    --rejects rejects.tsv --state-out state.json --checkpoint ck)
for j in 1 2; do
  # Run to the end with a snapshot every 10,000 records: every snapshot file compared; then the
  # same command again (after the end it writes the same files again).
  run_case checkpoint-complete-jobs$j -- "${CK[@]}" --checkpoint-every 10000 --jobs $j "$D/city-ck.ndjson"
  for side in base new; do
    rm -rf "$STAGE"; mkdir -p "$STAGE"
    cp -r "$OUT/$side/checkpoint-complete-jobs$j/files/." "$STAGE/"
    dir=$OUT/$side/checkpoint-rerun-jobs$j
    rm -rf "$dir"; mkdir -p "$dir"
    (cd "$STAGE" && exec "$(bin_of $side)" "${CK[@]}" --checkpoint-every 10000 --jobs $j "$D/city-ck.ndjson") \
      < /dev/null > "$dir/stdout" 2> "$dir/stderr.raw"
    echo $? > "$dir/status"
    mask_stderr < "$dir/stderr.raw" > "$dir/stderr"
    collect "$dir"
  done
  compare_scenario checkpoint-rerun-jobs$j
  # Killed with SIGKILL partway (once the 4th snapshot exists), then resumed.
  run_kill_case checkpoint-kill9-resume-jobs$j 4 "${CK[@]}" --checkpoint-every 10000 --jobs $j "$D/city-ck.ndjson"
done

# Snapshots of the other parts of the state, run to the end: expiry (the reader's free ids and
# expiry queue with --jobs 2), applied live region records, beacon tracks and zones.
for j in 1 2; do
  run_case checkpoint-expire-jobs$j -- replay --regions "$D/city-small/regions.csv" --expire 60 --dwell 3 --jobs $j \
    --state-out state.json -o events.ndjson --checkpoint ck --checkpoint-every 5000 "$D/evernew.ndjson"
done
run_case checkpoint-live-regions-jobs2 -- replay --regions "$D/city-small/regions.csv" --dwell 15 --jobs 2 \
  --rejects rejects.tsv --state-out state.json -o events.ndjson --checkpoint ck --checkpoint-every 3000 "$D/live/city.ndjson"
run_case checkpoint-beacons -- replay --regions "$D/beacons/regions.geojson" --beacon-exit 10 --dwell 30 \
  -o events.ndjson --state-out state.json --checkpoint ck --checkpoint-every 5000 "$D/beacons/readings.ndjson"
run_case checkpoint-ble-positions -- replay --regions "$D/ble/${WALKS[0]}-positions/regions.geojson" \
  -o events.ndjson --state-out state.json --checkpoint ck --checkpoint-every 500 "$D/ble/${WALKS[0]}-positions/sightings.ndjson"
run_case checkpoint-notifications -- replay --regions "$SC.geojson" --requests "$F/cerknicko-requests.json" \
  --until 2010-08-05T17:00:00Z --state-out state.json -o events.ndjson --checkpoint ck --checkpoint-every 50 \
  "$F/cerknicko-jezero.ndjson" "$F/cerknicko-controls.ndjson"

# ------------------------------------------------------------------------------------------
say "compare: consume (one member, mock cluster)"
run_consume_case consume-1-member --regions "$D/city-small/regions.csv" --requests "$D/consume/requests.json" \
  "${EXACT[@]}" --dwell 45 --until "$(cat "$D/consume/until.txt")"

# ------------------------------------------------------------------------------------------
END=$(date +%s)
say ""
for n in "${NOTES[@]}"; do say "note: $n"; done
if [ ${#FAILED[@]} -eq 0 ]; then
  say "compare: all $SCENARIOS scenarios identical ($FILES files compared) in $((END - START)) s; outputs in $OUT"
  exit 0
fi
say "compare: ${#FAILED[@]} of $SCENARIOS scenarios differ ($FILES files compared, $((END - START)) s): ${FAILED[*]}"
say "compare: outputs in $OUT, this report in $LOG"
exit 1
