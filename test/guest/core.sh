# SPDX-License-Identifier: GPL-2.0
# The predictive throttle at work, on a slow disk (the harness throttles the
# scratch disk): a hog is predicted and made to write back, a light writer
# passes, dirty memory stays low, and everything is undone by rmmod.
. /pwt/lib.sh

mount_scratch
dmesg_mark
need_load

# --- A hog is predicted and throttled; a light writer beside it is not. ---
# The hog is a job of its own (setsid), as a shell starts "cp ... &":
# writers of one job are predicted together (group_by).
setsid $PWT_W /mnt/hog 2000 -t 14 -h 1 > /tmp/hog.out &
hog=$!
sleep 6
fut=$(task_field $hog future_pages)
thr=$(task_field $hog throttles)
hog_mbs=$(($(wchar $hog) / 6000000))
log "hog pid $hog: future $fut pages, $thr throttles, over $(task_field $hog over), wrote $hog_mbs MB/s"
# 10000 pages after 6 s of a 5 s window is what a writer of about 15 MB/s
# is predicted (7.3: 38 MB/s, 32128 pages; 6.1: 36 MB/s, 31360). A debug
# kernel's hog (make check-debug: KASAN, lockdep, kmemleak) may write
# slower: 6.12.118-pwtdebug's wrote 3.6 MB/s in one boot (its 40 MB/s disk
# kept up: rightly never throttled), 12 MB/s in another (9912 pages), and
# 10-16 in others. There, and only there, the two checks are skipped below
# 15 MB/s; on a stock kernel a slow hog is a failure to look at.
if debug_kernel && [ "$hog_mbs" -lt 15 ]; then
	skip hog_predicted "debug kernel: the hog wrote $hog_mbs MB/s, under the 15 the check assumes"
	skip hog_throttled "debug kernel: the hog wrote $hog_mbs MB/s, under the 15 the check assumes"
else
	expect hog_predicted "hog future_pages ${fut:-none} > 10000" [ "${fut:-0}" -gt 10000 ]
	expect hog_throttled "hog throttles ${thr:-none} > 0" [ "${thr:-0}" -gt 0 ]
fi

$PWT_W /mnt/light 10 -h 3 > /tmp/light.out 2>/dev/null &
light=$!
sleep 2
lfut=$(task_field $light future_pages)
lthr=$(task_field $light throttles)
lover=$(task_field $light over)
log "light pid $light: future $lfut pages, $lthr throttles, over $lover; $(cat /tmp/light.out)"
# Since 6.x generic_perform_write() calls the hook before it dirties each
# folio, so the last folio of a write() is counted at the writer's next
# call: 10 MB less one folio, which a 1 MiB write() makes on a kernel with
# large folios (ext4, 7.x).
expect light_tracked "10 MB writer has an entry (future ${lfut:-none} >= 2560 - 256)" \
	[ "${lfut:-0}" -ge $((2560 - 256)) ]
expect light_not_over "10 MB writer is not predicted over (over=${lover:-none})" [ "$lover" = 0 ]
expect light_not_throttled "10 MB writer never throttled (${lthr:-none})" [ "$lthr" = 0 ]
wait $light
wait $hog
expect hog_completes "hog exits 0" [ $? = 0 ]
expect exited_task_removed "hog's entry gone after exit" [ -z "$(task_field $hog pid)" ]
rm -f /mnt/hog /mnt/light
sync

# --- Dirty memory during a hog: pwthrottle vs stock, same hog, same disk. ---
peak_run() {
	setsid $PWT_W /mnt/hog 2000 -t 12 > /tmp/hog.out &
	sample_dirty 12 /tmp/dirty.$1
	wait $!
	rm -f /mnt/hog
	sync
	peak_of /tmp/dirty.$1
}
peak_mod=$(peak_run mod)
unload
peak_stock=$(peak_run stock)
need_load
log "peak Dirty+Writeback: pwthrottle ${peak_mod} KiB, stock ${peak_stock} KiB"
# Stock must first show the problem: its hog fills the dirty budget up to the
# threshold. On a CPU-starved host (TCG beside other guests) it cannot dirty
# faster than the disk writes and never gets there; then the comparison
# says nothing, so it is skipped rather than passed or failed.
thresh_kb=$(( $(stat_of dirty_thresh) * 4 ))
if [ $((peak_stock * 100)) -lt $((thresh_kb * 60)) ]; then
	skip dirty_peak_lower "stock peak $peak_stock KiB never neared the $thresh_kb KiB threshold (host too slow)"
