package cmdsem

import (
	"fmt"
	"slices"
	"strings"
)

func newTarSpec() *spec {
	return &spec{
		Options: Options{Short: "AcdrtuxFf:b:C:g:G:hiI:jJkK:lL:mMnN:OoPpRsST:UvV:wWX:zZH:", AllShort: true,
			Long:   "absolute-names acls add-file= after-date= anchored append atime-preserve[=] auto-compress backup[=] block-number blocking-factor= bzip2 catenate check-device check-links checkpoint[=] checkpoint-action= clamp-mtime compare compress concatenate confirmation create delay-directory-restore delete dereference diff directory= exclude= exclude-backups exclude-caches exclude-caches-all exclude-caches-under exclude-from= exclude-ignore= exclude-ignore-recursive= exclude-tag= exclude-tag-all= exclude-tag-under= exclude-vcs exclude-vcs-ignores extract file= files-from= force-local format= full-time get group= group-map= gunzip gzip hard-dereference hole-detection= ignore-case ignore-command-error ignore-failed-read ignore-zeros incremental index-file= info-script= interactive keep-directory-symlink keep-newer-files keep-old-files label= level= list listed-incremental= lzip lzma lzop mode= mtime= multi-volume new-volume-script= newer= newer-mtime= no-acls no-anchored no-auto-compress no-check-device no-delay-directory-restore no-ignore-case no-ignore-command-error no-null no-overwrite-dir no-quote-chars= no-recursion no-same-owner no-same-permissions no-seek no-selinux no-unquote no-verbatim-files-from no-wildcards no-wildcards-match-slash no-xattrs null numeric-owner occurrence[=] old-archive one-file-system one-top-level[=] overwrite overwrite-dir owner= owner-map= pax-option= portability posix preserve-order preserve-permissions quote-chars= quoting-style= read-full-records record-size= recursion recursive-unlink remove-files restrict rmt-command= rsh-command= same-order same-owner same-permissions seek selinux show-defaults show-omitted-dirs show-snapshot-field-ranges show-stored-names show-transformed-names skip-old-files sort= sparse sparse-version= starting-file= strip-components= suffix= tape-length= test-label to-command= to-stdout totals[=] touch transform= uncompress ungzip unlink-first unquote update usage use-compress-program= utc verbatim-files-from verbose verify volno-file= warning= wildcards wildcards-match-slash xattrs xattrs-exclude= xattrs-include= xform= xz zstd help version",
			Abbrev: true, StrictLong: true, Permute: true},
		do: acts("C", "directory", act{chdir, ""},
			"", "to-command", ex("runs the program for every extracted file"),
			"I", "use-compress-program", ex("runs the program to compress or decompress"),
			"", "checkpoint-action", act{Unknown, "can run a program at each checkpoint (exec=)"},
			"F", "info-script", ex("runs the script at the end of each volume"),
			"", "new-volume-script", ex("runs the script at the end of each volume"),
			"", "rsh-command", ex("runs the program to reach a remote archive"),
			"", "rmt-command", ex("runs the program on the remote side"),
			"T", "files-from", rd("reads the names of the files to archive"),
			"X", "exclude-from", rd("reads exclusion patterns"),
			"g", "listed-incremental", wr("writes the snapshot file"),
			"", "index-file", wr("writes verbose output to the file"),
			"", "volno-file", wr("writes the volume number to the file"),
			"", "remove-files", act{Unknown, "removes the files after archiving them"}),
		custom: tarCmd,
		// TAPE is the archive when no -f names one; host:file there is
		// a remote archive, reached through rsh.
		env: []string{"TAPE"},
	}
}

