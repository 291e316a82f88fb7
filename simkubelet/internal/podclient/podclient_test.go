package podclient

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/podstatus/podstatus"
	"github.com/podstatus/podstatus/status/kubeclient"
)

// seenRequest is what a test server saw of one request.
type seenRequest struct {
	Method, Path, Query, ContentType, Accept, UserAgent string
	Body                                                string // a DELETE's is decoded DeleteOptions, re-encoded
}

// scriptedServer answers every request with code, contentType and body, and records
// what it saw.
type scriptedServer struct {
	code              int
	contentType, body string
	retryAfter        string

	mu   sync.Mutex
	seen []seenRequest
}

func (s *scriptedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := seenRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
		ContentType: r.Header.Get("Content-Type"), Accept: r.Header.Get("Accept"), UserAgent: r.Header.Get("User-Agent"),
		Body: string(body)}
	if r.Method == http.MethodDelete {
		// client-go encodes DeleteOptions with the codec of its content type; compare
		// what they say.
		var opts metav1.DeleteOptions
		gvk := metav1.SchemeGroupVersion.WithKind("DeleteOptions")
		if _, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, &gvk, &opts); err != nil {
			req.Body = "undecodable: " + err.Error()
		} else {
			opts.TypeMeta = metav1.TypeMeta{}
			b, _ := json.Marshal(&opts)
			req.Body = string(b)
		}
		req.ContentType = "" // JSON here, the config's content type in client-go's
	}
	s.mu.Lock()
	s.seen = append(s.seen, req)
	s.mu.Unlock()
	if s.contentType != "" {
		w.Header().Set("Content-Type", s.contentType)
	}
	if s.retryAfter != "" {
		w.Header().Set("Retry-After", s.retryAfter)
	}
	w.WriteHeader(s.code)
	_, _ = io.WriteString(w, s.body)
}

func (s *scriptedServer) requests() []seenRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.seen
	s.seen = nil
	return out
}

// testConfig is a config for srv with the given content type (JSON or protobuf).
func testConfig(srv *httptest.Server, contentType string) *rest.Config {
	cfg := &rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{ContentType: contentType}, UserAgent: "podstatus-test/1.0"}
	cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	return cfg
}

// bothClients are kubeclient.New over client-go's clientset and New, for cfg.
func bothClients(t *testing.T, cfg *rest.Config) (clientGo *kubeclient.Client, direct *Client) {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := corev1client.NewForConfigAndClient(cfg, hc)
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(cfg, hc, "test-agent")
	if err != nil {
		t.Fatal(err)
	}
	return kubeclient.New(cs, "test-agent"), d
}

// errorFacts are the parts of an error the Manager and its callers look at.
type errorFacts struct {
	Nil        bool
	Reason     metav1.StatusReason
	Code       int32
	Delay      int
	DelayKnown bool
	Message    string
}

func factsOf(err error) errorFacts {
	if err == nil {
		return errorFacts{Nil: true}
	}
	d, ok := apierrors.SuggestsClientDelay(err)
	var code int32
	if s, isStatus := err.(apierrors.APIStatus); isStatus {
		code = s.Status().Code
	}
	return errorFacts{Reason: apierrors.ReasonForError(err), Code: code, Delay: d, DelayKnown: ok, Message: err.Error()}
}

const testPodJSON = `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"ns","uid":"u1","resourceVersion":"7"},` +
	`"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}`

