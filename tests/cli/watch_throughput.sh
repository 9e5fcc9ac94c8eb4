#!/usr/bin/env bash
# Measures whether `evring watch` keeps up with a fast writer when its output
# goes to a file: a producer writes COUNT small events at RATE per second, and
# watch follows from the oldest event into a file on tmpfs. Prints the
# producer's and watch's own reports, elapsed times and lost events.
#
#   EVRING_BIN=build/tools/evring PRODUCER_BIN=build/examples/producer \
#       tests/cli/watch_throughput.sh [RATE] [COUNT] [FORMAT] [WHERE]
#
# WHERE: a filter expression (`watch --where`) over the producer's schema
# (schemas/demo.toml), e.g. 'type == TRADE && quantity > 500'.
set -eu
: "${EVRING_BIN:?}" "${PRODUCER_BIN:?}"
RATE=${1:-1000000}
COUNT=${2:-5000000}
FORMAT=${3:-text}
WHERE=${4:-}
where_args=(); [[ -n $WHERE ]] && where_args=(--where "$WHERE")
WORK=$(mktemp -d /dev/shm/evring-throughput-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
export EVRING_RING_DIR="$WORK/rings"
mkdir -p "$EVRING_RING_DIR"

rate_args=(--rate "$RATE"); [[ $RATE == max ]] && rate_args=()
"$PRODUCER_BIN" perf:20:28 "${rate_args[@]}" --count "$COUNT" 2>"$WORK/producer.err" &
producer=$!
until "$EVRING_BIN" info perf >/dev/null 2>&1; do sleep 0.01; done
start=$(date +%s.%N)
/usr/bin/time -f "watch: %e s elapsed, %U s user, %S s system, %M KB max RSS" \
    "$EVRING_BIN" watch perf --from oldest --format "$FORMAT" "${where_args[@]}" >"$WORK/out" 2>"$WORK/watch.err"
end=$(date +%s.%N)
wait "$producer"
cat "$WORK/producer.err"
grep -v "^evring: lost" "$WORK/watch.err" || true
echo "gap lines: $(grep -c '^evring: lost' "$WORK/watch.err" || true)"
echo "output: $(wc -l < "$WORK/out") lines, $(stat -c %s "$WORK/out") bytes"
echo "rate asked: $RATE events/s; watch ran $(echo "$end - $start" | bc) s for $COUNT events"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
