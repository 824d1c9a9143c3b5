# SPDX-License-Identifier: GPL-2.0
# The skeleton, as a user meets it: load, look at every knob, try to break
# each one, unload, and check nothing is left behind. Then 50 more cycles.
. /pwt/lib.sh

dmesg_mark
expect load "insmod succeeds" load
expect load_message "dmesg says loaded" sh -c 'dmesg | grep -q "pwthrottle: loaded"'

# The hook is in place, and it is an IPMODIFY one ("I" in enabled_functions).
ef=/sys/kernel/tracing/enabled_functions
[ -r $ef ] || ef=/sys/kernel/debug/tracing/enabled_functions
expect hook_installed "balance_dirty_pages_ratelimited_flags redirected" \
	sh -c "grep '^balance_dirty_pages_ratelimited_flags' $ef | grep -q ' I '"
# On every supported kernel the function starts as the fast hook expects
# (ENDBR or its sealed NOP on IBT kernels, then the ftrace site): otherwise
# pwthrottle falls back to the slower hook and says so, and this fails.
expect direct_jump_taken "prologue as expected: direct_jump $(cat $PARAMS/direct_jump), want Y" \
	[ "$(cat $PARAMS/direct_jump)" = Y ]

# vm.dirty_ratio_centisecs: default, valid writes, every kind of nonsense.
expect sysctl_default "default 500" [ "$(cat $SYSCTL)" = 500 ]
echo 1000 > $SYSCTL
expect sysctl_write "1000 reads back" [ "$(cat $SYSCTL)" = 1000 ]
echo 0 > $SYSCTL
expect sysctl_zero "0 (off) accepted" [ "$(cat $SYSCTL)" = 0 ]
echo 360000 > $SYSCTL
expect sysctl_max "360000 accepted" [ "$(cat $SYSCTL)" = 360000 ]
echo 500 > $SYSCTL
for bad in 360001 -1 abc "" " " 99999999999999999999 1e3 0x; do
	expect "sysctl_rejects_'$bad'" "EINVAL and old value kept" write_rejected $SYSCTL "$bad"
done
expect sysctl_still_500 "after the rejections" [ "$(cat $SYSCTL)" = 500 ]

# Module parameters: present, documented ranges enforced, old value kept.
for p in dirty_ratio_centisecs max_tasks ratelimit_pages write_chunk_pages max_pause_ms direct_jump; do
	expect "param_$p" "present" [ -r $PARAMS/$p ]
done
expect param_defaults "4096/32/512/200/500" [ "$(cat $PARAMS/max_tasks $PARAMS/ratelimit_pages \
	$PARAMS/write_chunk_pages $PARAMS/max_pause_ms $PARAMS/dirty_ratio_centisecs | tr '\n' ' ')" \
	= "4096 32 512 200 500 " ]
echo 100 > $PARAMS/max_tasks
expect param_write "max_tasks=100 reads back" [ "$(cat $PARAMS/max_tasks)" = 100 ]
for bad in 0 65537 -5 xyz "" 4294967296; do
	expect "param_max_tasks_rejects_'$bad'" "EINVAL, old kept" write_rejected $PARAMS/max_tasks "$bad"
done
for bad in 0 65537; do
	expect "param_ratelimit_rejects_$bad" "out of range" write_rejected $PARAMS/ratelimit_pages $bad
done
for bad in 15 65537; do
	expect "param_chunk_rejects_$bad" "out of range" write_rejected $PARAMS/write_chunk_pages $bad
done
for bad in 0 10001; do
	expect "param_pause_rejects_$bad" "out of range" write_rejected $PARAMS/max_pause_ms $bad
done
expect param_window_rejects "360001 rejected" write_rejected $PARAMS/dirty_ratio_centisecs 360001
echo 700 > $PARAMS/dirty_ratio_centisecs
expect param_window_is_sysctl "param and sysctl are one knob" [ "$(cat $SYSCTL)" = 700 ]
echo 500 > $SYSCTL
echo 4096 > $PARAMS/max_tasks

# debugfs: both files there, read-only (lockdown refuses anything else).
for f in tasks stats; do
	expect "debugfs_$f" "present, mode 0444" [ "$(stat -c %a $DBG/$f 2>/dev/null)" = 444 ]
	# write_refused, not write_rejected: both files change as they are
	# read (7.3, a clean check: stats' counters moved between its reads).
	expect "debugfs_${f}_readonly" "writes refused" write_refused $DBG/$f x
done
expect debugfs_stats_keys "stats has calls and dirty_thresh" \
	sh -c "grep -q '^calls ' $DBG/stats && grep -q '^dirty_thresh ' $DBG/stats"

