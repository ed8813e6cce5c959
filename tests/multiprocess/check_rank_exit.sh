#!/usr/bin/env bash
# Runs rank_exit_check on N ranks under qcclrun and checks that the launcher reports rank 1's exit
# code and that every other rank survived with an error.
# Usage: check_rank_exit.sh QCCLRUN PROG N [silent]
set -u
qcclrun=$1 prog=$2 n=$3 mode=${4:-}
output=$("$qcclrun" -n "$n" "$prog" $mode 2>&1)
status=$?
echo "$output"
survivors=$(grep -c "survived" <<<"$output")
if [ "$status" -ne 3 ]; then
  echo "check_rank_exit: qcclrun exited with $status, expected rank 1's 3"
  exit 1
fi
if [ "$survivors" -ne $((n - 1)) ]; then
  echo "check_rank_exit: $survivors of $((n - 1)) survivors reported the lost rank"
  exit 1
fi
echo "check_rank_exit: all $survivors survivors got an error in time"
