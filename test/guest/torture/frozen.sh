# SPDX-License-Identifier: GPL-2.0
# torture/frozen.sh: writers stuck in the stock throttle for good (their
# device suspended, as a hung FUSE daemon or NFS server leaves its writers)
# while idle entries are evicted: the entries' memory stays bounded by
# max_tasks; once the device is back every writer finishes, data intact.
# One concern of torture.sh (see there); alone: torture.sh frozen, or
# make check T=frozen.
. /pwt/lib.sh

# The wrapper stays in pwt_srcu's read section while the original sleeps
# (its return address is in our text): with the device suspended and dirty
# memory over its limit, that sleep lasts until the device is back. 64
# entries, a 1 s window (idle after a second without a decision) and the
# 10 s sweep, which evicts idle entries while the table is more than half
# full: in 30 s of new writers about 100 entries are evicted, and each must
# be freed although none of the stuck writers leaves the wrapper.
FROZEN_MAX_TASKS=64
FROZEN_SECS=30
# Per-CPU slack of a shrunk cache and entries in their RCU grace period.
FROZEN_SLACK=16

t_frozen() {
	local hog s0 s1 ev0 ev1 n=0 t0 pids='' w st bad='' hung
	dm_scratch frozen || return
	mkdir -p /mnt/frz
	tmark frozen
	# The journal thread waits for the suspended device too: no hung-task
	# report for what this test does on purpose.
	hung=$(cat /proc/sys/kernel/hung_task_timeout_secs)
	echo 120 > /proc/sys/kernel/hung_task_timeout_secs
	echo $((16 << 20)) > /proc/sys/vm/dirty_bytes
	need_load max_tasks=$FROZEN_MAX_TASKS
	echo 100 > $SYSCTL
	s0=$(slab_inuse)
	if [ -z "$s0" ]; then
		skip frozen "pwt_task merged into another cache (boot with slub_nomerge)"
		unload
		echo "$hung" > /proc/sys/kernel/hung_task_timeout_secs
		dm_scratch_end frozen
		return
	fi
	ev0=$(stat_of evictions)
	"$T/pwt-dm" suspend pwt-frozen || fail frozen_suspend "pwt-dm suspend failed"
	# A hog fills the dirty limit and stays in the stock throttle...
	$PWT_W /mnt/frz/hog 64 > /tmp/frz.hog 2>&1 &
	hog=$!
	sleep 2
	# ...and so does every new writer: 64 pages each, past the kernel's
	# ratelimit, so each one enters balance_dirty_pages() and stays.
	t0=$(now_cs)
	while [ $(($(now_cs) - t0)) -lt $((FROZEN_SECS * 100)) ]; do
		dd if=/dev/zero of=/mnt/frz/w$n bs=64k count=4 2> /dev/null &
		pids="$pids $!"
		n=$((n + 1))
		usleep 50000
	done
	ev1=$(stat_of evictions)
	s1=$(slab_inuse)
	log "frozen: $n writers; tasks $(stat_of tasks), evictions $ev0 -> $ev1, pwt_task objects $s0 -> $s1; hog: $(tr -d '\n' < /proc/$hog/wchan 2> /dev/null)"
	expect frozen_evicted "idle entries evicted while the writers were stuck: $((ev1 - ev0)), want >= $((FROZEN_MAX_TASKS / 2))" \
		[ $((ev1 - ev0)) -ge $((FROZEN_MAX_TASKS / 2)) ]
	expect frozen_bounded "pwt_task objects $s1 with the device suspended, want <= $FROZEN_MAX_TASKS + $FROZEN_SLACK (at load $s0)" \
		[ "$s1" -le $((FROZEN_MAX_TASKS + FROZEN_SLACK)) ]
	"$T/pwt-dm" resume pwt-frozen || fail frozen_resume "pwt-dm resume failed"
	wait_max $hog 120
	st=$?
	[ $st = 0 ] || bad="hog:$st"
	for w in $pids; do
		wait_max "$w" 120
		st=$?
		[ $st = 0 ] || bad="$bad $w:$st"
	done
	expect frozen_writers "the hog and $n writers exit 0 once the device is back (failed: ${bad:-none})" [ -z "$bad" ]
	expect frozen_data "the hog wrote its 64 MiB, each writer its 256 KiB" \
		sh -c "[ \$(stat -c %s /mnt/frz/hog) = 67108864 ] &&
		       [ -z \"\$(find /mnt/frz -name 'w*' ! -size 256k)\" ]"
	unload
	echo "$hung" > /proc/sys/kernel/hung_task_timeout_secs
	rm -rf /mnt/frz
	dm_scratch_end frozen
	expect frozen_dmesg_clean "no WARNING/BUG/Oops" tclean frozen
}

torture_run frozen ext4
