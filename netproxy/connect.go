package netproxy

import (
	"bufio"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Connect opens a tunnel to host:port through the proxy at proxyURL
// (http://host:port, as in HTTPS_PROXY) and copies stdin to it and it to
// stdout until both ends are done: `guardrun connect HOST PORT`, an ssh
// ProxyCommand for git over ssh inside a sandbox with the proxy. A
// refusal comes back as the proxy's status line.
func Connect(proxyURL, host string, port int, stdin io.Reader, stdout io.Writer) error {
	u, err := url.Parse(proxyURL)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("connect: the proxy %q is not an http://host:port URL (set HTTPS_PROXY)", proxyURL)
	}
	c, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
	if err != nil {
		return fmt.Errorf("connect: the proxy at %s: %w", u.Host, err)
	}
	defer c.Close()
	target := net.JoinHostPort(host, strconv.Itoa(port))
	auth := ""
	if u.User != nil {
		// The command's token (landlock, or a shared proxy).
		pass, _ := u.User.Password()
		auth = "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pass)) + "\r\n"
	}
	if _, err := fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s\r\n", target, target, auth); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	br := bufio.NewReader(c)
	status, err := br.ReadString('\n')
	if err != nil {
		return fmt.Errorf("connect: the proxy closed the connection: %w", err)
	}
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			return fmt.Errorf("connect: the proxy's reply ended early: %w", err)
		}
		if l == "\r\n" || l == "\n" {
			break
		}
	}
	status = strings.TrimSpace(status)
	if f := strings.Fields(status); len(f) < 2 || f[1] != "200" {
		_, reason, _ := strings.Cut(status, " ")
		_, reason, _ = strings.Cut(reason, " ")
		return errors.New(reason)
	}
	done := make(chan struct{})
	go func() {
		io.Copy(stdout, br)
		close(done)
	}()
	io.Copy(c, stdin)
	if tc, ok := c.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	<-done
	return nil
}