else
	expect dirty_peak_lower "pwthrottle peak $peak_mod KiB < 75% of stock $peak_stock KiB" \
		[ $((peak_mod * 100)) -lt $((peak_stock * 75)) ]
fi

# --- dirty_ratio_centisecs=0: pure pass-through, nothing counted. ---
echo 0 > $SYSCTL
calls0=$(stat_of calls)
thr0=$(stat_of throttles)
$PWT_W /mnt/off 200 > /dev/null
expect off_no_accounting "calls unchanged ($calls0 -> $(stat_of calls))" [ "$(stat_of calls)" = "$calls0" ]
expect off_no_throttles "throttles unchanged" [ "$(stat_of throttles)" = "$thr0" ]
echo 500 > $SYSCTL
rm -f /mnt/off
sync

# --- Off and on again: what a task wrote while off is not charged to it. ---
# One shell writes 64 KiB chunks (its builtin printf: one process
# throughout): 1 MiB on, 200 MiB off, 1 MiB on again, each step when the
# test says (/tmp/off.go.N), reporting when done (/tmp/off.done.N).
steps_late=''
step() {	# N: let the writer take step N and wait (60 s at most) for it
	: > /tmp/off.go.$1
	wait_file /tmp/off.done.$1 60 || steps_late="$steps_late $1"
}
rm -f /tmp/off.go.* /tmp/off.done.*
sh -c 'for n in 1 2 3 4; do
		while [ ! -e /tmp/off.go.$n ]; do usleep 20000; done
		case $n in 1 | 3) c=16 ;; 2) c=3200 ;; 4) c=0 ;; esac
		i=0
		while [ $i -lt $c ]; do printf "%65536s" x >> /mnt/off; i=$((i + 1)); done
		: > /tmp/off.done.$n
	done' &
w=$!
step 1
fut1=$(task_field $w future_pages)
echo 0 > $SYSCTL
tasks_off=$(stat_of tasks)
step 2
echo 500 > $SYSCTL
step 3
fut3=$(task_field $w future_pages)
step 4
wait $w
log "off and on: future_pages $fut1 after 1 MiB, tasks $tasks_off once off, $fut3 after 200 MiB off and 1 MiB on; /mnt/off $(stat -c %s /mnt/off) bytes"
expect off_forgets "the switch to 0 empties the table: $tasks_off tasks left" [ "$tasks_off" = 0 ]
expect off_then_on_fresh "future_pages $fut3 after 200 MiB off then 1 MiB on, want < 1024 (4 MiB); before off $fut1; steps not done in 60 s:${steps_late:- none}" \
	[ -n "$fut1" -a "${fut3:-999999}" -lt 1024 -a -z "$steps_late" ]
rm -f /mnt/off /tmp/off.go.* /tmp/off.done.*
sync

# --- Flipping vm.dirty_ratio/dirty_bytes never shows a threshold of 0. ---
# Setting one clears the other in a second step; a reader that tears the
# pair sees both 0 and, until its next refresh, takes every writer for an
# over-dirtier. Every decision carries its threshold (trace event). No
# comm recording: see observe.sh (it would patch __schedule() under TCG).
trace_reset
trace_events 1 pwt_decision
echo 1 > $TR/tracing_on
$PWT_W /mnt/flip 2000 -t 10 > /dev/null &
flipper=$!
flips=0
vm_dirty_save
while alive $flipper; do
	echo 20 > /proc/sys/vm/dirty_ratio
	echo $((96 << 20)) > /proc/sys/vm/dirty_bytes
	flips=$((flips + 1))
done
vm_dirty_restore
echo 0 > $TR/tracing_on
trace_events 0 pwt_decision
grep ' pwt_decision: ' $TR/trace > /tmp/flip.trace
ndec=$(wc -l < /tmp/flip.trace)
nzero=$(grep -c ' dirty_thresh=0 ' /tmp/flip.trace)
log "sysctl flips: $flips pairs, $ndec decisions traced, $nzero with dirty_thresh=0"
expect flip_decisions "decisions traced while flipping ($ndec)" [ "$ndec" -gt 0 ]
expect flip_no_zero_thresh "no decision saw dirty_thresh=0 ($nzero of $ndec)" [ "$nzero" = 0 ]
echo > $TR/trace
rm -f /mnt/flip
sync