func testPodProtobuf(t *testing.T) string {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		t.Fatal("no protobuf serializer")
	}
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u1", ResourceVersion: "7"},
		Status: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}}}
	p.SetGroupVersionKind(v1.SchemeGroupVersion.WithKind("Pod"))
	b, err := runtime.Encode(info.Serializer, p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDirectMatchesClientGo: for every answer a server can give, New's PATCH and DELETE
// send what kubeclient.New's (client-go's request builder) send, but for the DELETE's
// Accept of a JSON client, and return the same pod or an error with the same reason, code, delay and
// message.
func TestDirectMatchesClientGo(t *testing.T) {
	protoPod := testPodProtobuf(t)
	statusJSON := func(reason metav1.StatusReason, code int) string {
		return `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"pods \"p\" says ` + string(reason) +
			`","reason":"` + string(reason) + `","details":{"name":"p","kind":"pods"},"code":` + strconv.Itoa(code) + `}`
	}
	for _, tc := range []struct {
		name               string
		clientContentType  string // the config's
		code               int
		contentType, body  string
		wantPod, wantError bool
	}{
		{"200 JSON", "application/json", 200, "application/json", testPodJSON, true, false},
		{"200 protobuf", runtime.ContentTypeProtobuf, 200, runtime.ContentTypeProtobuf, protoPod, true, false},
		{"404 Status", "application/json", 404, "application/json", statusJSON(metav1.StatusReasonNotFound, 404), false, true},
		{"409 Status", "application/json", 409, "application/json", statusJSON(metav1.StatusReasonConflict, 409), false, true},
		{"422 Status", "application/json", 422, "application/json", statusJSON(metav1.StatusReasonInvalid, 422), false, true},
		{"403 Status protobuf client", runtime.ContentTypeProtobuf, 403, "application/json", statusJSON(metav1.StatusReasonForbidden, 403), false, true},
		{"500 text", "application/json", 500, "text/plain; charset=utf-8", "  etcd is down\n", false, true},
		{"502 no content type", "application/json", 502, "", "bad gateway", false, true},
		{"503 JSON not a Status", "application/json", 503, "application/json", `{"oops":1}`, false, true},
		{"400 HTML", "application/json", 400, "text/html", "<h1>no</h1>", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &scriptedServer{code: tc.code, contentType: tc.contentType, body: tc.body}
			srv := httptest.NewServer(s)
			defer srv.Close()
			clientGo, direct := bothClients(t, testConfig(srv, tc.clientContentType))
			ctx := context.Background()
			patch := []byte(`{"metadata":{"uid":"u1"},"status":{"phase":"Running"}}`)

			wantPod, wantErr := clientGo.PatchPodStatus(ctx, "ns", "p", patch)
			wantReqs := s.requests()
			gotPod, gotErr := direct.PatchPodStatus(ctx, "ns", "p", patch)
			gotReqs := s.requests()
			if diff := cmp.Diff(wantReqs, gotReqs); diff != "" {
				t.Errorf("PATCH requests differ (-client-go +direct):\n%s", diff)
			}
			if diff := cmp.Diff(factsOf(wantErr), factsOf(gotErr)); diff != "" {
				t.Errorf("PATCH errors differ (-client-go +direct):\n%s", diff)
			}
			if (gotErr != nil) != tc.wantError {
				t.Errorf("PATCH error = %v, want an error: %v", gotErr, tc.wantError)
			}
			if tc.wantPod {
				if gotPod == nil || gotPod.Status.Phase != v1.PodRunning || gotPod.UID != "u1" {
					t.Errorf("PATCH pod = %+v, want the answer's", gotPod)
				}
				if diff := cmp.Diff(wantPod, gotPod); diff != "" {
					t.Errorf("PATCH pods differ (-client-go +direct):\n%s", diff)
				}
			}

			wantErr = clientGo.DeletePod(ctx, "ns", "p", "u1")
			wantReqs = s.requests()
			gotErr = direct.DeletePod(ctx, "ns", "p", "u1")
			gotReqs = s.requests()
			// Both ask for the answer, dropped, as the pod's metadata; the one designed
			// difference: this Client asks a JSON client's in JSON alone.
			for i := range wantReqs {
				if tc.clientContentType == "application/json" {
					wantReqs[i].Accept = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
				}
			}
			if diff := cmp.Diff(wantReqs, gotReqs); diff != "" {
				t.Errorf("DELETE requests differ (-client-go +direct):\n%s", diff)
			}
			if len(gotReqs) != 1 || !strings.Contains(gotReqs[0].Body, `"gracePeriodSeconds":0`) || !strings.Contains(gotReqs[0].Body, `"uid":"u1"`) {
				t.Errorf("DELETE requests %+v, want one with grace period 0 and UID u1", gotReqs)
			}
			if diff := cmp.Diff(factsOf(wantErr), factsOf(gotErr)); diff != "" {
				t.Errorf("DELETE errors differ (-client-go +direct):\n%s", diff)
			}
		})
	}
}

