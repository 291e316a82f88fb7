package faults

import (
	"bufio"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"
)

// echoServer answers every line with the same line.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(line)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// roundTrip sends one line through a new connection and reads the answer, within 2 s.
func roundTrip(addr string) (time.Duration, error) {
	start := time.Now()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return 0, err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err == nil && line != "ping\n" {
		err = errors.New("wrong answer " + line)
	}
	return time.Since(start), err
}

// TestProxyFaults checks each fault of the model on a line-echo server.
func TestProxyFaults(t *testing.T) {
	p, err := New(echoServer(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })

	if _, err := roundTrip(p.Addr()); err != nil {
		t.Fatalf("no faults: %v", err)
	}

	p.Set(Faults{Reset: 1})
	if _, err := roundTrip(p.Addr()); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("Reset: err %v, want a connection reset", err)
	}

	p.Set(Faults{BlackHole: 1})
	if _, err := roundTrip(p.Addr()); err == nil || !isTimeout(err) {
		t.Errorf("BlackHole: err %v, want the client's timeout", err)
	}

	p.Set(Faults{Delay: 1, Latency: 300 * time.Millisecond})
	if d, err := roundTrip(p.Addr()); err != nil || d < 300*time.Millisecond {
		t.Errorf("Delay: %v, %v; want an answer after at least 300ms", d, err)
	}

	p.Set(Faults{})
	p.Down()
	if _, err := roundTrip(p.Addr()); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("Down: err %v, want connection refused", err)
	}
	if err := p.Up(); err != nil {
		t.Fatal(err)
	}
	if _, err := roundTrip(p.Addr()); err != nil {
		t.Errorf("after Up: %v", err)
	}
	st := p.Stats()
	if st.Resets != 1 || st.BlackHoles != 1 || st.Delays != 1 {
		t.Errorf("stats %+v", st)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestDownResetsOpenConnections: an outage cuts the connections already open.
func TestDownResetsOpenConnections(t *testing.T) {
	p, err := New(echoServer(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	if _, err := c.Write([]byte("a\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	p.Down()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	_, _ = c.Write([]byte("b\n"))
	if _, err := r.ReadString('\n'); err == nil || isTimeout(err) {
		t.Fatalf("read after Down: %v, want the connection cut", err)
	}
}
