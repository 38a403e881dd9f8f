package agents

import (
	"slices"
	"strings"
)

// settingKind is the JSON kind a Claude Code setting must have, and for
// an enumeration the values it takes.
type settingKind struct {
	kind   byte // kStr, kNum, kBool, kArr, kObj
	values []string
}

const (
	kStr  = '"'
	kNum  = 'n'
	kBool = 'b'
	kArr  = '['
	kObj  = '{'
)

var kindNames = map[byte]string{kStr: "a string", kNum: "a number", kBool: "true or false", kArr: "a list", kObj: "an object"}

// claudeValid refuses a settings file Claude Code would skip whole: one
// where a setting it checks (claudeKinds, read from its own schema; the
// permission rules and mode) has a value of the wrong kind, or a value an
// enumeration does not hold. Claude Code then loads nothing of the file,
// guardrun's hook included (measured), so integrate must not call it
// wired. Settings it does not know or forgives are left to it.
func claudeValid(file string, src []byte, doc *jsonValue) error {
	if doc == nil || doc.kind != '{' {
		return nil // findJSON says so
	}
	bad := func(at int, format string, args ...any) error {
		p := &jsonParser{src: src}
		e := p.fail(at, format+"; Claude Code skips a settings file with an invalid setting whole (guardrun's hook with it): fix it and run integrate again", args...).(*SyntaxError)
		e.File = file
		return e
	}
	check := func(name string, v *jsonValue, want settingKind) error {
		if !kindIs(v, want.kind) {
			return bad(v.start, "%s is %s; Claude Code %s wants %s", name, jsonKindName(v), claudeKindsVersion, kindNames[want.kind])
		}
		if want.values != nil && !slices.Contains(want.values, v.str) {
			return bad(v.start, "%s is %q; Claude Code %s takes %s", name, v.str, claudeKindsVersion, strings.Join(want.values, ", "))
		}
		return nil
	}
	for _, m := range doc.members {
		if want, ok := claudeKinds[m.key]; ok {
			if err := check(m.key, m.val, want); err != nil {
				return err
			}
			continue
		}
		if m.key != "permissions" {
			continue
		}
		if err := check("permissions", m.val, settingKind{kind: kObj}); err != nil {
			return err
		}
		for _, pm := range m.val.members {
			name := "permissions." + pm.key
			switch pm.key {
			case "allow", "deny", "ask", "additionalDirectories":
				if err := check(name, pm.val, settingKind{kind: kArr}); err != nil {
					return err
				}
				for _, e := range pm.val.elems {
					if err := check(name+" entry", e, settingKind{kind: kStr}); err != nil {
						return err
					}
				}
			case "defaultMode":
				if err := check(name, pm.val, settingKind{kind: kStr, values: claudePermissionModes}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func kindIs(v *jsonValue, k byte) bool {
	switch k {
	case kBool:
		return v.kind == 't' || v.kind == 'f'
	default:
		return v.kind == k
	}
}

func jsonKindName(v *jsonValue) string {
	switch v.kind {
	case 't', 'f':
		return kindNames[kBool]
	case 'z':
		return "null"
	}
	return kindNames[v.kind]
}
