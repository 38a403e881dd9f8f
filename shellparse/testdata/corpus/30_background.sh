sleep 1 &
make test & git fetch
wait
! rm nothing
