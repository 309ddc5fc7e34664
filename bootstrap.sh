#!/bin/sh
# Sets up a Debian machine for mcerlang and runs one of:
#   ./bootstrap.sh demo   build, then check an example and print the verdict
#   ./bootstrap.sh test   build, then run the whole test suite
#   ./bootstrap.sh bench  build, then run the benchmarks
# Installs only the Debian packages that are missing.
set -eu
cd "$(dirname "$0")"

PACKAGES="erlang-nox erlang-dev erlang-eunit erlang-syntax-tools erlang-tools erlang-dialyzer rebar3 gcc make libc6-dev libxxhash-dev"
# PropEr (mcerlang_proper and its tests; -dev has proper.hrl) and git (the
# fresh rebar3 project of .ci/rebar3_project.sh fetches mcerlang with it).
PACKAGES="$PACKAGES erlang-proper erlang-proper-dev git"
# The tests open message sequence charts in a real browser.
[ "${1:-test}" = test ] && PACKAGES="$PACKAGES chromium"
missing=""
for p in $PACKAGES; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "bootstrap: installing$missing"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    # apt's own output goes to a log, shown only when it fails, so that
    # the demo's output is the demo's.
    LOG="${TMPDIR:-/tmp}/mcerlang-bootstrap-apt.log"
    if ! { $SUDO apt-get update -q &&
           DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing; } \
         > "$LOG" 2>&1; then
        cat "$LOG" >&2
        echo "bootstrap: installing$missing failed (apt's output above, also in $LOG)" >&2
        exit 1
    fi
    echo "bootstrap: installed (apt's output in $LOG)"
fi

case "${1:-test}" in
    demo) make demo ;;
    test) make test ;;
    bench) make bench ;;
    *) echo "usage: $0 demo|test|bench" >&2; exit 2 ;;
esac
