package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"

	"k8s.io/client-go/kubernetes"
)

// RequestKey is one row of the API server's apiserver_request_total counter, with the
// labels a node agent's cost is read from.
type RequestKey struct {
	// Verb as the API server reports it: GET, LIST, WATCH, POST, PUT, PATCH, APPLY,
	// DELETE, DELETECOLLECTION.
	Verb string `json:"verb"`
	// Resource is the plural resource name ("pods", "nodes", "leases").
	Resource string `json:"resource"`
	// Subresource is "status", "binding", … or empty.
	Subresource string `json:"subresource,omitempty"`
	// Code is the HTTP status code of the response, as a string ("200", "404").
	Code string `json:"code"`
}

func (k RequestKey) String() string {
	r := k.Resource
	if k.Subresource != "" {
		r += "/" + k.Subresource
	}
	return fmt.Sprintf("%s %s %s", k.Verb, r, k.Code)
}

// RequestCounts counts requests by RequestKey.
type RequestCounts map[RequestKey]float64

// Sum returns the requests whose key matches verb, resource and subresource; an empty
// argument matches anything, except subresource "-" which matches only the main
// resource.
func (c RequestCounts) Sum(verb, resource, subresource string) float64 {
	var n float64
	for k, v := range c {
		if verb != "" && k.Verb != verb || resource != "" && k.Resource != resource {
			continue
		}
		if subresource == "-" && k.Subresource != "" || subresource != "" && subresource != "-" && k.Subresource != subresource {
			continue
		}
		n += v
	}
	return n
}

// Keys returns the keys in a stable order: resource, subresource, verb, code.
func (c RequestCounts) Keys() []RequestKey {
	keys := make([]RequestKey, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.Resource != b.Resource {
			return a.Resource < b.Resource
		}
		if a.Subresource != b.Subresource {
			return a.Subresource < b.Subresource
		}
		if a.Verb != b.Verb {
			return a.Verb < b.Verb
		}
		return a.Code < b.Code
	})
	return keys
}

// minus returns c - d, dropping rows that come out zero or negative (a negative row
// means the bench's own count and the server's disagree about a request in flight at a
// scrape, such as a watch still open).
func (c RequestCounts) minus(d RequestCounts) RequestCounts {
	out := RequestCounts{}
	for k, v := range c {
		if r := v - d[k]; r > 0.5 {
			out[k] = r
		}
	}
	return out
}

// scrapeRequests reads /metrics from the API server and returns apiserver_request_total
// for resource requests (non-resource requests such as /metrics itself are left out).
func scrapeRequests(ctx context.Context, cs kubernetes.Interface) (RequestCounts, error) {
	body, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").Stream(ctx)
	if err != nil {
		return nil, fmt.Errorf("scraping the API server's /metrics: %w", err)
	}
	defer body.Close()
	c, err := parseRequestTotal(body)
	if err != nil {
		return nil, fmt.Errorf("parsing the API server's /metrics: %w", err)
	}
	return c, nil
}

// parseRequestTotal extracts apiserver_request_total from the Prometheus text format.
func parseRequestTotal(r io.Reader) (RequestCounts, error) {
	const name = "apiserver_request_total{"
	c := RequestCounts{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) {
			continue
		}
		end := strings.LastIndexByte(line, '}')
		if end < 0 {
			return nil, fmt.Errorf("malformed line %q", line)
		}
		labels, err := parseLabels(line[len(name):end])
		if err != nil {
			return nil, fmt.Errorf("line %q: %w", line, err)
		}
		fields := strings.Fields(line[end+1:])
		if len(fields) == 0 {
			return nil, fmt.Errorf("line %q: no value", line)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("line %q: %w", line, err)
		}
		if labels["resource"] == "" || labels["dry_run"] != "" {
			continue
		}
		k := RequestKey{Verb: labels["verb"], Resource: labels["resource"], Subresource: labels["subresource"], Code: labels["code"]}
		c[k] += v
	}
	return c, sc.Err()
}

