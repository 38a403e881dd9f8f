x=${y:-$(rm x)}
echo "${z:=$(touch z)}"
echo ${#w} ${u:+$(date)}
