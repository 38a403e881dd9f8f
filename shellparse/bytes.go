package shellparse

import (
	"reflect"
	"strings"
	"unicode/utf8"
)

// Bytes that are not UTF-8 are literal characters to bash, but the parser
// refuses them. parseBytes stands each one in for a private-use rune the
// parser reads as a plain character, analyses that text, and puts the
// bytes back into every string and position of the result.

// placeholderBase + b stands for the invalid byte b.
const placeholderBase = 0x10FF00

func parseBytes(src string, opts Options) (*Script, error) {
	var b strings.Builder
	var at []uint // offsets of placeholders in the substituted text
	for i := 0; i < len(src); {
		r, n := utf8.DecodeRuneInString(src[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			at = append(at, uint(b.Len()))
			b.WriteRune(placeholderBase + rune(src[i]))
		case r >= placeholderBase:
			// The text already holds the runes used as stand-ins: read
			// it as the parser does.
			return parseValid(src, opts)
		default:
			b.WriteString(src[i : i+n])
		}
		i += n
	}
	s, err := parseValid(b.String(), opts)
	if err != nil {
		if pe, ok := err.(*ParseError); ok {
			pe.Pos = restorePos(pe.Pos, at)
			pe.Msg = restoreString(pe.Msg)
		}
		return nil, err
	}
	// The tree holds the stand-ins, not the bytes: nothing carries over
	// from such a script.
	s.single = nil
	restore(reflect.ValueOf(s).Elem(), at)
	return s, nil
}

// restore puts the original bytes back into every string and position
// reachable from v.
func restore(v reflect.Value, at []uint) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			v.SetString(restoreString(v.String()))
		}
	case reflect.Ptr:
		if !v.IsNil() {
			restore(v.Elem(), at)
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			restore(v.Index(i), at)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(Pos{}) {
			if v.CanSet() {
				v.Set(reflect.ValueOf(restorePos(v.Interface().(Pos), at)))
			}
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				restore(v.Field(i), at)
			}
		}
	}
}

func restoreString(s string) string {
	if !strings.ContainsFunc(s, isPlaceholder) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isPlaceholder(r) {
			b.WriteByte(byte(r - placeholderBase))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isPlaceholder(r rune) bool { return r >= placeholderBase && r <= placeholderBase+0xFF }

// restorePos maps a position in the substituted text back: each
// placeholder before it is 4 bytes there and 1 byte in the original.
func restorePos(p Pos, at []uint) Pos {
	if p.Line == 0 && p.Offset == 0 {
		return p
	}
	lineStart := p.Offset - min(p.Offset, uint(max(int(p.Col)-1, 0)))
	before, onLine := uint(0), uint(0)
	for _, o := range at {
		if o >= p.Offset {
			break
		}
		before++
		if o >= lineStart {
			onLine++
		}
	}
	p.Offset -= 3 * before
	if p.Col > 3*onLine {
		p.Col -= 3 * onLine
	}
	return p
}
