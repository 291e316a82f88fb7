// Package statustest provides an in-memory API server for tests of code that writes pod
// status, in the way net/http/httptest provides an HTTP server for tests of HTTP clients.
//
// A Server implements status.Client (GetPod and PatchPodStatus) against a map of pods. It
// behaves like the real pods/status subresource where tests are likely to depend on it:
//
//   - PATCHes are applied with apimachinery's strategic merge against v1.Pod, exactly as the
//     API server applies application/strategic-merge-patch+json, and only the status is kept;
//   - a metadata.uid in the patch that differs from the stored pod's is rejected with
//     422 Invalid ("field is immutable"), and a metadata.resourceVersion that differs with
//     409 Conflict;
//   - every write that changes the pod bumps its resourceVersion (one counter for the whole
//     server, as etcd's revision), while a patch that changes nothing does not write;
//   - a missing pod is 404 NotFound, and every pod handed out is a deep copy.
//
// On top of that a test can inject faults (the next N requests fail with an error, or each
// fails with probability p from a seeded source), count requests by verb, inspect every
// PATCH received, act as another controller writing its own conditions, create, delete and
// recreate pods, and observe every write through a callback (to feed a watch-driven
// consumer). A Server is safe for concurrent use.
//
// Errors are *errors.StatusError values from k8s.io/apimachinery/pkg/api/errors, so the
// apierrors.IsNotFound, IsConflict, IsInvalid, IsTooManyRequests, ... predicates work on
// them as they do on client-go's.
package statustest