func tarCmd(s *spec, r *result, i int) {
	r.flags, r.vals = map[string]string{}, map[string]opnd{}
	// Old style: `tar xzf a.tgz`, letters whose arguments follow in order.
	if i < len(r.argv) && r.argv[i].Static && r.argv[i].Value != "" && !strings.HasPrefix(r.argv[i].Value, "-") {
		letters, next := r.argv[i].Value, i+1
		for j := 0; j < len(letters); j++ {
			c := letters[j]
			mode, ok := s.shortMode(c)
			if !ok {
				r.unknown(i, string(c), fmt.Sprintf("tar %c is not an option guardrun knows", c))
				return
			}
			name := string(c)
			if mode == RequiredArg {
				if next >= len(r.argv) {
					break
				}
				r.flags[name] = r.argv[next].Value
				s.apply(r, name, opnd{r.argv[next], next}, "-"+name, true)
				next++
				continue
			}
			r.flags[name] = ""
			s.apply(r, name, opnd{idx: i}, "-"+name, false)
		}
		i = next
	}
	ops, _ := s.scan(r, i)
	create := r.hasAny("c", "create", "r", "append", "u", "update", "A", "catenate", "concatenate", "delete")
	// Every -f names an archive (a multi-volume one is several, tar -M
	// -f a -f b), and each may be remote.
	archives := append(append([]opnd(nil), r.all["f"]...), r.all["file"]...)
	slices.SortFunc(archives, func(a, b opnd) int { return a.idx - b.idx })
	for _, archive := range archives {
		if archive.Value == "-" {
			continue
		}
		if host, _, remote := strings.Cut(archive.Value, ":"); remote && !strings.Contains(host, "/") && !r.hasAny("force-local") {
			r.exec(archive.idx, "-f", "reaches a remote archive through rsh/ssh")
		} else if create {
			r.file(Write, archive, "-f", "writes the archive")
		} else {
			r.file(Read, archive, "-f", "reads the archive")
		}
	}
	switch {
	case create:
		for _, o := range ops {
			r.file(Read, o, "", "archives the file")
		}
	case r.hasAny("x", "extract", "get"):
		if !r.hasAny("O", "to-stdout", "to-command") {
			dir := opnd{Arg{Value: ".", Static: true}, 0}
			r.file(Write, dir, "-x", "extracts files into the directory")
			if r.hasAny("P", "absolute-names") {
				r.unknown(0, "-P", "extracts files to the absolute paths stored in the archive")
			}
		}
	}
}

