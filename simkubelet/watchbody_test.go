package simkubelet

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestBufferWatches: the body of a watch's answer (watch=true or watch=1) is read through
// a buffer, every other answer's is the transport's own; either way the caller reads the
// same bytes, and closing the buffered body closes the transport's.
func TestBufferWatches(t *testing.T) {
	const payload = "\x00\x00\x00\x05event\x00\x00\x00\x03two"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, payload)
	}))
	defer srv.Close()

	var closed []string
	inner := roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err == nil {
			resp.Body = closeRecorder{ReadCloser: resp.Body, name: req.URL.RawQuery, closed: &closed}
		}
		return resp, err
	})
	client := &http.Client{Transport: bufferWatches(inner)}
	for _, tc := range []struct {
		query    string
		buffered bool
	}{
		{"watch=true&resourceVersion=7", true},
		{"watch=1", true},
		{"resourceVersion=7", false},
		{"watch=false", false},
		{"allowWatchBookmarks=true&watch=true", true},
		{"", false},
	} {
		resp, err := client.Get(srv.URL + "/api/v1/pods?" + tc.query)
		if err != nil {
			t.Fatalf("%q: %v", tc.query, err)
		}
		_, isBuffered := resp.Body.(bufferedBody)
		if isBuffered != tc.buffered {
			t.Errorf("%q: body %T, buffered %v, want %v", tc.query, resp.Body, isBuffered, tc.buffered)
		}
		if isBuffered {
			if size := resp.Body.(bufferedBody).Size(); size != watchReadSize {
				t.Errorf("%q: buffer of %d bytes, want %d", tc.query, size, watchReadSize)
			}
		}
		// Read as client-go's watch decoder reads: a 4-byte length, then the event.
		var got strings.Builder
		for {
			var n [4]byte
			if _, err := io.ReadFull(resp.Body, n[:]); err != nil {
				break
			}
			ev := make([]byte, n[3])
			if _, err := io.ReadFull(resp.Body, ev); err != nil {
				t.Fatalf("%q: reading an event: %v", tc.query, err)
			}
			got.WriteString(string(n[:]) + string(ev))
		}
		if got.String() != payload {
			t.Errorf("%q: read %q, want %q", tc.query, got.String(), payload)
		}
		closed = closed[:0]
		if err := resp.Body.Close(); err != nil {
			t.Errorf("%q: Close: %v", tc.query, err)
		}
		if len(closed) != 1 || closed[0] != tc.query {
			t.Errorf("%q: closing the body closed %q, want the transport's body", tc.query, closed)
		}
	}
}

// closeRecorder records that a body was closed.
type closeRecorder struct {
	io.ReadCloser
	name   string
	closed *[]string
}

func (c closeRecorder) Close() error {
	*c.closed = append(*c.closed, c.name)
	return c.ReadCloser.Close()
}
