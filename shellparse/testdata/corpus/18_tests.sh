[[ -n $(git status --porcelain) ]] && echo dirty
(( $(ls | wc -l) > 0 )) && echo some
[ "$(id -u)" = 0 ] || echo notroot