// parseLabels parses `a="x",b="y"` with the text format's escapes (\\, \", \n).
func parseLabels(s string) (map[string]string, error) {
	m := map[string]string{}
	for len(s) > 0 {
		eq := strings.IndexByte(s, '=')
		if eq < 0 || eq+1 >= len(s) || s[eq+1] != '"' {
			return nil, fmt.Errorf("malformed labels at %q", s)
		}
		key := strings.TrimSpace(s[:eq])
		s = s[eq+2:]
		var val strings.Builder
		i := 0
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
				if s[i] == 'n' {
					val.WriteByte('\n')
					continue
				}
			}
			val.WriteByte(s[i])
		}
		if i >= len(s) {
			return nil, fmt.Errorf("unterminated label value for %q", key)
		}
		m[key] = val.String()
		s = strings.TrimPrefix(s[i+1:], ",")
	}
	return m, nil
}

// requestCounter is an http.RoundTripper that counts the bench's own requests with the
// API server's labels, so that they can be taken out of the server's counters and what
// remains is the node agent's (and the API server's own few background requests).
type requestCounter struct {
	next http.RoundTripper

	mu     sync.Mutex
	counts RequestCounts
}

func (rc *requestCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := rc.next.RoundTrip(req)
	key, ok := classify(req)
	if !ok {
		return resp, err
	}
	if err != nil {
		// No response: the server may or may not have counted it; the bench counts
		// nothing and a timed-out request shows as the agent's.
		return resp, err
	}
	key.Code = strconv.Itoa(resp.StatusCode)
	if key.Verb == "WATCH" && resp.StatusCode == http.StatusOK {
		// The server counts a watch when it ends; so does the bench.
		resp.Body = &countOnClose{ReadCloser: resp.Body, count: func() { rc.add(key) }}
		return resp, err
	}
	rc.add(key)
	return resp, err
}

func (rc *requestCounter) add(key RequestKey) {
	rc.mu.Lock()
	rc.counts[key]++
	rc.mu.Unlock()
}

// countOnClose counts a request when its response body is closed.
type countOnClose struct {
	io.ReadCloser
	once  sync.Once
	count func()
}

func (c *countOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.once.Do(c.count)
	return err
}

func (rc *requestCounter) snapshot() RequestCounts {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make(RequestCounts, len(rc.counts))
	for k, v := range rc.counts {
		out[k] = v
	}
	return out
}

// classify maps a request to the verb, resource and subresource the API server would
// count it under (k8s.io/apiserver/pkg/endpoints/metrics CleanVerb and
// k8s.io/apiserver/pkg/endpoints/request RequestInfoFactory). Non-resource paths are
// not counted.
func classify(req *http.Request) (RequestKey, bool) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return RequestKey{}, false
	}
	if len(parts) > 0 && parts[0] == "watch" {
		parts = parts[1:]
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	if len(parts) == 0 {
		return RequestKey{}, false
	}
	key := RequestKey{Resource: parts[0]}
	named := len(parts) >= 2
	if len(parts) >= 3 {
		key.Subresource = parts[2]
	}
	switch req.Method {
	case http.MethodGet:
		w := strings.ToLower(req.URL.Query().Get("watch"))
		switch {
		case w != "" && w != "0" && w != "false":
			key.Verb = "WATCH"
		case named:
			key.Verb = "GET"
		default:
			key.Verb = "LIST"
		}
	case http.MethodPatch:
		key.Verb = "PATCH"
		if req.Header.Get("Content-Type") == "application/apply-patch+yaml" {
			key.Verb = "APPLY"
		}
	case http.MethodDelete:
		key.Verb = "DELETE"
		if !named {
			key.Verb = "DELETECOLLECTION"
		}
	default:
		key.Verb = req.Method
	}
	return key, true
}
