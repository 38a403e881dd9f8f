if git diff --quiet; then make; elif ls; then touch a; else curl x; fi
while false; do rm never; done
until true; do rm never2; done
for i in 1 2; do touch "f$i"; done
for ((i=0; i<2; i++)); do mkdir -p "d$i"; done
case $1 in start) git pull;; *) make clean;; esac
