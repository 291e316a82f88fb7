package simkubelet

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/podstatus/podstatus"
)

// Every value Run would stumble on is refused by Validate before anything connects, as
// one *podstatus.InputError naming the Go field; zero counts are the defaults, negative
// ones errors, alike for every count.
func TestConfigValidateNamesTheField(t *testing.T) {
	rc := &rest.Config{Host: "x"}
	for _, tc := range []struct {
		cfg  Options
		want string
	}{
		{Options{Nodes: 1, NodeNamePrefix: "Bad_Name"}, "Options.NodeNamePrefix"},
		{Options{Nodes: 1, NodeNamePrefix: strings.Repeat("a", 253)}, "Options.NodeNamePrefix"},
		{Options{Nodes: 1, NodeIP: "notanip"}, "Options.NodeIP"},
		{Options{Nodes: 1, MaxPods: -5}, "Options.MaxPods"},
		{Options{Nodes: 1, MaxPods: maxMaxPods + 1}, "Options.MaxPods"},
		{Options{Nodes: 1, Workers: -5}, "Options.Workers"},
		{Options{Nodes: 1, StatusWorkers: -5}, "Options.StatusWorkers"},
		{Options{Nodes: 1, NodeLeaseDurationSeconds: -1}, "Options.NodeLeaseDurationSeconds"},
		{Options{Nodes: 1, QPS: -1}, "Options.QPS"},
		{Options{Nodes: -1}, "Options.Nodes"},
		{Options{Nodes: 1, Profile: "turbo"}, "Options.Profile"},
		{Options{ManageSingleNode: "Not_A_Node"}, "Options.ManageSingleNode"},
		{Options{ManageAllNodes: true, ManageNodesWithLabelSelector: "a=b"}, "Options.ManageAllNodes"},
		{Options{ManageNodesWithAnnotationSelector: "a=b=c"}, "Options.ManageNodesWithAnnotationSelector"},
		{Options{}, "Options.Nodes"},
	} {
		err := tc.cfg.Validate()
		var ie *podstatus.InputError
		if !errors.Is(err, podstatus.ErrInvalidInput) || !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v, want an input error naming %s", tc.cfg, err, tc.want)
		}
		if _, err := tc.cfg.resolve(rc); !errors.Is(err, podstatus.ErrInvalidInput) {
			t.Errorf("resolve(%+v) = %v, want the input error", tc.cfg, err)
		}
	}
	r, err := Options{Nodes: 1, NodeIP: "fd00::1"}.resolve(rc)
	if err != nil {
		t.Fatal(err)
	}
	if r.MaxPods != DefaultMaxPods || r.Workers != DefaultWorkers || r.StatusWorkers != DefaultStatusWorkers {
		t.Errorf("zero counts resolved to %d, %d, %d, want the defaults", r.MaxPods, r.Workers, r.StatusWorkers)
	}
	if err := (Options{Nodes: 1}).Validate(); err != nil {
		t.Errorf("Validate without a RESTConfig: %v", err)
	}
	if _, err := (Options{Nodes: 1}).resolve(nil); err == nil || !strings.Contains(err.Error(), "restConfig") {
		t.Errorf("resolve without a RESTConfig: %v", err)
	}
}
