cat <<EOT
today is $(date)
user `whoami`
EOT
cat <<'EOT'
$(rm quoted-never-runs)
EOT
