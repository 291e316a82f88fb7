package statustest

// PatchRecord is one PATCH the Server received.
type PatchRecord struct {
	// Namespace and Name identify the pod the PATCH was for.
	Namespace, Name string
	// Patch is the body as sent.
	Patch []byte
	// Err is what the client got back, nil on success.
	Err error
	// ResourceVersion is the pod's resourceVersion after the request ("" if it was missing).
	ResourceVersion string
}

// Requests returns how many requests of verb the Server received, failed ones included.
func (s *Server) Requests(verb Verb) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[verb]
}

// Patches returns a copy of every PATCH received, in order.
func (s *Server) Patches() []PatchRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]PatchRecord, len(s.patches))
	for i, r := range s.patches {
		r.Patch = append([]byte(nil), r.Patch...)
		out[i] = r
	}
	return out
}

// ResetRequests zeroes the request counts and forgets the recorded patches.
func (s *Server) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.counts)
	s.patches = nil
}
