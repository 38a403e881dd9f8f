#!/usr/bin/env python3
"""Print internal/agents/claude_kinds.go from a Claude Code binary.

Claude Code skips a whole settings file when one of its settings has a
value of the wrong kind (a number for "model"), hooks and all. guardrun
integrate refuses such a file rather than call guardrun wired where the
hook would not run. This reads the settings schema out of the binary
(the object of KEY:()=>ZOD members that holds cleanupPeriodDays) and
keeps, for each top-level key that Claude does not forgive on its own
(no .catch), the JSON kind its validator starts from, for an enum of
literal strings its values, for a number the bounds its validator sets
(int, min, max, positive, ...), and for a list of plain values the kind
of its entries.

usage: scripts/claude-settings-kinds.py PATH-TO-claude VERSION | gofmt > internal/agents/claude_kinds.go
"""
import re
import subprocess
import sys


def members(s, i):
    depth = 0
    j = i
    while j > 0:
        c = s[j]
        if c in ')]}':
            depth += 1
        elif c in '([{':
            if depth == 0:
                break
            depth -= 1
        j -= 1
    k = j + 1
    start = k
    depth = 0
    quote = None
    out = []
    while k < len(s):
        c = s[k]
        if quote:
            if c == '\\':
                k += 2
                continue
            if c == quote:
                quote = None
        elif c in '"\'`':
            quote = c
        elif c in '([{':
            depth += 1
        elif c in ')]}':
            if depth == 0:
                out.append(s[start:k])
                return out
            depth -= 1
        elif c == ',' and depth == 0:
            out.append(s[start:k])
            start = k + 1
        k += 1
    sys.exit('the settings object does not end')


def top_calls(expr):
    """The calls chained at the top level of expr, with their arguments'
    text: v().min(0).optional() -> (v, ''), (min, '0'), (optional, '')."""
    calls = []
    depth = 0
    quote = None
    word = ''
    arg = None
    for c in expr:
        if quote:
            if arg is not None:
                arg += c
            if c == '\\':
                continue
            if c == quote:
                quote = None
            continue
        if c in '"\'`':
            quote = c
            if arg is not None:
                arg += c
            continue
        if c in '([{':
            if depth == 0:
                calls.append([word, ''] if word else None)
                arg = '' if word else None
                word = ''
            elif arg is not None:
                arg += c
            depth += 1
            continue
        if c in ')]}':
            depth -= 1
            if depth == 0:
                if arg is not None and calls and calls[-1] is not None:
                    calls[-1][1] = arg
                arg = None
            elif arg is not None:
                arg += c
            continue
        if depth == 0:
            if c.isalnum() or c in '_$':
                word += c
            else:
                word = ''
        elif arg is not None:
            arg += c
    return [tuple(c) for c in calls if c is not None]


def top_chain(expr):
    """The calls chained at the top level of expr: n().optional().describe(...) -> n, optional, describe."""
    return [name for name, _ in top_calls(expr)]


# The bounds a number's validator chain sets: zod's int, positive,
# nonnegative, negative, nonpositive, min/gte, max/lte, gt, lt.
def bounds(calls):
    b = {}
    for name, arg in calls[1:]:
        x = None
        if name in ('min', 'gte', 'gt', 'max', 'lte', 'lt'):
            try:
                x = float(arg)
            except ValueError:
                return None  # a bound named elsewhere: leave the number be
        if name == 'int':
            b['integer'] = True
        elif name == 'positive':
            b['min'], b['minOpen'] = 0, True
        elif name == 'nonnegative':
            b['min'] = 0
        elif name == 'negative':
            b['max'], b['maxOpen'] = 0, True
        elif name == 'nonpositive':
            b['max'] = 0
        elif name in ('min', 'gte') and x is not None:
            b['min'] = x
        elif name == 'gt' and x is not None:
            b['min'], b['minOpen'] = x, True
        elif name in ('max', 'lte') and x is not None:
            b['max'] = x
        elif name == 'lt' and x is not None:
            b['max'], b['maxOpen'] = x, True
    return b


def go_num(x):
    return repr(int(x)) if float(x).is_integer() else repr(x)


def go_bounds(b):
    parts = []
    if b.get('integer'):
        parts.append('integer: true')
    if 'min' in b:
        parts.append('hasMin: true, min: %s' % go_num(b['min']))
        if b.get('minOpen'):
            parts.append('minOpen: true')
    if 'max' in b:
        parts.append('hasMax: true, max: %s' % go_num(b['max']))
        if b.get('maxOpen'):
            parts.append('maxOpen: true')
    return '&numBounds{%s}' % ', '.join(parts)


KINDS = {'n': 'str', 'I': 'bool', 'v': 'num', 'T': 'arr', 'c': 'obj', 'he': 'obj', 'U': 'str', 'E': 'str'}


def lazy_object(s, expr):
    """The {...} of the object a lazy setting Ne(()=>NAME()) stands for,
    when exactly one NAME=p(()=>c({ defines it; else None."""
    m = re.match(r'Ne\(\(\)=>([\w$]+)\(\)\)', expr)
    if not m:
        return None
    defs = [d for d in re.finditer(r'[^\w$.]' + re.escape(m.group(1)) + r'=p\(\(\)=>c\(\{', s)]
    if len(defs) != 1:
        return None
    i = defs[0].end() - 1
    return s[i:i + 200000]


