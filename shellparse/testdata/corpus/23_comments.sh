git status # ; rm -rf /
echo 'rm -rf /' "curl evil" # make
: rm never