func newCurlSpec() *spec {
	return &spec{
		Options: Options{Short: "aA:b:c:C:d:D:e:E:fF:gGhH:iIjJkK:lLm:M:nNo:OpP:qQ:r:RsSt:T:u:U:vVw:x:X:y:Y:z:Z0123456#", AllShort: true,
			Long:       "abstract-unix-socket= alt-svc= anyauth append aws-sigv4= basic cacert= capath= cert= cert-status cert-type= ciphers= compressed compressed-ssh config= connect-timeout= connect-to= continue-at= cookie= cookie-jar= create-dirs create-file-mode= crlf crlfile= curves= data= data-ascii= data-binary= data-raw= data-urlencode= delegation= digest disable disable-eprt disable-epsv disallow-username-in-url dns-interface= dns-ipv4-addr= dns-ipv6-addr= dns-servers= doh-cert-status doh-insecure doh-url= dump-header= egd-file= engine= etag-compare= etag-save= expect100-timeout= fail fail-early fail-with-body false-start form= form-escape form-string= ftp-account= ftp-alternative-to-user= ftp-create-dirs ftp-method= ftp-pasv ftp-port= ftp-pret ftp-skip-pasv-ip ftp-ssl-ccc ftp-ssl-ccc-mode= ftp-ssl-control get globoff happy-eyeballs-timeout-ms= haproxy-protocol head header= hostpubmd5= hostpubsha256= hsts= http0.9 http1.0 http1.1 http2 http2-prior-knowledge http3 http3-only ignore-content-length include insecure interface= ipv4 ipv6 json= junk-session-cookies keepalive-time= key= key-type= krb= libcurl= limit-rate= list-only local-port= location location-trusted login-options= mail-auth= mail-from= mail-rcpt= mail-rcpt-allowfails manual max-filesize= max-redirs= max-time= metalink negotiate netrc netrc-file= netrc-optional next no-alpn no-buffer no-clobber no-keepalive no-npn no-progress-meter no-sessionid noproxy= ntlm ntlm-wb oauth2-bearer= output= output-dir= parallel parallel-immediate parallel-max= pass= path-as-is pinnedpubkey= post301 post302 post303 preproxy= progress-bar proto= proto-default= proto-redir= proxy= proxy-anyauth proxy-basic proxy-cacert= proxy-capath= proxy-cert= proxy-cert-type= proxy-ciphers= proxy-crlfile= proxy-digest proxy-header= proxy-insecure proxy-key= proxy-key-type= proxy-negotiate proxy-ntlm proxy-pass= proxy-pinnedpubkey= proxy-service-name= proxy-ssl-allow-beast proxy-ssl-auto-client-cert proxy-tls13-ciphers= proxy-tlsauthtype= proxy-tlspassword= proxy-tlsuser= proxy-tlsv1 proxy-user= proxy1.0= proxytunnel pubkey= quote= random-file= range= rate= raw referer= remote-header-name remote-name remote-name-all remote-time remove-on-error request= request-target= resolve= retry= retry-all-errors retry-connrefused retry-delay= retry-max-time= sasl-authzid= sasl-ir service-name= show-error silent socks4= socks4a= socks5= socks5-basic socks5-gssapi socks5-gssapi-nec socks5-gssapi-service= socks5-hostname= speed-limit= speed-time= ssl ssl-allow-beast ssl-auto-client-cert ssl-no-revoke ssl-reqd ssl-revoke-best-effort sslv2 sslv3 stderr= styled-output suppress-connect-headers tcp-fastopen tcp-nodelay telnet-option= tftp-blksize= tftp-no-options time-cond= tls-max= tls13-ciphers= tlsauthtype= tlspassword= tlsuser= tlsv1 tlsv1.0 tlsv1.1 tlsv1.2 tlsv1.3 tr-encoding trace= trace-ascii= trace-time unix-socket= upload-file= url= url-query= use-ascii user= user-agent= verbose write-out= xattr help[=] version",
			StrictLong: true, Permute: true},
		do: withConnects(acts("o", "output", wr("writes the response to the file"),
			"O", "remote-name", wr("saves the response in the working directory under the URL's name"),
			"", "remote-name-all", wr("saves responses in the working directory under the URLs' names"),
			"", "output-dir", wr("saves responses into the directory"),
			"D", "dump-header", wr("writes the response headers to the file"),
			"c", "cookie-jar", wr("writes cookies to the file"),
			"", "trace", wr("writes a trace to the file"),
			"", "trace-ascii", wr("writes a trace to the file"),
			"", "stderr", wr("writes error output to the file"),
			"", "libcurl", wr("writes C source to the file"),
			"", "etag-save", wr("writes the ETag to the file"),
			"", "hsts", wr("reads and writes the HSTS cache file"),
			"", "alt-svc", wr("reads and writes the alt-svc cache file"),
			"K", "config", act{Unknown, "reads options from the file, which can name files to write"},
			"T", "upload-file", rd("uploads the file"),
			"d", "data", act{atFile, "sends the file"}, "", "data-binary", act{atFile, "sends the file"},
			"", "data-ascii", act{atFile, "sends the file"}, "", "data-urlencode", act{atFile, "sends the file"},
			"", "json", act{atFile, "sends the file"},
			"F", "form", act{atFile, "sends the file"},
			"H", "header", act{atFile, "reads headers from the file"},
			"", "netrc-file", rd("reads credentials from the file"),
			"E", "cert", rd("reads the client certificate"), "", "key", rd("reads the private key"),
			"", "cacert", rd("reads CA certificates"),
			"w", "write-out", act{atFile, "reads the format from the file"},
			"", "unix-socket", act{Unknown, "connects to a local socket"},
			"", "abstract-unix-socket", act{Unknown, "connects to a local socket"}), curlHosts, "url"),
		operands: connectOps,
		env:      []string{"CURL_HOME", "SSLKEYLOGFILE", "CURL_CA_BUNDLE"},
	}
}

