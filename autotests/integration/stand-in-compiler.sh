#!/bin/sh
# A compiler and linker launcher for test_install_layout.py: CMake runs it as
# `stand-in-compiler.sh COMPILER ARGS...`. Where files are installed depends on the install
# rules only, not on what the objects hold, so a compile makes an empty object and a link
# an empty program or module: a build for another prefix takes seconds instead of a full
# compile. Custom commands (gdbus-codegen, wayland-scanner, msgfmt) still run for real.
out="" dep="" shared=0 compile=0
prev=""
for a in "$@"; do
  case "$prev" in
    -o) out=$a ;;
    -MF) dep=$a ;;
  esac
  case "$a" in
    -c) compile=1 ;;
    -shared) shared=1 ;;
  esac
  prev=$a
done
[ -n "$out" ] || exec "$@"   # not a compile or link we know: the real thing
if [ $compile = 1 ]; then
  [ -n "$dep" ] && printf '%s:\n' "$out" > "$dep"
  exec cc -c -x c /dev/null -o "$out"
fi
if [ $shared = 1 ]; then
  exec cc -shared -x c /dev/null -o "$out"
fi
printf 'int main (void) { return 0; }\n' | exec cc -x c - -o "$out"
