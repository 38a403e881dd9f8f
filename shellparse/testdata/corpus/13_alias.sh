shopt -s expand_aliases
alias ll='ls -l'
alias gs='git status'
ll
gs
