# SPDX-License-Identifier: GPL-2.0
# torture/storm.sh: thousands of short-lived writers (processes, then threads):
# tasks <= max_tasks, drops grow, entries and slab objects gone once they
# exit. slub_nomerge (vm-run --append) gives pwthrottle's slab cache its
# own line in /proc/slabinfo; without it the entries are counted in debugfs.
# One concern of torture.sh (see there); alone: torture.sh storm, or
# make check T=storm.
. /pwt/lib.sh

t_storm() {
	local n sampler max d0 d1 s0 speak s1 slack after t0 ok=1 out
	n=$(big 2000 10000)
	tmark storm
	need_load max_tasks=256
	mkdir -p /mnt/storm
	d0=$(stat_of drops)
	s0=$(slab_inuse)
	rm -f /tmp/storm.done
	while [ ! -f /tmp/storm.done ]; do
		stat_of tasks
		slab_active
		usleep 250000
	done > /tmp/storm.samples &
	sampler=$!
	t0=$(now_cs)
	out=$("$T/pwt-fork" /mnt/storm "$n" -w 500) || ok=0
	log "storm processes: $out"
	out=$("$T/pwt-fork" /mnt/storm "$n" -w 500 -t) || ok=0
	log "storm threads: $out"
	log "storm: $((2 * n)) writers in $(secs_since "$t0") s"
	touch /tmp/storm.done
	wait $sampler
	d1=$(stat_of drops)
	expect storm_writers_ok "every writer wrote its 64 KiB" [ $ok = 1 ]
	if [ -n "$s0" ]; then
		max=$(awk 'NR % 2 == 1' /tmp/storm.samples | sort -n | tail -1)
		speak=$(awk 'NR % 2 == 0' /tmp/storm.samples | sort -n | tail -1)
	else
		max=$(sort -n /tmp/storm.samples | tail -1)
	fi
	expect storm_bounded "tasks peaked at $max <= max_tasks 256" [ "$max" -le 256 ]
	expect storm_drops "drops grew ($d0 -> $d1)" [ "$d1" -gt "$d0" ]
	# Exit probe: entries go as their tasks exit. The sweep (10 s) would
	# hide a broken probe, so look before it can run.
	after=$(stat_of tasks)
	expect storm_exit_cleanup "tasks back to $after (<= 4) right after the storm" [ "$after" -le 4 ]
	if [ -n "$s0" ]; then
		# Entries are freed after an RCU grace period: give it a moment,
		# and allow for the few tasks that may be tracked now.
		slack=8
		sleep 2
		s1=$(slab_inuse)
		log "pwt_task slab: active $s0 before, peak $speak, $s1 after (slack $slack)"
		expect storm_slab_returns "pwt_task active objects $s0 -> peak $speak -> $s1 (slack $slack)" \
			[ "$s1" -le $((s0 + slack)) ]
	else
		skip storm_slab_returns "pwt_task merged into another cache (boot with slub_nomerge); counted by debugfs tasks instead: $after"
	fi
	unload
	rm -rf /mnt/storm
	expect storm_dmesg_clean "no WARNING/BUG/Oops" tclean storm
}

torture_run storm ext4
