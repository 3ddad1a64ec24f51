#!/bin/sh
# An agent built in Python on the command line (--agent FILE.py:NAME or module:NAME): its
# run ends waiting at a destructive call, is listed as waiting, approved from the command
# line, and resumed with the same agent. LOOPWRIGHT runs the CLI.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
lw=${LOOPWRIGHT:-loopwright}
work=$(mktemp -d)
LOOPWRIGHT_STORE=$work/runs.db
REPORTS=$work
export LOOPWRIGHT_STORE REPORTS
echo "numbers" > "$work/2023.txt"

$lw run "Clean up old reports" --agent "$here/cli_agent.py:cleaner" > /dev/null 2>&1 || true
$lw runs list --status waiting | cut -f2,7
run_id=$($lw runs list --json | python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["run_id"])')

$lw runs approve "$run_id" --reason "ok, it is archived" | cut -d' ' -f1,4-
$lw runs resume "$run_id" --agent "$here/cli_agent.py:cleaner" 2> /dev/null | grep 'Final Answer'
$lw runs list | cut -f2,7
test ! -e "$work/2023.txt" && echo "2023.txt is gone"
rm -r "$work"
