# SPDX-License-Identifier: GPL-2.0
# torture/uring.sh: io_uring NOWAIT writes on XFS: -EAGAIN to the submitter,
# which never sleeps in pwthrottle; io-wq workers are throttled.
# One concern of torture.sh (see there); alone: torture.sh uring, or
# make check T=uring.
. /pwt/lib.sh

t_uring() {
	local up e0 e1 samples=0 insub=0 st sub wrk mb
	tmark uring
	# A 16 MiB dirty limit: above its 12 MiB freerun ceiling the 2005 rule
	# decides. At the default limit the submitter, at about the disk's rate
	# (300 MB in 8 s on 40 MB/s), was left alone as one its device keeps
	# up with but for moments: 8 to 1212 of its NOWAIT calls told -EAGAIN
	# in a run, and none in one (6.1, after nofs_xfs); now 556-1660 on 6.1.
	# On 7.3 the io-wq workers dirty nearly all (the submitter 1-3 thousand
	# pages a window, over all along): 6-8 calls told -EAGAIN at either
	# limit, and a decision every 8 pages (ratelimit_pages) for more.
	echo $((16 << 20)) > /proc/sys/vm/dirty_bytes
	load ratelimit_pages=8
	e0=$(stat_of async_eagain)
	mb=$(big 300 1000)
	"$T/pwt-uring" /mnt/uring "$mb" -q 8 > /tmp/uring.out 2>&1 &
	up=$!
	: > /tmp/uring.tasks
	# io-wq workers exit when idle, and their entries with them: sample.
	while alive $up; do
		awk -v p=$up -F'\t' '$2 == p' $DBG/tasks >> /tmp/uring.tasks
		samples=$((samples + 1))
		grep -q pwthrottle /proc/$up/task/$up/stack 2>/dev/null && insub=$((insub + 1))
		usleep 50000
	done
	wait $up
	st=$?
	if [ $st = 3 ]; then
		skip uring "io_uring unavailable: $(cat /tmp/uring.out)"
		unload
		return
	fi
	e1=$(stat_of async_eagain)
	# Columns: pid tgid comm future_pages rate_kbps over throttles ...
	sub=$(awk -v p=$up -F'\t' '$1 == p { if ($7 > m) m = $7 } END { print m + 0 }' /tmp/uring.tasks)
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
	expect uring_data "the file reads back its pattern" \
		"$T/pwt-pattern" -v /mnt/uring 1 $((mb << 20))
	rm -f /mnt/uring
	expect uring_dmesg_clean "no WARNING/BUG/Oops" tclean uring
}

torture_run uring xfs
