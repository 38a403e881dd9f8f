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

tool=agents-install.sh
# shellcheck source=npm-prefix.sh
. "$(dirname "$0")/npm-prefix.sh" || exit 1

status=0
for n in "${names[@]}"; do
	case $n in
	claude) npm_prefix_install claude "$CLAUDE_PKG" "$CLAUDE_VERSION" "node_modules/.bin/$CLAUDE_BIN" -x || status=1 ;;
	codex) npm_prefix_install codex "$CODEX_PKG" "$CODEX_VERSION" "node_modules/.bin/$CODEX_BIN" -x || status=1 ;;
	gemini) npm_prefix_install gemini "$GEMINI_PKG" "$GEMINI_VERSION" "node_modules/.bin/$GEMINI_BIN" -x || status=1 ;;
	opencode) npm_prefix_install opencode "$OPENCODE_PKG" "$OPENCODE_VERSION" "node_modules/.bin/$OPENCODE_BIN" -x || status=1 ;;
	esac
done
exit $status
