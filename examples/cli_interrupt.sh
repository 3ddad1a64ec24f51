#!/bin/sh
# Ctrl-C leaves a run interrupted: `runs resume` goes on with it, `runs cancel` ends it.
# A run waits at a gate (--approve echo), gets SIGINT (what Ctrl-C sends), and is resumed;
# a second one is cancelled. LOOPWRIGHT runs the CLI.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
lw=${LOOPWRIGHT:-loopwright}
work=$(mktemp -d)
LOOPWRIGHT_STORE=$work/runs.db
export LOOPWRIGHT_STORE

interrupt_a_run() {  # start a run, wait for its gate, Ctrl-C it
    : > "$work/events"  # emptied first: the wait below must not see the run before's gate
    $lw run "$1" --model "scripted:$here/echo.json" --tools echo --approve echo --json \
        > "$work/events" 2> "$work/err" &
    pid=$!
    until grep -q confirmation_required "$work/events"; do sleep 0.2; done
    kill -INT "$pid"
    wait "$pid" || echo "exit status $?"
    grep -o 'was interrupted.*' "$work/err" | sed 's/run_[0-9a-f]*/RUN_ID/g; s/ --store [^`]*//g'
}

interrupt_a_run "say hello"
$lw runs list | cut -f2,7
first=$($lw runs list --json | python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["run_id"])')
$lw runs resume "$first" --yes 2> /dev/null | grep 'Final Answer'

interrupt_a_run "say hello again"
second=$($lw runs list --json | python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["run_id"])')
$lw runs cancel "$second" | sed 's/run_[0-9a-f]*/RUN_ID/'
$lw runs list | cut -f2,7
rm -r "$work"
