trap 'rm -f lock' EXIT
trap "touch int" INT
touch lock
