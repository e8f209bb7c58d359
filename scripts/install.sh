#!/usr/bin/env bash
# Installs the C library: PREFIX=/usr/local scripts/install.sh
#   $PREFIX/lib/libloopguard.{a,so}, $PREFIX/include/loopguard.h and loopguard.hpp,
#   $PREFIX/lib/pkgconfig/loopguard.pc
# Builds in release mode first unless LOOPGUARD_LIB_DIR names a directory that already holds
# the built libraries.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${PREFIX:-/usr/local}
libdir=${LOOPGUARD_LIB_DIR:-}
if [ -z "$libdir" ]; then
  cargo build --release --lib
  libdir=${CARGO_TARGET_DIR:-target}/release
fi
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
install -d "$prefix/lib/pkgconfig" "$prefix/include"
install -m 644 "$libdir/libloopguard.a" "$prefix/lib/"
install -m 755 "$libdir/libloopguard.so" "$prefix/lib/"
install -m 644 include/loopguard.h bindings/cpp/loopguard.hpp "$prefix/include/"
cat > "$prefix/lib/pkgconfig/loopguard.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: loopguard
Description: Stops language models from wasting compute in loops
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -lloopguard
Libs.private: -lpthread -ldl -lm -lrt -lutil
PC
echo "installed loopguard $version into $prefix"
