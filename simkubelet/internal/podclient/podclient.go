// Package podclient is the simulated kubelet's status.Client: GetPod through client-go,
// and the two requests of every pod's life, the status PATCH and the kubelet's DELETE,
// as plain HTTP requests over the clientset's http.Client instead of client-go's
// rest.Request.
//
// Those two requests are most of what a node agent sends, and client-go's request path
// costs more than the request: per call it rebuilds the URL from its parts twice (once
// more for its metrics' URL template), encodes the options as query parameters through
// reflection, reads the whole answer into a new slice and decodes it through a negotiated
// decoder: some 10 KB of garbage per request (a fleet of simulated nodes allocated 1.33 GB
// over 30,000 such requests through client-go, 1.02 GB through this Client). Here the URL
// is a prefix plus the pod's namespace and name, the answer is read into a pooled buffer,
// and the pod is decoded from it by cfg's decoder for the answer's media type.
//
// It is the simulated kubelet's alone (one more request path to keep equal to
// client-go's is a cost a library user should not carry); a node agent that needs the
// two behaviours that matter, no retry inside the call and a DELETE answered with the
// pod's metadata only, gets them from kubeclient.New.
package podclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes/scheme"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/podstatus/podstatus"
	"github.com/podstatus/podstatus/status"
	"github.com/podstatus/podstatus/status/kubeclient"
)

// New returns a Client for the API server of cfg, reached through hc
// (rest.HTTPClientFor(cfg), or a client shared with the caller's clientset).
//
// What the requests carry is the same as kubeclient.New's, but for the DELETE's Accept
// for a JSON client: it asks for the deleted pod's metadata in JSON only. The errors are
// the same: a failure's metav1.Status becomes its apierrors.StatusError
// (apierrors.FromObject), and an answer that is not one becomes
// apierrors.NewGenericServerResponse, with the Retry-After header's delay, as client-go's
// Request.transformResponse does; nothing is retried inside the call (the Manager's
// retry waits for the delay, apierrors.SuggestsClientDelay, without holding a worker).
// client-go's Request logs the server's warning headers; this Client does not.
//
// cfg is used as client-go's core/v1 client uses it: its GroupVersion, APIPath and, when
// unset, NegotiatedSerializer are set to core/v1's; its ContentType and
// AcceptContentTypes choose what the answers are encoded in (Accept); its RateLimiter, or
// QPS and Burst, limit these requests as they limit client-go's. fieldManager is as for
// kubeclient.New (empty means kubeclient.DefaultFieldManager). A nil cfg or hc is an
// error matching podstatus.ErrInvalidInput.
func New(cfg *rest.Config, hc *http.Client, fieldManager string) (*Client, error) {
	var errs field.ErrorList
	for _, p := range [...]struct {
		name    string
		missing bool
	}{{"cfg", cfg == nil}, {"hc", hc == nil}} {
		if p.missing {
			errs = append(errs, field.Required(field.NewPath(p.name), ""))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("podclient: New: %w", &podstatus.InputError{Errs: errs})
	}
	if fieldManager == "" {
		fieldManager = kubeclient.DefaultFieldManager
	}
	c := rest.CopyConfig(cfg)
	gv := v1.SchemeGroupVersion
	c.GroupVersion = &gv
	c.APIPath = "/api"
	if c.NegotiatedSerializer == nil {
		c.NegotiatedSerializer = rest.CodecFactoryForGeneratedClient(scheme.Scheme, scheme.Codecs).WithoutConversion()
	}
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	rc, err := rest.RESTClientForConfigAndClient(c, hc)
	if err != nil {
		return nil, fmt.Errorf("podclient: REST client for %s: %w", cfg.Host, err)
	}
	// The API root with its version: the URL of a request that names nothing.
	base := rc.Get().URL()
	negotiator := runtime.NewClientNegotiator(c.NegotiatedSerializer, gv)
	decoders := map[string]runtime.Decoder{}
	for _, info := range c.NegotiatedSerializer.SupportedMediaTypes() {
		if d, err := negotiator.Decoder(info.MediaType, nil); err == nil {
			decoders[info.MediaType] = d
		}
	}
	accept := "application/json, */*"
	switch {
	case c.AcceptContentTypes != "":
		accept = c.AcceptContentTypes
	case c.ContentType != "":
		accept = c.ContentType + ", */*"
	}
	deleteAccept := metadataJSON + ",application/json"
	if c.ContentType == runtime.ContentTypeProtobuf {
		deleteAccept = metadataProtobuf + "," + deleteAccept
	}
	return &Client{Client: kubeclient.New(corev1client.New(rc), fieldManager), direct: &direct{
		client:       hc,
		base:         *base,
		patchQuery:   url.Values{"fieldManager": {fieldManager}}.Encode(),
		accept:       accept,
		deleteAccept: deleteAccept,
		decoders:     decoders,
		limiter:      rc.GetRateLimiter(),
		bufs:         sync.Pool{New: func() any { return new(bytes.Buffer) }},
		userAgent:    cfg.UserAgent,
	}}, nil
}

// Client is a status.Client and status.PodDeleter: GetPod is kubeclient's, PatchPodStatus
// and DeletePod are plain HTTP requests. It is safe for concurrent use.
type Client struct {
	*kubeclient.Client
	direct *direct
}

var (
	_ status.Client     = (*Client)(nil)
	_ status.PodDeleter = (*Client)(nil)
)

// PatchPodStatus sends patch as a strategic-merge PATCH of the pod's status subresource,
// with the Client's field manager, and returns the pod the server stored.
func (c *Client) PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	return c.direct.patchStatus(ctx, namespace, name, patch)
}