# --- Pid reuse: a new task on an old pid starts with no prediction. ---
$PWT_W /mnt/reuse 100 -h 2 > /dev/null 2>&1 &
old=$!
sleep 1
old_fut=$(task_field $old future_pages)
wait $old
echo $((old - 1)) > /proc/sys/kernel/ns_last_pid
$PWT_W /mnt/reuse2 1 -h 2 > /dev/null 2>&1 &
new=$!
sleep 1
new_fut=$(task_field $new future_pages)
log "pid $old had $old_fut pages; new task pid $new has $new_fut"
if [ "$new" = "$old" ]; then
	# Only if the old owner had more to inherit than that.
	expect pid_reuse_resets "new owner of pid $new: ${new_fut:-none} <= 256 pages (old: ${old_fut:-none}, want > 256)" \
		[ "${new_fut:-999999}" -le 256 -a "${old_fut:-0}" -gt 256 ]
else
	skip pid_reuse_resets "could not get pid $old again (got $new)"
fi
wait $new
rm -f /mnt/reuse /mnt/reuse2

# --- A lone writer with nothing else dirty: not wedged. ---
# How much bandwidth it keeps is a benchmark target (bench-device.sh: hog
# alone >= 97% of stock, medians of repeated runs). Under TCG a median of
# three moves by 5-10% between boots (6.1, this module: 32.7-36.5 MB/s), so
# a test can only bound what no noise explains: a writer held for
# max_pause_ms at each decision, or one that lets the device run dry before
# it queues again, loses far more than a fifth.
lone_min_share=0.80
# A debug kernel (make check-debug: KASAN, lockdep, kmemleak) makes the
# writer CPU-bound, 10-16 MB/s on this 40 MB/s disk, and the writeback
# pwthrottle has it do in its own context is CPU it loses (6.12.118-pwtdebug:
# 74% of stock). Half still tells a writer that writes on from a wedged one
# (held max_pause_ms every few pages: a small fraction of that).
! debug_kernel || lone_min_share=0.50
lone() {
	$PWT_W /mnt/lone 300 -s | sed 's/.*mbps=//'
	rm -f /mnt/lone
	sync
}
# Alternated, median of three each: one disturbed run on either side (the
# host is shared) moves neither number, where a best-of would reward a
# lucky outlier of one side.
mod1=$(lone); unload; stock1=$(lone); need_load; mod2=$(lone); unload; stock2=$(lone); need_load
mod3=$(lone); unload; stock3=$(lone); need_load
mod=$(printf '%s\n' $mod1 $mod2 $mod3 | median)
stock=$(printf '%s\n' $stock1 $stock2 $stock3 | median)
log "lone 300 MB writer incl. fsync: pwthrottle $mod1 $mod2 $mod3 MB/s, stock $stock1 $stock2 $stock3 MB/s"
expect lone_writer_not_wedged "pwthrottle $mod MB/s >= 80% of stock $stock MB/s" \
	awk -v m="$mod" -v s="$stock" -v f=$lone_min_share \
	'BEGIN { exit !(m >= f * s) }'

# --- rmmod while hogs sleep in forced writeback: prompt, and no data lost. ---
$PWT_W /mnt/h1 300 -s > /tmp/h1.out &
h1=$!
$PWT_W /mnt/h2 300 -s > /tmp/h2.out &
h2=$!
sleep 5
log "before rmmod: $(stat_of throttles) throttles"
t0=$(date +%s)
rmmod pwthrottle
st=$?
t1=$(date +%s)
leak_scan	# unload's scan, outside the timing
# A refused rmmod (EBUSY) returns at once: time it only if it unloaded.
gone=1
loaded && gone=0
expect rmmod_under_load "rmmod exit $st, unloaded $gone, in $((t1 - t0)) s (<= 5)" \
	[ "$st" = 0 -a $gone = 1 -a $((t1 - t0)) -le 5 ]
wait $h1; s1=$?
wait $h2; s2=$?
expect writers_survive_rmmod "both hogs exit 0 ($s1 $s2)" [ "$s1" = 0 -a "$s2" = 0 ]
sz1=$(stat -c %s /mnt/h1)
sz2=$(stat -c %s /mnt/h2)
expect no_data_lost "both files 300 MiB and all 0x5a ($sz1 $sz2)" \
	sh -c "[ $sz1 = 314572800 ] && [ $sz2 = 314572800 ] &&
	       [ \$(tr -d Z < /mnt/h1 | wc -c) = 0 ] && [ \$(tr -d Z < /mnt/h2 | wc -c) = 0 ]"
rm -f /mnt/h1 /mnt/h2

expect dmesg_clean "no WARNING/BUG/Oops" dmesg_clean
umount /mnt
finish
