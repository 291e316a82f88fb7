package fleet

import (
	"context"

	"k8s.io/client-go/rest"

	"github.com/podstatus/podstatus/simkubelet"
)

// runKubelet runs a simulated kubelet until ctx is done (simkubelet.New, then Run).
func runKubelet(ctx context.Context, rc *rest.Config, opts simkubelet.Options) error {
	k, err := simkubelet.New(rc, opts)
	if err != nil {
		return err
	}
	return k.Run(ctx)
}
