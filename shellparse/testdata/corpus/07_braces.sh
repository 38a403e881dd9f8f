{rm,-rf,x}
r{m,} y
{touch,z}
echo {a..c}
