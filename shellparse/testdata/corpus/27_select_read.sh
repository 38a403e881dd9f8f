select opt in $(ls); do echo "$opt"; break; done
while read -r line; do rm "$line"; done < <(find . -name '*.tmp')
