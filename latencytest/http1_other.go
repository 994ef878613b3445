//go:build !unix

package latencytest

import "net"

// idleUsable cannot look at an idle connection here: it is assumed
// usable (a closed one is replaced when its request fails; see roundTrip).
func idleUsable(net.Conn) bool { return true }
