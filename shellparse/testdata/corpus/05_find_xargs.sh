touch f1 f2
find . -name 'f*' -exec rm {} \;
find . -type f -execdir chmod 644 {} +
echo a b c | xargs rm
printf '%s\n' f1 f2 | xargs -I{} sh -c 'cp {} {}.bak'
echo q | xargs
