package agent

import (
	"context"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// streamDeleter is the kubelet's DELETE of a terminated pod (grace period 0, a UID
// precondition; kubeclient.Client.DeletePod sends the same) through rc, with the answer's
// body discarded as it is read. client-go's typed Delete reads the whole deleted pod into
// memory (Request.Do; a few KB, grown in steps) only to drop it: some 5% of what the agent
// allocated while deleting pods. Errors are client-go's (a 404 or 409 is an
// apierrors.StatusError), as from the typed Delete.
type streamDeleter struct{ rc rest.Interface }

func (d streamDeleter) DeletePod(ctx context.Context, namespace, name string, uid types.UID) error {
	body, err := d.rc.Delete().Namespace(namespace).Resource("pods").Name(name).
		Body(&metav1.DeleteOptions{GracePeriodSeconds: new(int64), Preconditions: metav1.NewUIDPreconditions(string(uid))}).
		Stream(ctx)
	if err != nil {
		return err
	}
	defer body.Close()
	if _, err := io.Copy(io.Discard, body); err != nil {
		return fmt.Errorf("reading the answer to DELETE pod %s/%s: %w", namespace, name, err)
	}
	return nil
}
