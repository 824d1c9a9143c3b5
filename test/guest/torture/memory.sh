# SPDX-License-Identifier: GPL-2.0
# torture/memory.sh: writers beside a memory hog: no OOM, no hang, data intact,
# module and stock alike.
# One concern of torture.sh (see there); alone: torture.sh memory, or
# make check T=memory.
. /pwt/lib.sh

t_memory() {
	local mode avail left hog w1 w2 w3 s t0 oom res=''
	for mode in mod stock; do
		tmark memory-$mode
		[ $mode = mod ] && need_load
		mkdir -p /mnt/mem
		# All but ~64 MiB in anonymous memory that is touched again and
		# again (no swap): the writers' page cache lives in what is left,
		# like a 256 MiB guest with a 150 MB hog.
		avail=$(( $(meminfo_kb MemAvailable) / 1024 ))
		"$T/pwt-memhog" "$avail" -r 64 -t 600 > /tmp/memhog.out 2> /tmp/memhog.err &
		hog=$!
		t0=$(now_cs)
		while ! grep -q grown /tmp/memhog.err && [ $(($(now_cs) - t0)) -lt 6000 ]; do
			usleep 200000
		done
		left=$(( $(meminfo_kb MemAvailable) / 1024 ))
		# No pressure, no test: the writers would pass beside any throttle.
		expect "memory_${mode}_pressure" "the memory hog grew, MemAvailable $left MiB beside it, want <= 128" \
			[ "$left" -le 128 -a -n "$(grep grown /tmp/memhog.err)" ]
		t0=$(now_cs)
		"$T/pwt-pattern" -S 32 -n "$(big 4 16)" -k 2 -s 31 /mnt/mem/hog > /tmp/mem.w1 2>&1 &
		w1=$!
		"$T/pwt-pattern" -m fsync -S 4 -n "$(big 4 16)" -k 4 -b 256 -s 32 /mnt/mem/light \
			> /tmp/mem.w2 2>&1 &
		w2=$!
		"$T/pwt-pattern" -m mmap -S 16 -n "$(big 3 8)" -k 2 -s 33 /mnt/mem/map > /tmp/mem.w3 2>&1 &
		w3=$!
		s=''
		for w in $w1 $w2 $w3; do
			wait_max $w 180
			s="$s$?"
		done
		kill -TERM $hog
		wait $hog
		oom=$(tsince memory-$mode | grep -cE 'Out of memory|oom-kill|Killed process')
		log "memory $mode: writers $s in $(secs_since "$t0") s; $(cat /tmp/memhog.out); OOM lines $oom"
		res="$res $mode:$s:$oom"
		expect "memory_${mode}_writers" "writers exit 0 0 0 under pressure (got $s)" [ "$s" = 000 ]
		expect "memory_${mode}_no_oom" "no OOM kill ($oom lines)" [ "$oom" = 0 ]
		expect "memory_${mode}_data" "files read back their pattern" \
			verify_all /mnt/mem/hog.manifest /mnt/mem/light.manifest /mnt/mem/map.manifest
		rm -rf /mnt/mem
		ensure_unloaded
		expect "memory_${mode}_dmesg_clean" "no WARNING/BUG/Oops/hung task" tclean memory-$mode
	done
	log "memory: mode:writer-statuses:oom-lines$res"
}

torture_run memory ext4
