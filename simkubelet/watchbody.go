package simkubelet

import (
	"bufio"
	"io"
	"net/http"
	"strings"
)

// watchReadSize is the read buffer of a watch's response body (see bufferWatches).
const watchReadSize = 64 << 10

// bufferWatches wraps rt so that the body of a watch's answer is read through a buffer of
// watchReadSize.
//
// Why: client-go's watch decoder reads each event with two small reads (its 4-byte
// length, then the event), and over HTTP/2 every 4 KiB the application has read sends
// the server a WINDOW_UPDATE, each its own write system call (golang.org/x/net/http2's
// transportResponseBody.Read and inflowMinRefresh). Read through the buffer, the events
// that arrived together are taken from the stream in one read, and acknowledged in one
// write.
func bufferWatches(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err != nil || req.Method != http.MethodGet || !isWatch(req.URL.RawQuery) {
			return resp, err
		}
		resp.Body = bufferedBody{Reader: bufio.NewReaderSize(resp.Body, watchReadSize), Closer: resp.Body}
		return resp, nil
	})
}

// isWatch reports whether a query asks for a watch (watch=true or watch=1, as
// client-go's ListOptions encode it), without parsing it into a map: every request of the
// agent passes here.
func isWatch(rawQuery string) bool {
	for rawQuery != "" {
		var param string
		param, rawQuery, _ = strings.Cut(rawQuery, "&")
		if param == "watch=true" || param == "watch=1" {
			return true
		}
	}
	return false
}

// bufferedBody is a response body read through a buffer.
type bufferedBody struct {
	*bufio.Reader
	io.Closer
}
