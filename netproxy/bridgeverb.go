package netproxy

// BridgeVerb is guardrun's hidden verb that runs the bridge as the first
// process inside a bwrap sandbox with the proxy: guardrun hands a command
// line that starts with it to BridgeMain before anything else.
const BridgeVerb = "__proxy-bridge"
