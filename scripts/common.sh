# SPDX-License-Identifier: GPL-2.0
# Sourced by the scripts beside it: what they share, said once.

# The project's cache: kernels, sources, build roots (README, "Cache").
CACHE=${PWT_CACHE:-/var/tmp/pwthrottle}

# The version, from its one home: Kbuild's PWT_VERSION.
pwt_version() {
	sed -n 's/^PWT_VERSION *:= *//p' "$(dirname "${BASH_SOURCE[0]}")/../Kbuild"
}

# Test lines are KTAP (the kernel's Documentation/dev-tools/ktap.rst), one
# per test: "ok N NAME", "not ok N NAME # why", "ok N NAME # SKIP why".
# N counts through a whole run: scripts/check exports KTAP_COUNT, a file
# with the last number, to every script it runs (torture's lines come from
# a background job, hence the lock); without one (test/unit/bench-report.sh)
# a script counts in a shell variable. NAME never holds a "#": what follows
# one is diagnostic data.
ktap_result() {	# ok|"not ok" NAME [DIAGNOSTIC]
	local n
	if [ -n "${KTAP_COUNT:-}" ]; then
		n=$(flock "$KTAP_COUNT" sh -c 'n=$(($(cat "$1") + 1)); echo $n > "$1"; echo $n' \
			ktap "$KTAP_COUNT")
	else
		KTAP_N=$((${KTAP_N:-0} + 1))
		n=$KTAP_N
	fi
	echo "$1 $n $2${3:+ # $3}"
}
ktap_ok() { ktap_result ok "$1"; }
ktap_fail() { ktap_result "not ok" "$1" "$2"; }
ktap_skip() { ktap_result ok "$1" "SKIP $2"; }
# ktap_verdict STATUS NAME WHY: test NAME passed if STATUS (the exit status
# of the check just before) is 0, else failed for WHY.
ktap_verdict() { if [ "$1" = 0 ]; then ktap_ok "$2"; else ktap_fail "$2" "$3"; fi; }

# ktap_relay: another KTAP document (a guest's, a unit test binary's) on
# stdin, its result lines numbered on into ours, its diagnostic lines kept;
# its version and plan lines dropped, and any other line (vm-run's
# PWT-EXIT). Read it with "<", not from a pipe: a pipe's subshell would
# lose KTAP_N.
ktap_relay() {
	local line
	while IFS= read -r line; do
		case $line in
		"KTAP version "* | "TAP version "* | 1..*) ;;
		"ok "[0-9]*)
			line=${line#ok }
			ktap_result ok "${line#* }" ;;
		"not ok "[0-9]*)
			line=${line#not ok }
			ktap_result "not ok" "${line#* }" ;;
		"#"*) echo "$line" ;;
		esac
	done
}

# ktap_failed FILE: FILE holds a failed test line.
ktap_failed() { grep -q '^not ok [0-9]' "$1" 2> /dev/null; }

# ktap_ended NAME FILE STATUS: after a command that wrote the KTAP document
# FILE and exited with STATUS, fail NAME if the document ended early with
# no failure of its own: the command exited non-zero (a sanitizer report
# aborts the unit binary, whose buffered lines never reach FILE; set -e
# stops a script on a command outside its checks), or it printed fewer
# results than its plan ("1..N") promised. Prints nothing otherwise.
ktap_ended() {
	local plan n
	ktap_failed "$2" && return 0
	plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$2" | head -n 1)
	n=$(grep -cE '^(not )?ok [0-9]' "$2")
	if [ "$3" != 0 ]; then
		ktap_fail "$1" "exit $3 after $n results, none failed"
	elif [ -n "$plan" ] && [ "$n" != "$plan" ]; then
		ktap_fail "$1" "$n results of the plan's $plan"
	fi
}

# ktap_totals FILE: "N passed, N failed, N skipped" of FILE's test lines at
# the top level (a subtest's are indented, and its parent's line counts it).
# A SKIP directive makes a skip of "ok" and "not ok" alike, as KTAP says.
ktap_totals() {
	awk '/^(not )?ok [0-9]+ [^#]*# SKIP/ { s++; next } /^ok [0-9]/ { p++ } /^not ok [0-9]/ { f++ }
		END { printf "%d passed, %d failed, %d skipped\n", p, f, s }' "$1"
}
# ktap_begin: a script run alone starts its own KTAP document, numbered
# through the scripts it runs (check-packaging runs lint); under
# scripts/check (KTAP_COUNT set) its lines go on in the run's. Sets the
# EXIT trap when alone.
ktap_begin() {
	[ -z "${KTAP_COUNT:-}" ] || return 0
	KTAP_COUNT=$(mktemp -t pwt-ktap.XXXXXX)
	export KTAP_COUNT
	echo 0 > "$KTAP_COUNT"
	trap 'rm -f "$KTAP_COUNT"' EXIT
	echo "KTAP version 1"
}
