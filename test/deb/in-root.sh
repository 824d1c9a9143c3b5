#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What a user of Debian RELEASE does with pwthrottle-dkms, run inside a
# throwaway copy of a scripts/check-deb root: apt install, a second kernel's
# headers later, apt purge. A KTAP document on stdout, a line per test ("ok
# N NAME", "not ok N NAME # why"); the commands' output goes to stderr.
#
#   in-root.sh RELEASE VERSION REL1 REL2
#     RELEASE  bookworm or trixie, the prefix of the test names
#     VERSION  the package's and the module's version
#     REL1     the kernel (and headers) the root has
#     REL2     the kernel whose packages are in /var/cache/pwt-deb
#   /pwt/pwthrottle-dkms_VERSION_all.deb, /pwt/pwthrottle-tools_VERSION_ARCH.deb
#            the packages under test
#   /var/cache/pwt-deb-tools   what pwthrottle-tools needs from the archive
set -uo pipefail
shopt -s nullglob

release=$1 version=$2 rel1=$3 rel2=$4
deb=/pwt/pwthrottle-dkms_${version}_all.deb
tools=/pwt/pwthrottle-tools_${version}_$(dpkg --print-architecture).deb
export DEBIAN_FRONTEND=noninteractive
n=0
result() { n=$((n + 1)); echo "$1 $n $release/$2${3:+ # $3}"; }
ok() { result ok "$*"; }
fail() { result "not ok" "$1" "$2"; }
echo "KTAP version 1"
# Quiet on stdout: the test lines are all it carries.
run() { "$@" >&2; }

# module_for NAME REL: dkms built and installed the module for REL, where
# modprobe finds it. Debian's dkms installs to updates/dkms/.
module_for() {
	local name=$1 rel=$2 f why=''
	dkms status "pwthrottle/$version" -k "$rel" | grep -q ": installed" ||
		why+=" dkms status: '$(dkms status "pwthrottle/$version" -k "$rel")';"
	f=$(modinfo -k "$rel" -F filename pwthrottle 2> /dev/null)
	case $f in
	/lib/modules/"$rel"/updates/dkms/pwthrottle.ko*) ;;
	*) why+=" modinfo -k $rel: '$f';" ;;
	esac
	[ "$(modinfo -k "$rel" -F version pwthrottle 2> /dev/null)" = "$version" ] ||
		why+=" version;"
	modinfo -k "$rel" -F vermagic pwthrottle 2> /dev/null | grep -q "^$rel " ||
		why+=" vermagic;"
	# The dry run resolves the module as a real load would, and reads
	# /etc/modprobe.d on the way.
	modprobe -n -v -S "$rel" pwthrottle 2> /dev/null | grep -q "insmod $f" ||
		why+=" modprobe -n: '$(modprobe -n -v -S "$rel" pwthrottle 2>&1)';"
	if [ -z "$why" ]; then
		ok "$name (${f#/lib/modules/"$rel"/}, modprobe resolves it)"
	else
		fail "$name" "${why%;}"
	fi
}

# --- apt install: dkms's postinst builds for every kernel with headers ---
if ! run apt-get install -y "$deb"; then
	fail install "apt-get install $deb failed"
	exit 0
fi
why=''
for f in /usr/src/pwthrottle-$version/dkms.conf /usr/src/pwthrottle-$version/Kbuild \
	/etc/modprobe.d/pwthrottle.conf /usr/lib/modules-load.d/pwthrottle.conf \
	/usr/lib/sysctl.d/90-pwthrottle.conf /usr/share/man/man4/pwthrottle.4.gz; do
	[ -f "$f" ] || why+=" $f"
done
if [ -z "$why" ]; then
	ok "install (sources, dkms.conf, modprobe.d, modules-load.d, sysctl.d, man page)"
else
	fail install "missing:$why"
fi
module_for "dkms-$rel1" "$rel1"

# --- a kernel upgrade: the second kernel and its headers, offline from the
# root's cache. Their postinsts run dkms autoinstall (dkms's hooks in
# /etc/kernel/postinst.d and header_postinst.d). ---
if ! run apt-get install -y /var/cache/pwt-deb/*.deb; then
	fail "second-kernel-$rel2" "apt-get install of the $rel2 headers failed"
else
	module_for "second-kernel-$rel2" "$rel2"
fi

# --- apt purge: nothing left ---
if ! run apt-get purge -y pwthrottle-dkms; then
	fail purge "apt-get purge failed"
	exit 0
fi
why=''
left=$(find /usr/src /var/lib/dkms /lib/modules /etc /usr/lib/modules-load.d \
	/usr/lib/sysctl.d /usr/share/man /usr/share/doc -name '*pwthrottle*' 2> /dev/null)
[ -z "$left" ] || why+=" files: $(echo "$left" | head -n 3 | tr '\n' ' ');"
grep -l pwthrottle /lib/modules/*/modules.dep > /dev/null 2>&1 && why+=" modules.dep entry;"
st=$(dpkg-query -W -f='${db:Status-Abbrev}' pwthrottle-dkms 2> /dev/null)
[ -z "$st" ] || [ "$st" = "un " ] || why+=" dpkg status '$st';"
dkms status pwthrottle 2> /dev/null | grep -q . && why+=" dkms still lists it;"
if [ -z "$why" ]; then
	ok "purge (no sources, modules, DKMS state, conffile or dpkg status left)"
else
	fail purge "${why%;}"
fi

# --- pwthrottle-tools: pwtop runs (--help: no BPF in a chroot), and goes ---
if ! run apt-get install -y "$tools" /var/cache/pwt-deb-tools/*.deb; then
	fail tools "apt-get install $tools failed"
elif ! pwtop --help | grep -q '^pwtop \[--once'; then
	fail tools "pwtop --help: '$(pwtop --help 2>&1 | head -n 1)'"
elif ! run apt-get purge -y pwthrottle-tools; then
	fail tools "apt-get purge pwthrottle-tools failed"
elif [ -e /usr/sbin/pwtop ] || [ -n "$(dpkg-query -W -f='${db:Status-Abbrev}' pwthrottle-tools 2> /dev/null | grep -v '^un')" ]; then
	fail tools "pwtop or its dpkg status left after purge"
else
	ok "tools (pwthrottle-tools installs, pwtop --help runs, purge removes it)"
fi
