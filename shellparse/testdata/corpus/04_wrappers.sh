env nice timeout 3 rm x
env -i FOO=1 make build
nice -n 5 git gc
nohup tar cf a.tar . >/dev/null 2>&1
stdbuf -oL grep foo a.txt
setsid -w touch s
timeout -s KILL 5 sleep 1
