cat <(git log) >(grep x)
diff <(ls a) <(ls b)
