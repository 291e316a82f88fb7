package podstate

import (
	"net"

	v1 "k8s.io/api/core/v1"
)

// podIPs returns the pod IPs the kubelet reports: from the newest sandbox, only when it is
// ready; at most one per family, the node's family first.
func (g *gen) podIPs() ([]v1.PodIP, string) {
	sb := g.in.Sandboxes
	if len(sb) == 0 || !sb[0].Ready {
		return nil, ""
	}
	ips := g.in.PodIPs
	if ips == nil && sb[0].IP != "" {
		ips = []string{sb[0].IP}
	}
	primaryV4 := true
	if len(g.in.HostIPs) > 0 {
		if ip := net.ParseIP(g.in.HostIPs[0]); ip != nil && ip.To4() == nil {
			primaryV4 = false
		}
	}
	var out []v1.PodIP
	for _, wantV4 := range []bool{primaryV4, !primaryV4} {
		for _, s := range ips {
			ip := net.ParseIP(s)
			if ip == nil || (ip.To4() != nil) != wantV4 {
				continue
			}
			out = append(out, v1.PodIP{IP: ip.String()})
			break
		}
	}
	if len(out) == 0 {
		return nil, ""
	}
	return out, out[0].IP
}

// setHostIPs sets hostIP and hostIPs from the node's IPs and, for a host-network pod, the
// pod IPs the kubelet derives from them.
func (g *gen) setHostIPs(s *v1.PodStatus) {
	host := g.in.HostIPs
	if len(host) == 0 {
		return
	}
	if len(host) > 2 {
		host = host[:2]
	}
	s.HostIP = host[0]
	s.HostIPs = []v1.HostIP{{IP: host[0]}}
	if len(host) == 2 {
		s.HostIPs = append(s.HostIPs, v1.HostIP{IP: host[1]})
	}
	if !g.pod.Spec.HostNetwork {
		return
	}
	if s.PodIP == "" {
		s.PodIP = host[0]
		s.PodIPs = []v1.PodIP{{IP: s.PodIP}}
	}
	if len(host) == 2 && len(s.PodIPs) == 1 && isV4(s.PodIPs[0].IP) != isV4(host[1]) {
		s.PodIPs = append(s.PodIPs, v1.PodIP{IP: host[1]})
	}
}

func isV4(s string) bool {
	ip := net.ParseIP(s)
	return ip != nil && ip.To4() != nil
}
