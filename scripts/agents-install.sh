#!/usr/bin/env bash
# Installs the agent CLIs that guardrun's end-to-end tests drive, at pinned
# versions, with npm, into a cache outside the repository: one npm prefix
# per package@version under
#   ${GUARDRUN_AGENTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/guardrun/agents}
# A prefix that is complete (it holds .complete) is used as it is, so
# nothing is downloaded twice. Each agent's binary is printed as
#   NAME<TAB>PATH
# on standard output; progress goes to standard error.
#
# usage: agents-install.sh [claude] [codex] [gemini] [opencode] [all]
#   no names: claude, codex and gemini; all: those and opencode.
#
# Exit status: 0 all installed; 3 the npm registry could not be reached
# (or npm is missing) and something still had to be installed, so a test
# can skip; 2 usage; 1 any other failure.
set -u
set -o pipefail

# Pinned versions. Keep in sync with the versions the tests name
# (internal/testing/fakemodel/agents_test.go).
CLAUDE_PKG=@anthropic-ai/claude-code CLAUDE_VERSION=2.1.328 CLAUDE_BIN=claude
CODEX_PKG=@openai/codex CODEX_VERSION=0.169.0 CODEX_BIN=codex
GEMINI_PKG=@google/gemini-cli GEMINI_VERSION=0.61.0 GEMINI_BIN=gemini
OPENCODE_PKG=opencode-ai OPENCODE_VERSION=1.18.33 OPENCODE_BIN=opencode

cache=${GUARDRUN_AGENTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/guardrun/agents}

names=()
for a in "$@"; do
	case $a in
	claude | codex | gemini | opencode) names+=("$a") ;;
	all) names+=(claude codex gemini opencode) ;;
	-h | --help)
		sed -n '2,17s/^# \{0,1\}//p' "$0"
		exit 0
		;;
	*)
		echo "agents-install.sh: unknown agent $a (want claude, codex, gemini, opencode or all)" >&2
		exit 2
		;;
	esac
done
[ ${#names[@]} -gt 0 ] || names=(claude codex gemini)

# npm must not write into the person's npm config or cache beyond its
# download cache, nor ask anything, nor phone home.
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
export npm_config_yes=true npm_config_loglevel=warn

reached=""
reach() {
	[ -n "$reached" ] && return 0
	if ! command -v npm >/dev/null 2>&1; then
		echo "agents-install.sh: npm is not installed; cannot install $1" >&2
		exit 3
	fi
	# One quick try: a registry that refuses or does not resolve answers
	# at once, one that drops packets within the fetch timeout.
	if ! timeout 60 npm view --fetch-retries=0 --fetch-timeout=15000 "$1" version >/dev/null 2>&1; then
		echo "agents-install.sh: the npm registry ($(npm config get registry 2>/dev/null)) cannot be reached; cannot install $1" >&2
		exit 3
	fi
	reached=yes
}

install_one() {
	local name=$1 pkg=$2 version=$3 bin=$4
	local prefix="$cache/${pkg//\//+}@$version"
	local path="$prefix/node_modules/.bin/$bin"
	if [ -f "$prefix/.complete" ] && [ -x "$path" ]; then
		printf '%s\t%s\n' "$name" "$path"
		return 0
	fi
	reach "$pkg@$version"
	mkdir -p "$cache" || return 1
	local tmp
	tmp=$(mktemp -d "$cache/.install.XXXXXX") || return 1
	# mktemp makes the directory 0700; the prefix gets the mode a plain
	# mkdir would, so other accounts (tests run as an unprivileged user)
	# can use the cache.
	chmod "$(printf '%o' $((0777 & ~$(umask))))" "$tmp" || return 1
	echo "agents-install.sh: installing $pkg@$version into $prefix" >&2
	# The prefix is built aside and renamed into place, so an interrupted
	# install never looks complete; the bins are relative symlinks and
	# survive the rename.
	if ! (cd "$tmp" && printf '{"private":true}\n' >package.json &&
		timeout 900 npm install --prefix "$tmp" --no-save --no-package-lock "$pkg@$version" >&2); then
		rm -rf "$tmp"
		echo "agents-install.sh: npm install $pkg@$version failed" >&2
		return 1
	fi
	if [ ! -x "$tmp/node_modules/.bin/$bin" ]; then
		rm -rf "$tmp"
		echo "agents-install.sh: $pkg@$version installed no $bin" >&2
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
	printf '%s\t%s\n' "$name" "$path"
}

status=0
for n in "${names[@]}"; do
	case $n in
	claude) install_one claude "$CLAUDE_PKG" "$CLAUDE_VERSION" "$CLAUDE_BIN" || status=1 ;;
	codex) install_one codex "$CODEX_PKG" "$CODEX_VERSION" "$CODEX_BIN" || status=1 ;;
	gemini) install_one gemini "$GEMINI_PKG" "$GEMINI_VERSION" "$GEMINI_BIN" || status=1 ;;
	opencode) install_one opencode "$OPENCODE_PKG" "$OPENCODE_VERSION" "$OPENCODE_BIN" || status=1 ;;
	esac
done
exit $status
