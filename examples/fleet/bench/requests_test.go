package bench

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestParseRequestTotal(t *testing.T) {
	text := `# HELP apiserver_request_total [STABLE] Counter of apiserver requests
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="status",verb="PATCH",version="v1"} 10000
apiserver_request_total{code="404",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="DELETE",version="v1"} 3
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="DELETE",version="v1"} 7
apiserver_request_total{code="200",component="apiserver",dry_run="All",group="",resource="pods",scope="resource",subresource="",verb="DELETE",version="v1"} 5
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="",scope="",subresource="/metrics",verb="GET",version=""} 2
apiserver_request_total{code="200",component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="resource",subresource="",verb="PUT",version="v1"} 1.5e+01
apiserver_request_duration_seconds_bucket{le="0.1"} 4
`
	got, err := parseRequestTotal(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	want := RequestCounts{
		{Verb: "PATCH", Resource: "pods", Subresource: "status", Code: "200"}: 10000,
		{Verb: "DELETE", Resource: "pods", Code: "404"}:                       3,
		{Verb: "DELETE", Resource: "pods", Code: "200"}:                       7,
		{Verb: "PUT", Resource: "leases", Code: "200"}:                        15,
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%v: got %v, want %v", k, got[k], v)
		}
	}
	if s := got.Sum("DELETE", "pods", "-"); s != 10 {
		t.Errorf("Sum(DELETE pods) = %v, want 10", s)
	}
	if s := got.Sum("", "pods", ""); s != 10010 {
		t.Errorf("Sum(pods) = %v, want 10010", s)
	}
}

func TestParseLabelsEscapes(t *testing.T) {
	got, err := parseLabels(`a="x\"y",b="back\\slash",c=""`)
	if err != nil {
		t.Fatal(err)
	}
	if got["a"] != `x"y` || got["b"] != `back\slash` || got["c"] != "" || len(got) != 3 {
		t.Errorf("got %q", got)
	}
	if _, err := parseLabels(`a="unterminated`); err == nil {
		t.Error("an unterminated value parsed")
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		method, url, ctype string
		want               RequestKey
		ok                 bool
	}{
		{"POST", "/api/v1/namespaces/ns/pods", "", RequestKey{Verb: "POST", Resource: "pods"}, true},
		{"GET", "/api/v1/namespaces/ns/pods?labelSelector=x", "", RequestKey{Verb: "LIST", Resource: "pods"}, true},
		{"GET", "/api/v1/namespaces/ns/pods?watch=true", "", RequestKey{Verb: "WATCH", Resource: "pods"}, true},
		{"GET", "/api/v1/namespaces/ns/pods/p", "", RequestKey{Verb: "GET", Resource: "pods"}, true},
		{"PATCH", "/api/v1/namespaces/ns/pods/p/status", "application/strategic-merge-patch+json", RequestKey{Verb: "PATCH", Resource: "pods", Subresource: "status"}, true},
		{"PATCH", "/api/v1/nodes/n/status", "application/apply-patch+yaml", RequestKey{Verb: "APPLY", Resource: "nodes", Subresource: "status"}, true},
		{"DELETE", "/api/v1/namespaces/ns/pods/p", "", RequestKey{Verb: "DELETE", Resource: "pods"}, true},
		{"DELETE", "/api/v1/namespaces/ns/pods", "", RequestKey{Verb: "DELETECOLLECTION", Resource: "pods"}, true},
		{"POST", "/api/v1/namespaces", "", RequestKey{Verb: "POST", Resource: "namespaces"}, true},
		{"GET", "/api/v1/namespaces/ns", "", RequestKey{Verb: "GET", Resource: "namespaces"}, true},
		{"PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n", "", RequestKey{Verb: "PUT", Resource: "leases"}, true},
		{"GET", "/metrics", "", RequestKey{}, false},
		{"GET", "/version", "", RequestKey{}, false},
	} {
		req := httptest.NewRequest(tc.method, tc.url, nil)
		if tc.ctype != "" {
			req.Header.Set("Content-Type", tc.ctype)
		}
		got, ok := classify(req)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s %s: got %v %v, want %v %v", tc.method, tc.url, got, ok, tc.want, tc.ok)
		}
	}
}

func TestRequestCounterCountsByCode(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/missing") {
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	rc := &requestCounter{next: http.DefaultTransport, counts: RequestCounts{}}
	c := &http.Client{Transport: rc}
	for _, p := range []string{"/api/v1/namespaces/ns/pods/a", "/api/v1/namespaces/ns/pods/missing", "/metrics"} {
		resp, err := c.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	got := rc.snapshot()
	want := RequestCounts{
		{Verb: "GET", Resource: "pods", Code: "200"}: 1,
		{Verb: "GET", Resource: "pods", Code: "404"}: 1,
	}
	if len(got) != len(want) || got[RequestKey{Verb: "GET", Resource: "pods", Code: "200"}] != 1 || got[RequestKey{Verb: "GET", Resource: "pods", Code: "404"}] != 1 {
		t.Errorf("got %v, want %v", got, want)
	}
	if d := got.minus(RequestCounts{{Verb: "GET", Resource: "pods", Code: "404"}: 2}); len(d) != 1 {
		t.Errorf("minus kept a negative row: %v", d)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
