#!/usr/bin/env bash
# Starts N ranks of PROG the way torchrun would (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, here
# with a QCCL_SECRET) and checks that they all exit 0. Usage: check_torchrun_env.sh PROG N [args]
set -u
prog=$1 n=$2
shift 2
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
secret=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
pids=()
for ((r = 0; r < n; r++)); do
  RANK=$r WORLD_SIZE=$n LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$((port - 1)) \
    QCCL_SECRET=$secret "$prog" "$@" > "${TMPDIR:-/tmp}/qccl_torchrun_$$_$r.log" 2>&1 &
  pids+=($!)
done
status=0
for ((r = 0; r < n; r++)); do
  wait "${pids[$r]}" || status=1
  sed "s/^/[$r] /" "${TMPDIR:-/tmp}/qccl_torchrun_$$_$r.log"
  rm -f "${TMPDIR:-/tmp}/qccl_torchrun_$$_$r.log"
done
exit $status
