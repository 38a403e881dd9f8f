$'\162\155' octal
$'\u0074ouch' uni
x=~/foo git status
