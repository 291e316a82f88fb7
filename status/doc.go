// Package status is the stateful half of podstatus: a Manager that caches each pod's
// status, notices when a field the kubelet owns really changed, merges the result with the
// API server's copy so conditions written by other controllers survive, and sends the
// smallest correct strategic-merge PATCH of pods/status with a metadata.uid precondition.
package status
