package agents

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// settingKind is the JSON kind a Claude Code setting must have, and for
// an enumeration the values it takes.
type settingKind struct {
	kind   byte // kStr, kNum, kBool, kArr, kObj
	values []string
	// elem is the kind of a list's entries (0: any).
	elem byte
	// num bounds a number (nil: any).
	num *numBounds
	// members are an object's members Claude Code checks (nil: none),
	// required those it must have.
	members  map[string]settingKind
	required bool
}

// numBounds are what a number setting's validator checks: an integer
// (a safe one, as zod's int), at least min (above it when minOpen), at
// most max (below it when maxOpen).
type numBounds struct {
	integer          bool
	hasMin, hasMax   bool
	min, max         float64
	minOpen, maxOpen bool
}

// allows says whether x is within b, and if not, what b wants.
func (b *numBounds) allows(x float64) (bool, string) {
	var want []string
	ok := true
	if b.integer {
		want = append(want, "a whole number")
		ok = ok && x == math.Trunc(x) && math.Abs(x) <= 1<<53-1
	}
	num := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	switch {
	case b.hasMin && b.minOpen:
		want = append(want, "above "+num(b.min))
		ok = ok && x > b.min
	case b.hasMin:
		want = append(want, "at least "+num(b.min))
		ok = ok && x >= b.min
	}
	switch {
	case b.hasMax && b.maxOpen:
		want = append(want, "below "+num(b.max))
		ok = ok && x < b.max
	case b.hasMax:
		want = append(want, "at most "+num(b.max))
		ok = ok && x <= b.max
	}
	return ok, strings.Join(want, ", ")
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
// where a setting it checks (claudeKinds and claudePermissionKinds, read
// from its own schema; the permission rules and mode; a hook's matcher)
// has a value of the wrong kind, a value an enumeration does not hold,
// a number out of its bounds or a list entry of the wrong kind. Claude
// Code then loads nothing of the file, guardrun's hook included
// (measured), so integrate must not call it wired; nor where
// disableAllHooks turns every hook off. Settings it does not know or
// forgives, and what lies deeper than an object's own members, are left
// to it.
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
	var check func(name string, v *jsonValue, want settingKind) error
	check = func(name string, v *jsonValue, want settingKind) error {
		if !kindIs(v, want.kind) {
			return bad(v.start, "%s is %s; Claude Code %s wants %s", name, jsonKindName(v), claudeKindsVersion, kindNames[want.kind])
		}
		if want.values != nil && !slices.Contains(want.values, v.str) {
			return bad(v.start, "%s is %q; Claude Code %s takes %s", name, v.str, claudeKindsVersion, strings.Join(want.values, ", "))
		}
		if want.num != nil {
			text := string(src[v.start:v.end])
			x, err := strconv.ParseFloat(text, 64)
			if ok, what := want.num.allows(x); err != nil || !ok {
				return bad(v.start, "%s is %s; Claude Code %s wants %s", name, text, claudeKindsVersion, what)
			}
		}
		for _, key := range slices.Sorted(maps.Keys(want.members)) {
			mk := want.members[key]
			if mv, _ := v.member(key); mv != nil {
				if err := check(name+"."+key, mv, mk); err != nil {
					return err
				}
			} else if mk.required {
				return bad(v.start, "%s has no %s, which Claude Code %s requires", name, key, claudeKindsVersion)
			}
		}
		if want.elem != 0 {
			for _, e := range v.elems {
				if err := check(name+" entry", e, settingKind{kind: want.elem}); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, m := range doc.members {
		if m.key == "disableAllHooks" && m.val.kind == 't' {
			p := &jsonParser{src: src}
			e := p.fail(m.val.start, "disableAllHooks is true: Claude Code runs no hook of any settings file, guardrun's included; remove it and run integrate again").(*SyntaxError)
			e.File = file
			return e
		}
		if m.key == "hooks" && m.val.kind == '{' {
			// A hook's matcher that is not a string makes Claude Code
			// run none of the file's hooks (measured).
			for _, ev := range m.val.members {
				for i, h := range ev.val.elems {
					if mt, _ := h.member("matcher"); mt != nil {
						if err := check(fmt.Sprintf("hooks.%s[%d].matcher", ev.key, i), mt, settingKind{kind: kStr}); err != nil {
							return err
						}
					}
				}
			}
		}
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
			default:
				if want, ok := claudePermissionKinds[pm.key]; ok {
					if err := check(name, pm.val, want); err != nil {
						return err
					}
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
