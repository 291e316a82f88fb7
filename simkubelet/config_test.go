package agent

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
		cfg  Config
		want string
	}{
		{Config{Nodes: 1, NodeNamePrefix: "Bad_Name"}, "Config.NodeNamePrefix"},
		{Config{Nodes: 1, NodeNamePrefix: strings.Repeat("a", 253)}, "Config.NodeNamePrefix"},
		{Config{Nodes: 1, NodeIP: "notanip"}, "Config.NodeIP"},
		{Config{Nodes: 1, MaxPods: -5}, "Config.MaxPods"},
		{Config{Nodes: 1, MaxPods: maxMaxPods + 1}, "Config.MaxPods"},
		{Config{Nodes: 1, Workers: -5}, "Config.Workers"},
		{Config{Nodes: 1, StatusWorkers: -5}, "Config.StatusWorkers"},
		{Config{Nodes: 1, NodeLeaseDurationSeconds: -1}, "Config.NodeLeaseDurationSeconds"},
		{Config{Nodes: 1, QPS: -1}, "Config.QPS"},
		{Config{Nodes: -1}, "Config.Nodes"},
		{Config{Nodes: 1, Profile: "turbo"}, "Config.Profile"},
		{Config{ManageSingleNode: "Not_A_Node"}, "Config.ManageSingleNode"},
		{Config{ManageAllNodes: true, ManageNodesWithLabelSelector: "a=b"}, "Config.ManageAllNodes"},
		{Config{ManageNodesWithAnnotationSelector: "a=b=c"}, "Config.ManageNodesWithAnnotationSelector"},
		{Config{}, "Config.Nodes"},
	} {
		err := tc.cfg.Validate()
		var ie *podstatus.InputError
		if !errors.Is(err, podstatus.ErrInvalidInput) || !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v, want an input error naming %s", tc.cfg, err, tc.want)
		}
		tc.cfg.RESTConfig = rc
		if _, err := tc.cfg.resolve(); !errors.Is(err, podstatus.ErrInvalidInput) {
			t.Errorf("resolve(%+v) = %v, want the input error", tc.cfg, err)
		}
	}
	r, err := Config{RESTConfig: rc, Nodes: 1, NodeIP: "fd00::1"}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	if r.MaxPods != DefaultMaxPods || r.Workers != DefaultWorkers || r.StatusWorkers != DefaultStatusWorkers {
		t.Errorf("zero counts resolved to %d, %d, %d, want the defaults", r.MaxPods, r.Workers, r.StatusWorkers)
	}
	if err := (Config{Nodes: 1}).Validate(); err != nil {
		t.Errorf("Validate without a RESTConfig: %v", err)
	}
	if _, err := (Config{Nodes: 1}).resolve(); err == nil || !strings.Contains(err.Error(), "Config.RESTConfig") {
		t.Errorf("resolve without a RESTConfig: %v", err)
	}
}
