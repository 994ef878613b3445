//go:build !linux

package latencytest

import "net"

// readLagHere says that reads are timed against the kernel's arrival
// stamps on this platform: only on Linux.
const readLagHere = false

// watchReads returns nc: reads are not timed against the socket here.
func watchReads(nc net.Conn, _ *lagCounts) net.Conn { return nc }
