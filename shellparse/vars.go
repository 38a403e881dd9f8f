package shellparse

import (
	"slices"
	"strings"

	"github.com/guardrun/guardrun/cmdsem"
)

// DangerousVariables are the variables whose assignment changes which
// program runs or makes a program run extra code. An assignment to one of
// them, before a command, on its own, through env or sudo, or through
// export, declare, local, readonly, typeset, read, printf -v, mapfile,
// getopts, a for loop or ${VAR:=...}, is an Ask finding. A trailing * is a
// prefix match, a leading * a suffix match. StartupVariables are dangerous too. Policy shows this
// list; keep it in sync with the package documentation.
var DangerousVariables = []string{
	// Command lookup and the shell's own behaviour.
	"PATH", "path", "cdpath", "FPATH", "fpath", "EXECIGNORE", "GLOBIGNORE",
	// zsh with job control and a terminal runs "stty $STTY" as shell
	// code before a command whose assignments set STTY; it loads a
	// module ($commands needs zsh/parameter) from module_path.
	"STTY", "module_path", "MODULE_PATH",
	// zsh sets its options from this array (options[globsubst]=on), and
	// starts a command under the name ARGV0 holds (-bash: a login shell).
	"options", "ARGV0",
	// zsh defines a function, an alias or the path a command name runs
	// through these (functions[true]='touch x'; true).
	"functions", "dis_functions", "aliases", "dis_aliases", "galiases", "dis_galiases",
	"saliases", "dis_saliases", "commands",
	"BASH_CMDS", "BASH_ALIASES", "POSIXLY_CORRECT", "PS0", "PS1", "PS2", "PS3",
	// At shell level 1 a bash -c whose input is a socket, or that sees
	// SSH_CLIENT, runs ~/.bashrc first.
	"SHLVL", "SSH_CLIENT", "SSH2_CLIENT",
	// Where programs find their startup files and configuration.
	"HOME", "XDG_*", "TMPDIR", "INPUTRC", "SHELL",
	// The dynamic loader.
	"LD_*", "DYLD_*", "GCONV_PATH",
	// Interpreters that read code or modules from the environment.
	"PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "NODE_OPTIONS", "NODE_PATH",
	"PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB",
	"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "GOFLAGS", "GOENV", "GOROOT", "GOTOOLCHAIN",
	// Build tools run the compiler, wrapper or makefile these name.
	"CC", "CXX", "CPP", "AR", "RUSTC", "RUSTC_WRAPPER", "CARGO_BUILD_RUSTC_WRAPPER",
	"MAKEFLAGS", "MAKEFILES", "npm_config_*", "NPM_CONFIG_*",
	// Configuration that names programs to run (credential helpers).
	"KUBECONFIG", "DOCKER_CONFIG", "AWS_CONFIG_FILE",
	// tar's archive when no -f names one: host:file there is a remote
	// archive, which tar reaches by running rsh.
	"TAPE",
	// gpg, which git log --show-signature runs, reads gpg.conf there
	// (dirmngr-program, agent-program name programs it starts).
	"GNUPGHOME",
	// git runs these, or reads configuration that runs commands
	// (GIT_CONFIG_COUNT/KEY_n/VALUE_n, GIT_SSH_COMMAND, GIT_DIR ...).
	"GIT_*",
	// Programs that other programs start on their own: pagers and
	// editors under any program's name (GIT_PAGER, SYSTEMD_PAGER,
	// PSQL_PAGER, KUBE_EDITOR, bash's FCEDIT).
	"PAGER", "*PAGER", "EDITOR", "*_EDITOR", "FCEDIT", "VISUAL", "BROWSER", "SSH_ASKPASS", "SUDO_ASKPASS",
	// less, the pager git starts: LESSOPEN runs a program, and LESSKEYIN,
	// LESSKEY and LESSKEY_CONTENT can set LESSOPEN from a file's #env.
	"LESS*",
	// guardrun's own: the config, session, backend and supervisor a
	// nested guardrun uses.
	"GUARDRUN_*",
}

