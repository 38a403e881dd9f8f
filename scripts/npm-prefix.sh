# Sourced by agents-install.sh and mcp-tools-install.sh: installs an npm
# package at a pinned version into a prefix of its own under $cache, once.
#
# The caller sets:
#   tool   its own name, for messages
#   cache  the directory holding one prefix per package@version
# and calls
#   npm_prefix_install NAME PKG VERSION FILE TEST
# which prints NAME<TAB>PREFIX/FILE on standard output once PKG@VERSION is
# installed and FILE passes `test TEST` (-e, or -x for a program).
#
# A prefix that is complete (it holds .complete) is used as it is. One
# that is not is built aside and renamed into place, so an interrupted
# install never looks complete. When the npm registry cannot be reached
# (or npm is missing) and something still has to be installed, the
# script exits 3, so a test can skip.

# npm must not write into the person's npm config or cache beyond its
# download cache, nor ask anything, nor phone home.
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
export npm_config_yes=true npm_config_loglevel=warn

npm_reached=""
npm_reach() {
	[ -n "$npm_reached" ] && return 0
	if ! command -v npm >/dev/null 2>&1; then
		echo "$tool: npm is not installed; cannot install $1" >&2
		exit 3
	fi
	# One quick try: a registry that refuses or does not resolve answers
	# at once, one that drops packets within the fetch timeout.
	if ! timeout 60 npm view --fetch-retries=0 --fetch-timeout=15000 "$1" version >/dev/null 2>&1; then
		echo "$tool: the npm registry ($(npm config get registry 2>/dev/null)) cannot be reached; cannot install $1" >&2
		exit 3
	fi
	npm_reached=yes
}

npm_prefix_install() {
	local name=$1 pkg=$2 version=$3 file=$4 check=$5
	local prefix="$cache/${pkg//\//+}@$version"
	if [ -f "$prefix/.complete" ] && test "$check" "$prefix/$file"; then
		printf '%s\t%s\n' "$name" "$prefix/$file"
		return 0
	fi
	npm_reach "$pkg@$version"
	mkdir -p "$cache" || return 1
	local tmp
	tmp=$(mktemp -d "$cache/.install.XXXXXX") || return 1
	# mktemp makes the directory 0700; the prefix gets the mode a plain
	# mkdir would, so other accounts (tests run as an unprivileged user)
	# can use the cache.
	chmod "$(printf '%o' $((0777 & ~$(umask))))" "$tmp" || return 1
	echo "$tool: installing $pkg@$version into $prefix" >&2
	# The bins are relative symlinks and survive the rename. The
	# package.json stays: inspector-cli 1.0.3 reads ../package.json from
	# its working directory.
	if ! (cd "$tmp" && printf '{"private":true}\n' >package.json &&
		timeout 900 npm install --prefix "$tmp" --no-save --no-package-lock "$pkg@$version" >&2); then
		rm -rf "$tmp"
		echo "$tool: npm install $pkg@$version failed" >&2
		return 1
	fi
	if ! test "$check" "$tmp/$file"; then
		rm -rf "$tmp"
		echo "$tool: $pkg@$version installed no $file" >&2
		return 1
	fi
	touch "$tmp/.complete"
	if ! mv -T "$tmp" "$prefix" 2>/dev/null; then
		# Another install got there first, or a broken prefix is in the way.
		if [ -f "$prefix/.complete" ]; then
			rm -rf "$tmp"
		else
			rm -rf "$prefix" && mv -T "$tmp" "$prefix" || {
				rm -rf "$tmp"
				return 1
			}
		fi
	fi
	printf '%s\t%s\n' "$name" "$prefix/$file"
}
