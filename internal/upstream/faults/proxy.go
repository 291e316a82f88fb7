// Package faults puts network faults between a client and a real kube-apiserver: a
// loopback TCP proxy that forwards raw bytes (TLS passes through untouched, so the client
// still verifies the server) and, on the way, resets connections mid-request, delays
// them, black-holes them, or refuses every connection for a while, as a node agent's
// network does to it.
//
// # The fault model
//
// Faults are decided per client burst: each read from the client side of a connection
// (with HTTP/1.1, one request, or one flight of the TLS handshake that precedes the
// first request on a connection). A client whose requests should map to bursts must not
// multiplex: set rest.Config.TLSClientConfig.NextProtos to []string{"http/1.1"} (HTTP/2
// would carry every request on one connection, and a reset would fail them all at once,
// which is a different fault). Per burst, in this order of precedence:
//
//   - Reset: half of the burst is forwarded, then both sides are closed with SO_LINGER 0,
//     so the client sees a connection reset in the middle of its request.
//   - BlackHole: the burst and everything after it on the connection are swallowed and
//     nothing comes back; the connection stays open until the client gives up (its
//     request timeout) and closes it.
//   - Delay: the burst is held for Latency before it is forwarded (and so is everything
//     behind it on that connection).
//
// Down makes the server unreachable: it resets every open connection and closes the
// listener, so new connections are refused (ECONNREFUSED) until Up listens again on the
// same address.
package faults

import (
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"time"
)

// Faults is the fault model in force. Probabilities are per client burst; the zero value
// forwards everything untouched.
type Faults struct {
	// Reset is the probability that a burst is cut halfway by a TCP reset.
	Reset float64
	// BlackHole is the probability that a burst, and the rest of its connection, is
	// swallowed with no answer.
	BlackHole float64
	// Delay is the probability that a burst is held for Latency before it is forwarded.
	Delay   float64
	Latency time.Duration
}

// Stats counts what a Proxy did.
type Stats struct {
	// Accepted counts connections accepted (refused ones never reach the proxy).
	Accepted int
	// Bursts counts client bursts seen; Resets, BlackHoles and Delays the bursts that got
	// each fault; DownResets the open connections reset by Down.
	Bursts, Resets, BlackHoles, Delays, DownResets int
}

// Proxy is a loopback TCP proxy to one target address. All methods are safe for
// concurrent use.
type Proxy struct {
	target string
	addr   string

	mu     sync.Mutex
	ln     net.Listener // nil while Down
	faults Faults
	rng    *rand.Rand
	conns  map[*link]struct{}
	stats  Stats
	closed bool
	wg     sync.WaitGroup
}

// New starts a proxy on 127.0.0.1 (a port the kernel picks) that forwards to target
// (host:port). seed seeds the fault draws, so a schedule replays the same decisions for
// the same bursts.
func New(target string, seed uint64) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faults: listen: %w", err)
	}
	p := &Proxy{
		target: target,
		addr:   ln.Addr().String(),
		ln:     ln,
		rng:    rand.New(rand.NewPCG(seed, seed^0x5eed)),
		conns:  make(map[*link]struct{}),
	}
	p.wg.Add(1)
	go p.accept(ln)
	return p, nil
}

// SetTarget makes the connections accepted from now on go to target (host:port), as
// when the server behind the address moved (an API server restarted on another port).
// Open connections keep theirs.
func (p *Proxy) SetTarget(target string) {
	p.mu.Lock()
	p.target = target
	p.mu.Unlock()
}

// Addr is the proxy's host:port; it stays the same across Down and Up.
func (p *Proxy) Addr() string { return p.addr }

// Set replaces the fault model for the bursts that follow.
func (p *Proxy) Set(f Faults) {
	p.mu.Lock()
	p.faults = f
	p.mu.Unlock()
}

// Stats returns the counts so far.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// Down resets every open connection and stops listening: the target is unreachable and
// new connections are refused until Up.
func (p *Proxy) Down() {
	p.mu.Lock()
	ln := p.ln
	p.ln = nil
	conns := make([]*link, 0, len(p.conns))
	for l := range p.conns {
		conns = append(conns, l)
	}
	p.stats.DownResets += len(conns)
	p.mu.Unlock()
	if ln != nil {
		_ = ln.Close()
	}
	for _, l := range conns {
		l.reset()
	}
}

