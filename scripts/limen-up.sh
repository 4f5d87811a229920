#!/bin/bash
# The README's main command: install what is missing, build into build/, bring the suite up.
#
# In a desktop session (a reachable session bus and a display) the built daemons start on
# your session bus; add --replace to take over from running portals (xdg-desktop-portal,
# xdg-document-portal, xdg-desktop-portal-kde). On a bare machine (no session bus, or with
# --private) a private session bus is started (and Xvfb when there is no display), the suite
# runs on it, a short tour of real portal calls shows what it answers — as a host app and as
# a bwrap-sandboxed Flatpak app — and the bus stays up, its address printed, until Ctrl-C.
#   --replace     take over the portal bus names from running daemons
#   --private     always use a private bus, even inside a desktop session
#   --tour-only   exit after the tour instead of waiting for Ctrl-C (private mode)
#   --no-build    use what is in build/ as it is
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
replace="" private=0 tour_only=0 build=1
for a in "$@"; do
  case "$a" in
    --replace) replace=--replace ;;
    --private) private=1 ;;
    --tour-only) tour_only=1; private=1 ;;
    --no-build) build=0 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "limen-up: unknown option $a" >&2; exit 2 ;;
  esac
done

if [ $build = 1 ]; then
  "$top/scripts/install-deps.sh" || exit 1
  "$top/scripts/build.sh" "$top/build" || exit 1
fi
B="$top/build"
# The build tree's daemons (a test-hooks build) find their validators and modules there.
export LIMEN_BUILD_DIR="$B"
portal="$B/src/portal/limen-portal"
documents="$B/document-fuse/limen-documents"
kde="$B/kde-backend/limen-kde"
[ -x "$portal" ] || { echo "limen-up: $portal is not built" >&2; exit 1; }

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  [ -n "${scratch:-}" ] && { fusermount3 -u -z "$scratch/runtime/doc" 2>/dev/null; rm -rf "$scratch"; }
}
trap cleanup EXIT
trap 'echo; echo "Stopping."; exit 0' INT TERM

session_ok=0
if [ $private = 0 ] && [ -n "${DBUS_SESSION_BUS_ADDRESS:-}" ] && { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; } &&
   gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus -m org.freedesktop.DBus.GetId >/dev/null 2>&1; then
  session_ok=1
fi

scratch=$(mktemp -d /tmp/limen-up-XXXXXX)
# The frontend picks limen-kde first, then whatever else is installed.
mkdir -p "$scratch/portals" "$scratch/conf/xdg-desktop-portal"
for f in /usr/share/xdg-desktop-portal/portals/*.portal; do [ -e "$f" ] && ln -s "$f" "$scratch/portals/"; done
[ -f "$B/kde-backend/limen.portal" ] && cp "$B/kde-backend/limen.portal" "$scratch/portals/"
printf '[preferred]\ndefault=limen;kde;gtk;*\n' > "$scratch/conf/xdg-desktop-portal/limen-portals.conf"
portal_env=(XDG_DESKTOP_PORTAL_DIR="$scratch/portals" XDG_CURRENT_DESKTOP="limen:${XDG_CURRENT_DESKTOP:-KDE}"
            XDG_CONFIG_DIRS="$scratch/conf:${XDG_CONFIG_DIRS:-/etc/xdg}" LIMEN_LOCALEDIR="$B/locale")

start() {  # start NAME BUSNAME ARGS...: run a daemon and wait for its name
  local name=$1 busname=$2; shift 2
  "$@" > "$scratch/$name.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus -m org.freedesktop.DBus.NameHasOwner "$busname" 2>/dev/null | grep -q true && { echo "  started $name (pid $!)"; return 0; }
    kill -0 $! 2>/dev/null || { echo "  $name exited:"; sed 's/^/    /' "$scratch/$name.log"; return 1; }
    sleep 0.1
  done
  echo "  $name did not appear on the bus"; return 1
}

start_suite() {
  if [ -x "$documents" ]; then start limen-documents org.freedesktop.portal.Documents "$documents" $replace || return 1
  else echo "  limen-documents: not built"; fi
  if [ -x "$kde" ]; then start limen-kde org.freedesktop.impl.portal.desktop.limen env LIMEN_LOCALEDIR="$B/locale" "$kde" $replace || return 1
  else echo "  limen-kde: not built"; fi
  start limen-portal org.freedesktop.portal.Desktop env "${portal_env[@]}" "$portal" $replace
}

if [ $session_ok = 1 ]; then
  echo "Starting Limen on your session bus ($DBUS_SESSION_BUS_ADDRESS)${replace:+, replacing running portals}:"
  start_suite || { echo "limen-up: a daemon did not start (a portal already running? try --replace)" >&2; exit 1; }
  echo "Limen is serving your session. Logs: $scratch/*.log. Ctrl-C stops it."
  wait
  exit 0
fi

echo "No desktop session here: starting a private session bus."
export XDG_RUNTIME_DIR="$scratch/runtime" XDG_DATA_HOME="$scratch/data" XDG_CONFIG_HOME="$scratch/config" \
       XDG_CACHE_HOME="$scratch/cache" HOME="$scratch/home"
mkdir -p "$XDG_RUNTIME_DIR" "$XDG_DATA_HOME" "$XDG_CONFIG_HOME" "$XDG_CACHE_HOME" "$HOME"
chmod 700 "$XDG_RUNTIME_DIR"
dbus-daemon --session --nofork --address="unix:path=$XDG_RUNTIME_DIR/bus" > "$scratch/dbus.log" 2>&1 &
pids+=($!)
export DBUS_SESSION_BUS_ADDRESS="unix:path=$XDG_RUNTIME_DIR/bus"
for _ in $(seq 50); do [ -S "$XDG_RUNTIME_DIR/bus" ] && break; sleep 0.1; done
if [ -z "${DISPLAY:-}" ]; then
  n=90; while [ -e "/tmp/.X11-unix/X$n" ] || [ -e "/tmp/.X$n-lock" ]; do n=$((n + 1)); done
  Xvfb ":$n" -screen 0 1280x800x24 -nolisten tcp > "$scratch/xvfb.log" 2>&1 &
  pids+=($!)
  export DISPLAY=":$n"
  for _ in $(seq 50); do [ -e "/tmp/.X11-unix/X$n" ] && break; sleep 0.1; done
  echo "  started Xvfb on $DISPLAY"
fi
start_suite || exit 1
echo
/usr/bin/python3 "$top/scripts/limen-tour.py" "$HOME"
tour=$?
echo
if [ $tour_only = 1 ]; then exit $tour; fi
echo "The suite keeps running on the private bus. From another shell:"
echo "  export DBUS_SESSION_BUS_ADDRESS=$DBUS_SESSION_BUS_ADDRESS XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR DISPLAY=$DISPLAY"
echo "Logs: $scratch/*.log. Ctrl-C stops everything."
wait
