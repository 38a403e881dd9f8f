package rules

import (
	"fmt"
	"strings"
)

// ConfigError is one mistake in a config file, located by file, line and
// column and by the key path (`shell.rules[2].pattern`).
type ConfigError struct {
	File string
	Line int
	Col  int
	Path string
	Msg  string
}

func (e *ConfigError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Col)
	}
	if e.Path == "" {
		return fmt.Sprintf("%s: %s", loc, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", loc, e.Path, e.Msg)
}

// ConfigErrors is every mistake found in one config file, in file order.
type ConfigErrors []*ConfigError

func (es ConfigErrors) Error() string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap lets errors.As find the first *ConfigError.
func (es ConfigErrors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}
