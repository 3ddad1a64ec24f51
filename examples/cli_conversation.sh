#!/bin/sh
# A conversation from the command line: `loopwright chat` (each line a turn), then
# `loopwright run --after RUN_ID` (one more turn), then `loopwright runs fork`.
# A script file stands in for the LLM (--model scripted:FILE); LOOPWRIGHT runs the CLI.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
lw=${LOOPWRIGHT:-loopwright}
work=$(mktemp -d)
LOOPWRIGHT_STORE=$work/runs.db
export LOOPWRIGHT_STORE

# two turns and the list of this conversation's runs, then the end of input
printf 'What is 12 USD in GBP?\nand in EUR?\n/runs\n' |
    $lw chat --model "scripted:$here/chat_script.json" --tools echo > "$work/chat.out" 2> /dev/null
grep -E '^ +[0-9]+  run_' "$work/chat.out"
last=$($lw runs list --json | python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["run_id"])')

# one more turn, from another command: the model gets both turns before it
fork_script=$work/script.json
python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))[4:]))' \
    "$here/chat_script.json" > "$fork_script"
$lw run --after "$last" "and in yen?" --model "scripted:$fork_script" > /dev/null 2>&1
$lw runs list | cut -f2,7

# go back to the second turn's first step and run on with another request
printf '["{\\"final_answer\\": \\"12 USD is 11.04 EUR, says the tool.\\"}"]' > "$fork_script"
$lw runs fork "$last" --at 1 --model "scripted:$fork_script" 2> /dev/null | grep 'Final Answer'
$lw runs fork "$last" --at 9 2>&1 || true
rm -r "$work"
