package vkstatus_test

import (
	"context"

	"github.com/virtual-kubelet/virtual-kubelet/node"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"

	"github.com/podstatus/podstatus/vkstatus"
)

// A virtual-kubelet node agent gets the kubelet's pod statuses by wiring a
// vkstatus.Client into the pod controller's configuration (it becomes PodClient and its
// event handler is registered on the same pod informer) and running it beside the
// controller; virtual-kubelet itself is unchanged. A node built with nodeutil.NewNode
// passes nodeutil.WithPodControllerConfigOverrides(vk.Wire) instead.
func Example() {
	run := func(ctx context.Context, cs kubernetes.Interface, podInformers informers.SharedInformerFactory,
		others informers.SharedInformerFactory, provider node.PodLifecycleHandler) error {
		vk := vkstatus.New(cs.CoreV1(), vkstatus.Options{FieldManager: "my-provider"})
		cfg := node.PodControllerConfig{
			PodInformer:       podInformers.Core().V1().Pods(),
			EventRecorder:     record.NewFakeRecorder(100),
			Provider:          provider,
			ConfigMapInformer: others.Core().V1().ConfigMaps(),
			SecretInformer:    others.Core().V1().Secrets(),
			ServiceInformer:   others.Core().V1().Services(),
		}
		if err := vk.Wire(&cfg); err != nil { // PodClient and the event handler
			return err
		}
		pc, err := node.NewPodController(cfg)
		if err != nil {
			return err
		}
		go func() { _ = vk.Run(ctx) }()
		podInformers.Start(ctx.Done())
		others.Start(ctx.Done())
		return pc.Run(ctx, 1)
	}
	_ = run
}
