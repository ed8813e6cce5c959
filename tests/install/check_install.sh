#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, then builds and runs a consumer twice: through
# find_package(qccl) / qccl::qccl and through pkg-config. Usage: check_install.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" > /dev/null
test -f "$work/prefix/include/qccl/qccl.h"
test -f "$work/prefix/include/qccl/qccl_codec.h"
libdir=$(ls -d "$work"/prefix/lib*/ | head -n 1)

cmake -S "$here/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" > /dev/null
cmake --build "$work/consumer" > /dev/null
LD_LIBRARY_PATH="$libdir" "$work/consumer/consumer"

PKG_CONFIG_PATH="$libdir/pkgconfig" cc "$here/consumer/consumer.c" -o "$work/consumer_pc" \
  $(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs qccl) -lm
LD_LIBRARY_PATH="$libdir" "$work/consumer_pc"
