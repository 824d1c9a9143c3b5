# SPDX-License-Identifier: GPL-2.0
# torture/fuzz.sh: every knob refuses ~36 bad values with EINVAL and keeps its
# value; debugfs refuses every way of writing; bad insmod parameters leave
# nothing loaded; nothing above pr_info.
# One concern of torture.sh (see there); alone: torture.sh fuzz, or
# make check T=fuzz.
. /pwt/lib.sh

# rejects FILE VALUE: writing VALUE fails with EINVAL and FILE reads as before.
rejects() {
	local before after
	read -r before < "$1"
	# echo, not printf: busybox printf does not say why a write failed.
	if echo "$2" 2>/tmp/fuzz.err > "$1"; then
		return 1
	fi
	read -r after < "$1"
	grep -q 'Invalid argument' /tmp/fuzz.err && [ "$before" = "$after" ]
}

t_fuzz() {
	local long1 longa f v bad n=0 knob lo hi p
	long1=1111111111
	longa=aaaaaaaaaa
	for v in 1 2 3 4 5 6 7 8 9; do long1=$long1$long1; longa=$longa$longa; done
	long1=$(echo "$long1" | cut -c1-5000)
	longa=$(echo "$longa" | cut -c1-5000)
	tmark fuzz
	load || { fail fuzz_load "insmod failed"; return; }
	# Values no knob may take, one per line: negative, huge, non-numeric,
	# empty, garbage around digits, control characters, 5000 characters.
	cat > /tmp/fuzz.values <<-EOF
		-1
		-5
		-2147483648
		-2147483649
		-9223372036854775809
		4294967295
		4294967296
		4294967297
		9223372036854775808
		18446744073709551615
		18446744073709551616
		99999999999999999999999999
		abc
		0x
		0xg
		0x100000000
		12abc
		1.5
		1e3
		1,5
		+
		-
		--5
		5-
		0b101
		NaN
		inf

		 
		$(printf '\t')
		$(printf '\001\002')
		☃
		$long1
		$longa
	EOF
	for knob in "$SYSCTL:-1:360001" "$PARAMS/dirty_ratio_centisecs:-1:360001" \
		    "$PARAMS/max_tasks:0:65537" "$PARAMS/ratelimit_pages:0:65537" \
		    "$PARAMS/write_chunk_pages:15:65537" "$PARAMS/max_pause_ms:0:10001" \
		    "$PARAMS/group_by:-1:3" "$PARAMS/inflight_ms:0:10001" \
		    "$PARAMS/sync_inflight_ms:-1:10001" "$PARAMS/sync_hold_ms:-1:10001"; do
		f=${knob%%:*}
		lo=${knob#*:}
		hi=${lo#*:}
		lo=${lo%:*}
		bad=''
		n=0
		{ cat /tmp/fuzz.values; echo "$lo"; echo "$hi"; } > /tmp/fuzz.these
		while IFS= read -r v; do
			n=$((n + 1))
			rejects "$f" "$v" || bad="$bad '$(echo "$v" | cut -c1-20)'"
		done < /tmp/fuzz.these
		p=${f##*/}
		[ "$f" = "$SYSCTL" ] && p=sysctl_$p || p=param_$p
		expect "fuzz_$p" "accepted or wrong error/old value lost for:$bad" [ -z "$bad" ]
		log "fuzz $f: $n values tried"
	done
	expect fuzz_values_intact "knobs back at 500 4096 32 512 200 1 100 25 100" [ "$(cat $SYSCTL $PARAMS/max_tasks \
		$PARAMS/ratelimit_pages $PARAMS/write_chunk_pages $PARAMS/max_pause_ms \
		$PARAMS/group_by $PARAMS/inflight_ms $PARAMS/sync_inflight_ms $PARAMS/sync_hold_ms |
		tr '\n' ' ')" = "500 4096 32 512 200 1 100 25 100 " ]

	# debugfs: no way in for writing, and the files still read right after.
	bad=''
	for f in $DBG/tasks $DBG/stats; do
		echo x 2>/dev/null > "$f" && bad="$bad write:$f"
		echo x 2>/dev/null >> "$f" && bad="$bad append:$f"
		# Root may open it read-write (no lockdown here); writing must fail.
		(exec 4<> "$f" && echo x >&4) 2>/dev/null && bad="$bad rdwr:$f"
		rm -f "$f" 2>/dev/null; [ -e "$f" ] || bad="$bad unlink:$f"
		mv "$f" "$f.x" 2>/dev/null && bad="$bad rename:$f"
	done
	touch $DBG/new 2>/dev/null && bad="$bad create"
	mkdir $DBG/dir 2>/dev/null && bad="$bad mkdir"
	expect fuzz_debugfs_readonly "debugfs let in:$bad" [ -z "$bad" ]
	expect fuzz_debugfs_intact "stats and tasks still read" \
		sh -c "grep -q '^calls ' $DBG/stats && head -1 $DBG/tasks | grep -q '^pid'"
	unload
	# Rejections are pr_info; nothing at warning level or worse from us.
	expect fuzz_dmesg_quiet "no WARNING/BUG and no pwthrottle message above info" \
		sh -c "! dmesg -r | sed -n '/pwt-torture: mark fuzz\$/,\$p' | grep -v 'taints kernel' | grep -E '^<[0-4]>.*pwthrottle' &&
		       ! dmesg | sed -n '/pwt-torture: mark fuzz\$/,\$p' | grep -qE 'WARNING:|BUG:|Oops|Call Trace'"

	# Bad parameters at load time: insmod fails, nothing stays loaded (the
	# kernel's parser logs those at error level, which is its business).
	tmark fuzz-insmod
	bad=''
	for p in dirty_ratio_centisecs max_tasks ratelimit_pages write_chunk_pages max_pause_ms \
		 group_by inflight_ms sync_inflight_ms sync_hold_ms; do
		for v in "$p=-1" "$p=abc" "$p=" "$p" "$p=99999999999999999999" "$p=$long1"; do
			if load "$v" 2>/dev/null; then
				bad="$bad $(echo "$v" | cut -c1-30)"
				unload
			elif loaded; then
				bad="$bad $(echo "$v" | cut -c1-30)(half-loaded)"
			fi
		done
	done
	expect fuzz_insmod_params "insmod accepted or half-loaded:$bad" [ -z "$bad" ]
	expect fuzz_dmesg_clean "no WARNING/BUG/Oops" tclean fuzz
}

torture_run fuzz ext4
