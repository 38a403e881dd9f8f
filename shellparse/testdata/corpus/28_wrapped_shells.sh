env bash -c 'touch e1'
timeout 5 sh -c 'mkdir e2'
nice bash <<'X'
git status
X
xargs -n1 bash -c 'rm "$0"' <<< 'a b'
