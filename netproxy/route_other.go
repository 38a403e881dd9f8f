//go:build !linux

package netproxy

import (
	"errors"
	"fmt"
	"io"
)

// ServeUnix fails: handing listeners over a unix socket is how the bwrap
// backend reaches the proxy, and bwrap is Linux only.
func (p *Proxy) ServeUnix(path string) (stop func() error, err error) {
	return nil, errors.New("proxy: the sandbox bridge needs Linux")
}

// ServeUnixFor fails: see ServeUnix.
func (p *Proxy) ServeUnixFor(path string, cl *Client) (stop func() error, err error) {
	return nil, errors.New("proxy: the sandbox bridge needs Linux")
}

// ServeUnixTokens fails: see ServeUnix.
func (p *Proxy) ServeUnixTokens(path string) (stop func() error, err error) {
	return nil, errors.New("proxy: the sandbox bridge needs Linux")
}

// BridgeMain fails: see ServeUnix.
func BridgeMain(args []string, stderr io.Writer) int {
	fmt.Fprintln(stderr, "guardrun: proxy bridge: needs Linux")
	return 125
}

func (p *Proxy) logf(format string, args ...any) {
	if p.Logf != nil {
		p.Logf(format, args...)
	}
}