func newWgetSpec() *spec {
	return &spec{
		Options: Options{Short: "Vhbe:o:a:qvn:i:dFB:t:O:cNST:w:Q:46xP:EkKmprl:A:R:D:I:X:HLU:Y:", AllShort: true,
			Long:   "accept= accept-regex= adjust-extension append-output= ask-password auth-no-challenge background backup-converted backups= base= bind-address= body-data= body-file= ca-certificate= ca-directory= certificate= certificate-type= ciphers= compression= config= connect-timeout= content-disposition content-on-error continue convert-file-only convert-links crl-file= cut-dirs= debug default-page= delete-after directory-prefix= dns-timeout= domains= exclude-directories= exclude-domains= execute= follow-ftp follow-tags= force-directories force-html ftp-password= ftp-user= header= hsts-file= http-password= http-user= https-only ignore-case ignore-length ignore-tags= include-directories= inet4-only inet6-only input-file= keep-session-cookies level= limit-rate= load-cookies= local-encoding= max-redirect= method= mirror no-cache no-check-certificate no-clobber no-config no-cookies no-directories no-dns-cache no-glob no-host-directories no-hsts no-http-keep-alive no-if-modified-since no-iri no-netrc no-parent no-passive-ftp no-proxy no-remove-listing no-use-server-timestamps no-verbose output-document= output-file= page-requisites password= post-data= post-file= prefer-family= preserve-permissions private-key= private-key-type= progress= protocol-directories proxy-password= proxy-user= quiet quota= random-wait read-timeout= recursive referer= reject= reject-regex= rejected-log= relative remote-encoding= report-speed= restrict-file-names= retr-symlinks retry-connrefused retry-on-http-error= save-cookies= save-headers secure-protocol= server-response show-progress span-hosts spider start-pos= timeout= timestamping tries= trust-server-names unlink use-askpass= user= user-agent= verbose wait= waitretry= warc-file= warc-tempdir= xattr help version",
			Abbrev: true, StrictLong: true, Permute: true},
		do: acts("O", "output-document", wr("writes the download to the file"),
			"o", "output-file", wr("writes its log to the file"),
			"a", "append-output", wr("appends its log to the file"),
			"P", "directory-prefix", wr("saves downloads into the directory"),
			"e", "execute", ex("runs a wgetrc command, which can set any option"),
			"", "use-askpass", ex("runs the program to ask for a password"),
			"", "config", act{Unknown, "reads options from the file, which can name files to write"},
			"i", "input-file", rd("reads URLs from the file"),
			"", "post-file", rd("sends the file"), "", "body-file", rd("sends the file"),
			"", "load-cookies", rd("reads cookies"), "", "save-cookies", wr("writes cookies to the file"),
			"", "hsts-file", wr("writes the HSTS database"), "", "rejected-log", wr("writes rejected URLs to the file"),
			"", "warc-file", wr("writes a WARC archive"), "", "warc-tempdir", wr("writes temporary files into the directory")),
		operands: func(r *result, ops []opnd) {
			if len(ops) > 0 && !r.hasAny("O", "output-document", "P", "directory-prefix", "spider") {
				r.file(Write, opnd{Arg{Value: ".", Static: true}, ops[0].idx}, "", "saves downloads in the working directory")
			}
			connectOps(r, ops)
			if v, ok := r.vals["i"]; ok {
				r.add(Effect{Kind: Connect, Word: v.idx, Option: "-i", Path: "(the URLs the file lists)", Dynamic: true, Why: "connects to the URLs the file lists"})
			} else if v, ok := r.vals["input-file"]; ok {
				r.add(Effect{Kind: Connect, Word: v.idx, Option: "--input-file", Path: "(the URLs the file lists)", Dynamic: true, Why: "connects to the URLs the file lists"})
			}
		},
		env: []string{"WGETRC", "SYSTEM_WGETRC"},
	}
}

func newMakeSpec() *spec {
	return &spec{
		Options: Options{Short: "bBC:de::f:hiI:j::kl::LnNo:pqrsStvwW:O::E:", AllShort: true,
			Long:   "always-make assume-new= assume-old= check-symlink-times debug[=] directory= dry-run environment-overrides eval= file= ignore-errors include-dir= jobs[=] just-print keep-going load-average[=] makefile= max-load[=] new-file= no-builtin-rules no-builtin-variables no-keep-going no-print-directory no-silent old-file= output-sync[=] print-data-base print-directory question quiet recon silent stop touch trace warn-undefined-variables what-if= shuffle[=] help version",
			Abbrev: true, StrictLong: true, Permute: true},
		do: acts("C", "directory", act{chdir, ""},
			"E", "eval", ex("evaluates the text as Makefile rules, which run commands"),
			"", "eval", ex("evaluates the text as Makefile rules, which run commands"),
			"f", "file", rd("reads the Makefile"), "", "makefile", rd("reads the Makefile"),
			"I", "include-dir", rd("reads included Makefiles from the directory")),
		operands: makeOperands,
		env:      []string{"MAKEFLAGS", "GNUMAKEFLAGS", "MAKEFILES", "MAKESHELL", "MAKELEVEL", "CC", "CXX", "LD", "AR"},
	}
}

