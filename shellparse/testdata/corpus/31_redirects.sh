echo a > out1.txt
echo b >> out2.txt
cat < out1.txt > out3.txt
echo c 2> err.log
{ echo d; } > grp.txt
echo e &> both.txt
echo f >| clobber.txt
cat <> rw.txt
(echo g) > sub.txt
for x in 1 2; do echo "$x"; done > loop.txt
if true; then echo h; fi >> cond.txt
echo i > "sp ace.txt" 2>&1
echo j > ~/home.txt
exec 3> fd3.txt
echo k >&3
exec 3>&-
echo l 1>one.txt 2>two.txt
cat out1.txt | sort > sorted.txt
echo m > 'q"uote.txt'
f() { echo n; }
f > func.txt
