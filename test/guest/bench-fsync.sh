# SPDX-License-Identifier: GPL-2.0
# Where an fsync's time goes beside a hog on its disk (issue 16's fsync
# cell): 20 x (4 KiB write + fsync), as bench-device.sh's fsyncs, alone and
# 8 s after a buffered hog started on the same ext4 disk, in each MODE
# (stock, pwthrottle, pwthrottle_syncN: sync_inflight_ms=N).
#
#   scripts/vm-run --kernel REL --disk-mb 4096 --disk-bps $((40 << 20)) \
#     --module build/REL/pwthrottle.ko --file build/tools/pwt-writer:/bin/pwt-writer \
#     -- test/guest/bench-fsync.sh "pwthrottle pwthrottle_sync0"
#
# Lines (times summed over the 20 fsyncs, ms):
#   WHERE mode=M hog=none|disk fn=F calls=N ms=T
#     function_graph under ext4_sync_file: the fsync itself, its data
#     (file_write_and_wait_range: its one page written and waited for) and
#     its journal commit (jbd2_complete_transaction, ext4_fc_commit)
#   JBD2 mode=M hog=... commits=N ... flushing=T logging=T
#     jbd2's own account of those commits (jbd2_run_stats): flushing is the
#     wait for ordered data (other files' pages, the hog's among them),
#     logging the journal's writes, descriptor to commit block
#   INFLIGHT mode=M samples=N dirty_kb_mean=D writeback_kb_mean=W writeback_kb_max=X
#     /proc/meminfo every 20 ms while the fsyncs ran beside the hog
#   FSYNC mode=M hog=... secs=S [sync_bounded=N]
#     the 20 dd runs, process starts included
# Not part of make bench: function_graph's cost is in the WHERE times.
. /pwt/lib.sh

MODES=${1:-pwthrottle pwthrottle_sync0}
WARMUP=8	# as bench-device.sh: the prediction builds, the kernel measures the disk
# What function_graph instruments: the fsync path of ext4 and jbd2 on
# 6.1-7.3 (names a kernel lacks are refused and left out).
FUNCS="ext4_sync_file file_write_and_wait_range ext4_fsync_journal ext4_fc_commit
jbd2_complete_transaction jbd2_log_start_commit jbd2_log_wait_commit
jbd2_fc_begin_commit blkdev_issue_flush __filemap_fdatawrite_range
filemap_fdatawrite_wbc file_fdatawait_range filemap_fdatawait_range_keep_errors
__filemap_fdatawait_range folio_wait_writeback"

fsync20() {
	local i=1
	mkdir -p /mnt/fs
	while [ $i -le 20 ]; do
		dd if=/dev/zero of=/mnt/fs/$i bs=4k count=1 conv=fsync 2> /dev/null
		i=$((i + 1))
	done
	rm -rf /mnt/fs
}

# Text is patched once, here, before any hog runs: enabling function_graph
# while a hog ran ext4's writeback on the other vCPU oopsed on int3 under
# TCG, twice in two boots (7.3, the text patching QEMU's notes describe).
# Filters first: with set_ftrace_filter empty, function_graph instruments
# the whole kernel. Between phases only the buffer is switched.
graph_on() {
	local f
	trace_reset
	echo 16384 > $TR/buffer_size_kb
	echo ext4_sync_file > $TR/set_graph_function
	echo > $TR/set_ftrace_filter
	for f in $FUNCS; do echo $f >> $TR/set_ftrace_filter 2> /dev/null; done
	grep -q . $TR/set_ftrace_filter || { fail fsync_graph "no fsync function to trace"; finish; }
	echo 1 > $TR/options/funcgraph-tail
	echo function_graph > $TR/current_tracer
	echo 1 > $TR/events/jbd2/jbd2_run_stats/enable
}
graph_off() {
	echo 0 > $TR/events/jbd2/jbd2_run_stats/enable
	echo nop > $TR/current_tracer
	echo > $TR/set_ftrace_filter
	echo > $TR/set_graph_function
}

# traced TAG: the 20 fsyncs, traced; WHERE and JBD2 lines for TAG.
traced() {
	echo > $TR/trace
	echo 1 > $TR/tracing_on
	fsync20
	echo 0 > $TR/tracing_on
	awk -v tag="$1" '
	/jbd2_run_stats:/ {
		for (i = 1; i < NF; i++)
			if ($i ~ /^(wait|request_delay|running|locked|flushing|logging)$/)
				j[$i] += $(i + 1)
		nj++
		next
	}
	/ us / {
		d = ""
		for (i = 2; i <= NF; i++) if ($i == "us") { d = $(i - 1); break }
		if (d == "") next
		# "} /* fn [mod] */" closes a call, "fn();" is one without children.
		if (match($0, /\/\* [A-Za-z0-9_.]+( \[[a-z0-9_]+\])? \*\//)) {
			f = substr($0, RSTART + 3, RLENGTH - 6)
			sub(/ \[.*/, "", f)
		} else if (match($0, /[A-Za-z0-9_.]+\(\);/)) {
			f = substr($0, RSTART, RLENGTH - 3)
		} else {
			next
		}
		n[f]++
		t[f] += d
	}
	END {
		for (f in n)
			printf "WHERE %s fn=%s calls=%d ms=%.1f\n", tag, f, n[f], t[f] / 1000
		if (nj)
			printf "JBD2 %s commits=%d wait=%d request_delay=%d running=%d locked=%d flushing=%d logging=%d\n",
				tag, nj, j["wait"], j["request_delay"], j["running"], j["locked"], j["flushing"], j["logging"]
	}' $TR/trace | sort
}

# says: say every line of stdin (the host's copy is what scripts/vm-run prints).
says() { while read -r l; do say "$l"; done; }

mount_scratch
warm_up
graph_on
for mode in $MODES; do
	case $mode in
	pwthrottle) need_load ;;
	pwthrottle_sync*) need_load sync_inflight_ms=${mode#pwthrottle_sync} ;;
	esac
	sync
	sleep 2
	t0=$(now)
	traced "mode=$mode hog=none" | says
	say "FSYNC mode=$mode hog=none secs=$(secs_between $t0 $(now))"
	setsid /bin/pwt-writer /mnt/hog 100000 -t 600 > /dev/null 2>&1 &
	hog=$!
	sleep $WARMUP
	while :; do
		awk '$1 == "Dirty:" { d = $2 } $1 == "Writeback:" { w = $2 } END { print d, w }' /proc/meminfo
		usleep 20000
	done > /tmp/inflight &
	sampler=$!
	t0=$(now)
	traced "mode=$mode hog=disk" > /tmp/where
	t1=$(now)
	kill $sampler
	wait $sampler 2> /dev/null
	say "FSYNC mode=$mode hog=disk secs=$(secs_between $t0 $t1)" \
		"$(loaded && echo sync_bounded=$(stat_of sync_bounded))"
	awk -v m=$mode '{ d += $1; w += $2; if ($2 > x) x = $2; n++ }
		END { printf "INFLIGHT mode=%s samples=%d dirty_kb_mean=%d writeback_kb_mean=%d writeback_kb_max=%d\n", m, n, d / n, w / n, x }' /tmp/inflight | says
	says < /tmp/where
	kill $hog
	wait $hog 2> /dev/null
	rm -f /mnt/hog
	sync
	case $mode in pwthrottle*) unload ;; esac
done
graph_off
umount /mnt
finish
