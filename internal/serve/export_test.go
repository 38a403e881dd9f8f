package serve

import "encoding/binary"

// EncodeRequest is encodeRequest, for the tests' own client.
func EncodeRequest(argv, environ []string, umask uint32) []byte {
	return encodeRequest(&wireRequest{Argv: argv, Environ: environ, Umask: umask})
}

// encodeRequest is a whole request as the client sends it, magic and
// length included: the bytes the C client builds.
func encodeRequest(r *wireRequest) []byte {
	var p []byte
	u32 := func(v uint32) { p = binary.LittleEndian.AppendUint32(p, v) }
	for _, list := range [][]string{r.Argv, r.Environ} {
		u32(uint32(len(list)))
		for _, s := range list {
			u32(uint32(len(s)))
			p = append(p, s...)
		}
	}
	u32(r.Umask)
	out := append([]byte(magic), binary.LittleEndian.AppendUint32(nil, uint32(len(p)))...)
	return append(out, p...)
}
