//go:build !unix

package h1

import "net"

// Supported says that the provider's own HTTP/1.1 client does not run
// here: it cannot look at an idle connection before reusing it (a server
// may have closed it, or left a stale answer such as a 408 on it, which
// would be read as the next request's), so net/http, which watches its
// idle connections, speaks for it.
const Supported = false

// idleUsable cannot look at an idle connection here; never called, as
// the fast path does not run (Supported).
func idleUsable(net.Conn) bool { return false }

// answered cannot look here; never called (Supported).
func answered(net.Conn) bool { return false }
