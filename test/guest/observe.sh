# SPDX-License-Identifier: GPL-2.0
# Observability: pwthrottle's trace events, and pwtop (tools/pwtop) as an
# oracle that does not rely on pwthrottle's own bookkeeping: it counts the
# stock kernel's balance_dirty_pages() sleeps per task from the kernel's
# own writeback:balance_dirty_pages tracepoint. On a slow disk (the harness
# throttles the scratch disk).
. /pwt/lib.sh

EV=$TR/events/pwthrottle
PWTOP=/bin/pwtop

# No comm recording: enabling the first event and disabling the last would
# otherwise hook sched_switch and sched_wakeup, patching __schedule() while
# the other vCPU runs it, and QEMU's TCG has been seen to keep executing a
# stale int3 there (a CPU looping in exc_int3 on a site that holds a NOP,
# IRQs off, the patching CPU waiting for it forever). Our events carry pid
# and comm themselves.
echo 0 > $TR/options/record-cmd

mount_scratch
dmesg_mark
need_load

# jfield FILE PID KEY: a number from pwtop --json's line for PID.
jfield() {
	grep "\"pid\": $2," "$1" | sed -n "s/.*\"$3\": \([0-9.]*\).*/\1/p" | head -n 1
}

# --- The trace events: present, firing at decisions only, readable. ---
expect events_present "$EV/pwt_decision and pwt_throttle in tracefs" \
	[ -f $EV/pwt_decision/format -a -f $EV/pwt_throttle/format ]
echo 0 > $TR/tracing_on
echo > $TR/trace
echo 1 > $EV/enable
echo 1 > $TR/tracing_on
checks0=$(stat_of checks)
thr0=$(stat_of throttles)
$PWT_W /mnt/hog 200 -t 6 > /dev/null
checks=$(($(stat_of checks) - checks0))
thr=$(($(stat_of throttles) - thr0))
echo 0 > $TR/tracing_on
grep ' pwt_decision: ' $TR/trace > /tmp/dec.trace
grep ' pwt_throttle: ' $TR/trace > /tmp/thr.trace
ndec=$(wc -l < /tmp/dec.trace)
nthr=$(wc -l < /tmp/thr.trace)
lost=$(trace_overrun)
log "trace: $ndec pwt_decision ($checks decisions), $nthr pwt_throttle ($thr throttles), overrun $lost"
log "$(head -n 1 /tmp/dec.trace)"
log "$(grep -m 1 'over=1 throttle=1' /tmp/dec.trace)"
log "$(head -n 1 /tmp/thr.trace)"
expect decision_event_fires "pwt_decision events ($ndec) > 0" [ "$ndec" -gt 0 ]
expect throttle_event_fires "pwt_throttle events ($nthr) > 0" [ "$nthr" -gt 0 ]
if [ "$lost" = 0 ]; then
	expect decision_event_per_decision "one event per decision: $ndec events, $checks decisions" \
		[ "$ndec" = "$checks" ]
	expect throttle_event_per_throttle "one event per throttle: $nthr events, $thr throttles" \
		[ "$nthr" = "$thr" ]
else
	skip decision_event_per_decision "trace buffer overran ($lost events lost)"
	skip throttle_event_per_throttle "trace buffer overran ($lost events lost)"
fi
# Decisions come every ratelimit_pages (8 when over), never per page.
small=$(sed -n 's/.* dirtied=\([0-9]*\) .*/\1/p' /tmp/dec.trace | awk '$1 < 8' | wc -l)
expect decision_event_not_per_call "no pwt_decision with dirtied < 8 ($small)" [ "$small" = 0 ]
bad=$(grep -cvE ' pwt_throttle: pid=[0-9]+ comm=pwt-writer pages=[0-9]+ wait_us=[0-9]+ reason=(done|not_over|deadline|killed|unloading|kept_up) bw=[0-9]+ writeback=[0-9]+ limit=[0-9]+$' /tmp/thr.trace)
expect throttle_event_format "every pwt_throttle line has pid, comm, pages, wait_us, a reason name, bw, writeback and limit ($bad bad)" \
	[ "$bad" = 0 ]
echo 0 > $EV/enable
echo > $TR/trace
echo 1 > $TR/tracing_on
rm -f /mnt/hog
sync

if [ ! -x $PWTOP ]; then
	skip pwtop "no $PWTOP in the image (tools/pwtop not built)"
	expect dmesg_clean "no WARNING/BUG/Oops" dmesg_clean
	umount /mnt
	finish
fi

# observe WHAT: a hog, then a 10 MB light writer kept alive, watched by
# pwtop for 10 s from the hog's 4th second; JSON in /tmp/WHAT.json, the
# table in /tmp/WHAT.txt. Sets $hog and $light.
observe() {
	setsid $PWT_W /mnt/hog 2000 -t 18 > /dev/null &
	hog=$!
	sample_dirty 18 /tmp/$1.dirty &
	samp=$!
	sleep 4
	$PWTOP --once 10 --json > /tmp/$1.json 2> /tmp/$1.err &
	top1=$!
	$PWTOP --once 10 > /tmp/$1.txt 2>> /tmp/$1.err &
	top2=$!
	# Both attached (BPF load and verification take a moment under TCG).
	sleep 3
	$PWT_W /mnt/light 10 -h 3 > /tmp/$1.light 2> /dev/null &
	light=$!
	wait $top1
	top_rc=$?
	wait $top2
	wait $light
	wait $hog
	wait $samp
	rm -f /mnt/hog /mnt/light
	sync
	log "pwtop $1 (exit $top_rc): hog pid $hog, light pid $light; light: $(cat /tmp/$1.light)"
	sed 's/^/# /' /tmp/$1.txt /tmp/$1.json /tmp/$1.err
}

