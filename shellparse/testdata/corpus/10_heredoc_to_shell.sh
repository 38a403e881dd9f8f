bash <<END
rm -rf cache
touch done
END
sh <<'END'
git status
END
bash <<< 'mkdir hs'
