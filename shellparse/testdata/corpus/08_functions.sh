cleanup() { rm -rf tmp; }
function build { make -j4; git describe; }
cleanup
build
