# SPDX-License-Identifier: GPL-2.0
# torture/chain.sh: writers on pids chosen to share one chain of the task
# table (as any user may choose them, with ns_last_pid or by forking until
# one comes up): the chain stays at PWT_CHAIN_MAX (64) entries, the rest
# are dropped and counted, and every writer finishes.
# One concern of torture.sh (see there); alone: torture.sh chain, or
# make check T=chain.
. /pwt/lib.sh

# The chain of PID: hash_min(pid, 10), i.e. hash_32() (include/linux/hash.h,
# GOLDEN_RATIO_32 and no arch hash on x86): the top 10 bits of the low 32 of
# pid * 0x61C88647. Exact in awk's doubles: pid < 2^22, so the product is
# below 2^53.
CHAIN_MAX=64
CHAIN_AWK='function chain(p,    x) {
	x = p * 1640531527
	x -= int(x / 4294967296) * 4294967296
	return int(x / 4194304)
}'
# chain_pids FROM N: the first N pids from FROM that share FROM's chain.
chain_pids() {
	awk -v from="$1" -v n="$2" "$CHAIN_AWK"'
	BEGIN { c = chain(from); for (p = from; n > 0; p++) if (chain(p) == c) { print p; n-- } }'
}
# in_chain PID: entries in $DBG/tasks in the chain of PID.
in_chain() {
	awk -v c="$1" "$CHAIN_AWK"'
	NR == 1 { c = chain(c) } NR > 1 && chain($1) == c { n++ } END { print n + 0 }' $DBG/tasks
}

t_chain() {
	local pidmax p w hits=0 pids='' want d0 d1 inchain bad=''
	tmark chain
	pidmax=$(cat /proc/sys/kernel/pid_max)
	# 4M pids, 4096 in each chain (systemd sets that on Debian: 50-pid-max.conf).
	echo 4194304 > /proc/sys/kernel/pid_max
	need_load
	# A 30 s window: the writers below are not idle, none may be evicted
	# for a newcomer, so every one past the chain's bound is dropped.
	echo 3000 > $SYSCTL
	mkdir -p /mnt/chain
	want=$((CHAIN_MAX + 8))
	d0=$(stat_of drops)
	for p in $(chain_pids 1000000 $want); do
		# The next fork takes pid p; nothing else forks in this loop.
		echo $((p - 1)) > /proc/sys/kernel/ns_last_pid
		$PWT_W /mnt/chain/$p 1 -h 20 > /dev/null 2> /tmp/chain.$p &
		[ $! = "$p" ] && hits=$((hits + 1))
		pids="$pids $!"
	done
	# Each wrote its 1 MB within a second or two; all are still alive.
	sleep 4
	inchain=$(in_chain 1000000)
	d1=$(stat_of drops)
	for w in $pids; do
		wait_max "$w" 120 || bad="$bad $w:$?"
	done
	rm -rf /mnt/chain /tmp/chain.*
	echo "$pidmax" > /proc/sys/kernel/pid_max
	log "chain: $hits of $want writers on the chosen pids; $inchain entries in their chain; drops $d0 -> $d1"
	expect chain_pids_taken "writers on the chosen pids: $hits of $want, want > $CHAIN_MAX" \
		[ "$hits" -gt $CHAIN_MAX ]
	expect chain_bounded "entries in the chain: $inchain, want $CHAIN_MAX (one per writer up to the bound)" \
		[ "$inchain" = $CHAIN_MAX ]
	expect chain_drops_counted "drops $d0 -> $d1, want at least $((hits - CHAIN_MAX)) more" \
		[ $((d1 - d0)) -ge $((hits - CHAIN_MAX)) ]
	expect chain_writers "every writer exits 0 (failed:$bad)" [ -z "$bad" ]
	expect chain_dmesg_clean "no WARNING/BUG/Oops" tclean chain
}

torture_run chain ext4
