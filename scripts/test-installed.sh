#!/bin/bash
# Limen as a package installs it, tested as installed: configure build-installed/ for /usr
# (no test hooks, installed tests on), stage it with DESTDIR, lay the staged tree over /usr
# in a private mount namespace (the host's /usr stays as it is), then run the installed tests
# (gnome-desktop-testing-runner limen) and the tour (scripts/limen-tour.py) on a session bus
# with the standard service directories. Nothing is started by hand: every daemon is
# D-Bus-activated from its installed .service file. Needs root (mount namespace, overlayfs).
#   LIMEN_INSTALLED_BUILD=DIR   build directory (default: build-installed/)
# Exit status: non-zero if the build, an installed test or the tour failed.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${LIMEN_INSTALLED_BUILD:-$top/build-installed}

if [ "${1:-}" != --inside ]; then
  [ "$(id -u)" = 0 ] || { echo "test-installed.sh: needs root for a private mount namespace" >&2; exit 1; }
  echo "== build ($build: prefix /usr, LIMEN_TEST_HOOKS=OFF, LIMEN_INSTALL_TESTS=ON)"
  mkdir -p "$build"
  if ! { cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
           -DLIMEN_TEST_HOOKS=OFF -DLIMEN_INSTALL_TESTS=ON -DBUILD_TESTING=OFF -DLIMEN_WERROR=ON &&
         cmake --build "$build" -j"$(nproc)"; } > "$build/test-installed-build.log" 2>&1; then
    tail -30 "$build/test-installed-build.log" >&2
    echo "test-installed.sh: build failed (log: $build/test-installed-build.log)" >&2
    exit 1
  fi
  stage=$(mktemp -d /tmp/limen-stage-XXXXXX)
  trap 'rm -rf "$stage"' EXIT
  DESTDIR="$stage" cmake --install "$build" >/dev/null || { echo "test-installed.sh: install failed" >&2; exit 1; }
  outside=$(cd "$stage" && find . -mindepth 1 -maxdepth 1 ! -name usr)
  [ -z "$outside" ] || { echo "test-installed.sh: staged outside /usr: $outside" >&2; exit 1; }
  echo "== staged $(find "$stage" -type f | wc -l) files; laying them over /usr in a private mount namespace"
  unshare -m --propagation private "$0" --inside "$stage"
  exit $?
fi

# ---- inside the private mount namespace ---------------------------------------------------
stage=$2
mount -t overlay limen-installed -o "lowerdir=$stage/usr:/usr" /usr ||
  { echo "test-installed.sh: cannot lay an overlay over /usr" >&2; exit 1; }
[ -x /usr/libexec/limen-portal ] || { echo "test-installed.sh: the overlay shows no limen-portal" >&2; exit 1; }
grep -q limen-portal /usr/share/dbus-1/services/org.freedesktop.portal.Desktop.service ||
  { echo "test-installed.sh: org.freedesktop.portal.Desktop.service is not Limen's" >&2; exit 1; }
if [ -d /run/systemd/system ] && systemctl --user is-system-running >/dev/null 2>&1; then
  echo "   (a systemd user manager runs here, but these tests use their own buses: activation by Exec=)"
else
  echo "   (no systemd user manager here: activation through the units is not tested, only by Exec=)"
fi
rc=0

echo "== installed tests (gnome-desktop-testing-runner limen)"
if command -v gnome-desktop-testing-runner >/dev/null; then
  gnome-desktop-testing-runner --timeout=300 limen || rc=1
else
  # The runner is Debian's gnome-desktop-testing; without it, each .test's Exec= by hand.
  for t in /usr/share/installed-tests/limen/*.test; do
    exec_line=$(sed -n 's/^Exec=//p' "$t")
    if (cd "$(mktemp -d)" && $exec_line); then echo "PASS: $t"; else echo "FAIL: $t"; rc=1; fi
  done
fi

echo "== the tour, on a session bus with the standard service directories"
scratch=$(mktemp -d /tmp/limen-tour-XXXXXX)
mkdir -p "$scratch/runtime" "$scratch/home" && chmod 700 "$scratch/runtime"
bus_pid=""
finish() {
  # The daemons the bus started, by the PIDs it gives for their names; then the bus.
  if [ -n "$bus_pid" ]; then
    for name in org.freedesktop.portal.Desktop org.freedesktop.portal.Documents \
                org.freedesktop.impl.portal.desktop.limen; do
      pid=$(gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus \
              -m org.freedesktop.DBus.GetConnectionUnixProcessID "$name" 2>/dev/null | sed -n 's/^(uint32 \([0-9]*\),)$/\1/p')
      [ -n "$pid" ] && kill "$pid" 2>/dev/null
    done
    sleep 0.5
    kill "$bus_pid" 2>/dev/null; wait "$bus_pid" 2>/dev/null
  fi
  fusermount3 -u -z "$scratch/runtime/doc" 2>/dev/null
  rm -rf "$scratch"
}
trap finish EXIT
(
  export HOME="$scratch/home" XDG_RUNTIME_DIR="$scratch/runtime" XDG_DATA_HOME="$scratch/home/.local/share" \
         XDG_CONFIG_HOME="$scratch/home/.config" XDG_CACHE_HOME="$scratch/home/.cache" \
         XDG_CURRENT_DESKTOP=KDE QT_QPA_PLATFORM=offscreen GSETTINGS_BACKEND=memory LANG=C.UTF-8
  unset XDG_DATA_DIRS XDG_CONFIG_DIRS DISPLAY WAYLAND_DISPLAY
  exec dbus-daemon --session --nofork --nopidfile --address="unix:path=$scratch/runtime/bus"
) &
bus_pid=$!
export DBUS_SESSION_BUS_ADDRESS="unix:path=$scratch/runtime/bus" XDG_RUNTIME_DIR="$scratch/runtime"
for _ in $(seq 100); do [ -S "$scratch/runtime/bus" ] && break; sleep 0.05; done
/usr/bin/python3 "$top/scripts/limen-tour.py" "$scratch/home" || rc=1
# What answered the tour: the installed binaries, started by the bus.
for name in org.freedesktop.portal.Desktop:limen-portal org.freedesktop.portal.Documents:limen-documents \
            org.freedesktop.impl.portal.desktop.limen:limen-kde; do
  pid=$(gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus \
          -m org.freedesktop.DBus.GetConnectionUnixProcessID "${name%%:*}" 2>/dev/null | sed -n 's/^(uint32 \([0-9]*\),)$/\1/p')
  exe=$([ -n "$pid" ] && readlink "/proc/$pid/exe")
  if [ "$exe" = "/usr/libexec/${name##*:}" ]; then echo "   ${name%%:*}: activated, $exe"
  else echo "   ${name%%:*}: not served by /usr/libexec/${name##*:} (${exe:-no owner})"; rc=1; fi
done
echo "== test-installed.sh: status $rc"
exit $rc
