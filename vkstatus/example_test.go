package vkstatus_test

import (
	"context"

	"github.com/virtual-kubelet/virtual-kubelet/node"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"

	"github.com/podstatus/podstatus/vkstatus"
)

// A virtual-kubelet node agent gets the kubelet's pod statuses by putting a
// vkstatus.Client in PodClient and registering its event handler on the same pod
// informer; virtual-kubelet itself is unchanged.
func Example() {
	run := func(ctx context.Context, cs kubernetes.Interface, podInformers informers.SharedInformerFactory,
		others informers.SharedInformerFactory, provider node.PodLifecycleHandler) error {
		vk := vkstatus.New(cs.CoreV1(), vkstatus.Options{FieldManager: "my-provider"})
		pods := podInformers.Core().V1().Pods()
		if _, err := pods.Informer().AddEventHandler(vk.EventHandler()); err != nil {
			return err
		}
		pc, err := node.NewPodController(node.PodControllerConfig{
			PodClient:         vk, // instead of cs.CoreV1()
			PodInformer:       pods,
			EventRecorder:     record.NewFakeRecorder(100),
			Provider:          provider,
			ConfigMapInformer: others.Core().V1().ConfigMaps(),
			SecretInformer:    others.Core().V1().Secrets(),
			ServiceInformer:   others.Core().V1().Services(),
		})
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
