coproc git log
( cd sub 2>/dev/null; make ) 
{ touch a; rm a; } >/dev/null
wait
