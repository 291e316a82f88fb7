package podsim

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
)

// ErrPodCIDRExhausted is the error (wrapped) of an allocation from a pod CIDR whose every
// address is in use: the pod gets no sandbox and stays Pending, as behind a kubelet whose
// network plugin has no address left.
var ErrPodCIDRExhausted = errors.New("no address left")

// IPAM hands out pod IPs from a node's pod CIDR, as a CNI host-local IPAM plugin does:
// one per node, shared by its pods, safe for concurrent use. It skips the network address,
// the first host address (the bridge gateway) and, for IPv4, the broadcast address.
type IPAM struct {
	prefix netip.Prefix
	first  netip.Addr // first address handed out
	last   netip.Addr // last address handed out

	mu     sync.Mutex
	byKey  map[string]netip.Addr
	inUse  map[netip.Addr]string
	cursor netip.Addr // where the next search starts
}

// NewIPAM returns an IPAM for cidr ("10.244.3.0/24", "fd00:10:244:3::/64"). The prefix
// must leave at least one address for pods (a /30 or wider for IPv4, a /126 or wider for
// IPv6).
func NewIPAM(cidr string) (*IPAM, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return nil, fmt.Errorf("podsim: parsing pod CIDR: %w", err)
	}
	p = p.Masked()
	bits := p.Addr().BitLen()
	if bits-p.Bits() < 2 {
		return nil, fmt.Errorf("podsim: pod CIDR %s has no room for pod addresses", cidr)
	}
	first := p.Addr().Next().Next() // skip the network address and the gateway
	last := lastAddr(p)
	if p.Addr().Is4() {
		last = last.Prev() // the broadcast address
	}
	if last.Less(first) {
		return nil, fmt.Errorf("podsim: pod CIDR %s has no room for pod addresses", cidr)
	}
	return &IPAM{prefix: p, first: first, last: last, cursor: first,
		byKey: make(map[string]netip.Addr), inUse: make(map[netip.Addr]string)}, nil
}

// lastAddr is the highest address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	host := len(b)*8 - p.Bits()
	for i := len(b) - 1; i >= 0 && host > 0; i-- {
		n := min(host, 8)
		b[i] |= byte(1<<n - 1)
		host -= n
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// Allocate returns the IP of key (for example "namespace/name"), handing out a free one on
// first use; the same key gets the same IP until it is released. The error says the
// CIDR is exhausted.
func (a *IPAM) Allocate(key string) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ip, ok := a.byKey[key]; ok {
		return ip.String(), nil
	}
	ip := a.cursor
	for {
		if _, used := a.inUse[ip]; !used {
			break
		}
		ip = a.advance(ip)
		if ip == a.cursor {
			return "", fmt.Errorf("podsim: allocating an IP for %s: pod CIDR %s: %w", key, a.prefix, ErrPodCIDRExhausted)
		}
	}
	a.byKey[key], a.inUse[ip] = ip, key
	a.cursor = a.advance(ip)
	return ip.String(), nil
}

func (a *IPAM) advance(ip netip.Addr) netip.Addr {
	if ip == a.last {
		return a.first
	}
	return ip.Next()
}

// Reserve records that key already uses ip (a pod a previous agent process started). The
// error says ip is not a pod address of the CIDR or another key holds it.
func (a *IPAM) Reserve(key, ip string) error {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return fmt.Errorf("podsim: reserving IP for %s: %w", key, err)
	}
	if !a.prefix.Contains(addr) || addr.Less(a.first) || a.last.Less(addr) {
		return fmt.Errorf("podsim: reserving IP %s for %s: not a pod address of %s", ip, key, a.prefix)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if holder, used := a.inUse[addr]; used && holder != key {
		return fmt.Errorf("podsim: reserving IP %s for %s: already held by %s", ip, key, holder)
	}
	if old, ok := a.byKey[key]; ok && old != addr {
		delete(a.inUse, old)
	}
	a.byKey[key], a.inUse[addr] = addr, key
	return nil
}

// Release frees key's IP, if it has one.
func (a *IPAM) Release(key string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ip, ok := a.byKey[key]; ok {
		delete(a.byKey, key)
		delete(a.inUse, ip)
	}
}

// Contains reports whether ip is inside the IPAM's CIDR.
func (a *IPAM) Contains(ip string) bool {
	addr, err := netip.ParseAddr(ip)
	return err == nil && a.prefix.Contains(addr)
}

// InUse returns how many addresses are allocated.
func (a *IPAM) InUse() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.inUse)
}
