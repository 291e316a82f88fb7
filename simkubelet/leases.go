package simkubelet

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// leaseWriter sends the renewal of a node Lease, the PUT every node makes every ten
// seconds, as a plain HTTP request over the agent's HTTP client, with the client's
// content type and rate limiter.
//
// Why: at a thousand nodes these are a hundred requests a second whatever the pods do,
// and client-go's request path costs more than the request. In a CPU profile of 100,000
// pods on 1,000 nodes, renewals through client-go's typed client were 7% of the agent's
// CPU and 12% of what it allocated (some 14 KB a renewal: the URL built from its parts
// three times, the request and its headers cloned by each round tripper, the answer read
// into a new slice). The Get and Create of a Lease the agent does not hold yet stay
// client-go's: they are rare.
type leaseWriter struct {
	client      *http.Client
	base        url.URL // .../apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/
	contentType string
	encoder     runtime.Encoder
	decoder     runtime.Decoder // any media type the server may answer in
	limiter     flowcontrol.RateLimiter
	bufs        sync.Pool // of *bytes.Buffer, for answers
}

// newLeaseWriter returns a leaseWriter for rc (its Host, content type and rate limiter)
// over hc.
func newLeaseWriter(rc *rest.Config, hc *http.Client) (*leaseWriter, error) {
	c := rest.CopyConfig(rc)
	gv := coordinationv1.SchemeGroupVersion
	c.GroupVersion = &gv
	c.APIPath = "/apis"
	c.NegotiatedSerializer = rest.CodecFactoryForGeneratedClient(scheme.Scheme, scheme.Codecs).WithoutConversion()
	if c.ContentType == "" {
		c.ContentType = runtime.ContentTypeJSON
	}
	rcl, err := rest.RESTClientForConfigAndClient(c, hc)
	if err != nil {
		return nil, fmt.Errorf("simkubelet: lease client: %w", err)
	}
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), c.ContentType)
	if !ok {
		return nil, fmt.Errorf("simkubelet: lease client: no serializer for content type %q", c.ContentType)
	}
	base := rcl.Get().Namespace(leaseNamespace).Resource("leases").URL()
	base.Path = strings.TrimSuffix(base.Path, "/") + "/"
	return &leaseWriter{
		client:      hc,
		base:        *base,
		contentType: info.MediaType,
		encoder:     scheme.Codecs.EncoderForVersion(info.Serializer, gv),
		decoder:     scheme.Codecs.UniversalDeserializer(),
		limiter:     rcl.GetRateLimiter(),
		bufs:        sync.Pool{New: func() any { return new(bytes.Buffer) }},
	}, nil
}

// update PUTs l, a Lease the agent read or wrote before (so with its resourceVersion),
// and returns the Lease the server stored. Any answer but 200 is an error: the caller
// reads the Lease again in every case (renewLease), so the error says what happened and
// is not typed.
func (w *leaseWriter) update(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	if w.limiter != nil {
		if err := w.limiter.Wait(ctx); err != nil {
			return nil, fmt.Errorf("lease PUT: client rate limiter: %w", err)
		}
	}
	// The request's body is the request's own, not a pooled buffer: an HTTP transport may
	// still read a body after it has returned the answer (net/http's RoundTripper contract;
	// an HTTP/2 server that answers before reading all of it), and a buffer back in the pool
	// could by then be another renewal's.
	var body bytes.Buffer
	if err := w.encoder.Encode(l, &body); err != nil {
		return nil, fmt.Errorf("lease PUT: encoding it: %w", err)
	}
	u := w.base
	u.Path += l.Name
	u.RawPath = ""
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, "", bytes.NewReader(body.Bytes()))
	if err != nil {
		return nil, fmt.Errorf("lease PUT: %w", err)
	}
	req.URL, req.Host = &u, u.Host
	req.Header = http.Header{"Content-Type": {w.contentType}, "Accept": {w.contentType + ", */*"}}
	resp, err := w.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("lease PUT: %w", err)
	}
	defer resp.Body.Close()
	answer := w.bufs.Get().(*bytes.Buffer)
	defer w.bufs.Put(answer)
	answer.Reset()
	if _, err := answer.ReadFrom(io.LimitReader(resp.Body, 1<<20)); err != nil {
		return nil, fmt.Errorf("lease PUT: reading the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		if s, ok := w.failure(answer.Bytes()); ok {
			return nil, fmt.Errorf("lease PUT: the server answered %s: %s", resp.Status, s.Message)
		}
		return nil, fmt.Errorf("lease PUT: the server answered %s", resp.Status)
	}
	out, _, err := w.decoder.Decode(answer.Bytes(), nil, &coordinationv1.Lease{})
	if err != nil {
		return nil, fmt.Errorf("lease PUT: decoding the answer: %w", err)
	}
	got, ok := out.(*coordinationv1.Lease)
	if !ok {
		return nil, fmt.Errorf("lease PUT: the answer is a %T, not a Lease", out)
	}
	return got, nil
}

// failure is the Status an error answer carries, if it is one.
func (w *leaseWriter) failure(answer []byte) (*metav1.Status, bool) {
	if len(answer) == 0 {
		return nil, false
	}
	out, _, err := w.decoder.Decode(answer, &schema.GroupVersionKind{Version: "v1", Kind: "Status"}, nil)
	s, ok := out.(*metav1.Status)
	return s, err == nil && ok
}
