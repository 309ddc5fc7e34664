#!/bin/sh
# mcerlang as a user's rebar3 project gets it, offline: a fresh project in a
# temporary directory (.ci/rebar3_project/: a tally server, a check that
# holds and one that fails, an EUnit suite with include/mcerlang.hrl's
# macros) depends on this checkout through a file:// git URL, both as a dep
# and as a project plugin.  The checkout's files as they are (committed or
# not: CI runs on a clean clone, a developer on a work tree) are copied
# into a temporary git repository first.  Asserts that the dependency's
# build made the NIF without -Werror, `rebar3 mcerlang`'s exit codes and
# report, `rebar3 eunit`, the plugin without the dep, and _checkouts.
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mce_rebar3.XXXXXX")
[ -n "${KEEP:-}" ] || trap 'rm -rf "$TMP"' EXIT
# A user's environment: no -Werror of the project's own build.
unset MCERLANG_STRICT
# rebar3's own cache (hex registry, git clones) stays inside the run.
export REBAR_CACHE_DIR="$TMP/cache"
export HOME="$TMP/home"
mkdir -p "$HOME"

fail() { echo "rebar3_project: FAILED: $*" >&2; exit 1; }

# The checkout as a git repository with a main branch.
REPO="$TMP/mcerlang"
mkdir -p "$REPO"
(cd "$SRC" && git ls-files -z -c -o --exclude-standard) |
    (cd "$SRC" && xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh) |
    tar -C "$SRC" --null -T - -cf - | tar -C "$REPO" -xf -
git -C "$REPO" init -q -b main
git -C "$REPO" add -A
git -C "$REPO" -c user.name=ci -c user.email=ci@localhost commit -q -m snapshot

new_project() {
    P="$TMP/$1"
    mkdir -p "$P"
    cp -r "$SRC/.ci/rebar3_project/src" "$SRC/.ci/rebar3_project/test" "$P/"
    cat > "$P/rebar.config" <<EOF
{erl_opts, [debug_info]}.
{deps, [{mcerlang, {git, "file://$REPO", {branch, "main"}}}]}.
{project_plugins, [{mcerlang, {git, "file://$REPO", {branch, "main"}}}]}.
{mcerlang, [{options, #{max_time => 60000}},
            {checks, [{safe, {tally, safe, []}},
                      {racy, {tally, racy, []}, #{shortest => true}},
                      {bad_option, {tally, safe, []}, #{no_such_option => 1}}]}]}.
EOF
}

# expect CODE LOG COMMAND...: runs a rebar3 command in $P and checks its exit code.
expect() {
    want=$1; log=$2; shift 2
    set +e
    (cd "$P" && "$@") > "$TMP/$log" 2>&1
    got=$?
    set -e
    [ "$got" -eq "$want" ] || { cat "$TMP/$log"; fail "$* exited $got, expected $want"; }
}
contains() {
    grep -q -- "$2" "$TMP/$1" || { cat "$TMP/$1"; fail "$1: no '$2' in the output"; }
}

new_project dep
expect 0 compile.log rebar3 compile
[ -f "$P/_build/default/lib/mcerlang/priv/mce_nif.so" ] || fail "the dependency's build made no priv/mce_nif.so"
make -s -n -B -C "$P/_build/default/lib/mcerlang/c_src" | grep -q -- -Werror &&
    fail "a user's build of the dependency compiles with -Werror"

expect 0 safe.log rebar3 mcerlang --check safe
contains safe.log "=== mcerlang check safe: tally:safe()"
contains safe.log "^holds: "
expect 1 racy.log rebar3 mcerlang --check racy
contains racy.log "^violation: .* exited abnormally: {lost_update,1}"
contains racy.log "Violation"
expect 1 all.log rebar3 mcerlang --check safe --check racy
contains all.log "^holds: "
contains all.log "1 of 2 check(s) found a violation"
expect 2 bad.log rebar3 mcerlang --check bad_option
contains bad.log "error: .*no_such_option"
expect 2 unknown.log rebar3 mcerlang --check nonesuch
contains unknown.log "--check nonesuch: no such check"
expect 1 quiet.log rebar3 mcerlang --quiet --check racy
contains quiet.log "^violation: "
grep -q "Counterexample" "$TMP/quiet.log" && fail "--quiet printed the counterexample"
expect 0 eunit.log rebar3 eunit
contains eunit.log "2 tests, 0 failures"
sed -i 's/{checks, \[{safe,/{checks, [not_a_check, {safe,/' "$P/rebar.config"
expect 2 badconf.log rebar3 mcerlang
contains badconf.log "bad check not_a_check"

# Only the plugin: the checker runs from _build/default/plugins/mcerlang.
new_project plugin_only
sed -i '/^{deps/d' "$P/rebar.config"
rm -r "$P/test"
expect 1 plugin_only.log rebar3 mcerlang --check racy --check safe
contains plugin_only.log "^holds: "
contains plugin_only.log "^violation: .* exited abnormally: {lost_update,1}"

# _checkouts: the dependency declared as before, its source a directory.
new_project checkouts
mkdir -p "$P/_checkouts"
ln -s "$REPO" "$P/_checkouts/mcerlang"
sed -i '/project_plugins/d' "$P/rebar.config"
expect 0 checkouts.log rebar3 eunit
contains checkouts.log "2 tests, 0 failures"

echo "rebar3_project: ok (12 assertions)"
