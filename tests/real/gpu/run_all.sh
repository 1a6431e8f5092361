#!/usr/bin/env bash
# Runs every GPU repro script in this directory (all *.py but probe.py, their shared harness) in
# sequence, continuing past failures, and prints each script's RESULT line, or
# "RESULT NAME: ERROR exit N" plus the last 5 output lines.
# Full output of each script goes to $LOGDIR (default: ./logs next to this file).
HERE="$(cd "$(dirname "$0")" && pwd)"
LOGDIR="${LOGDIR:-$HERE/logs}"
PY="${PYTHON:-python3}"
mkdir -p "$LOGDIR"
for script in "$HERE"/*.py; do
  name="$(basename "$script" .py)"
  [ "$name" = probe ] && continue
  log="$LOGDIR/$name.log"
  timeout 300 "$PY" "$script" >"$log" 2>&1
  rc=$?
  line="$(grep -E "^RESULT $name: " "$log" | tail -n 1)"
  if [ -n "$line" ]; then
    echo "$line"
  else
    echo "RESULT $name: ERROR exit $rc"
    tail -n 5 "$log" | sed 's/^/    /'
  fi
done