// goBuildFlags are the flags every go build-like command takes.
const goBuildFlags = "C= a n p= race msan asan cover covermode= coverpkg= v work x asmflags= buildmode= buildvcs[=] compiler= gccgoflags= gcflags= installsuffix= ldflags= linkshared mod= modcacherw modfile= overlay= pgo= pkgdir= tags= trimpath toolexec= o= json"

// goTestFlags are go test's own flags and the test binary's.
const goTestFlags = " args c exec= fuzz= fuzztime= fuzzminimizetime= failfast fullpath i run= skip= bench= benchtime= benchmem count= cpu= list= parallel= short shuffle= timeout= vet= coverprofile= cpuprofile= memprofile= memprofilerate= blockprofile= blockprofilerate= mutexprofile= mutexprofilefraction= outputdir= trace= test.v test.run= test.count= test.timeout= test.short test.bench= test.coverprofile= test.cpuprofile= test.memprofile= test.trace= test.outputdir= test.blockprofile= test.mutexprofile= test.fuzzcachedir= test.gocoverdir= test.paniconexit0 test.testlogfile="

func goSub(long string, more map[string]act, operands func(r *result, ops []opnd)) *spec {
	do := acts("", "C", act{chdir, ""},
		"", "o", wr("writes the binary to the file"),
		"", "toolexec", ex("runs every compiler and linker through the program"),
		"", "exec", ex("runs the test binary through the program"),
		"", "ldflags", act{ldflags, "passes flags to the linker"},
		"", "modfile", rd("reads the module file"), "", "overlay", rd("reads the overlay file"),
		"", "pkgdir", wr("writes packages into the directory"))
	for _, f := range []string{"coverprofile", "cpuprofile", "memprofile", "blockprofile", "mutexprofile", "trace", "outputdir",
		"test.coverprofile", "test.cpuprofile", "test.memprofile", "test.trace", "test.outputdir", "test.blockprofile", "test.mutexprofile", "test.testlogfile", "test.fuzzcachedir", "test.gocoverdir"} {
		do[f] = wr("writes a profile or report to the file")
	}
	for k, v := range more {
		do[k] = v
	}
	return &spec{Options: Options{GoFlags: true, Long: long + " h help", StrictLong: true}, do: do, operands: operands}
}

const ldflags Kind = "ldflags"

func newGoSpec() *spec {
	return &spec{
		Options: Options{GoFlags: true, Long: "h help", StrictLong: true},
		env:     []string{"GO*", "CGO_*", "CC", "CXX", "FC", "AR", "PKG_CONFIG"},
		sub: map[string]*spec{
			"build":   goSub(goBuildFlags, nil, goCode("build")),
			"install": goSub(goBuildFlags, nil, nil),
			"vet":     goSub(goBuildFlags+" vettool=", map[string]act{"vettool": ex("runs the program as the analysis tool")}, goCode("vet")),
			"test": func() *spec {
				s := goSub(goBuildFlags+goTestFlags, nil, goCode("test"))
				s.Permute = true // go test takes flags after the packages too
				return s
			}(),
			"run":     goSub(goBuildFlags+" exec=", nil, goCode("run")),
			"list":    goSub(goBuildFlags+" compiled deps e export f= find m retracted reuse= test u versions", nil, nil),
			"fmt":     {Options: Options{GoFlags: true, Long: "n x mod= h help", StrictLong: true}},
			"version": {Options: Options{GoFlags: true, Long: "m v json h help", StrictLong: true}},
			"env": {Options: Options{GoFlags: true, Long: "json u w changed h help", StrictLong: true},
				do: acts("", "w", act{Unknown, "writes go's environment file"}, "", "u", act{Unknown, "writes go's environment file"})},
			"generate": {Options: Options{GoFlags: true, Long: goBuildFlags + " run= skip="}, custom: func(s *spec, r *result, i int) {
				r.exec(i-1, "generate", "runs the commands written in //go:generate lines")
			}},
			"tool":  {custom: func(s *spec, r *result, i int) { r.exec(i-1, "tool", "runs a tool of the toolchain") }},
			"mod":   {},
			"get":   {},
			"work":  {},
			"clean": {Options: Options{GoFlags: true, Long: goBuildFlags + " cache testcache modcache fuzzcache i r", StrictLong: true}},
			"doc":   {},
			"help":  {},
		},
		anySub: true,
	}
}

