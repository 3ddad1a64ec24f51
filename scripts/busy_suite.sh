#!/usr/bin/env bash
# The whole test suite on a busy machine: a fresh clone's `make test`, N times in a row,
# beside a load, with each run's duration and the load average every 30 s.
#
#   scripts/busy_suite.sh cpu 3 [COMMIT] [OUT]    # beside two CPU-bound processes
#   scripts/busy_suite.sh model 3 [COMMIT] [OUT]  # beside a local-model process (the
#                                                 # default model answering in a loop)
#
# COMMIT defaults to HEAD of this checkout; OUT (default: /tmp/loopwright-busy-KIND) gets
# summary.txt (one line a run: exit code, seconds), test-I.log and load-I.log.
# docs/benchmarks.md ("The test suite") has the figures this gave.
set -u
KIND=${1:?cpu or model}
N=${2:?how many runs}
REPO=$(cd "$(dirname "$0")/.." && pwd)
COMMIT=${3:-$(git -C "$REPO" rev-parse HEAD)}
OUT=${4:-/tmp/loopwright-busy-$KIND}
case $KIND in cpu | model) ;; *) echo "busy_suite.sh: KIND is cpu or model, not '$KIND'" >&2; exit 2 ;; esac
mkdir -p "$OUT"
for i in $(seq 1 "$N"); do
  CLONE=$OUT/clone-$i
  rm -rf "$CLONE"
  git clone -q "$REPO" "$CLONE" && git -C "$CLONE" checkout -q "$COMMIT" || exit 1
  LOADS=()
  if [ "$KIND" = cpu ]; then
    python3 -c "while True: pass" & LOADS+=($!)
    python3 -c "while True: pass" & LOADS+=($!)
  else
    (while true; do "$REPO/.venv/bin/loopwright" run "What is (123 + 456) * 7?" --model local \
      --tools "$REPO/examples/tools.py:add,$REPO/examples/tools.py:multiply" >/dev/null 2>&1
    done) & LOADS+=($!)
  fi
  (while true; do echo "$(date +%T) $(cut -d' ' -f1-3 /proc/loadavg)"; sleep 30; done) \
    >"$OUT/load-$i.log" & WATCH=$!
  START=$(date +%s)
  (cd "$CLONE" && make test) >"$OUT/test-$i.log" 2>&1
  RC=$?
  END=$(date +%s)
  kill "$WATCH"
  for pid in "${LOADS[@]}"; do pkill -P "$pid" 2>/dev/null; kill "$pid" 2>/dev/null; done
  echo "run $i kind=$KIND commit=$COMMIT rc=$RC seconds=$((END - START))" >>"$OUT/summary.txt"
done