// StartupVariables are the dangerous variables a shell reads from its
// environment when it starts, which make it run something other than the
// script that was analysed: a function exported under a command's name
// (BASH_FUNC_ls%%), a file sourced first (BASH_ENV; ENV for an
// interactive sh), options that change parsing or scoping (SHELLOPTS,
// BASHOPTS: extglob, lastpipe, posix; BASH_COMPAT), code run while
// tracing or prompting (PS4 with xtrace, PROMPT_COMMAND, BASH_XTRACEFD),
// builtins loaded from a directory (BASH_LOADABLES_PATH), word splitting
// (IFS), a cd that searches elsewhere (CDPATH), the catalogs $"..."
// strings are translated from, which bash then expands, $(...) included
// (TEXTDOMAIN, TEXTDOMAINDIR), a directory of locales other than the
// system's, where one named without a codeset may hold any character set
// (LOCPATH), the directory whose .zshenv zsh runs before every script
// (ZDOTDIR) and the programs zsh runs for a redirection without a
// command (NULLCMD for > file, READNULLCMD for < file; guardrun sets
// both to : for zsh, which then does as sh does). Assigning one in
// a script asks; guardrun also drops them from every command's
// environment, as sudo's env_reset does.
var StartupVariables = []string{
	"BASH_FUNC_*", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "BASH_COMPAT",
	"PS4", "PROMPT_COMMAND", "BASH_XTRACEFD", "BASH_LOADABLES_PATH", "IFS", "CDPATH",
	"TEXTDOMAIN", "TEXTDOMAINDIR", "LOCPATH", "ZDOTDIR", "NULLCMD", "READNULLCMD",
}

// DangerousVariable reports whether assigning name can change what runs.
// The variables programs read options from (LESS, TAR_OPTIONS: see
// cmdsem.OptionVariable) are judged by the options they hold instead.
func DangerousVariable(name string) bool {
	if _, ok := cmdsem.OptionVariable(name); ok {
		return false
	}
	return matchVariable(DangerousVariables, name) || StartupVariable(name)
}

// StartupVariable reports whether name is one of StartupVariables.
func StartupVariable(name string) bool {
	return matchVariable(StartupVariables, name)
}

// matchVariable reports whether name is in list, where a trailing * is a
// prefix match and a leading * a suffix match.
func matchVariable(list []string, name string) bool {
	for _, d := range list {
		if sfx, ok := strings.CutPrefix(d, "*"); ok {
			if strings.HasSuffix(name, sfx) {
				return true
			}
		} else if p, ok := strings.CutSuffix(d, "*"); ok {
			if strings.HasPrefix(name, p) {
				return true
			}
		} else if name == d {
			return true
		}
	}
	return false
}

// LocaleVariables choose the character set bash reads a script in
// (LC_ALL before LC_CTYPE before LANG). guardrun reads a script as bytes
// in UTF-8; in a charset such as BIG5, GBK, GB18030 or Shift_JIS a byte
// 0x5c (\) or 0x60 (`) can be the second byte of a character, so bash
// started with LC_ALL=zh_TW.BIG5 reads echo "\xa4\" ; cmd ; echo "\xa4\"
// as three commands where guardrun read one.
var LocaleVariables = []string{"LC_ALL", "LC_CTYPE", "LANG"}

// SafeLocale reports whether a locale name, as LC_ALL, LC_CTYPE or LANG
// hold it, names a character set in which every byte below 0x80 is the
// ASCII character it is in UTF-8 (so bash reads the script's quotes,
// backslashes and operators where guardrun does): C, POSIX, empty, or a
// codeset named after the dot that is UTF-8, ASCII, a single-byte set
// (ISO-8859-*, KOI8-*, CP125x, TIS-620) or an EUC set. A name without a
// codeset before any @modifier (zh_TW, or zh_TW@x.UTF-8, whose system
// locale may be BIG5) is not known safe.
func SafeLocale(name string) bool {
	if name == "" || name == "C" || name == "POSIX" {
		return true
	}
	// glibc reads language[_territory][.codeset][@modifier]: in
	// zh_TW@x.UTF-8 the dot is the modifier's, there is no codeset, and
	// glibc falls back to zh_TW. Without a language (_TW.UTF-8,
	// .UTF-8) glibc reads the whole name as the language, again
	// without a codeset.
	base, _, _ := strings.Cut(name, "@")
	lang, cs, ok := strings.Cut(base, ".")
	if !ok || lang == "" || lang[0] == '_' {
		return false
	}
	cs = strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(cs))
	if strings.IndexFunc(cs, func(r rune) bool { return (r < 'a' || r > 'z') && (r < '0' || r > '9') }) >= 0 && cs != "ansix3.41968" {
		// glibc drops such characters when it looks the codeset up:
		// iso8859.big5 is not an ISO-8859 name.
		return false
	}
	switch {
	case cs == "utf8", cs == "ascii", cs == "ansix3.41968", cs == "tis620", cs == "gb2312":
		return true
	case strings.HasPrefix(cs, "iso8859"), strings.HasPrefix(cs, "koi8"),
		strings.HasPrefix(cs, "cp125"), strings.HasPrefix(cs, "euc"):
		return true
	}
	return false
}

// LocaleVariable reports whether name is one of LocaleVariables.
func LocaleVariable(name string) bool {
	return slices.Contains(LocaleVariables, name)
}
