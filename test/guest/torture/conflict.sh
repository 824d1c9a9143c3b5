# SPDX-License-Identifier: GPL-2.0
# torture/conflict.sh: with another IPMODIFY user of the hooked function loaded,
# insmod fails with EBUSY, says why, leaves nothing; and back.
# One concern of torture.sh (see there); alone: torture.sh conflict, or
# make check T=conflict.
. /pwt/lib.sh

# The test-only IPMODIFY module (test/conflict; vm-run --module).
CKO=/lib/modules/extra/pwt_conflict.ko

# insmod_busy: the last insmod ($out) failed with EBUSY and left nothing.
insmod_busy() { ! grep -q "^$1 " /proc/modules && echo "$out" | grep -q 'Device or resource busy'; }
calls_grow() {
	local c
	c=$(stat_of calls)
	dd if=/dev/zero of=/mnt/conflict bs=1M count=4 2>/dev/null
	[ "$(stat_of calls)" -gt "$c" ]
}

t_conflict() {
	local out
	if [ ! -f $CKO ]; then
		skip conflict "no $CKO (vm-run --module build/REL/conflict/pwt_conflict.ko)"
		return
	fi
	tmark conflict
	expect conflict_mod_loads "pwt_conflict loads first" insmod $CKO
	out=$(load 2>&1)
	expect conflict_ebusy "insmod pwthrottle: '$out'" insmod_busy pwthrottle
	expect conflict_message "dmesg names the conflict" \
		sh -c "dmesg | sed -n '/pwt-torture: mark conflict\$/,\$p' |
		       grep -q 'pwthrottle: balance_dirty_pages_ratelimited_flags is already redirected by another IPMODIFY'"
	expect conflict_clean_failure "no sysctl, debugfs or parameters left" \
		[ ! -e $SYSCTL -a ! -e $DBG -a ! -e $PARAMS ]
	expect conflict_writes_work "writes go through the other user's hook" \
		sh -c "dd if=/dev/zero of=/mnt/conflict bs=1M count=16 2>/dev/null && sync"
	rmmod pwt_conflict
	expect conflict_load_after "pwthrottle loads once the other is gone" load
	out=$(insmod $CKO 2>&1)
	expect conflict_reverse_ebusy "insmod pwt_conflict beside pwthrottle: '$out'" \
		insmod_busy pwt_conflict
	expect conflict_still_hooked "pwthrottle still counts calls" calls_grow
	unload
	expect conflict_reverse_after "pwt_conflict loads after rmmod pwthrottle" insmod $CKO
	rmmod pwt_conflict 2>/dev/null
	rm -f /mnt/conflict
	expect conflict_dmesg_clean "no WARNING/BUG/Oops" tclean conflict
}

torture_run conflict ext4
