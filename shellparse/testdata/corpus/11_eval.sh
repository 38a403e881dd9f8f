eval "rm x"
eval 'touch a; git log'
eval -- make build
