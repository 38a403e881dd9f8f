a=(one $(date) "$(whoami)")
b[$(id -u)]=x
echo "${a[@]}" ${b[$(uname)]}