# Memory: an entry fits two cachelines, and the table's most follows max_tasks.
mem() {
	awk '{ v[$1] = $2 }
		END { printf "%.0f\n", v["max_tasks"] * (v["task_bytes"] + v["group_bytes"]) + v["hash_bytes"] }' $DBG/stats
}
echo 100 > $PARAMS/max_tasks
want100=$(mem) got100=$(stat_of max_bytes)
echo 4096 > $PARAMS/max_tasks
want=$(mem) got=$(stat_of max_bytes) tb=$(stat_of task_bytes)
log "memory: task ${tb:-?} B, group $(stat_of group_bytes) B, hash tables $(stat_of hash_bytes) B, at max_tasks ${got:-?} B"
expect task_bytes_two_lines "an entry is ${tb:-not reported} B, at most 128" [ "${tb:-0}" -gt 0 -a "${tb:-0}" -le 128 ]
expect max_bytes_follows_max_tasks "max_tasks 100: ${got100:-none} B, want $want100; 4096: ${got:-none} B, want $want" \
	[ "$got100" = "$want100" -a "$got" = "$want" -a "${got100:-0}" -lt "${got:-0}" ]

# The threshold pwthrottle uses is the kernel's (vmstat computes the same).
ours=$(stat_of dirty_thresh)
kern=$(awk '$1 == "nr_dirty_threshold" { print $2 }' /proc/vmstat)
log "dirty_thresh: pwthrottle $ours, kernel $kern"
expect thresh_matches_kernel "pwthrottle $ours vs vmstat $kern (within 2%)" \
	[ $(( (ours - kern) * (ours - kern) * 2500 )) -le $(( kern * kern )) ]
# ...and follows vm.dirty_bytes within a second.
vm_dirty_save
echo $((64 << 20)) > /proc/sys/vm/dirty_bytes
sleep 1
expect thresh_follows_dirty_bytes "64 MiB = 16384 pages, got $(stat_of dirty_thresh)" \
	[ "$(stat_of dirty_thresh)" = 16384 ]
vm_dirty_restore
# The harness's own promise, which every test that sets vm.dirty_* relies
# on: the knobs as they were (the boot's defaults: ratio 20, background 10).
expect vm_dirty_restored "vm.dirty_* put back:$(vm_dirty_now), want:$VM_DIRTY_SAVED" \
	[ "$(vm_dirty_now)" = "$VM_DIRTY_SAVED" -a "$(cat /proc/sys/vm/dirty_ratio)" = 20 ]

# Every page a writer dirties is counted, though the ftrace callback lets
# its calls between two decisions through unredirected: 4 MiB is 1024
# pages, which go into its prediction at its decisions, every
# ratelimit_pages. Up to that many may wait for the next one: from 6.12
# a write calls the hook before it dirties its page, so the last write's
# page is seen by no call.
mount_scratch
$PWT_W /mnt/count 4 -b 4 -h 5 > /dev/null 2> /tmp/count.err &
w=$!
n=0
while ! grep -q ready /tmp/count.err && [ $n -lt 100 ]; do sleep 0.2; n=$((n + 1)); done
fut=$(task_field $w future_pages)
rl=$(cat $PARAMS/ratelimit_pages)
expect prediction_counts_every_page "4 MiB written: future ${fut:-none} pages, want $((1024 - rl)) to 1024" \
	within "${fut:-0}" $((1024 - rl)) 1024
kill $w 2> /dev/null
wait $w
rm -f /mnt/count /tmp/count.err
umount /mnt

expect unload "rmmod succeeds" unload
expect unload_sysctl_gone "no vm.dirty_ratio_centisecs" [ ! -e $SYSCTL ]
expect unload_debugfs_gone "no debugfs dir" [ ! -e $DBG ]
expect unload_params_gone "no parameters dir" [ ! -e $PARAMS ]
expect unload_hook_gone "no longer in enabled_functions" \
	sh -c "[ -r $ef ] && ! grep -q '^balance_dirty_pages_ratelimited_flags' $ef"

# Loading with a bad parameter fails cleanly.
expect load_bad_param_fails "insmod max_tasks=0 refused" refused load max_tasks=0
expect load_bad_param_clean "and left nothing loaded" sh -c '! grep -q "^pwthrottle " /proc/modules'

# The re-entrant hook, which a kernel with an unexpected prologue gets
# (direct_jump=0 asks for it): the original is called through its entry,
# the callback lets that call through instead of redirecting it again.
dmesg_mark
expect reentrant_load "insmod direct_jump=0" load direct_jump=0
expect reentrant_message "dmesg names the re-entrant hook" \
	dmesg_says "pwthrottle: re-entrant hook"
calls0=$(stat_of calls)
expect reentrant_writes "a 4 MiB write completes" \
	sh -c 'dd if=/dev/zero of=/tmp/reent bs=64k count=64 2>/dev/null && sync'
calls1=$(stat_of calls)
expect reentrant_calls "the hook sees the writes: $((calls1 - calls0)) calls for 64 writes" \
	[ $((calls1 - calls0)) -ge 64 ]
expect reentrant_unload "rmmod" unload
rm -f /tmp/reent

i=0
cycles_ok=true
while [ $i -lt 50 ]; do
	load && dd if=/dev/zero of=/tmp/cycle bs=64k count=4 2>/dev/null && unload || cycles_ok=false
	i=$((i + 1))
done
expect load_unload_50 "50 cycles" $cycles_ok
expect dmesg_clean "no WARNING/BUG/Oops since the start" dmesg_clean
finish
