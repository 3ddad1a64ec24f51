#!/bin/sh
# Your own agent on Temporal workers: a worker started with --agent FILE.py:NAME (or
# module:NAME) runs the runs started with the same --agent and --engine temporal, built from
# its own agent (its model, tools and options). Needs a Temporal frontend and the shared
# Postgres store:  TEMPORAL=HOST:7233 STORE=postgresql://... sh examples/worker_agent.sh
# LOOPWRIGHT runs the CLI.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
lw=${LOOPWRIGHT:-loopwright}
queue=support-$$
agent="$here/worker_agent.py:support"
log=$(mktemp)

$lw worker --temporal "$TEMPORAL" --store "$STORE" --task-queue "$queue" \
    --agent "$agent" > "$log" 2>&1 &
worker=$!
trap 'kill "$worker" 2> /dev/null || true; wait "$worker" 2> /dev/null || true; rm -f "$log"' EXIT

$lw run "Where is order 42?" --agent "$agent" --engine temporal --temporal "$TEMPORAL" \
    --store "$STORE" --task-queue "$queue" 2> /dev/null | grep 'Final Answer'
$lw runs list --store "$STORE" --json |  # the run's model: the worker's agent's
    python3 -c 'import json, sys; r = json.load(sys.stdin)[0]; print(r["status"], r["model"])'
