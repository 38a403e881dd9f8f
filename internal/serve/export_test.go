package serve

// EncodeRequest is encodeRequest, for the tests' own client.
func EncodeRequest(argv, environ []string, umask uint32) []byte {
	return encodeRequest(&wireRequest{Argv: argv, Environ: environ, Umask: umask})
}
