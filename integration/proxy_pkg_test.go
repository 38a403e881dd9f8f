//go:build linux

package integration

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guardrun/guardrun/internal/testing/testtls"
)

// pkgServer serves a one-package Python index and a one-package npm
// registry over TLS on 127.0.0.1, as pypi.test and npm.test.
func pkgServer(t *testing.T, ca *testtls.CA) (port string, wheel, tgz []byte) {
	t.Helper()
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	for _, f := range [][2]string{
		{"tinypkg/__init__.py", "VALUE = 42\n"},
		{"tinypkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n"},
		{"tinypkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: guardrun-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
		{"tinypkg-1.0.dist-info/RECORD", "tinypkg/__init__.py,,\ntinypkg-1.0.dist-info/METADATA,,\ntinypkg-1.0.dist-info/WHEEL,,\ntinypkg-1.0.dist-info/RECORD,,\n"},
	} {
		w, _ := zw.Create(f[0])
		w.Write([]byte(f[1]))
	}
	zw.Close()
	wheel = zb.Bytes()
	wsum := sha256.Sum256(wheel)

	var tb bytes.Buffer
	gz := gzip.NewWriter(&tb)
	tw := tar.NewWriter(gz)
	for _, f := range [][2]string{
		{"package/package.json", `{"name":"tiny","version":"1.0.0","main":"index.js"}`},
		{"package/index.js", "module.exports = 42;\n"},
	} {
		tw.WriteHeader(&tar.Header{Name: f[0], Mode: 0o644, Size: int64(len(f[1])), Typeflag: tar.TypeReg})
		tw.Write([]byte(f[1]))
	}
	tw.Close()
	gz.Close()
	tgz = tb.Bytes()

	mux := http.NewServeMux()
	mux.HandleFunc("/simple/tinypkg/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<html><body><a href="/files/tinypkg-1.0-py3-none-any.whl#sha256=%s">tinypkg-1.0-py3-none-any.whl</a></body></html>`, hex.EncodeToString(wsum[:]))
	})
	mux.HandleFunc("/files/tinypkg-1.0-py3-none-any.whl", func(w http.ResponseWriter, r *http.Request) { w.Write(wheel) })
	mux.HandleFunc("/tiny/-/tiny-1.0.0.tgz", func(w http.ResponseWriter, r *http.Request) { w.Write(tgz) })
	srv := httptest.NewUnstartedServer(mux)
	srv.TLS = ca.ServerConfig()
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, port, _ = net.SplitHostPort(srv.Listener.Addr().String())
	return port, wheel, tgz
}

func pkgWorld(t *testing.T) (*world, string, []byte) {
	t.Helper()
	requireSandbox(t)
	ca := testtls.New(t, "pypi.test", "npm.test")
	port, _, tgz := pkgServer(t, ca)
	w := runWorld(t, fmt.Sprintf(proxyConfigFmt, "pypi.test, npm.test, 127.0.0.1"),
		"GUARDRUN_TEST_RESOLVE=pypi.test=127.0.0.1,npm.test=127.0.0.1")
	pem, _ := os.ReadFile(ca.CAFile)
	os.WriteFile(filepath.Join(w.work, "ca.pem"), pem, 0o644)
	return w, port, tgz
}

// pkgRun runs sh -c SCRIPT through guardrun with extra environment
// variables, under one backend.
type pkgRun func(t *testing.T, w *world, env []string, script string) (stdout, stderr string, code int)

// bwrapRun runs under the default backend (bwrap here).
func bwrapRun(t *testing.T, w *world, env []string, script string) (string, string, int) {
	return runPlain(t, w, "", env, "-c", script)
}

// landlockRun makes a runner for the landlock backend where user
// namespaces are unavailable, so that auto cannot pick bwrap either.
func landlockRun(t *testing.T) pkgRun {
	pre := noNamespaces(t)
	return func(t *testing.T, w *world, env []string, script string) (string, string, int) {
		landlockWorks(t, w, w.work)
		lw := *w
		lw.env = append(append([]string{}, w.env...), env...)
		return runLandlock(t, pre, &lw, "-c", script)
	}
}

