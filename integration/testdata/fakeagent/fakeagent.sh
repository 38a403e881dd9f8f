#!/bin/sh
# fakeagent stands in for an LLM agent under `guardrun supervise`: it reads
# one command per line from its terminal and runs it the way agents run
# their tools, as "$SHELL" -c LINE, printing markers around each so a test
# can tell what the agent saw. Special lines:
#
#	par A ;; B     run "$SHELL" -c A and "$SHELL" -c B at the same time
#	nested CMD     run CMD through an intermediate process the agent
#	               started (a child of a child), as make or git would
#	socket         print the agent's own GUARDRUN_SOCKET
#	proxy          print the agent's own GUARDRUN_PROXY
#	server         print the agent's own GUARDRUN_SERVER
#	quit           exit 0
#
# Typed lines are not echoed, so the screen holds only what the agent and
# its commands print and the prompts.
stty -echo 2>/dev/null
out=$(mktemp)
trap 'rm -f "$out"' EXIT
n=0
echo "fakeagent: ready"
while IFS= read -r line; do
	n=$((n + 1))
	case "$line" in
	"") continue ;;
	quit) break ;;
	socket)
		echo "agent socket: $GUARDRUN_SOCKET"
		continue
		;;
	proxy)
		echo "agent proxy: $GUARDRUN_PROXY"
		continue
		;;
	server)
		echo "agent server: $GUARDRUN_SERVER"
		continue
		;;
	par\ *)
		rest=${line#par }
		a=${rest%% ;; *}
		b=${rest#* ;; }
		echo "<<< begin $n: par"
		"$SHELL" -c "$a" &
		pa=$!
		"$SHELL" -c "$b" &
		pb=$!
		wait $pa
		sa=$?
		wait $pb
		sb=$?
		echo ">>> end $n: status $sa $sb"
		continue
		;;
	nested\ *)
		echo "<<< begin $n: nested"
		sh -c '"$SHELL" -c "$1" >"$2" 2>&1' intermediate "${line#nested }" "$out"
		;;
	*)
		echo "<<< begin $n: $line"
		"$SHELL" -c "$line" >"$out" 2>&1
		;;
	esac
	st=$?
	sed 's/^/agent saw: /' "$out"
	echo ">>> end $n: status $st"
done
echo "fakeagent: bye"
