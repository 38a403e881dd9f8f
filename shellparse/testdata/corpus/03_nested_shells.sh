bash -c 'rm x'
bash -c "sh -c 'mkdir y'"
sh -ec 'touch z; git log'
bash -o pipefail -c 'ls | tail -n 1'
