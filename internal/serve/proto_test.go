package serve

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"strings"
	"testing"
)

func payload(b []byte) []byte { return b[8:] }

func TestRequestRoundTrip(t *testing.T) {
	r := &wireRequest{Argv: []string{"guardrun", "-c", "echo 'a b'\n"}, Environ: []string{"A=1", "EMPTY=", "U=\xff\x00"}, Umask: 0o027}
	b := encodeRequest(r)
	if string(b[:4]) != magic || binary.LittleEndian.Uint32(b[4:]) != uint32(len(b)-8) {
		t.Fatalf("header %q", b[:8])
	}
	got, err := decodeRequest(payload(b))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Errorf("got %+v, want %+v", got, r)
	}
}

// TestDecodeRequestErrors: a truncated or padded payload, or counts and
// lengths past its end, is an error saying where.
func TestDecodeRequestErrors(t *testing.T) {
	good := payload(encodeRequest(&wireRequest{Argv: []string{"g", "-c", "x"}, Environ: []string{"A=1"}, Umask: 0o22}))
	for name, tc := range map[string]struct {
		b    []byte
		want string
	}{
		"empty":        {nil, "argument count"},
		"truncated":    {good[:len(good)-2], "umask"},
		"padded":       {append(append([]byte{}, good...), 0), "bytes after the umask"},
		"huge count":   {binary.LittleEndian.AppendUint32(nil, 1<<30), "more than the request holds"},
		"huge length":  {append(binary.LittleEndian.AppendUint32(nil, 1), binary.LittleEndian.AppendUint32(nil, 1<<31)...), "past the end"},
		"no variables": {good[:4+4+1+4+2+4+1], "variable count"},
	} {
		if _, err := decodeRequest(tc.b); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, tc.want)
		}
	}
}

// FuzzDecodeRequest: any payload decodes or fails without panicking, and
// one that decodes encodes back to the same bytes.
func FuzzDecodeRequest(f *testing.F) {
	f.Add(payload(encodeRequest(&wireRequest{Argv: []string{"guardrun", "-c", "true"}, Environ: []string{"HOME=/h"}, Umask: 0o22})))
	f.Add([]byte{})
	f.Add([]byte{1, 0, 0, 0, 255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRequest(b)
		if err != nil {
			return
		}
		if again := payload(encodeRequest(r)); !bytes.Equal(again, b) {
			t.Errorf("re-encoded %x, was %x", again, b)
		}
	})
}
