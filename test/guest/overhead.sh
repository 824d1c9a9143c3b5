# SPDX-License-Identifier: GPL-2.0
# The fast path's cost: pwrite()s over a cached 32 MiB file, far below the
# dirty limits, so every write goes through the hook and none is ever
# throttled. Three kinds of write: 4k and 64k rewrite pages that are
# already dirty (no page is dirtied, so pwthrottle never has a decision
# due: the calls its ftrace callback lets through); 4k-dirtying writes
# the file back before each pass, so that every write dirties a clean
# page, as a copy's do (a decision every ratelimit_pages writes).
# Alternated runs in one boot: stock (not loaded), the floors any hook of
# the function pays (with vm-run --module .../pwt_conflict.ko: empty, an
# ftrace_ops that does nothing; redirect, an IPMODIFY ops that sends each
# call straight into the original's body), pwthrottle (loaded, default
# knobs) and off (loaded, dirty_ratio_centisecs=0).
#
# Meant for "scripts/vm-run --accel icount --smp 1": the guest clock then
# counts executed instructions, so ns_per_write is instructions per write,
# the same on every run, with nothing else on the machine able to disturb
# it. Under plain TCG it is wall time and noisy.
#
# Machine-readable lines on fd 3:
#   OVERHEAD series=6.1 mode=stock|empty|redirect|pwthrottle|off run=2 write=4k|4k-dirtying|64k ns_per_write=4210.5 calls=8192
#   MEMORY series=6.1 task_bytes=128 group_bytes=96 hash_bytes=16384 max_tasks=4096 max_bytes=933888
. /pwt/lib.sh

RUNS=${1:-3}
PASSES=5
CKO=/lib/modules/extra/pwt_conflict.ko
mount_scratch
# In 4 KiB writes: 7.3 gives a file written 1 MiB at a time 1 MiB folios,
# and a 4 KiB write then dirties 256 pages at once (one decision each).
dd if=/dev/zero of=/mnt/ov bs=4k count=8192 2>/dev/null
sync

# rewrite KIND: the fastest of PASSES passes over the 32 MiB.
rewrite() {
	case $1 in
	4k) set -- -b 4 ;;
	4k-dirtying) set -- -b 4 -C ;;
	64k) set -- -b 64 ;;
	esac
	/bin/pwt-writer /mnt/ov 32 -r $PASSES "$@" |
		sed -n 's/.*ns_per_write=\([0-9.]*\).*/\1/p'
}

# measure MODE RUN: one line per kind of write.
measure() {
	for kind in 4k 4k-dirtying 64k; do
		say "OVERHEAD series=$SERIES mode=$1 run=$2 write=$kind ns_per_write=$(rewrite $kind) calls=0"
	done
}

rewrite 4k > /dev/null
r=1
while [ "$r" -le "$RUNS" ]; do
	measure stock $r
	for floor in empty redirect; do
		[ -f $CKO ] || break
		expect "overhead_${floor}_loads_$r" "insmod pwt_conflict mode=$floor" \
			insmod $CKO mode=$floor
		grep -q '^pwt_conflict ' /proc/modules || continue
		measure $floor $r
		rmmod pwt_conflict
	done
	need_load
	c0=$(stat_of calls)
	ns=$(rewrite 4k)
	calls=$(($(stat_of calls) - c0))
	say "OVERHEAD series=$SERIES mode=pwthrottle run=$r write=4k ns_per_write=$ns calls=$calls"
	# Every page dirtied is counted, whichever calls the gate let through:
	# a decision every ratelimit_pages pages.
	k0=$(stat_of checks)
	ns=$(rewrite 4k-dirtying)
	checks=$(($(stat_of checks) - k0))
	pages=$((PASSES * 8192))
	due=$((pages / $(cat $PARAMS/ratelimit_pages)))
	say "OVERHEAD series=$SERIES mode=pwthrottle run=$r write=4k-dirtying ns_per_write=$ns calls=0"
	expect "overhead_decisions_$r" "$checks decisions for $pages pages dirtied, $due due" \
		within "$checks" $((due - PASSES)) $((due + 1))
	say "OVERHEAD series=$SERIES mode=pwthrottle run=$r write=64k ns_per_write=$(rewrite 64k) calls=0"
	# What the table costs (debugfs "stats"), once: sizes, not timings.
	[ "$r" != 1 ] || say "MEMORY series=$SERIES$(for k in task_bytes group_bytes hash_bytes max_tasks max_bytes; do
		printf ' %s=%s' $k "$(stat_of $k)"; done)"
	# Every write was a hooked call that pwthrottle accounted.
	expect "overhead_calls_$r" "$calls calls counted >= $((PASSES * 8192)) writes" \
		[ "$calls" -ge $((PASSES * 8192)) ]
	echo 0 > $SYSCTL
	measure off $r
	# Far below the limits: a throttle here would be a wrong decision and
	# would make the numbers meaningless.
	expect "overhead_no_throttle_$r" "no forced writeback ($(stat_of throttles) throttles)" \
		[ "$(stat_of throttles)" = 0 ]
	unload
	r=$((r + 1))
done
rm -f /mnt/ov
umount /mnt
finish
