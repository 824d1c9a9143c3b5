# SPDX-License-Identifier: GPL-2.0
#
# private-apt.sh: sourced by scripts that download Debian packages
# (fetch-kernel, fetch-source). apt_setup fills APTOPTS with options that
# make apt-get/apt-cache use their own sources, lists and archives under
# $PWT_CACHE/apt, so the host's apt configuration and state stay untouched.
# Needs CACHE set and a log function.

APTDIR=$CACHE/apt
APTOPTS=()
PWT_APT_SUITES="bookworm trixie"
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

# The Debian mirror the host already uses (deb822 or one-line format).
host_mirror() {
	local uri
	uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
		awk '/^URIs:/ {u=$2} /^Suites:/ && / bookworm( |$)/ {print u; exit}')
	[ -n "$uri" ] || uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
		awk '$1=="deb" && $3=="bookworm" {print $2; exit}')
	echo "${PWT_DEBIAN_MIRROR:-$uri}"
}

apt_setup() {
	local mirror
	mkdir -p "$APTDIR/lists/partial" "$APTDIR/archives/partial" "$APTDIR/parts"
	mirror=$(host_mirror)
	[ -n "$mirror" ] || { log "cannot find the host's Debian mirror; set PWT_DEBIAN_MIRROR"; exit 1; }
	# Both releases users run, each with its updates, backports and
	# security suites: kernels are always named with their suite
	# (linux-image-amd64/trixie), so mixing them here picks nothing by
	# accident.
		for suite in $PWT_APT_SUITES; do
		echo "deb [signed-by=$KEYRING] $mirror $suite main"
		echo "deb [signed-by=$KEYRING] $mirror $suite-updates main"
		echo "deb [signed-by=$KEYRING] $mirror $suite-backports main"
		echo "deb [signed-by=$KEYRING] ${mirror%/debian*}/debian-security $suite-security main"
	done > "$APTDIR/sources.new"
	# Replaced only when it changed: its mtime says when the lists are stale.
	if cmp -s "$APTDIR/sources.new" "$APTDIR/sources.list"; then
		rm "$APTDIR/sources.new"
	else
		mv "$APTDIR/sources.new" "$APTDIR/sources.list"
	fi
	APTOPTS=(-o "Dir::Etc::SourceList=$APTDIR/sources.list"
		 -o "Dir::Etc::SourceParts=$APTDIR/parts"
		 -o "Dir::State::Lists=$APTDIR/lists"
		 -o "Dir::Cache::Archives=$APTDIR/archives"
		 -o "Dir::Cache::pkgcache=$APTDIR/pkgcache.bin"
		 -o "Dir::Cache::srcpkgcache=$APTDIR/srcpkgcache.bin"
		 -o "Dir::State::status=/dev/null"
		 -o "APT::Architecture=amd64"
		 -o "APT::Sandbox::User=root")
	# Refresh the private lists at most once a day, and when the sources
	# changed.
	if [ -z "$(find "$APTDIR/lists" -maxdepth 1 -name '*Packages*' -mtime -1 \
			-newer "$APTDIR/sources.list" 2>/dev/null | head -1)" ]; then
		log "updating private apt lists"
		apt-get "${APTOPTS[@]}" -q update >&2 || return 1
	fi
}

# apt_download_deb DIR PKG [TARGET...]: the newest PKG_*_all.deb already in
# DIR, or one downloaded into DIR (apt_setup first) from the first TARGET
# (PKG/suite, PKG=version; default PKG) that gives one. Prints its path.
apt_download_deb() {
	local dir=$1 pkg=$2 deb tmp t
	shift 2
	[ $# -gt 0 ] || set -- "$pkg"
	deb=$(find "$dir" -maxdepth 1 -name "${pkg}_*_all.deb" | sort -V | tail -n 1)
	if [ -z "$deb" ]; then
		apt_setup || return 1
		tmp=$(mktemp -d "$dir/dl.XXXXXX")
		log "downloading $pkg"
		for t in "$@"; do
			(cd "$tmp" && apt-get "${APTOPTS[@]}" -q download "$t" >&2) && break
		done
		deb=$(find "$tmp" -maxdepth 1 -name "${pkg}_*_all.deb" | head -n 1)
		[ -n "$deb" ] && mv "$deb" "$dir/" && deb=$dir/${deb##*/}
		rm -rf "$tmp"
		[ -n "$deb" ] || { log "apt-get download gave no $pkg package"; return 1; }
	fi
	echo "$deb"
}
