#!/usr/bin/env bash
# Runs one libFuzzer target for a fixed time from its seed corpus, which stays as it is (the
# inputs found go to a temporary copy). On a finding it prints the reproducer and fails.
# Usage: run_fuzzer.sh FUZZER SEED_DIR SECONDS
set -u
fuzzer=$1 seeds=$2 seconds=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
"$fuzzer" -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$work/" \
  "$work/corpus" "$seeds" > "$work/log" 2>&1
status=$?
grep -E "^#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb" "$work/log"
if [ "$status" -ne 0 ]; then
  tail -n 60 "$work/log"
  for crash in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
    [ -e "$crash" ] && echo "reproducer $(basename "$crash"): $(base64 -w0 "$crash")"
  done
  echo "run_fuzzer: $(basename "$fuzzer") found a problem (exit $status)"
  exit 1
fi
echo "run_fuzzer: $(basename "$fuzzer"): no findings in ${seconds} s"