// TestDirectReturnsRetryAfter: a 429 or 503 with Retry-After comes back at once as an
// error carrying the delay (client-go would sleep and resend it inside the call, holding
// the Manager's worker); one request is sent.
func TestDirectReturnsRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		code              int
		contentType, body string
		check             func(error) bool
	}{
		{429, "application/json", `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"TooManyRequests","code":429,"details":{"retryAfterSeconds":3}}`, apierrors.IsTooManyRequests},
		{429, "text/plain", "slow down", apierrors.IsTooManyRequests},
		{503, "text/plain", "busy", apierrors.IsServiceUnavailable},
	} {
		s := &scriptedServer{code: tc.code, contentType: tc.contentType, body: tc.body, retryAfter: "3"}
		srv := httptest.NewServer(s)
		_, direct := bothClients(t, testConfig(srv, "application/json"))
		_, err := direct.PatchPodStatus(context.Background(), "ns", "p", []byte(`{}`))
		srv.Close()
		if !tc.check(err) {
			t.Errorf("%d %s: error %v of the wrong kind", tc.code, tc.body, err)
		}
		if d, ok := apierrors.SuggestsClientDelay(err); !ok || d != 3 {
			t.Errorf("%d %s: SuggestsClientDelay = %d, %v; want 3, true", tc.code, tc.body, d, ok)
		}
		if n := len(s.requests()); n != 1 {
			t.Errorf("%d %s: %d requests, want 1", tc.code, tc.body, n)
		}
	}
}

