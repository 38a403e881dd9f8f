git status; rm -rf build && make all || curl example.com
ls | grep x | sort
