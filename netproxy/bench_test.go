package netproxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

const benchSize = 100 << 20

// source serves benchSize bytes to every connection, then closes it.
func source(b *testing.B) net.Addr {
	chunk := make([]byte, 256<<10)
	return serveLocal(b, func(c net.Conn) {
		// Wait for the client's request line, as a server would.
		bufio.NewReader(c).ReadString('\n')
		for sent := 0; sent < benchSize; sent += len(chunk) {
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	})
}

// drain reads what the source sends with a 256 KiB buffer, as curl and
// pip do (io.Discard would read 8 KiB at a time).
func drain(b *testing.B, c net.Conn) {
	fmt.Fprintf(c, "GET / HTTP/1.0\r\n")
	buf := make([]byte, 256<<10)
	var n int64
	var err error
	for {
		var k int
		k, err = c.Read(buf)
		n += int64(k)
		if err != nil {
			break
		}
	}
	if err == io.EOF {
		err = nil
	}
	c.Close()
	if err != nil || n != benchSize {
		b.Fatalf("read %d bytes, want %d (%v)", n, benchSize, err)
	}
}

// BenchmarkThroughput downloads 100 MB from a loopback server, directly
// and through a CONNECT tunnel of the proxy, alternating within one loop
// so that both see the same machine load, and reports the ratio
// (proxy/direct, the target is at least 0.8). The server, the client and
// the proxy are all this process, so cpu:proxy/direct is the CPU time of
// all three per proxied download over that of a direct one: on a machine
// with few cores it bounds the ratio (see docs/network.md).
//
//	go test -run '^$' -bench Throughput -benchtime 10x ./netproxy
func BenchmarkThroughput(b *testing.B) {
	src := source(b)
	p := &Proxy{Domains: domains(b, []string{"127.0.0.1"}, nil)}
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go p.Serve(pl)
	defer p.Close()

	var direct, proxied, directCPU, proxiedCPU time.Duration
	b.SetBytes(2 * benchSize)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0, cpu0 := time.Now(), processCPU()
		c, err := net.Dial("tcp", src.String())
		if err != nil {
			b.Fatal(err)
		}
		drain(b, c)
		direct += time.Since(t0)
		directCPU += processCPU() - cpu0

		t0, cpu0 = time.Now(), processCPU()
		c, err = net.Dial("tcp", pl.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", src, src)
		br := bufio.NewReader(c)
		status, _ := br.ReadString('\n')
		if !strings.Contains(status, " 200 ") {
			b.Fatalf("CONNECT: %s", status)
		}
		br.ReadString('\n') // the blank line ending the reply
		if br.Buffered() > 0 {
			b.Fatal("data before the request")
		}
		drain(b, c)
		proxied += time.Since(t0)
		proxiedCPU += processCPU() - cpu0
	}
	b.StopTimer()
	mb := float64(benchSize) / (1 << 20) * float64(b.N)
	b.ReportMetric(mb/direct.Seconds(), "direct-MB/s")
	b.ReportMetric(mb/proxied.Seconds(), "proxy-MB/s")
	b.ReportMetric(direct.Seconds()/proxied.Seconds(), "proxy/direct")
	if directCPU > 0 {
		b.ReportMetric(proxiedCPU.Seconds()/directCPU.Seconds(), "cpu:proxy/direct")
		b.ReportMetric(float64(directCPU.Microseconds())/1000/mb, "direct-cpu-ms/MB")
		b.ReportMetric(float64(proxiedCPU.Microseconds())/1000/mb, "proxy-cpu-ms/MB")
	}
}

// BenchmarkPlainHTTP is the same for a plain http:// request forwarded
// by the proxy (copied through user space, not spliced).
func BenchmarkPlainHTTP(b *testing.B) {
	body := make([]byte, 1<<20)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for sent := 0; sent < benchSize; sent += len(body) {
			w.Write(body)
		}
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(l)
	defer srv.Close()
	p := &Proxy{Domains: domains(b, []string{"127.0.0.1"}, nil)}
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go p.Serve(pl)
	defer p.Close()
	get := func(c *http.Client) {
		resp, err := c.Get("http://" + l.Addr().String() + "/")
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if n != benchSize {
			b.Fatalf("read %d bytes", n)
		}
	}
	directC := &http.Client{Transport: &http.Transport{Proxy: nil}}
	proxyC := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: pl.Addr().String()})}}
	var direct, proxied time.Duration
	b.SetBytes(2 * benchSize)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		get(directC)
		direct += time.Since(t0)
		t0 = time.Now()
		get(proxyC)
		proxied += time.Since(t0)
	}
	b.StopTimer()
	b.ReportMetric(direct.Seconds()/proxied.Seconds(), "proxy/direct")
}
