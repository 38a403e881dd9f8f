//go:build linux

package integration

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guardrun/guardrun/internal/testing/testenv"
	"github.com/guardrun/guardrun/internal/testing/testtls"
)

const throughputSize = 100 << 20

// BenchmarkProxyThroughput downloads 100 MB with curl from a server the
// test runs on 127.0.0.1, alternating within one loop: directly (curl on
// the host, no proxy) and through the proxy (the same curl inside
// `guardrun -c` with network: proxy under bwrap: the empty network
// namespace, the listener the bridge handed over, the host-side proxy).
// https is a CONNECT tunnel (what package managers use), http a plain
// request the proxy forwards.
//
// proxy/direct is the ratio of curl's own transfer times
// (%{time_total}: connect, proxy handshake, TLS, body; not the sandbox's
// start-up), the target is at least 0.8. direct-cpu-ms/MB is the CPU of
// curl and of the server per MB; proxy-cpu-ms/MB that of guardrun and
// all its descendants (the proxy, bwrap, the bridge, curl: counted in a
// cgroup v2 group of their own, where one can be made) and the server,
// less what `guardrun -c true` costs, run in the same loop.
//
//	go test -run '^$' -bench ProxyThroughput -benchtime 5x ./integration
func BenchmarkProxyThroughput(b *testing.B) {
	requireSandbox(b)
	benchThroughput(b, nil, "")
}

// BenchmarkProxyThroughputLandlock is BenchmarkProxyThroughput under the
// landlock backend where user namespaces are unavailable: curl connects
// to the proxy's loopback port on the host with its token.
//
//	go test -run '^$' -bench ProxyThroughputLandlock -benchtime 5x ./integration
func BenchmarkProxyThroughputLandlock(b *testing.B) {
	pre := noNamespaces(b)
	benchThroughput(b, pre, "landlock")
}

