echo "$(rm -f a)" `touch b`
x=$(date) y=`whoami`
echo $(( $(id -u) + 1 ))
