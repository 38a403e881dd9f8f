bash -c "bash -c \"bash -c 'eval \\\"touch deep\\\"'\""
eval "eval \"eval 'git status'\""
