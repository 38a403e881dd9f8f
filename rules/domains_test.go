package rules

import (
	"net/netip"
	"strings"
	"testing"
)

func TestHostVerdict(t *testing.T) {
	c, err := Parse("cfg.yaml", []byte(`
sandbox:
  network: proxy
  domains:
    allow: [github.com, "*.npmjs.org", 10.1.2.3, 192.168.0.0/16, "*.example.com"]
    deny: ["*.pastebin.com", gist.github.com, bad.example.com]
`), "/", testEnv)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Sandbox.Proxy || c.Sandbox.Network {
		t.Fatalf("network: proxy read as Proxy %v Network %v", c.Sandbox.Proxy, c.Sandbox.Network)
	}
	for _, tc := range []struct {
		host string
		want Verdict
	}{
		{"github.com", Allow},
		{"api.github.com", Ask},       // "x" is exactly x
		{"gist.github.com", Block},    // deny
		{"registry.npmjs.org", Allow}, // "*.x" matches subdomains
		{"a.b.npmjs.org", Allow},      // at any depth
		{"npmjs.org", Ask},            // but not x itself
		{"evilnpmjs.org", Ask},        // nor a name that merely ends the same
		{"x.pastebin.com", Block},     // deny wildcard
		{"bad.example.com", Block},    // deny beats an allow wildcard
		{"ok.example.com", Allow},     //
		{"10.1.2.3", Allow},           // address entry
		{"10.1.2.4", Ask},             //
		{"192.168.7.7", Allow},        // CIDR entry
		{"pastebin.com", Ask},         //
		{"github.com.evil.org", Ask},  //
	} {
		if got, why := c.Sandbox.Domains.HostVerdict(tc.host); got != tc.want {
			t.Errorf("%s: got %v (%s), want %v", tc.host, got, why, tc.want)
		}
	}
	if ok, _ := c.Sandbox.Domains.AddrListed(netip.MustParseAddr("192.168.1.1")); !ok {
		t.Error("192.168.1.1 is inside an allowed CIDR")
	}
	if ok, _ := c.Sandbox.Domains.AddrListed(netip.MustParseAddr("127.0.0.1")); ok {
		t.Error("127.0.0.1 is not listed")
	}
}

func TestDomainsErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"network is not a word", "sandbox:\n  network: maybe\n",
			`cfg.yaml:2:12: sandbox.network: want true, false or proxy, got the string "maybe"`},
		{"network is a number", "sandbox:\n  network: 1\n",
			`cfg.yaml:2:12: sandbox.network: want true, false or proxy, got a number`},
		{"unknown domains key", "sandbox:\n  domains:\n    alow: [x.org]\n",
			`cfg.yaml:3:5: sandbox.domains.alow: unknown key (known: allow, deny, loopback)`},
		{"bad host", "sandbox:\n  domains:\n    allow: [\"exa mple.com\"]\n",
			`cfg.yaml:3:13: sandbox.domains.allow[0]: "exa mple.com": ' ' is not allowed in a host name`},
		{"wildcard in the middle", "sandbox:\n  domains:\n    deny: [\"a.*.com\"]\n",
			`cfg.yaml:3:12: sandbox.domains.deny[0]: "a.*.com": '*' is not allowed`},
		{"CIDR with host bits", "sandbox:\n  domains:\n    allow: [10.0.0.1/8]\n",
			`cfg.yaml:3:13: sandbox.domains.allow[0]: "10.0.0.1/8": host bits set; did you mean 10.0.0.0/8?`},
		{"not a list", "sandbox:\n  domains:\n    allow: github.com\n",
			`cfg.yaml:3:12: sandbox.domains.allow: want a list, got the string "github.com"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("cfg.yaml", []byte(tc.yaml), "/", testEnv)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v\nwant it to contain %s", err, tc.want)
			}
		})
	}
}

func TestProxyDecision(t *testing.T) {
	c, err := Parse("cfg.yaml", []byte(`
shell:
  rules:
    - {pattern: "npm ci", approval: false, network: true}
sandbox:
  network: proxy
`), "/", testEnv)
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(c, "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{{"npm", "ci"}, {"ls"}} {
		d := e.Argv(argv, "/")
		if !d.Proxy || d.Network {
			t.Errorf("%v: Proxy %v Network %v, want the proxy and no open network", argv, d.Proxy, d.Network)
		}
	}
}

func TestTightenProxy(t *testing.T) {
	parse := func(y string) *Config {
		c, err := Parse("cfg.yaml", []byte(y), "/", testEnv)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	off := parse("sandbox:\n  network: false\n")
	open := parse("sandbox:\n  network: true\n")
	proxy := parse("sandbox:\n  network: proxy\n  domains:\n    allow: [a.org]\n    deny: [b.org]\n")
	if out, ign := Tighten(off, proxy); out.Sandbox.Proxy || len(ign) != 2 {
		t.Errorf("an untrusted config enabled the proxy (Proxy %v, ignored %q)", out.Sandbox.Proxy, ign)
	}
	if out, _ := Tighten(open, proxy); !out.Sandbox.Proxy || out.Sandbox.Network {
		t.Errorf("open network -> proxy is narrower and should apply: Proxy %v Network %v", out.Sandbox.Proxy, out.Sandbox.Network)
	}
	out, _ := Tighten(proxy, off)
	if out.Sandbox.Proxy || out.Sandbox.Network {
		t.Error("network: false from a project config should turn the proxy off")
	}
	out, _ = Tighten(proxy, parse("sandbox:\n  network: proxy\n  domains:\n    deny: [a.org]\n"))
	if v, _ := out.Sandbox.Domains.HostVerdict("a.org"); v != Block {
		t.Errorf("a project deny should apply; a.org is %v", v)
	}
}
