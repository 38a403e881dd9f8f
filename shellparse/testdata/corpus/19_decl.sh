declare a=$(date)
f() { local b=$(whoami); export c=$(uname); readonly d=`hostname`; }
f
typeset -a arr=($(ls) x)