# --- pwthrottle loaded: the hog carries the throttling, the light writer
# --- is neither throttled by pwthrottle nor paused by the stock throttle.
observe mod
expect pwtop_runs "pwtop --once --json exits 0 ($top_rc)" [ "$top_rc" = 0 ]
hthr=$(jfield /tmp/mod.json $hog pwt_throttles)
hms=$(jfield /tmp/mod.json $hog pwt_ms)
ldirt=$(jfield /tmp/mod.json $light dirtied_pages)
lthr=$(jfield /tmp/mod.json $light pwt_throttles)
lpause=$(jfield /tmp/mod.json $light bdp_pauses)
lpms=$(jfield /tmp/mod.json $light bdp_pause_ms)
expect pwtop_sees_light "pwtop saw the light writer dirty pages (${ldirt:-none})" \
	[ "${ldirt:-0}" -gt 0 ]
expect hog_carries_throttling "pwtop: hog pwthrottle throttles ${hthr:-none} > 0 (${hms:-?} ms)" \
	[ "${hthr:-0}" -gt 0 ]
expect light_no_pwt_throttle "pwtop: light writer pwthrottle throttles ${lthr:-none} = 0" \
	[ "$lthr" = 0 ]
expect light_no_stock_pause "pwtop: light writer stock balance_dirty_pages pauses ${lpause:-none} = 0 (${lpms:-?} ms)" \
	[ "$lpause" = 0 ]

# --- pwtop refreshing every second, stopped by SIGTERM. While it is
# --- attached the module is pinned; once it has exited, rmmod works.
$PWTOP > /tmp/top.txt 2>&1 &
top=$!
sleep 4
if unload 2> /dev/null; then busy=no; else busy=yes; fi
kill $top
wait $top
top_rc=$?
loaded && unload
reports=$(grep -c '^pwtop: [0-9.]* s ' /tmp/top.txt)
expect pwtop_refresh "pwtop without --once: $reports reports in 4 s, exit $top_rc on SIGTERM" \
	[ "$reports" -ge 2 -a "$top_rc" = 0 ]
expect rmmod_waits_for_pwtop "rmmod refused while pwtop attached ($busy), done after" \
	[ $busy = yes -a ! -e /sys/module/pwthrottle ]

# --- Stock kernel, same load: the oracle sees the stock throttle at work
# --- (a control: pwtop's stock columns are not always zero).
observe stock
nomod=$(grep -c '"pwthrottle": false' /tmp/stock.json)
expect pwtop_without_module "pwtop runs without pwthrottle (exit $top_rc, says so: $nomod)" \
	[ "$top_rc" = 0 -a "$nomod" = 1 ]
spause=$(jfield /tmp/stock.json $hog bdp_pauses)
sms=$(jfield /tmp/stock.json $hog bdp_pause_ms)
slp=$(jfield /tmp/stock.json $light bdp_pauses)
slms=$(jfield /tmp/stock.json $light bdp_pause_ms)
log "stock: hog ${spause:-none} pauses ${sms:-?} ms, light ${slp:-none} pauses ${slms:-?} ms"
# The stock throttle pauses writers only past its freerun ceiling, halfway
# from the background to the dirty threshold; a debug kernel's hog,
# CPU-bound, never gets there (6.12.118-pwtdebug: 58 MB of 116).
speak=$(peak_of /tmp/stock.dirty)
sceil=$(awk '$1 == "nr_dirty_threshold" { t = $2 } $1 == "nr_dirty_background_threshold" { b = $2 }
	END { print (t + b) * 2 }' /proc/vmstat)
if [ "$speak" -lt "$sceil" ]; then
	skip stock_hog_paused "the stock hog's dirty + writeback peaked at $speak kB, under the freerun ceiling $sceil kB: nothing for the stock throttle to pause ($spause pauses)"
else
	expect stock_hog_paused "pwtop: stock hog balance_dirty_pages pauses ${spause:-none} > 0 (peak $speak kB, ceiling $sceil kB)" \
		[ "${spause:-0}" -gt 0 ]
fi

# --- rmmod with the events enabled and a hog in forced writeback. ---
need_load
echo 1 > $EV/enable
setsid $PWT_W /mnt/hog 300 -t 10 > /dev/null &
hog=$!
sleep 4
n=$(grep -c ' pwt_throttle: ' $TR/trace)
unload
rc=$?
expect rmmod_while_tracing "rmmod with events enabled: exit $rc, events dir gone, $n throttle events before" \
	[ $rc = 0 -a ! -e $EV -a "$n" -gt 0 ]
wait $hog
expect hog_survives "hog exits 0 after rmmod under tracing" [ $? = 0 ]
need_load
expect reload_events_off "reloaded: events back, disabled" \
	[ "$(cat $EV/pwt_decision/enable)" = 0 -a "$(cat $EV/pwt_throttle/enable)" = 0 ]
unload
rm -f /mnt/hog
echo > $TR/trace

expect dmesg_clean "no WARNING/BUG/Oops" dmesg_clean
umount /mnt
finish