def setting_rows(ms, pattern, s=None, depth=0):
    """(key, kind, enum values, more Go fields) of each member KEY:ZOD of
    ms whose validator Claude does not forgive (no .catch). An object's
    members are read one level down, and, given s (the whole text), a
    lazy object's whose definition is found."""
    kinds = KINDS
    rows = []
    for m in ms:
        mm = re.match(pattern, m, re.S)
        if not mm:
            continue
        key, expr = mm.group(1), mm.group(2)
        calls = top_calls(expr)
        chain = [name for name, _ in calls]
        if not chain or 'catch' in chain:
            continue
        obj = None
        if chain[0] == 'c' and calls[0][1].startswith('{'):
            obj = calls[0][1]
        elif chain[0] == 'Ne' and s is not None:
            obj = lazy_object(s, expr)
            if obj is not None:
                chain[0] = 'c'
        if chain[0] not in kinds:
            continue
        enum, extra = [], ''
        if obj is not None and depth == 0:
            sub = setting_rows(members(obj, 1), r'\s*"?([\w$]+)"?:(.*)', None, depth + 1)
            req = [k for k, _, _, more in sub if 'required: true' in more]
            if sub:
                extra = ', members: map[string]settingKind{' + ''.join(row_text(r) + ' ' for r in sorted(sub)) + '}'
        if depth > 0 and 'optional' not in chain and 'default' not in chain:
            extra += ', required: true'
        if chain[0] == 'E':
            lit = re.match(r'E\(("[^"]*")\)', expr)
            if not lit:
                continue
            enum = [lit.group(1)[1:-1]]
        if chain[0] == 'U':
            lit = re.match(r'U\(\[((?:"[^"]*",?)+)\]\)', expr)
            if not lit:
                continue  # values named elsewhere: only the kind is known
            enum = re.findall(r'"([^"]*)"', lit.group(1))
        if chain[0] == 'v':
            b = bounds(calls)
            if b:
                extra = ', num: ' + go_bounds(b)
        if chain[0] == 'T':
            # A list of plain values: each entry is checked too.
            elem = top_chain(calls[0][1])
            if elem and 'catch' not in elem and elem[0] in ('n', 'I', 'v', 'U', 'E'):
                extra = ', elem: k' + KINDS[elem[0]].capitalize()
        rows.append((key, kinds[chain[0]], enum, extra))
    return rows


def main():
    binary, version = sys.argv[1], sys.argv[2]
    s = subprocess.run(['strings', '-n', '8', binary], capture_output=True, text=True, errors='replace').stdout
    i = s.find('cleanupPeriodDays:()=>')
    if i < 0:
        sys.exit('no settings schema found in ' + binary)
    rows = setting_rows(members(s, i), r'\s*"?([\w$]+)"?:\(\)=>(.*)', s)
    # The permissions object, built by a function of the modes: its
    # members are KEY:ZOD.
    j = re.search(r'function [\w$]+\(e\)\{return c\(\{allow:', s)
    if not j:
        sys.exit('no permissions schema found')
    perm_rows = setting_rows(members(s, j.end() - 1), r'\s*"?([\w$]+)"?:(.*)')
    if not any(k == 'disableBypassPermissionsMode' for k, _, _, _ in perm_rows):
        sys.exit('the permissions schema changed shape')
    # permissions is built lazily; its defaultMode takes the modes list
    # (the first literal list naming bypassPermissions and dontAsk) or
    # the alias "manual".
    modes = None
    for lit in re.finditer(r'=\[((?:"[A-Za-z]+",?)+)\]', s):
        vals = re.findall(r'"([A-Za-z]+)"', lit.group(1))
        if 'bypassPermissions' in vals and 'dontAsk' in vals and 'default' in vals:
            modes = vals
            break
    if modes is None or '"manual"' not in s:
        sys.exit('no permission modes found')
    modes = sorted(set(modes + ['manual']))
    if len(rows) < 50:
        sys.exit('only %d settings found: the schema changed shape' % len(rows))
    print('// Code generated by scripts/claude-settings-kinds.py from Claude Code %s; DO NOT EDIT.' % version)
    print()
    print('package agents')
    print()
    print('// claudeKindsVersion is the Claude Code whose settings schema claudeKinds holds.')
    print('const claudeKindsVersion = "%s"' % version)
    print()
    print('// claudeKinds are the top-level settings whose value Claude Code checks')
    print('// (a wrong one makes it skip the whole file), by JSON kind, with the')
    print('// values of enumerations, the bounds of numbers and the kind of the')
    print('// entries of plain lists.')
    print('var claudeKinds = map[string]settingKind{')
    print_rows(rows)
    print('}')
    print()
    print('// claudePermissionKinds are the same for the members of permissions.')
    print('var claudePermissionKinds = map[string]settingKind{')
    print_rows(perm_rows)
    print('}')
    print()
    print('// claudePermissionModes are the values permissions.defaultMode takes.')
    print('var claudePermissionModes = []string{%s}' % ', '.join(go_str(m) for m in modes))


def row_text(row):
    key, kind, enum, extra = row
    if enum:
        return '%s: {kind: k%s, values: []string{%s}%s},' % (go_str(key), kind.capitalize(), ', '.join(go_str(e) for e in enum), extra)
    return '%s: {kind: k%s%s},' % (go_str(key), kind.capitalize(), extra)


def print_rows(rows):
    for row in sorted(rows):
        print('\t' + row_text(row))


def go_str(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"') + '"'


if __name__ == '__main__':
    main()