func newNpmSpec() *spec {
	npmDo := newNpmDo()
	// Options before -- are npm configuration, any of which can name a
	// program (--script-shell, --git, --node-gyp ...): they are read
	// strictly; what follows -- goes to the script.
	opts := &spec{Options: Options{Long: npmLong, StrictLong: true, Permute: true}, do: npmDo}
	runs := func(why string) *spec {
		return &spec{custom: func(s *spec, r *result, i int) {
			r.exec(i-1, "", why)
			opts.init()
			opts.scan(r, i)
		}}
	}
	scripts := runs("runs the package's scripts, which are shell commands")
	// run, test and start run the project's own scripts; install and
	// the rest also fetch packages and run theirs.
	projectScripts := npmRunSpec(opts)
	program := runs("runs a package's program")
	exec := npmExecSpec(opts)
	safe := &spec{Options: Options{Long: npmLong, StrictLong: true, Permute: true}, do: npmDo}
	return &spec{
		Options: Options{Long: npmLong, StrictLong: true}, do: npmDo, anySub: true,
		env: []string{"npm_config_*", "NPM_CONFIG_*", "NODE_OPTIONS", "NODE_PATH"},
		sub: map[string]*spec{
			"run": projectScripts, "run-script": projectScripts, "rum": projectScripts, "urn": projectScripts, "test": projectScripts, "t": projectScripts, "tst": projectScripts,
			"start": projectScripts, "stop": projectScripts, "restart": projectScripts, "install": scripts, "i": scripts, "ci": scripts, "add": scripts,
			"update": scripts, "up": scripts, "upgrade": scripts, "rebuild": scripts, "publish": scripts, "pack": scripts,
			"install-test": scripts, "it": scripts, "install-ci-test": scripts, "cit": scripts,
			"exec": exec, "x": exec, "init": program, "create": program, "explore": program, "edit": program,
			"ls": safe, "list": safe, "view": safe, "info": safe, "show": safe, "outdated": safe, "help": safe, "search": safe,
			"why": safe, "explain": safe, "root": safe, "prefix": safe, "bin": safe, "version": safe, "audit": safe, "doctor": safe,
		},
	}
}

const npmLong = "json long parseable p global g depth= all a omit= include= production dev save save-dev D save-exact E no-save dry-run silent quiet loglevel= yes y no-audit no-fund workspace= w= workspaces ws if-present ignore-scripts legacy-peer-deps force f version v help h registry= prefix= C= userconfig= globalconfig= script-shell= node-options= shell= editor= browser= cache= call= c= package="

func newNpmDo() map[string]act {
	return acts("", "script-shell", ex("runs scripts with the program"),
		"", "node-options", ex("passes options to node, which can load code"),
		"", "shell", ex("runs the program as the shell"),
		"", "editor", ex("runs the program as the editor"),
		"", "browser", ex("runs the program as the browser"),
		"", "call", ex("runs the command"), "", "c", ex("runs the command"),
		"", "userconfig", act{Unknown, "reads configuration from the file, which can name programs"},
		"", "globalconfig", act{Unknown, "reads configuration from the file, which can name programs"},
		"", "prefix", act{chdir, ""}, "", "C", act{chdir, ""},
		"", "cache", wr("writes its cache into the directory"))
}

