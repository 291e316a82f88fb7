package kubeclient

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
)

// TestDeletePodOverHTTP: with a clientset's REST client, the DELETE carries grace period 0
// and the UID precondition, a 200's body (the deleted pod) is read to its end and closed,
// and 404 and 409 come back as the apierrors client-go's typed Delete returns, which the
// Manager counts as done.
func TestDeletePodOverHTTP(t *testing.T) {
	for _, tc := range []struct {
		name  string
		code  int
		body  string
		check func(error) bool
	}{
		{"deleted", http.StatusOK, `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"ns","uid":"u1"},"spec":{"containers":[{"name":"` + strings.Repeat("a", 8000) + `"}]}}`,
			func(err error) bool { return err == nil }},
		{"gone", http.StatusNotFound, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"details":{"name":"p","kind":"pods"}}`,
			apierrors.IsNotFound},
		{"recreated", http.StatusConflict, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Conflict","code":409}`,
			apierrors.IsConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var method, path string
			var opts metav1.DeleteOptions
			var read *countingReader
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				method, path = r.Method, r.URL.Path
				if err := json.NewDecoder(r.Body).Decode(&opts); err != nil {
					t.Errorf("DELETE body: %v", err)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.code)
				_, _ = io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			cfg := &rest.Config{Host: srv.URL, APIPath: "/api", ContentConfig: rest.ContentConfig{
				GroupVersion: &v1.SchemeGroupVersion, NegotiatedSerializer: scheme.Codecs.WithoutConversion(), ContentType: "application/json"}}
			cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
				return roundTripFunc(func(r *http.Request) (*http.Response, error) {
					resp, err := rt.RoundTrip(r)
					if resp != nil {
						read = &countingReader{ReadCloser: resp.Body}
						resp.Body = read
					}
					return resp, err
				})
			})
			cs, err := corev1client.NewForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			c := New(cs, "test-agent")
			if c.rest == nil {
				t.Fatal("no REST client taken from a clientset's CoreV1")
			}
			err = c.DeletePod(context.Background(), "ns", "p", "u1")
			if !tc.check(err) {
				t.Fatalf("DeletePod = %v", err)
			}
			if method != http.MethodDelete || path != "/api/v1/namespaces/ns/pods/p" {
				t.Errorf("request %s %s", method, path)
			}
			if opts.GracePeriodSeconds == nil || *opts.GracePeriodSeconds != 0 || opts.Preconditions == nil ||
				opts.Preconditions.UID == nil || *opts.Preconditions.UID != "u1" {
				t.Errorf("delete options %+v, want grace period 0 and UID u1", opts)
			}
			if read == nil || read.n != int64(len(tc.body)) || !read.closed {
				t.Errorf("answer body: %+v, want all %d bytes read and closed", read, len(tc.body))
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// countingReader counts the bytes read from a response body and whether it was closed.
type countingReader struct {
	io.ReadCloser
	n      int64
	closed bool
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingReader) Close() error {
	c.closed = true
	return c.ReadCloser.Close()
}

// TestOneRequestPerCall: with a clientset's REST client, a PATCH or DELETE answered 429
// or 503 with Retry-After is sent once (client-go's Request would resend it up to ten
// times, sleeping inside the call) and comes back as the API error with its delay; the
// DELETE asks for the pod's metadata only.
func TestOneRequestPerCall(t *testing.T) {
	for _, tc := range []struct {
		name, contentType, body string
		code                    int
		check                   func(error) bool
	}{
		{"429 Status", "application/json", `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"TooManyRequests","code":429,"details":{"retryAfterSeconds":2}}`,
			http.StatusTooManyRequests, apierrors.IsTooManyRequests},
		{"429 text", "text/plain", "slow down", http.StatusTooManyRequests, apierrors.IsTooManyRequests},
		{"503 text", "text/plain", "busy", http.StatusServiceUnavailable, apierrors.IsServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var seen []string // method and Accept of each request
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				seen = append(seen, r.Method+" "+r.Header.Get("Accept"))
				w.Header().Set("Content-Type", tc.contentType)
				w.Header().Set("Retry-After", "2")
				w.WriteHeader(tc.code)
				_, _ = io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			cs, err := corev1client.NewForConfig(&rest.Config{Host: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			c := New(cs, "test-agent")
			_, patchErr := c.PatchPodStatus(context.Background(), "ns", "p", []byte(`{}`))
			deleteErr := c.DeletePod(context.Background(), "ns", "p", "u1")
			for _, e := range []struct {
				what string
				err  error
			}{{"PATCH", patchErr}, {"DELETE", deleteErr}} {
				if !tc.check(e.err) {
					t.Errorf("%s: error %v of the wrong kind", e.what, e.err)
				}
				if d, ok := apierrors.SuggestsClientDelay(e.err); !ok || d != 2 {
					t.Errorf("%s: SuggestsClientDelay = %d, %v; want 2, true", e.what, d, ok)
				}
			}
			want := []string{
				"PATCH application/vnd.kubernetes.protobuf,application/json",
				"DELETE " + deleteAccept,
			}
			if diff := cmp.Diff(want, seen); diff != "" {
				t.Errorf("requests (method and Accept) (-want +got):\n%s", diff)
			}
		})
	}
}