// TestProxyPipInstall: pip installs a package from an HTTPS index through
// the proxy.
func TestProxyPipInstall(t *testing.T) { testPipInstall(t, "bwrap", bwrapRun) }

// TestProxyPipInstallLandlock: the same under the landlock backend, where
// pip reaches the proxy's host port with the command's token.
func TestProxyPipInstallLandlock(t *testing.T) {
	run := landlockRun(t)
	testPipInstall(t, "landlock", run)
}

// testPipInstall: the connections are audited as made under backend.
func testPipInstall(t *testing.T, backend string, run pkgRun) {
	if err := exec.Command("/usr/bin/python3", "-m", "pip", "--version").Run(); err != nil {
		t.Skip("needs pip for /usr/bin/python3 (apt install python3-pip)")
	}
	w, port, _ := pkgWorld(t)
	script := fmt.Sprintf("/usr/bin/python3 -m pip install --quiet --no-cache-dir --disable-pip-version-check --break-system-packages "+
		"--target ./site --cert ca.pem --index-url https://pypi.test:%s/simple/ tinypkg && "+
		"/usr/bin/python3 -c 'import sys; sys.path.insert(0, \"site\"); import tinypkg; print(tinypkg.VALUE)'", port)
	out, stderr, code := run(t, w, nil, script)
	if code != 0 || out != "42\n" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, stderr)
	}
	pw := &proxyWorld{world: w}
	recs := pw.connects(t)
	if len(recs) == 0 || recs[0]["host"] != "pypi.test" || recs[0]["outcome"] != "connected" || recs[0]["sandbox"] != backend {
		t.Errorf("pip's connections are not in the audit log: %v", recs)
	}
}

// TestProxyNpmCi: npm ci installs from a lockfile whose package comes from
// a tiny registry, through the proxy.
func TestProxyNpmCi(t *testing.T) { testNpmCi(t, "bwrap", bwrapRun) }

// TestProxyNpmCiLandlock: the same under the landlock backend.
func TestProxyNpmCiLandlock(t *testing.T) {
	run := landlockRun(t)
	testNpmCi(t, "landlock", run)
}

func testNpmCi(t *testing.T, backend string, run pkgRun) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("needs npm")
	}
	w, port, tgz := pkgWorld(t)
	sum := sha512.Sum512(tgz)
	integrity := "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
	resolved := fmt.Sprintf("https://npm.test:%s/tiny/-/tiny-1.0.0.tgz", port)
	os.WriteFile(filepath.Join(w.work, "package.json"), []byte(`{"name":"app","version":"1.0.0","dependencies":{"tiny":"1.0.0"}}`), 0o644)
	lock := fmt.Sprintf(`{"name":"app","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{`+
		`"":{"name":"app","version":"1.0.0","dependencies":{"tiny":"1.0.0"}},`+
		`"node_modules/tiny":{"version":"1.0.0","resolved":%q,"integrity":%q}}}`, resolved, integrity)
	os.WriteFile(filepath.Join(w.work, "package-lock.json"), []byte(lock), 0o644)
	// npm's settings come from its environment variables: options
	// guardrun does not know would ask.
	npmEnv := []string{
		"npm_config_audit=false", "npm_config_fund=false", "npm_config_update_notifier=false",
		"npm_config_cache=./npmcache", "npm_config_cafile=ca.pem",
		"npm_config_registry=https://npm.test:" + port + "/",
	}
	script := "npm ci && node -e 'console.log(require(\"tiny\"))'"
	out, stderr, code := run(t, w, npmEnv, script)
	if code != 0 || !strings.HasSuffix(out, "42\n") {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, stderr)
	}
	recs := (&proxyWorld{world: w}).connects(t)
	if len(recs) == 0 || recs[0]["host"] != "npm.test" || recs[0]["outcome"] != "connected" || recs[0]["sandbox"] != backend {
		t.Errorf("npm's connections are not in the audit log: %v", recs)
	}
}
