#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/common.sh's KTAP helpers, which number and count every test line
# of make check: what they print for made-up documents.
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/common.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "KTAP version 1"

# In a run (KTAP_COUNT set) the lines of a guest's document go on from the
# run's last number; its version and plan lines go, and the harness's own
# (vm-run's PWT-EXIT); its diagnostics stay.
# Counting is done in a child environment: this script's own numbers stay
# its own.
printf '%s\n' "PWT-INIT-START" "KTAP version 1" "1..3" "ok 1 k/a" "# k/b: why" \
	"not ok 2 k/b # why" "ok 3 k/c # SKIP no disk" "PWT-EXIT 1" > "$tmp/guest"
echo 7 > "$tmp/count"
(KTAP_COUNT=$tmp/count ktap_relay < "$tmp/guest") > "$tmp/out"
printf '%s\n' "ok 8 k/a" "# k/b: why" "not ok 9 k/b # why" "ok 10 k/c # SKIP no disk" > "$tmp/want"
cmp -s "$tmp/out" "$tmp/want"
ktap_verdict $? unit/ktap_relay_numbers_on "got: $(tr '\n' '|' < "$tmp/out")"

# Two scripts numbering at once (scripts/check's torture job beside the
# other suites): every number once, none lost.
echo 0 > "$tmp/count"
for w in 1 2; do
	(for i in $(seq 50); do KTAP_COUNT=$tmp/count ktap_ok "w$w/$i"; done > "$tmp/w$w") &
done
wait
n=$(cat "$tmp/w1" "$tmp/w2" | awk '{ print $2 }' | sort -n | uniq | wc -l)
[ "$n" = 100 ] && [ "$(cat "$tmp/count")" = 100 ]
ktap_verdict $? unit/ktap_numbers_concurrent "100 distinct numbers expected, got $n (count $(cat "$tmp/count"))"

# The totals: a SKIP is no pass, on "ok" and "not ok" alike (KTAP); a
# failure's reason may hold a "#"; a subtest's indented lines are its
# parent's; diagnostics and other lines are no tests.
printf '%s\n' "KTAP version 1" "ok 1 a" "ok 2 b # SKIP no btrfs" "not ok 3 c # SKIP no xfs" \
	"  KTAP version 1" "  ok 1 d" "  not ok 2 e" "not ok 4 f # 3 # 4" "# ok 5 g" \
	"ok 5 h # rcode=0" "okay 6" > "$tmp/run"
[ "$(ktap_totals "$tmp/run")" = "2 passed, 1 failed, 2 skipped" ]
ktap_verdict $? unit/ktap_totals "2 passed, 1 failed, 2 skipped expected, got $(ktap_totals "$tmp/run")"

# A document that ends early fails as a whole, even if each line it printed
# passed: its command exited non-zero, or it printed fewer results than its
# plan. One that ended as planned, or failed a line of its own, adds nothing.
ended() {	# PLAN RESULTS STATUS: ktap_ended's line for such a document
	{ [ -n "$1" ] && echo "1..$1"; printf '%s\n' "$2" | tr ',' '\n'; } > "$tmp/doc"
	(KTAP_COUNT='' KTAP_N=0 ktap_ended u/x "$tmp/doc" "$3")
}
ok2='ok 1 a,ok 2 b'
[ "$(ended 2 "$ok2" 1)" = "not ok 1 u/x # exit 1 after 2 results, none failed" ] &&
	[ "$(ended 3 "$ok2" 0)" = "not ok 1 u/x # 2 results of the plan's 3" ] &&
	[ "$(ended '' "$ok2" 134)" = "not ok 1 u/x # exit 134 after 2 results, none failed" ] &&
	[ -z "$(ended 2 "$ok2" 0)" ] && [ -z "$(ended '' "$ok2" 0)" ] &&
	[ -z "$(ended 2 'ok 1 a,not ok 2 b' 1)" ]
ktap_verdict $? unit/ktap_ended "an early end is a failure, a planned one nothing"