// Up listens again on the proxy's address after Down. It is a no-op while up.
func (p *Proxy) Up() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil || p.closed {
		return nil
	}
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return fmt.Errorf("faults: listen again on %s: %w", p.addr, err)
	}
	p.ln = ln
	p.wg.Add(1)
	go p.accept(ln)
	return nil
}

// Heal removes every fault: it listens again if Down and forwards everything untouched.
func (p *Proxy) Heal() error {
	p.Set(Faults{})
	return p.Up()
}

// Close stops the proxy and closes every connection.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.Down()
	p.wg.Wait()
	return nil
}

func (p *Proxy) accept(ln net.Listener) {
	defer p.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return // closed by Down or Close
		}
		p.mu.Lock()
		target := p.target
		p.mu.Unlock()
		s, err := net.DialTimeout("tcp", target, 5*time.Second)
		if err != nil {
			resetConn(c)
			continue
		}
		l := &link{p: p, client: c.(*net.TCPConn), server: s.(*net.TCPConn)}
		p.mu.Lock()
		if p.ln != ln { // went Down while dialling
			p.mu.Unlock()
			l.reset()
			continue
		}
		p.conns[l] = struct{}{}
		p.stats.Accepted++
		p.mu.Unlock()
		p.wg.Add(2)
		go l.clientToServer()
		go l.serverToClient()
	}
}

// decide draws the fault for one burst.
func (p *Proxy) decide() (fault int, latency time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.Bursts++
	f := p.faults
	switch r := p.rng.Float64(); {
	case r < f.Reset:
		p.stats.Resets++
		return faultReset, 0
	case r < f.Reset+f.BlackHole:
		p.stats.BlackHoles++
		return faultBlackHole, 0
	case r < f.Reset+f.BlackHole+f.Delay:
		p.stats.Delays++
		return faultDelay, f.Latency
	}
	return faultNone, 0
}

const (
	faultNone = iota
	faultReset
	faultBlackHole
	faultDelay
)

// link is one proxied connection.
type link struct {
	p              *Proxy
	client, server *net.TCPConn

	mu   sync.Mutex
	hole bool // black-holed: nothing more is forwarded, the client is left waiting
	done bool
}

func (l *link) clientToServer() {
	defer l.p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := l.client.Read(buf)
		if n > 0 && !l.holed() {
			fault, latency := l.p.decide()
			switch fault {
			case faultReset:
				_, _ = l.server.Write(buf[:n/2])
				l.reset()
				return
			case faultBlackHole:
				l.mu.Lock()
				l.hole = true
				l.mu.Unlock()
				_ = l.server.Close() // the server forgets it; the client is left hanging
				continue
			case faultDelay:
				time.Sleep(latency)
			}
			if _, werr := l.server.Write(buf[:n]); werr != nil {
				l.close()
				return
			}
		}
		if err != nil {
			l.close()
			return
		}
	}
}

func (l *link) serverToClient() {
	defer l.p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := l.server.Read(buf)
		if n > 0 && !l.holed() {
			if _, werr := l.client.Write(buf[:n]); werr != nil {
				l.close()
				return
			}
		}
		if err != nil {
			l.closeUnlessHoled()
			return
		}
	}
}

func (l *link) holed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.hole
}

// closeUnlessHoled closes the link when the server side ended, except for a black-holed
// link, whose client must keep waiting.
func (l *link) closeUnlessHoled() {
	if !l.holed() {
		l.close()
	}
}

// close closes both sides normally (FIN) and forgets the link.
func (l *link) close() {
	if l.finish() {
		_ = l.client.Close()
		_ = l.server.Close()
	}
}

// reset closes both sides with SO_LINGER 0, so the peers see a reset, not an orderly
// close.
func (l *link) reset() {
	if l.finish() {
		resetConn(l.client)
		resetConn(l.server)
	}
}

func (l *link) finish() bool {
	l.mu.Lock()
	if l.done {
		l.mu.Unlock()
		return false
	}
	l.done = true
	l.mu.Unlock()
	l.p.mu.Lock()
	delete(l.p.conns, l)
	l.p.mu.Unlock()
	return true
}

func resetConn(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}
