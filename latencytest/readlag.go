package latencytest

import (
	"context"
	"net"

	"github.com/tailguard/tailguard/internal/machine"
)

// lagDial wraps a dialer (nil: net/http's default dialer settings) so
// that its TCP connections time their reads' lag against the kernel's
// arrival stamps (internal/machine; MachineLoad.Reads).
func lagDial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return machine.Dial(dial)
}
