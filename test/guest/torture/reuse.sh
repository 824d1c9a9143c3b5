# SPDX-License-Identifier: GPL-2.0
# torture/reuse.sh: a new task on a SIGKILLed hog's pid starts with no
# prediction.
# One concern of torture.sh (see there); alone: torture.sh reuse, or
# make check T=reuse.
. /pwt/lib.sh

t_reuse() {
	local i=0 n hog new over thr fut t0 hits=0 bad='' slow='' hog_over overhits=0 held=0
	n=$(big 3 20)
	tmark reuse
	# A 16 MiB dirty limit: the hog is predicted over within a second.
	echo $((16 << 20)) > /proc/sys/vm/dirty_bytes
	need_load
	while [ $i -lt "$n" ]; do
		i=$((i + 1))
		# A hog until pwthrottle predicts it over, then SIGKILLed, maybe
		# asleep in forced writeback.
		"$T/pwt-pattern" -S 64 -k 2 /mnt/reuse-hog > /dev/null 2>&1 &
		hog=$!
		t0=$(now_cs)
		while [ "$(task_field $hog over)" != 1 ] && [ $(($(now_cs) - t0)) -lt 1000 ]; do
			usleep 100000
		done
		hog_over=$(task_field $hog over)
		thr=$(task_field $hog throttles)
		[ "$hog_over" = 1 ] && held=$((held + 1))
		t0=$(now_cs)
		kill -9 $hog
		wait $hog
		[ $(($(now_cs) - t0)) -le 200 ] || slow="$slow $(secs_since "$t0")s"
		sync
		# The next fork takes the hog's pid.
		echo $((hog - 1)) > /proc/sys/kernel/ns_last_pid
		# 1 MB: far too little to be predicted over on its own merit
		# even at this limit (an 8 MB writer, own dirty pages + own
		# prediction = 16 MiB, sometimes was), so any over, throttle or
		# larger prediction is the hog's.
		$PWT_W /mnt/reuse-new 1 -h 1 > /dev/null 2>&1 &
		new=$!
		if [ "$new" != "$hog" ]; then
			log "reuse $i: wanted pid $hog, got $new"
			wait $new
			continue
		fi
		hits=$((hits + 1))
		[ "$hog_over" = 1 ] && overhits=$((overhits + 1))
		usleep 500000
		over=$(task_field $new over)
		thr=${thr:-none}/$(task_field $new throttles)
		fut=$(task_field $new future_pages)
		log "reuse $i: pid $new: hog throttles/new throttles $thr, new over $over, future $fut"
		# Fresh: 1 MB is 256 pages; nothing of the hog's prediction.
		[ "$over" = 0 ] && [ "${thr#*/}" = 0 ] && [ "${fut:-999999}" -le 320 ] ||
			bad="$bad $i:over=$over,thr=$thr,fut=$fut"
		wait $new
	done
	rm -f /mnt/reuse-*
	unload
	vm_dirty_restore
	if [ $hits = 0 ]; then
		skip reuse_fresh "never got the hog's pid back in $n tries"
	else
		# Something to inherit: the hog before it was over.
		expect reuse_fresh "$hits/$n reuses, $overhits of a hog predicted over (want > 0); inherited state:$bad" \
			[ -z "$bad" -a "$overhits" -gt 0 ]
	fi
	expect reuse_sigkill_prompt "SIGKILL ends a hog predicted over, maybe asleep in forced writeback, within 2 s ($held of $n over when killed, want > 0; slow:$slow)" \
		[ -z "$slow" -a "$held" -gt 0 ]
	expect reuse_dmesg_clean "no WARNING/BUG/Oops" tclean reuse
}

torture_run reuse ext4