func newPipSpec() *spec {
	pipDo := newPipDo()
	build := &spec{custom: func(s *spec, r *result, i int) {
		r.exec(i-1, "", "builds and installs packages, which runs their build scripts")
		ls := &spec{Options: Options{Long: pipWriteLong, Permute: true, Short: "r:c:t:d:e:"}, do: pipDo}
		ls.init()
		ls.scan(r, i)
	}}
	safe := &spec{Options: Options{Long: "format= outdated uptodate editable local user path= pre exclude= exclude-editable not-required include-editable files verbose v all help h quiet q", StrictLong: true, Permute: true, Short: "oulefvqh"}}
	return &spec{
		Options: Options{Long: "help h version V verbose v quiet q log= cache-dir= no-cache-dir isolated python= require-virtualenv no-input proxy= retries= timeout= exists-action= trusted-host= cert= client-cert= disable-pip-version-check no-color no-python-version-warning root-user-action= use-feature= use-deprecated=",
			StrictLong: true, Short: "hVvq"}, do: pipDo, anySub: true,
		env: []string{"PIP_*", "PYTHON*"},
		sub: map[string]*spec{
			"install": build, "download": build, "wheel": build,
			"list": safe, "show": safe, "freeze": safe, "check": safe, "inspect": safe, "help": safe, "--version": safe,
		},
	}
}

const pipWriteLong = "requirement= constraint= target= prefix= root= src= dest= log= cache-dir= editable="

func newPipDo() map[string]act {
	return acts("", "log", wr("writes its log to the file"), "", "cache-dir", wr("writes its cache into the directory"),
		"r", "requirement", rd("reads requirements (which can hold options) from the file"),
		"c", "constraint", rd("reads constraints from the file"),
		"t", "target", wr("installs into the directory"), "", "prefix", wr("installs under the directory"),
		"", "root", wr("installs under the directory"), "", "src", wr("checks out sources into the directory"),
		"d", "dest", wr("writes the downloads into the directory"),
		"", "python", ex("runs the Python interpreter named"))
}

func newPythonSpec() *spec {
	return &spec{custom: pythonCmd, env: []string{"PYTHON*"}}
}

func pythonCmd(s *spec, r *result, i int) {
	// -I and -P keep the working directory off the module path, so
	// python -m finds no module of the project there.
	cwdFirst := true
	for ; i < len(r.argv); i++ {
		a := r.argv[i]
		if !a.Static {
			r.runCode(i, "", "python runs code named only at run time", CodeFile, a.Value, false)
			return
		}
		v := a.Value
		switch {
		case v == "--":
			i++
			if i < len(r.argv) {
				r.runCode(i, "", "python runs the script", CodeFile, r.argv[i].Value, r.argv[i].Static)
			}
			return
		case v == "-V" || v == "--version" || v == "-h" || v == "--help" || v == "-VV":
			return
		case v == "-":
			r.exec(i, "", "python runs code read from its input")
			return
		case !strings.HasPrefix(v, "-"):
			r.runCode(i, "", "python runs the script", CodeFile, v, true)
			return
		case v == "-W" || v == "-X" || v == "--check-hash-based-pycs":
			i++
			continue
		case strings.HasPrefix(v, "--"):
			r.unknown(i, v, "python "+v+" is not an option guardrun knows")
			return
		}
		for j := 1; j < len(v); j++ {
			switch c := v[j]; c {
			case 'c', 'm':
				val, vi, ok := r.valueOf(i, j+1)
				if !ok {
					r.exec(i, "-"+string(c), "python runs the code or module given")
					return
				}
				if c == 'c' {
					r.runCode(i, "-c", "python runs the code or module given", CodeInline, val.Value, val.Static)
					return
				}
				if !val.Static || !cwdFirst {
					r.exec(i, "-m", "python runs the code or module given")
				} else {
					r.runCode(i, "-m", "python runs the code or module given", CodeModule, val.Value, true)
				}
				if val.Static {
					pythonModule(r, val.Value, vi+1)
				}
				return
			case 'W', 'X':
				if j+1 == len(v) {
					i++
				}
				j = len(v)
			case 'i':
				r.exec(i, "-i", "python starts an interactive interpreter")
			case 'I', 'P':
				cwdFirst = false
			case 'b', 'B', 'd', 'E', 'O', 'q', 's', 'S', 'u', 'v', 'x', 'R':
			default:
				r.unknown(i, "-"+string(c), fmt.Sprintf("python -%c is not an option guardrun knows", c))
				return
			}
		}
	}
	r.exec(0, "", "python with no script reads code from its input")
}
