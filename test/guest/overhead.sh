# SPDX-License-Identifier: GPL-2.0
# The fast path's cost: 4 KiB pwrite()s over a cached 32 MiB file, far below
# the dirty limits, so every write goes through the hook and none is ever
# throttled. Alternated runs in one boot: stock (not loaded), the floors
# any hook of the function pays (with vm-run --module .../pwt_conflict.ko:
# empty, an ftrace_ops that does nothing; redirect, an IPMODIFY ops that
# sends each call straight into the original's body), pwthrottle (loaded,
# default knobs) and off (loaded, dirty_ratio_centisecs=0: the redirect to
# pwthrottle's wrapper and its SRCU section only).
#
# Meant for "scripts/vm-run --accel icount --smp 1": the guest clock then
# counts executed instructions, so ns_per_write is instructions per write,
# the same on every run, with nothing else on the machine able to disturb
# it. Under plain TCG it is wall time and noisy.
#
# Machine-readable lines on fd 3:
#   OVERHEAD series=6.1 mode=stock|empty|redirect|pwthrottle|off run=2 ns_per_write=4210.5 calls=8192
#   MEMORY series=6.1 task_bytes=128 group_bytes=96 hash_bytes=16384 max_tasks=4096 max_bytes=933888
. /pwt/lib.sh

RUNS=${1:-3}
PASSES=5
CKO=/lib/modules/extra/pwt_conflict.ko
mount_scratch
dd if=/dev/zero of=/mnt/ov bs=1M count=32 2>/dev/null
sync

# Fastest of PASSES rewrites of the 32 MiB (8192 writes each).
rewrite() {
	/bin/pwt-writer /mnt/ov 32 -b 4 -r $PASSES |
		sed -n 's/.*ns_per_write=\([0-9.]*\).*/\1/p'
}

rewrite > /dev/null
r=1
while [ "$r" -le "$RUNS" ]; do
	say "OVERHEAD series=$SERIES mode=stock run=$r ns_per_write=$(rewrite) calls=0"
	for floor in empty redirect; do
		[ -f $CKO ] || break
		expect "overhead_${floor}_loads_$r" "insmod pwt_conflict mode=$floor" \
			insmod $CKO mode=$floor
		grep -q '^pwt_conflict ' /proc/modules || continue
		say "OVERHEAD series=$SERIES mode=$floor run=$r ns_per_write=$(rewrite) calls=0"
		rmmod pwt_conflict
	done
	load
	c0=$(stat_of calls)
	ns=$(rewrite)
	calls=$(($(stat_of calls) - c0))
	say "OVERHEAD series=$SERIES mode=pwthrottle run=$r ns_per_write=$ns calls=$calls"
	# What the table costs (debugfs "stats"), once: sizes, not timings.
	[ "$r" != 1 ] || say "MEMORY series=$SERIES$(for k in task_bytes group_bytes hash_bytes max_tasks max_bytes; do
		printf ' %s=%s' $k "$(stat_of $k)"; done)"
	# Every write was a hooked call that pwthrottle accounted.
	expect "overhead_calls_$r" "$calls calls counted >= $((PASSES * 8192)) writes" \
		[ "$calls" -ge $((PASSES * 8192)) ]
	echo 0 > $SYSCTL
	say "OVERHEAD series=$SERIES mode=off run=$r ns_per_write=$(rewrite) calls=0"
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
