\rm a
'r'm b
"rm" c
$'\x72m' d
$"rm" e
r\
m f
