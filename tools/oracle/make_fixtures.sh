#!/usr/bin/env bash
# Regenerates the demo regions and the exact-mode end-to-end fixtures.
#
#   python3 -m pip install geographiclib shapely     # once (tested: geographiclib 2.1, shapely 2.0, Python 3.11)
#   bash tools/oracle/make_fixtures.sh               # from anywhere inside the repo
#
# Writes datasets/regions/slovenia-croatia.{geojson,csv} (make_regions.py), the derived traces and
# their regions in Tests/GeotriggerCLITests/Fixtures/ (derive_traces.py), and every
# Tests/GeotriggerCLITests/Fixtures/*.expected.ndjson (exact_events.py; the bus fleet's regions and
# events via bus_fleet.py, only if ../shared/datasets/liverpool_bus_route14 exists). A developer tool: CI does
# not run it (CI compares the Swift CLI's output with the committed files). It is deterministic:
# running it again on an unchanged tree must leave `git status` clean.
# Fails (non-zero) if any fix lies within 1 cm of a circle boundary.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PYTHON:-python3}
O=tools/oracle
F=Tests/GeotriggerCLITests/Fixtures
T=datasets/gpxpy_tracks
R=datasets/regions/slovenia-croatia.geojson

$PY $O/make_regions.py
$PY $O/derive_traces.py

oracle() { # OUT REGIONS READINGS...
  local out=$1; shift
  echo "== $out" >&2
  $PY $O/exact_events.py --stats -o "$F/$out" "$@"
}

# (i) the real GPX tracks, each alone and all four together (merged by time, file order as given)
for g in Mojstrovka around-visnjan-with-car cerknicko-jezero korita-zbevnica; do
  oracle "gpx-$g.expected.ndjson" "$R" "$T/$g.gpx"
done
oracle gpx-all.expected.ndjson "$R" "$T/Mojstrovka.gpx" "$T/around-visnjan-with-car.gpx" \
  "$T/cerknicko-jezero.gpx" "$T/korita-zbevnica.gpx"
# the circles-only CSV regions file with the same tracks
oracle gpx-all.csv-regions.expected.ndjson datasets/regions/slovenia-croatia.csv "$T/Mojstrovka.gpx" \
  "$T/around-visnjan-with-car.gpx" "$T/cerknicko-jezero.gpx" "$T/korita-zbevnica.gpx"
# the NDJSON copy of one track (fed on stdin by the test): must equal the GPX result
oracle cerknicko-jezero.expected.ndjson "$R" "$F/cerknicko-jezero.ndjson"
cmp "$F/cerknicko-jezero.expected.ndjson" "$F/gpx-cerknicko-jezero.expected.ndjson"

# (ii) antimeridian and (iii) polar traces derived from the real tracks
for s in antimeridian polar-north polar-south; do
  oracle "$s.expected.ndjson" "$F/$s.regions.geojson" "$F/$s.ndjson"
done

# (iv) the Liverpool bus fleet (OGL v3): not in the repository, read from ../shared beside it; only
# its regions and expected events are committed. Skipped when ../shared is absent.
BUS=../shared/datasets/liverpool_bus_route14/route14_outbound.csv
if [ -f "$BUS" ]; then
  echo "== bus-fleet.regions.geojson, bus-fleet.expected.ndjson" >&2
  $PY $O/bus_fleet.py --csv "$BUS"
else
  echo "== bus fleet skipped: $BUS absent (committed bus-fleet.* fixtures left as they are)" >&2
fi

wc -l "$F"/*.expected.ndjson >&2