// DeletePod deletes the pod with grace period 0 and its UID as a precondition, as
// kubeclient.Client.DeletePod does, asking for the deleted pod's metadata only.
func (c *Client) DeletePod(ctx context.Context, namespace, name string, uid types.UID) error {
	return c.direct.deletePod(ctx, namespace, name, uid)
}

// The media types of a pod's metadata alone (PartialObjectMetadata), as
// k8s.io/client-go/metadata asks for them.
const (
	metadataProtobuf = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
	metadataJSON     = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
)

// direct sends a Client's PATCH and DELETE as plain HTTP requests (see
// New). It is safe for concurrent use.
type direct struct {
	client       *http.Client
	base         url.URL                    // the API root, e.g. https://host/api/v1
	patchQuery   string                     // fieldManager=...
	accept       string                     // of the PATCH
	deleteAccept string                     // of the DELETE: the deleted pod's metadata only (deletePod)
	decoders     map[string]runtime.Decoder // by media type; read-only
	limiter      flowcontrol.RateLimiter    // nil: none
	bufs         sync.Pool                  // of *bytes.Buffer, for answers
	// userAgent is the config's User-Agent, "" for none. The request carries it itself:
	// client-go's user-agent round tripper (k8s.io/client-go/transport, round_trippers.go)
	// then passes it on as it is instead of cloning the request to set it.
	userAgent string
}

// maxPooledAnswer is the largest answer buffer put back into the pool: a pod is some
// 4–10 KB, and one outsized answer should not stay allocated for good.
const maxPooledAnswer = 1 << 20

// maxErrorText bounds the text of an answer that is not a Status in the error it becomes,
// as client-go's Request does (maxUnstructuredResponseTextBytes).
const maxErrorText = 2048

func (d *direct) patchStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	var pod *v1.Pod
	err := d.do(ctx, http.MethodPatch, namespace, name, "/status", d.patchQuery,
		string(types.StrategicMergePatchType), d.accept, patch,
		func(dec runtime.Decoder, body []byte) error {
			if dec == nil {
				return fmt.Errorf("podclient: the answer to PATCH pod %s/%s status has a media type this client cannot decode", namespace, name)
			}
			out, _, err := dec.Decode(body, nil, &v1.Pod{})
			if err != nil {
				return fmt.Errorf("podclient: decoding the answer to PATCH pod %s/%s status: %w", namespace, name, err)
			}
			p, ok := out.(*v1.Pod)
			if !ok {
				return fmt.Errorf("podclient: the answer to PATCH pod %s/%s status is a %T, not a pod", namespace, name, out)
			}
			pod = p
			return nil
		})
	return pod, err
}

func (d *direct) deletePod(ctx context.Context, namespace, name string, uid types.UID) error {
	opts := metav1.DeleteOptions{GracePeriodSeconds: new(int64), Preconditions: metav1.NewUIDPreconditions(string(uid))}
	opts.TypeMeta = metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"}
	body, err := json.Marshal(opts)
	if err != nil {
		return fmt.Errorf("podclient: encoding the DeleteOptions of pod %s/%s: %w", namespace, name, err)
	}
	// The answer, the deleted pod, is read into a pooled buffer and dropped, so it is
	// asked for as its metadata only: the API server converts any answer of a DELETE to
	// what Accept names (transformResponseObject in
	// k8s.io/apiserver/pkg/endpoints/handlers/delete.go) and then neither encodes nor
	// sends the pod's spec and status: for a running one-container pod in protobuf, 1,729
	// bytes instead of 2,619 (managedFields are most of what is left). A failure's Status
	// is not converted: the last, plain application/json serves it, as for the metadata
	// client.
	return d.do(ctx, http.MethodDelete, namespace, name, "", "", "application/json", d.deleteAccept, body, nil)
}

