# SPDX-License-Identifier: GPL-2.0
# The module as DKMS built and signed it (scripts/check-packaging), and what
# the README's Install, Secure Boot and Troubleshooting sections promise:
# the packaging/ examples work, -EBUSY is explained, lockdown leaves the
# debugfs files readable, and an unknown signing key is refused.
#   $1  the version the module must report (Kbuild's PWT_VERSION)
#   /pwt/pkg/modprobe.conf, /pwt/pkg/sysctl.conf  the packaging/ examples
. /pwt/lib.sh

want_version=$1
# refused_with TEXT: the last load ($out) failed with that strerror text.
refused_with() { ! loaded && echo "$out" | grep -q "$1"; }
ef=/sys/kernel/tracing/enabled_functions
[ -r $ef ] || ef=/sys/kernel/debug/tracing/enabled_functions

dmesg_mark
expect pkg_insmod "the DKMS-built module loads" load
expect pkg_version "reports version $want_version" \
	[ "$(cat /sys/module/pwthrottle/version)" = "$want_version" ]
expect pkg_hook "hook installed" sh -c "grep -q '^balance_dirty_pages_ratelimited_flags' $ef"
mount_scratch
dd if=/dev/zero of=/mnt/pkg bs=64k count=64 2>/dev/null
expect pkg_counts "the hook sees writes" [ "$(stat_of calls)" -gt 0 ]
expect pkg_rmmod "and unloads" unload

# modprobe.d: the example's options lines, uncommented and with every value
# raised by one (the defaults would prove nothing), set the knobs at load
# time; busybox modprobe reads /etc/modprobe.d as kmod's does.
rel=$(uname -r)
mkdir -p "/lib/modules/$rel/extra" /etc/modprobe.d
cp "$KO" "/lib/modules/$rel/extra/"
echo "extra/pwthrottle.ko:" >> "/lib/modules/$rel/modules.dep"
awk '/^#[[:space:]]*options pwthrottle / { sub(/^#[[:space:]]*/, "")
		for (i = 3; i <= NF; i++) { split($i, kv, "="); $i = kv[1] "=" kv[2] + 1 }
		print }' /pwt/pkg/modprobe.conf > /etc/modprobe.d/pwthrottle.conf
sed 's/^/# modprobe.d: /' /etc/modprobe.d/pwthrottle.conf
expect pkg_modprobe "modprobe pwthrottle" modprobe pwthrottle
n=0
for kv in $(sed 's/^options pwthrottle //' /etc/modprobe.d/pwthrottle.conf); do
	k=${kv%%=*} v=${kv#*=}
	expect "pkg_modprobe_$k" "$v from modprobe.d, got $(cat $PARAMS/$k 2>/dev/null)" \
		[ "$(cat $PARAMS/$k 2>/dev/null)" = "$v" ]
	n=$((n + 1))
done
expect pkg_modprobe_all "all 5 knobs in the example, found $n" [ $n = 5 ]
rm /etc/modprobe.d/pwthrottle.conf

# sysctl.d: the example applies to a loaded module. Its leading "-" (ignore
# if absent) is systemd-sysctl syntax that busybox sysctl lacks.
want=$(sed -n 's/^-\{0,1\}vm\.dirty_ratio_centisecs *= *\([0-9]*\).*/\1/p' /pwt/pkg/sysctl.conf)
sed 's/^-//' /pwt/pkg/sysctl.conf > /tmp/sysctl.conf
echo 1234 > $SYSCTL
sysctl -p /tmp/sysctl.conf > /dev/null
expect pkg_sysctl_d "sysctl.d example sets $want, got $(cat $SYSCTL)" \
	[ "${want:-none}" = "$(cat $SYSCTL)" ]
expect pkg_modprobe_r "modprobe -r" modprobe -r pwthrottle

# Troubleshooting: with kernel.ftrace_enabled=0 the hook cannot go in; the
# load fails with EBUSY and dmesg says why. From 7.0 the sysctl is
# deprecated and turns nothing off (the kernel says so): then the load works.
sysctl -w kernel.ftrace_enabled=0 > /dev/null
out=$(load 2>&1)
log "insmod with ftrace_enabled=0: $out"
if dmesg | grep -q 'ftrace_enabled file is deprecated and no longer disables ftrace'; then
	expect pkg_ftrace_off_ignored "kernel ignores ftrace_enabled=0: insmod works, hook in" \
		sh -c "grep -q '^pwthrottle ' /proc/modules && grep -q '^balance_dirty_pages_ratelimited_flags' $ef"
	unload
else
	expect pkg_ftrace_off_ebusy "insmod refused with EBUSY" \
		refused_with 'Device or resource busy'
	expect pkg_ftrace_off_message "dmesg names the cause" \
		sh -c "dmesg | grep -q 'pwthrottle: .*kernel.ftrace_enabled=0: -EBUSY'"
fi
sysctl -w kernel.ftrace_enabled=1 > /dev/null

# Lockdown (as under Secure Boot) is one-way, so it comes last. Loaded
# before, the module keeps working and its debugfs files stay readable:
# they are 0444 with no write, ioctl or mmap.
expect pkg_reload "insmod again" load
# ...and once it is in, turning ftrace off is refused (FTRACE_OPS_FL_PERMANENT)
# instead of silently disabling pwthrottle.
expect pkg_ftrace_off_refused "sysctl -w kernel.ftrace_enabled=0 fails, stays 1" \
	sh -c '! sysctl -w kernel.ftrace_enabled=0 2>/dev/null && [ "$(cat /proc/sys/kernel/ftrace_enabled)" = 1 ]'
mkdir -p /sys/kernel/security
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
lock=/sys/kernel/security/lockdown
if [ -w $lock ]; then
	for level in integrity confidentiality; do
		echo $level > $lock
		expect "pkg_lockdown_${level}" "lockdown is $level: $(cat $lock)" \
			grep -q "\[$level\]" $lock
		expect "pkg_lockdown_${level}_debugfs" "debugfs tasks and stats readable" \
			sh -c "head -1 $DBG/tasks | grep -q '^pid' && grep -q '^calls ' $DBG/stats"
		echo 700 > $SYSCTL
		expect "pkg_lockdown_${level}_sysctl" "sysctl still writable" \
			[ "$(cat $SYSCTL)" = 700 ]
	done
	expect pkg_lockdown_rmmod "rmmod allowed" unload
	# A module signed by a key the kernel does not trust (ours, throwaway).
	out=$(load 2>&1)
	log "insmod under lockdown: $out"
	expect pkg_lockdown_insmod_eperm "untrusted signature refused (EPERM)" \
		refused_with 'Operation not permitted'
else
	skip pkg_lockdown "no $lock"
	unload
fi

# module.sig_enforce=1 (one-way too): the same module is EKEYREJECTED.
echo 1 > /sys/module/module/parameters/sig_enforce
out=$(load 2>&1)
log "insmod with sig_enforce: $out"
expect pkg_sig_enforce_ekeyrejected "refused with 'Key was rejected by service'" \
	refused_with 'Key was rejected by service'
dmesg | grep -iE 'lockdown|rejected|verification' | sed 's/^/# /'
expect pkg_dmesg_clean "no WARNING/BUG/Oops" dmesg_clean
finish
