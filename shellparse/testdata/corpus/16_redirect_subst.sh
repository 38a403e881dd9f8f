echo hi >"$(mktemp)"
cat <"$(ls)"
echo x 2>$(date).log