// do sends method to the pod's URL (plus suffix and query) with body, asking for an
// answer in accept's media types, reads the whole answer into a pooled buffer and, for a
// 2xx, hands use (if not nil) the decoder for its media type (nil if it has none) and the
// bytes, valid only during the call. Other answers become errors as client-go's Request
// makes them (errorFrom).
func (d *direct) do(ctx context.Context, method, namespace, name, suffix, query, contentType, accept string, body []byte, use func(runtime.Decoder, []byte) error) error {
	var errs field.ErrorList
	for _, p := range [...]struct{ name, v string }{{"namespace", namespace}, {"name", name}} {
		if p.v == "" {
			errs = append(errs, field.Required(field.NewPath(p.name), ""))
		} else if msgs := content.IsPathSegmentName(p.v); len(msgs) > 0 {
			errs = append(errs, field.Invalid(field.NewPath(p.name), p.v, strings.Join(msgs, "; ")))
		}
	}
	if len(errs) > 0 {
		// What client-go's Request refuses before sending (its namespace and name checks).
		return fmt.Errorf("podclient: %s pod: %w", method, &podstatus.InputError{Errs: errs})
	}
	if d.limiter != nil {
		if err := d.limiter.Wait(ctx); err != nil {
			return fmt.Errorf("podclient: %s pod %s/%s: client rate limiter: %w", method, namespace, name, err)
		}
	}
	u := d.base
	u.Path = d.base.Path + "/namespaces/" + namespace + "/pods/" + name + suffix
	u.RawPath = ""
	u.RawQuery = query
	req, err := http.NewRequestWithContext(ctx, method, "", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("podclient: %s pod %s/%s: %w", method, namespace, name, err)
	}
	req.URL, req.Host = &u, u.Host
	req.Header = http.Header{"Content-Type": {contentType}, "Accept": {accept}}
	if d.userAgent != "" {
		req.Header["User-Agent"] = []string{d.userAgent}
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return err // a *url.Error, as client-go's
	}
	defer resp.Body.Close()
	buf := d.bufs.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= maxPooledAnswer {
			d.bufs.Put(buf)
		}
	}()
	if resp.ContentLength > 0 && resp.ContentLength <= maxPooledAnswer {
		buf.Grow(int(resp.ContentLength))
	}
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return fmt.Errorf("podclient: reading the answer to %s pod %s/%s: %w", method, namespace, name, err)
	}
	dec := d.decoderFor(resp)
	if resp.StatusCode < http.StatusOK || resp.StatusCode > http.StatusPartialContent {
		return errorFrom(resp, dec, buf.Bytes(), method, name)
	}
	if use == nil {
		return nil
	}
	return use(dec, buf.Bytes())
}

// decoderFor is the decoder for the answer's media type, nil if there is none.
func (d *direct) decoderFor(resp *http.Response) runtime.Decoder {
	ct := resp.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	media, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return nil
	}
	return d.decoders[media]
}

// errorFrom is the error a failed answer stands for, as client-go's Request makes it
// (Result.Error, newUnstructuredResponseError in k8s.io/client-go/rest/request.go): the
// failure's metav1.Status when the body is one, else a generic error of the status code
// with the body as its message if it is text, and the delay of a Retry-After header.
func errorFrom(resp *http.Response, dec runtime.Decoder, body []byte, method, name string) error {
	if dec != nil && len(body) > 0 {
		out, _, err := dec.Decode(body, &schema.GroupVersionKind{Version: "v1", Kind: "Status"}, nil)
		if s, ok := out.(*metav1.Status); err == nil && ok && s.Status == metav1.StatusFailure {
			return apierrors.FromObject(s)
		}
	}
	retryAfter, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	message := "unknown"
	if ct := resp.Header.Get("Content-Type"); ct == "" || strings.HasPrefix(ct, "text/") {
		message = strings.TrimSpace(string(body[:min(len(body), maxErrorText)]))
	}
	return apierrors.NewGenericServerResponse(resp.StatusCode, method, schema.GroupResource{Resource: "pods"}, name, message, retryAfter, true)
}
