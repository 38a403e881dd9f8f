command rm a
builtin eval 'touch b'
command -v make >/dev/null
time git status
time -p make
(exec touch c)
