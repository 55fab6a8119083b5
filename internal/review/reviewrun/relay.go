package reviewrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/review/reviewmcp"
)

// RelayFlag is the `forgectx mcp` flag of the relay entry a root run generates.
const RelayFlag = "--relay"

// Engine identity (docs/review-context.md, "Engine identity"). As root, forgectx runs the
// engine as an unprivileged UID, so the engine cannot read forgectx's /proc/<pid>/environ
// (another UID, and forgectx is non-dumpable), nor the root-owned 0700 store and snapshot.
// The MCP server must still read both, and an MCP server the engine starts runs as the
// engine's UID — so in a root run the generated entry starts `forgectx mcp --relay SOCKET`,
// a byte pipe between its stdio and a Unix socket, and the server itself (reviewmcp.Serve)
// runs inside this root process. The socket is an abstract one with a random name, given only
// to the engine (in its 0600 configuration), and only a peer with the engine's UID is served
// (SO_PEERCRED); any other peer is closed unserved. The server process holds no
// token in its configuration; the token exists only in this process's memory.

// relayServer serves the run's MCP configuration on a Unix socket, one connection at a time
// (a client that connects while another is served waits; each session overwrites the usage
// file as separate `forgectx mcp` processes would).
type relayServer struct {
	l    net.Listener
	wg   sync.WaitGroup
	mu   sync.Mutex
	conn net.Conn
	stop context.CancelFunc
}

func serveRelay(ctx context.Context, path string, engine *syscall.Credential, cfg reviewmcp.Config, log zerolog.Logger) (*relayServer, error) {
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("reviewrun: MCP relay: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	rs := &relayServer{l: l, stop: cancel}
	rs.wg.Add(1)
	go func() {
		defer rs.wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			if !peerIs(c, engine.Uid) {
				log.Warn().Msg("review-context run: MCP relay refused a peer that is not the engine identity")
				c.Close()
				continue
			}
			rs.mu.Lock()
			rs.conn = c
			rs.mu.Unlock()
			if err := reviewmcp.Serve(ctx, cfg, c, c); err != nil {
				log.Warn().Str("code", "mcp_session_failed").Msg("review-context run: MCP session ended with an error")
			}
			c.Close()
		}
	}()
	return rs, nil
}

// close stops serving: the listener, any open session, then waits for the server goroutine.
func (rs *relayServer) close() {
	if rs == nil {
		return
	}
	rs.stop()
	rs.l.Close()
	rs.mu.Lock()
	if rs.conn != nil {
		rs.conn.Close()
	}
	rs.mu.Unlock()
	rs.wg.Wait()
}

// peerIs reports whether the connection's peer process runs as uid.
func peerIs(c net.Conn, uid uint32) bool {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return false
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil || cerr != nil {
		return false
	}
	return cred.Uid == uid
}

// Relay is `forgectx mcp --relay SOCKET`: it pipes in to the socket and the socket to out
// until the server closes the connection (after in reaches its end). It reads no file and
// holds no configuration of its own.
func Relay(ctx context.Context, socket string, in io.Reader, out io.Writer) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return fmt.Errorf("reviewrun: MCP relay: %w", err)
	}
	defer c.Close()
	go func() {
		_, _ = io.Copy(c, in)
		if uc, ok := c.(*net.UnixConn); ok {
			_ = uc.CloseWrite()
		}
	}()
	if _, err := io.Copy(out, c); err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("reviewrun: MCP relay: %w", err)
	}
	return nil
}
