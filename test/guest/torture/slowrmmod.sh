# SPDX-License-Identifier: GPL-2.0
# torture/slowrmmod.sh: rmmod while writers sleep in pwthrottle on a 1 MB/s device
# (cgroup io.max): returns within 5 s, writers finish.
# One concern of torture.sh (see there); alone: torture.sh slowrmmod, or
# make check T=slowrmmod.
. /pwt/lib.sh

t_slowrmmod() {
	local slow w1 w2 t0 dt inside=0 s1 s2
	# vda at 1 MB/s for the writers alone (slow_cgroup).
	slow=$(slow_cgroup pwt-slow 1048576) ||
		{ skip slowrmmod "no cgroup2 io.max on this kernel"; return; }
	tmark slowrmmod
	# A small dirty limit makes the writers predicted over at once; small
	# chunks make them write back (and wait) often.
	echo $((4 << 20)) > /proc/sys/vm/dirty_bytes
	echo $((2 << 20)) > /proc/sys/vm/dirty_background_bytes
	need_load write_chunk_pages=64
	start_in_cgroup $slow "$T/pwt-pattern" -S 24 -n 1 -k 1 -s 21 /mnt/slow1 > /tmp/slow1.out 2>&1
	w1=$!
	start_in_cgroup $slow "$T/pwt-pattern" -S 24 -n 1 -k 1 -s 22 /mnt/slow2 > /tmp/slow2.out 2>&1
	w2=$!
	# rmmod at a moment a writer is inside pwthrottle's wait.
	t0=$(now_cs)
	while [ $(($(now_cs) - t0)) -lt 1500 ]; do
		if grep -q 'pwt_' /proc/$w1/stack /proc/$w2/stack 2>/dev/null; then
			inside=1
			break
		fi
		usleep 20000
	done
	log "slowrmmod: throttles $(stat_of throttles), writer stacks:"
	cat /proc/$w1/stack /proc/$w2/stack 2>/dev/null | sed 's/^/#   /'
	t0=$(now_cs)
	rmmod_bounded
	st=$?
	dt=$(secs_since "$t0")
	leak_scan	# unload's scan, outside the timing
	log "slowrmmod: rmmod exit $st, took $dt s"
	expect slowrmmod_writers_inside "a writer was asleep in pwthrottle at rmmod" [ $inside = 1 ]
	# A refused rmmod returns at once: the time counts only if it unloaded.
	gone=1
	loaded && gone=0
	expect slowrmmod_bounded "rmmod exit $st, unloaded $gone, in $dt s (<= 5) with writers throttled at 1 MB/s" \
		awk -v t="$dt" -v st="$st" -v gone=$gone 'BEGIN { exit !(st == 0 && gone && t <= 5) }'
	expect slowrmmod_writers_continue "both writers still running after rmmod" \
		eval "alive $w1 && alive $w2"
	# Let them finish at full speed, then look at what they wrote.
	cgroup_unthrottle $slow
	wait_max $w1 120
	s1=$?
	wait_max $w2 120
	s2=$?
	vm_dirty_restore
	expect slowrmmod_writers_finish "both writers exit 0 ($s1 $s2)" [ $s1 = 0 -a $s2 = 0 ]
	expect slowrmmod_data_verified "both files read back their pattern" \
		verify_all /mnt/slow1.manifest /mnt/slow2.manifest
	rm -f /mnt/slow1* /mnt/slow2*
	rmdir $slow
	expect slowrmmod_dmesg_clean "no WARNING/BUG/Oops" tclean slowrmmod
}

torture_run slowrmmod ext4
