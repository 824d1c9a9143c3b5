# SPDX-License-Identifier: GPL-2.0
# torture/uring.sh: io_uring NOWAIT writes on XFS: -EAGAIN to the submitter,
# which never sleeps in pwthrottle; io-wq workers are throttled.
# One concern of torture.sh (see there); alone: torture.sh uring, or
# make check T=uring.
. /pwt/lib.sh

t_uring() {
	local up ups='' lost='' e0 e1 samples=0 insub=0 st sub wrk mb slow busy attempt
	# The submitter must write faster than its device drains, or pwthrottle
	# rightly leaves it alone: after nofs_xfs the kernel measured vda at
	# 61 MB/s against its 37 MB/s, and neither it nor its io-wq workers
	# were ever held (6.1 and 7.3). So vda at 8 MB/s for it (slow_cgroup).
	slow=$(slow_cgroup pwt-uring 8388608) ||
		{ skip uring "no cgroup2 io.max on this kernel"; return; }
	tmark uring
	# And from its first write: on 7.3 it writes inline a MiB or a few,
	# the io-wq workers do the rest (traces: 14 decisions at full speed,
	# 1 on the slow device). So another writer keeps that device at the
	# dirty limit (16 MiB) when it starts, 4 s in: by then the kernel's
	# estimate of the cgroup's writeback, 100 MB/s at first, has come down
	# (19 MB/s), the backlog is more than 200 ms of it, and the one
	# decision is a hold. The file is the cgroup's already (a first 4 MB):
	# a new inode's first decision reads the device's root writeback
	# context, which nofs_xfs left measured at 61 MB/s.
	echo $((16 << 20)) > /proc/sys/vm/dirty_bytes
	need_load write_chunk_pages=16
	mb=$(big 96 320)
	: > /tmp/uring.tasks
	# Whether that one decision is a hold is the busy writer's timing
	# under TCG: it was not in 1 of 10 make checks (7.3, async_eagain
	# 0 -> 0, the workers throttled), and in the one ad-hoc run after
	# nofs_ext4. So up to three runs, until one is; every other check
	# holds over all of them.
	for attempt in 1 2 3; do
		start_in_cgroup $slow $PWT_W /mnt/uring-busy 96 > /dev/null 2>&1
		busy=$!
		start_in_cgroup $slow $PWT_W /mnt/uring 4 > /dev/null 2>&1
		wait $!
		sleep 4
		e0=$(stat_of async_eagain)
		start_in_cgroup $slow "$T/pwt-uring" /mnt/uring "$mb" -q 8 > /tmp/uring.out 2>&1
		up=$!
		ups="$ups $up"
		# io-wq workers exit when idle, and their entries with them: sample.
		while alive $up; do
			awk -v p=$up -F'\t' '$2 == p' $DBG/tasks >> /tmp/uring.tasks
			samples=$((samples + 1))
			grep -q pwthrottle /proc/$up/task/$up/stack 2>/dev/null && insub=$((insub + 1))
			usleep 50000
		done
		wait $up
		st=$?
		kill $busy 2> /dev/null
		wait $busy
		rm -f /mnt/uring-busy
		e1=$(stat_of async_eagain)
		[ $st != 0 ] || [ "$e1" -gt "$e0" ] || [ $attempt = 3 ] && break
		drop_caches
		"$T/pwt-pattern" -v /mnt/uring 1 $((mb << 20)) > /dev/null 2>&1 || lost="$lost $attempt"
		log "uring: attempt $attempt: no BDP_ASYNC decision was a hold ($e0 -> $e1); once more"
	done
	cgroup_unthrottle $slow
	rmdir $slow
	if [ $st = 3 ]; then
		skip uring "io_uring unavailable: $(cat /tmp/uring.out)"
		unload
		return
	fi
	# Columns: pid tgid comm future_pages rate_kbps over throttles ...
	sub=$(awk -v p="$ups" -F'\t' 'BEGIN { split(p, a, " "); for (i in a) s[a[i]] = 1 }
		$1 in s { if ($7 > m[$1]) m[$1] = $7 } END { for (q in m) t += m[q]; print t + 0 }' /tmp/uring.tasks)
	wrk=$(awk -F'\t' '$3 ~ /^iou-wrk/ { if ($7 > m[$1]) m[$1] = $7 }
		END { for (p in m) s += m[p]; print s + 0 }' /tmp/uring.tasks)
	log "uring: $(cat /tmp/uring.out); async_eagain $e0 -> $e1; submitter throttles $sub;" \
		"iou-wrk throttles $wrk; submitter in pwthrottle in $insub of $samples stack samples"
	expect uring_completes "pwt-uring exits 0 ($st: $(cat /tmp/uring.out))" [ $st = 0 ]
	expect uring_eagain "BDP_ASYNC callers told -EAGAIN ($e0 -> $e1)" [ "$e1" -gt "$e0" ]
	expect uring_submitter_never_throttled "submitter: $sub throttles, seen in pwthrottle $insub/$samples" \
		[ "$sub" = 0 -a $insub = 0 ]
	expect uring_workers_throttled "io-wq workers throttled ($wrk)" [ "$wrk" -gt 0 ]
	unload
	drop_caches
	"$T/pwt-pattern" -v /mnt/uring 1 $((mb << 20)) > /dev/null 2>&1 || lost="$lost $attempt"
	expect uring_data "the file reads back its pattern (bad after attempt:$lost)" [ -z "$lost" ]
	rm -f /mnt/uring
	expect uring_dmesg_clean "no WARNING/BUG/Oops" tclean uring
}

torture_run uring xfs
