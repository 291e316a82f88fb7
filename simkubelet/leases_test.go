package simkubelet

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/ptr"
)

// leaseServer answers PUTs of Leases as the API server does (the Lease with a new
// resourceVersion, in the request's content type), or with code and body when code is
// not 200, and records what it was sent.
type leaseServer struct {
	code        int
	contentType string
	body        string

	mu   sync.Mutex
	seen []leaseRequest
}

type leaseRequest struct {
	method, path, contentType string
	lease                     *coordinationv1.Lease
}

func (s *leaseServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := leaseRequest{method: r.Method, path: r.URL.Path, contentType: r.Header.Get("Content-Type")}
	out, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
	if l, ok := out.(*coordinationv1.Lease); err == nil && ok {
		req.lease = l
	}
	s.mu.Lock()
	s.seen = append(s.seen, req)
	s.mu.Unlock()
	if s.code != http.StatusOK || req.lease == nil {
		w.Header().Set("Content-Type", s.contentType)
		w.WriteHeader(s.code)
		_, _ = io.WriteString(w, s.body)
		return
	}
	stored := req.lease.DeepCopy()
	stored.ResourceVersion += "1"
	info, _ := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), req.contentType)
	w.Header().Set("Content-Type", info.MediaType)
	_ = scheme.Codecs.EncoderForVersion(info.Serializer, coordinationv1.SchemeGroupVersion).Encode(stored, w)
}

func (s *leaseServer) requests() []leaseRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.seen
	s.seen = nil
	return out
}

func testLease() *coordinationv1.Lease {
	renew := metav1.NewMicroTime(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", Namespace: leaseNamespace, ResourceVersion: "7"},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To("node-1"),
			LeaseDurationSeconds: ptr.To[int32](40),
			RenewTime:            &renew,
		},
	}
}

// TestLeaseWriterPUTsTheLease: in both content types, update sends one PUT of the Lease,
// as it is, to its URL (under the config's path prefix), and returns the Lease the server
// answered with.
func TestLeaseWriterPUTsTheLease(t *testing.T) {
	for _, contentType := range []string{runtime.ContentTypeProtobuf, runtime.ContentTypeJSON} {
		s := &leaseServer{code: http.StatusOK}
		srv := httptest.NewServer(s)
		rc := &rest.Config{Host: srv.URL + "/prefix", ContentConfig: rest.ContentConfig{ContentType: contentType}}
		rc.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
		hc, err := rest.HTTPClientFor(rc)
		if err != nil {
			t.Fatal(err)
		}
		w, err := newLeaseWriter(rc, hc)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // the second time with pooled buffers
			sent := testLease()
			got, err := w.update(context.Background(), sent)
			if err != nil {
				t.Fatalf("%s: update: %v", contentType, err)
			}
			reqs := s.requests()
			if len(reqs) != 1 {
				t.Fatalf("%s: %d requests, want 1", contentType, len(reqs))
			}
			r := reqs[0]
			if r.method != http.MethodPut || r.path != "/prefix/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-1" || r.contentType != contentType {
				t.Errorf("%s: sent %s %s (%s)", contentType, r.method, r.path, r.contentType)
			}
			if r.lease == nil || r.lease.ResourceVersion != "7" || !r.lease.Spec.RenewTime.Equal(sent.Spec.RenewTime) || *r.lease.Spec.HolderIdentity != "node-1" {
				t.Errorf("%s: the server got the Lease %+v, want %+v", contentType, r.lease, sent)
			}
			if got.ResourceVersion != "71" || got.Name != "node-1" || !got.Spec.RenewTime.Equal(sent.Spec.RenewTime) {
				t.Errorf("%s: update returned %+v, want the server's Lease (resourceVersion 71)", contentType, got)
			}
		}
		srv.Close()
	}
}

// TestLeaseWriterErrors: an answer other than 200 is an error that says the answer and,
// when it is a Status, its message; a failing rate limiter sends nothing.
func TestLeaseWriterErrors(t *testing.T) {
	for _, tc := range []struct {
		code              int
		contentType, body string
		want              string
	}{
		{409, "application/json", `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Conflict","code":409,"message":"the object has been modified"}`,
			"lease PUT: the server answered 409 Conflict: the object has been modified"},
		{404, "application/json", `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"leases \"node-1\" not found"}`,
			`lease PUT: the server answered 404 Not Found: leases "node-1" not found`},
		{500, "text/plain", "etcd is down", "lease PUT: the server answered 500 Internal Server Error"},
	} {
		s := &leaseServer{code: tc.code, contentType: tc.contentType, body: tc.body}
		srv := httptest.NewServer(s)
		rc := &rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{ContentType: runtime.ContentTypeProtobuf}}
		rc.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
		hc, _ := rest.HTTPClientFor(rc)
		w, err := newLeaseWriter(rc, hc)
		if err != nil {
			t.Fatal(err)
		}
		got, err := w.update(context.Background(), testLease())
		if err == nil || err.Error() != tc.want || got != nil {
			t.Errorf("%d: update = %v, %v; want nil, %q", tc.code, got, err, tc.want)
		}
		srv.Close()
	}

	s := &leaseServer{code: http.StatusOK}
	srv := httptest.NewServer(s)
	defer srv.Close()
	rc := &rest.Config{Host: srv.URL, RateLimiter: flowcontrol.NewFakeNeverRateLimiter()}
	hc, _ := rest.HTTPClientFor(rc)
	w, err := newLeaseWriter(rc, hc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := w.update(ctx, testLease()); err == nil || !strings.Contains(err.Error(), "rate limiter") {
		t.Errorf("update with a limiter that never lets a request through: %v, want a rate limiter error", err)
	}
	if n := len(s.requests()); n != 0 {
		t.Errorf("%d requests sent past the rate limiter", n)
	}
}