func benchThroughput(b *testing.B, pre []string, backend string) {
	if _, err := exec.LookPath("curl"); err != nil {
		testenv.Missing(b, "needs curl (apt install curl)")
	}
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(throughputSize))
		for sent := 0; sent < throughputSize; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	ca := testtls.New(b, "allowed.test")
	tlsSrv := httptest.NewUnstartedServer(handler)
	tlsSrv.TLS = ca.ServerConfig()
	tlsSrv.StartTLS()
	b.Cleanup(tlsSrv.Close)
	plainSrv := httptest.NewServer(handler)
	b.Cleanup(plainSrv.Close)

	w := runWorld(b, fmt.Sprintf(proxyConfigFmt, "allowed.test, 127.0.0.1"),
		"GUARDRUN_TEST_RESOLVE=allowed.test=127.0.0.1")
	if backend != "" {
		landlockWorks(b, w, w.work)
	}
	// The same sandbox with the host's network, for the direct download
	// inside it: what the sandbox itself costs curl, proxy aside.
	hw := runWorld(b, strings.Replace(fmt.Sprintf(proxyConfigFmt, "allowed.test"), "network: proxy", "network: true", 1))
	caPEM, err := os.ReadFile(ca.CAFile)
	if err != nil {
		b.Fatal(err)
	}
	for _, dir := range []string{w.work, hw.work} {
		if err := os.WriteFile(filepath.Join(dir, "ca.pem"), caPEM, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	// Everything but the proxy variables, for the direct download.
	var directEnv []string
	for _, kv := range w.env {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasSuffix(strings.ToLower(k), "_proxy") {
			directEnv = append(directEnv, kv)
		}
	}

	// The CPU of curl, guardrun, bwrap and the sandbox, wherever they
	// are reaped (bwrap's children are not waited for by guardrun, so the
	// rusage of a wait does not see them): a cgroup of their own.
	cg := newCPUGroup(b)

	for _, scheme := range []string{"https", "http"} {
		srv := tlsSrv
		if scheme == "http" {
			srv = plainSrv
		}
		port := portOf(srv.Listener.Addr())
		curl := fmt.Sprintf("curl -sS -o /dev/null -w '%%{time_total} %%{size_download}\\n' --cacert ca.pem %s://allowed.test:%s/big", scheme, port)
		b.Run(scheme, func(b *testing.B) {
			// run runs argv in the work directory and returns curl's
			// transfer time (when it printed one) and the CPU time of the
			// process, its descendants and the servers meanwhile.
			run := func(w *world, env []string, argv ...string) (transfer, cpu time.Duration) {
				cpu0 := cg.usage()
				defer func() { cpu = cg.usage() - cpu0 }()
				c := exec.Command(argv[0], argv[1:]...)
				c.Dir, c.Env = w.work, env
				c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
				if cg != nil {
					c.SysProcAttr.UseCgroupFD, c.SysProcAttr.CgroupFD = true, cg.fd
				}
				c.WaitDelay = pipeGrace
				out, err := c.CombinedOutput()
				if err != nil {
					b.Fatalf("%q: %v\n%s", argv, err, out)
				}
				if argv[len(argv)-1] == "true" {
					return 0, cpu
				}
				var secs float64
				var size int64
				if _, err := fmt.Sscanf(lastLine(string(out)), "%g %d", &secs, &size); err != nil || size != throughputSize {
					b.Fatalf("%q: want %d bytes, got:\n%s", argv, throughputSize, out)
				}
				return time.Duration(secs * float64(time.Second)), cpu
			}
			guardrun := func(cmd string) []string {
				argv := append(append([]string{}, pre...), guardrunBin)
				if backend != "" {
					argv = append(argv, "--backend", backend)
				}
				return append(argv, "-c", cmd)
			}
			direct := []string{"curl", "-sS", "-o", "/dev/null", "-w", "%{time_total} %{size_download}\n", "--cacert", "ca.pem",
				"--resolve", "allowed.test:" + port + ":127.0.0.1", scheme + "://allowed.test:" + port + "/big"}
			proxied, startup := guardrun(curl), guardrun("true")
			sandboxed := guardrun(fmt.Sprintf("curl -sS -o /dev/null -w '%%{time_total} %%{size_download}\\n' --cacert ca.pem --resolve allowed.test:%s:127.0.0.1 %s://allowed.test:%s/big", port, scheme, port))

			run(w, directEnv, direct...)
			run(w, w.env, proxied...)
			run(hw, hw.env, sandboxed...)
			var td, tp, tsb, cd, cp, csb, cs, csbs time.Duration
			b.SetBytes(3 * throughputSize)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t, c := run(w, directEnv, direct...)
				td, cd = td+t, cd+c
				t, c = run(w, w.env, proxied...)
				tp, cp = tp+t, cp+c
				t, c = run(hw, hw.env, sandboxed...)
				tsb, csb = tsb+t, csb+c
				_, c = run(w, w.env, startup...)
				cs += c
				_, c = run(hw, hw.env, startup...)
				csbs += c
			}
			b.StopTimer()
			mb := float64(throughputSize) / (1 << 20) * float64(b.N)
			b.ReportMetric(mb/td.Seconds(), "direct-MB/s")
			b.ReportMetric(mb/tp.Seconds(), "proxy-MB/s")
			b.ReportMetric(td.Seconds()/tp.Seconds(), "proxy/direct")
			b.ReportMetric(tsb.Seconds()/tp.Seconds(), "proxy/sandboxed")
			if cg != nil {
				b.ReportMetric(float64(cd.Microseconds())/1000/mb, "direct-cpu-ms/MB")
				b.ReportMetric(float64((csb-csbs).Microseconds())/1000/mb, "sandboxed-cpu-ms/MB")
				b.ReportMetric(float64((cp-cs).Microseconds())/1000/mb, "proxy-cpu-ms/MB")
			}
		})
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// selfCPU is the CPU time of this process (the servers), threads and
// all, not its children.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuGroup is a cgroup v2 group the benchmark starts its commands in
// (CLONE_INTO_CGROUP), to read their CPU time, every descendant's too.
type cpuGroup struct {
	dir string
	fd  int
}

// newCPUGroup makes a child group of this process's cgroup v2 group, or
// returns nil (and says why) where that is not possible.
func newCPUGroup(b *testing.B) *cpuGroup {
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	root := ""
	for _, line := range strings.Split(string(mounts), "\n") {
		if f := strings.Fields(line); len(f) > 8 && strings.Contains(line, " - cgroup2 ") {
			root = f[4]
			break
		}
	}
	self, _ := os.ReadFile("/proc/self/cgroup")
	rel := ""
	for _, line := range strings.Split(string(self), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			rel = p
		}
	}
	if root == "" || rel == "" {
		b.Log("no cgroup v2 hierarchy: CPU per MB not measured")
		return nil
	}
	dir, err := os.MkdirTemp(filepath.Join(root, rel), "guardrun-bench-")
	if err != nil {
		b.Logf("cannot make a cgroup (%v): CPU per MB not measured", err)
		return nil
	}
	fd, err := syscall.Open(dir, syscall.O_DIRECTORY|syscall.O_RDONLY, 0)
	if err != nil {
		os.Remove(dir)
		b.Logf("cgroup: %v: CPU per MB not measured", err)
		return nil
	}
	g := &cpuGroup{dir: dir, fd: fd}
	b.Cleanup(func() {
		syscall.Close(fd)
		for i := 0; i < 50 && os.Remove(dir) != nil; i++ {
			time.Sleep(20 * time.Millisecond) // the last processes leave
		}
	})
	return g
}

// usage is the CPU time of every process that ran in the group, and of
// this process (the servers).
func (g *cpuGroup) usage() time.Duration {
	if g == nil {
		return 0
	}
	data, _ := os.ReadFile(filepath.Join(g.dir, "cpu.stat"))
	var usec int64
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
			usec, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return time.Duration(usec)*time.Microsecond + selfCPU()
}