// TestDirectAnswersDoNotAlias: the pods returned own their bytes; the pooled buffer the
// next answer is read into does not change them.
func TestDirectAnswersDoNotAlias(t *testing.T) {
	for _, ct := range []string{"application/json", runtime.ContentTypeProtobuf} {
		s := &scriptedServer{code: 200, contentType: "application/json", body: testPodJSON}
		if ct == runtime.ContentTypeProtobuf {
			s.contentType, s.body = ct, testPodProtobuf(t)
		}
		srv := httptest.NewServer(s)
		_, direct := bothClients(t, testConfig(srv, ct))
		first, err := direct.PatchPodStatus(context.Background(), "ns", "p", []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		want := first.DeepCopy()
		s.body = strings.Repeat("x", len(s.body))
		s.contentType = "text/plain"
		s.code = 500
		for range 3 {
			_, _ = direct.PatchPodStatus(context.Background(), "ns", "p", []byte(`{}`))
		}
		srv.Close()
		if diff := cmp.Diff(want, first); diff != "" {
			t.Errorf("%s: the first answer's pod changed after later answers (-before +after):\n%s", ct, diff)
		}
	}
}

// TestDirectRefusesBeforeSending: bad names, a failing rate limiter and an answer of an
// unknown media type are errors; the first two send nothing.
func TestDirectRefusesBeforeSending(t *testing.T) {
	s := &scriptedServer{code: 200, contentType: "application/x-unknown", body: "kind: Pod"}
	srv := httptest.NewServer(s)
	defer srv.Close()
	_, direct := bothClients(t, testConfig(srv, "application/json"))
	ctx := context.Background()
	for _, tc := range []struct{ ns, name string }{{"ns", ""}, {"", "p"}, {"ns", "a/b"}, {"..", "p"}, {"ns", "%2F"}} {
		if _, err := direct.PatchPodStatus(ctx, tc.ns, tc.name, []byte(`{}`)); !errors.Is(err, podstatus.ErrInvalidInput) {
			t.Errorf("PATCH %q/%q: %v, want an input error", tc.ns, tc.name, err)
		}
		if err := direct.DeletePod(ctx, tc.ns, tc.name, "u1"); !errors.Is(err, podstatus.ErrInvalidInput) {
			t.Errorf("DELETE %q/%q: %v, want an input error", tc.ns, tc.name, err)
		}
	}
	if n := len(s.requests()); n != 0 {
		t.Errorf("%d requests sent for bad names, want 0", n)
	}

	_, err := direct.PatchPodStatus(ctx, "ns", "p", []byte(`{}`))
	if err == nil || !strings.Contains(err.Error(), "cannot decode") {
		t.Errorf("PATCH answered in an unknown media type: error %v, want one naming the undecodable answer", err)
	}
	if err := direct.DeletePod(ctx, "ns", "p", "u1"); err != nil {
		t.Errorf("DELETE answered in an unknown media type: %v; its answer is not decoded, so it is no error", err)
	}
	s.requests()

	cfg := testConfig(srv, "application/json")
	limitErr := errors.New("limiter says no")
	cfg.RateLimiter = failingLimiter{err: limitErr}
	_, limited := bothClients(t, cfg)
	if _, err := limited.PatchPodStatus(ctx, "ns", "p", []byte(`{}`)); !errors.Is(err, limitErr) {
		t.Errorf("PATCH with a failing rate limiter: %v, want its error", err)
	}
	if err := limited.DeletePod(ctx, "ns", "p", "u1"); !errors.Is(err, limitErr) {
		t.Errorf("DELETE with a failing rate limiter: %v, want its error", err)
	}
	if n := len(s.requests()); n != 0 {
		t.Errorf("%d requests sent past a failing rate limiter, want 0", n)
	}

	for _, tc := range []struct {
		cfg          *rest.Config
		hc           *http.Client
		fieldManager string
		want         string
	}{{nil, http.DefaultClient, "m", "cfg: Required value"},
		{cfg, nil, "m", "hc: Required value"}} {
		_, err := New(tc.cfg, tc.hc, tc.fieldManager)
		if !errors.Is(err, podstatus.ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New: %v, want an input error saying %q", err, tc.want)
		}
	}
}

// TestDirectTransportError: a server that cannot be reached gives client-go's kind of
// error, a *url.Error.
func TestDirectTransportError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	cfg := testConfig(srv, "application/json")
	srv.Close()
	_, direct := bothClients(t, cfg)
	_, err := direct.PatchPodStatus(context.Background(), "ns", "p", []byte(`{}`))
	var ue *url.Error
	if !errors.As(err, &ue) {
		t.Errorf("PATCH to a closed server: %v (%T), want a *url.Error", err, err)
	}
}

// failingLimiter is a rate limiter whose Wait fails.
type failingLimiter struct {
	flowcontrol.RateLimiter
	err error
}

func (l failingLimiter) Wait(context.Context) error { return l.err }

// TestDirectSetsItsUserAgent: the request reaches the HTTP client with the config's
// User-Agent already set, so client-go's user-agent round tripper does not clone it to set
// it; the server sees the same header either way (TestDirectMatchesClientGo).
func TestDirectSetsItsUserAgent(t *testing.T) {
	s := &scriptedServer{code: 200, contentType: "application/json", body: testPodJSON}
	srv := httptest.NewServer(s)
	defer srv.Close()
	cfg := testConfig(srv, "application/json")
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var handed []string
	next := hc.Transport
	hc.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		handed = append(handed, r.Header.Get("User-Agent"))
		return next.RoundTrip(r)
	})
	d, err := New(cfg, hc, "test-agent")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.PatchPodStatus(context.Background(), "ns", "p", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := d.DeletePod(context.Background(), "ns", "p", "u1"); err != nil {
		t.Fatal(err)
	}
	want := []string{cfg.UserAgent, cfg.UserAgent}
	if diff := cmp.Diff(want, handed); diff != "" {
		t.Errorf("User-Agent of the requests handed to the client (-want +got):\n%s", diff)
	}
	for _, r := range s.requests() {
		if r.UserAgent != cfg.UserAgent {
			t.Errorf("%s: the server saw User-Agent %q, want %q", r.Method, r.UserAgent, cfg.UserAgent)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
