// Package podsim simulates the kubelet's pod worker and a container runtime for the pods of
// a simulated node. From a pod, a behaviour profile, a seed and the time, it yields the
// runtime facts that podstate.Generate turns into the pod's status: sandboxes, pod and host
// IPs, container states, probe results, and whether the pod is terminal, evicted, or done
// terminating.
//
// A node agent keeps one Worker per pod bound to its node: the pod's simulated runtime
// and its status step, through a status.Manager (its Options.Deleter deletes each
// deleted pod's object once its terminal status is on the server):
//
//	w, warnings, err := podsim.NewWorker(pod, manager, ipam, podsim.Config{Node: node, Profile: podsim.Default(), Seed: 1, Clock: clk})
//	// err: input no agent should build (a nil pod, no IPAM); warnings: see Warnings
//	step, err := w.Sync(newestCopy) // on every watch event of the pod, and at step.Next
//	// on the pod's DELETED watch event: w.Release(); manager.ForgetPod(pod.UID)
//
// Sync gives the runtime the newest copy of the pod (a deletionTimestamp starts graceful
// termination), advances it to the clock's time, and hands its facts to the Manager's
// SyncPod, the kubelet's per-pod status step: the status is generated and queued, a
// terminal phase waits while a container may still run, a pod whose containers have all
// stopped is terminated (which turns a pod deleted before its containers ran from Pending
// into Failed), and a deleted pod's object goes once its terminal status is on the
// server. Step.Next says when the runtime changes next on its own.
//
// Pod is the runtime alone, for an agent with its own status path: New, Update with each
// new copy, Advance for the facts (Facts.Input makes podstate.Generate's input), Next.
//
// Time is Config.Clock's: New starts the pod at its time, and Advance and Update move the
// simulation to it. An agent on a simulated time passes its fake clock.
//
// # Resuming a pod
//
// New decides whether a pod is new or was already run by an earlier agent process: a
// pod whose server status has a startTime or container statuses is resumed from that
// status (phase, pod IPs, container states, IDs, restart counts, startedAt, started and
// ready), so that an agent that restarts shows no phase regression, no Ready flap and no
// restart counted:
//
//   - a pod in a terminal phase stays finished (Terminal, its containers as reported);
//   - a pod with a pod IP or a created container keeps its sandbox (ready, the IP reserved
//     in the IPAM) and its containers: a running container keeps its ID, restart count and
//     start time, a Started one stays started and a Ready one stays ready; one that is
//     waiting in CrashLoopBackOff or terminated is restarted per its restart policy after
//     its back-off (below); no restart is counted for the resumption;
//   - anything else starts from the beginning, as a new pod does.
//
// A pod with a deletionTimestamp (deleted just before the earlier process stopped, or
// while no agent ran) is terminating from the moment New resumes it, before anything that
// came due while no agent ran: no container is started or restarted and no sandbox is
// created; its running containers are stopped within the grace period, counted from New.
// The kubelet's pod worker likewise sends a pod it first sees with a deletionTimestamp
// straight to termination and never syncs it (pkg/kubelet/pod_workers.go: UpdatePod).
//
// The crash-loop back-off goes on where the earlier process left it, as far as the status
// shows it. This is not what the kubelet does: its back-off lives in memory
// (pkg/kubelet/kuberuntime: doBackOff, a flowcontrol.Backoff keyed per pod and container)
// and is lost when it restarts, so its first sync after a restart restarts a crash-looping
// container at once. A resumed Pod does not, because an agent's restart is meant to show
// nowhere: an immediate restart would count a restart and change the status because the
// agent restarted, and cut short the back-off the status announced. So, with one function
// for every adopted container:
//
//   - a container waiting in CrashLoopBackOff keeps the back-off its message announces
//     ("back-off 20s restarting failed container=…"), counted from its last termination's
//     finishedAt: it restarts when the earlier process said it would, its message is not
//     rewritten, and the back-off after it is twice as long;
//   - any other container (running, terminated, or waiting with a message that announces
//     no back-off) has the back-off its restart count implies were every restart but the
//     first backed off: none before the first restart, then 10 s, 20 s, 40 s … up to
//     5 min, counted from its instance's start; or 10 s from the previous instance's exit
//     when that instance ran more than 10 min (which resets the back-off). A container
//     whose restarts were not all backed off (a sandbox re-created, a reset the status no
//     longer shows) may so wait longer at its next exit than under the earlier process; its
//     message then says how long.
//
// Later draws (run times, stop delays) are those a new pod would make for the same seed.
//
// # What is simulated
//
// The pod worker follows the spec the way the kubelet v1.37.0 and a CRI runtime do:
//
//   - The sandbox is created after the profile's sandbox delay, with an IP from the node's
//     pod CIDR (New's ipam; a host-network pod has the node's IPs). A failed creation
//     (AnnotationSandboxFailures) leaves no sandbox and is tried again at once, with the
//     same attempt number, as the kubelet counts attempts from the sandboxes that exist. A
//     sandbox that dies
//     (AnnotationSandboxCrashAfter) takes its containers with it (exit 137); the kubelet
//     creates a new sandbox (attempt + 1, a new ID, the same IP) and starts the init
//     containers and then the containers again in it, each restart counted — except in a
//     pod with restartPolicy Never, which fails instead (pkg/kubelet/kuberuntime:
//     computePodActions). Back-off is not applied to those re-creations.
//   - Each container's image is pulled once (ImagePull), then it is started (ContainerStart)
//     every time it is created.
//   - Init containers run in spec order, each exiting 0 after InitRunTime. A sidecar (an init
//     container with restartPolicy Always) lets the next one start once it has started
//     (running, and its startup probe, if any, succeeded). Regular containers start, all at
//     once, when the init containers have completed and the sidecars started.
//   - Probes run on the spec's schedule: initialDelaySeconds after the start, then every
//     periodSeconds (default 10), without the kubelet's random jitter. The startup probe
//     succeeds after StartupFailures failed runs (reaching failureThreshold, default 3,
//     kills the container with exit 137); readiness and liveness probes only count from the
//     first run after startup; readiness succeeds after ReadinessFailures failed runs and
//     successThreshold successes. A container without a probe has no result for it: the
//     status derives Started and Ready from the spec, as the kubelet's prober does.
//     IgnoreProbeDelays (the fast profile) makes startup and readiness succeed at the
//     container's start.
//   - A regular container that the pod would not restart after exit 0 (a job: restartPolicy
//     OnFailure or Never, of the pod or the container) exits with ExitCode after RunTime;
//     others run until stopped, unless AnnotationRunTime is set. Whether an exited container
//     is restarted is the kubelet's ContainerShouldRestart (pod restartPolicy, the container's
//     restartPolicy and restartPolicyRules); a completed init container is never restarted.
//     A rule with action RestartAllContainers restarts only that container here.
//   - Restarts follow the kubelet's crash-loop back-off (pkg/kubelet/kuberuntime: doBackOff;
//     k8s.io/client-go/util/flowcontrol.Backoff): the first restart is immediate, later
//     ones wait 10 s, 20 s, 40 s … up to 5 min, measured from the exit; an instance that ran
//     more than 10 min resets the back-off. While it waits, the container is Waiting with
//     reason CrashLoopBackOff and the kubelet's message
//     "back-off 20s restarting failed container=NAME pod=NAME_NAMESPACE(UID)", and its last
//     termination is the exit; the restart count grows when the new instance starts.
//   - When no regular container runs or will run again (or a regular init container failed
//     for good), the pod is finished: the sidecars are stopped, Facts.Terminal is true,
//     and, once everything stopped, the sandbox is stopped (not ready). The phase is then
//     Succeeded or Failed (derived by podstate.Generate, not here).
//   - spec.activeDeadlineSeconds, counted from status.startTime (the time New was called,
//     or the server's startTime for a resumed pod): when exceeded, Facts.Eviction is
//     {DeadlineExceeded, "Pod was active on the node longer than the specified deadline"}
//     and the containers are stopped with terminationGracePeriodSeconds.
//   - Graceful deletion: from the Update that brings a deletionTimestamp (or from New, for
//     a pod that has one: a new one gets no sandbox and no container), every container is
//     asked to stop; it exits 0 (Completed) after StopDelay, or 137 (Error) when the grace
//     period (deletionGracePeriodSeconds, else terminationGracePeriodSeconds, else 30 s)
//     runs out first. Regular containers stop first, sidecars (all at once, not in reverse
//     order) after them. Nothing is started or restarted any more; Facts.Terminal is true at
//     once and Facts.Done once every container has stopped.
//   - Container facts carry a "containerd://" ID of 64 hex digits, the image as containerd
//     reports it ("docker.io/library/nginx:1.27") and an image ID with a digest derived from
//     the image name ("docker.io/library/nginx@sha256:…"), restart count, state and last
//     termination state, the sandbox the instance belongs to, and the startup and readiness
//     probe results.
//
// Not simulated (ignored, the pod runs as if they were present and worked): volumes,
// devices, resources and resize, runtime classes, ephemeral containers, image pull
// failures, postStart and preStop hooks, OOM kills.
//
// # Determinism and cost
//
// Every random draw is a hash of Config.Seed, the pod's namespace and name (not its UID,
// which differs between runs), what is drawn, the container and its restart count (or the
// sandbox attempt). No draw depends on the order of draws, on which times were queried, or
// on the wall clock: Facts at a time are the same whether or not earlier times were
// queried, and the same for the same seed and inputs in every run. Only Config.Clock is
// read.
//
// A Pod keeps the precomputed schedule of each container instance (start, exit, startup,
// ready). Advance replays only the changes due since the last call; Next returns the next
// one, and the zero time when the pod is steady (running with no exit, probe or flap ahead,
// or finished): such a pod costs nothing until an outside event. No goroutines or timers
// are started.
//
// # Profiles
//
// Default() is a small real node: sandbox 0.5–2 s, image pull 0–3 s (first creation
// only), container start 0.1–0.5 s, init containers 1–5 s, jobs 5–30 s exiting 0, stop
// 0–2 s, 0–1 failed startup probes and 0–2 failed readiness probes before success.
//
// Fast() has no delay anywhere and IgnoreProbeDelays: a pod is Running and Ready in the
// first status written for it (init containers already Completed, regular containers
// running, started and ready), whatever its probes' initialDelaySeconds, periodSeconds and
// successThreshold. Jobs exit at once; containers stop at once.
//
// # Annotations
//
// A pod overrides its node's profile with annotations (prefix "sim.podstatus.io/"). A
// duration is a Go duration ("1.5s", "2m") or a range "MIN..MAX" drawn from uniformly per
// container and restart; a count is a whole number or a range "MIN..MAX". An invalid value
// is reported by New in Warnings.Annotations and the profile's value is used; so is a key
// with the prefix that is not in the table below (a typo would otherwise go unnoticed).
//
//	annotation                                value     default profile     effect
//	sim.podstatus.io/profile                  name      node's profile      base profile: "default" or "fast"
//	sim.podstatus.io/sandbox-delay            duration  0.5s..2s            sandbox creation time
//	sim.podstatus.io/image-pull-delay         duration  0s..3s              image pull (first creation of each container)
//	sim.podstatus.io/start-delay              duration  100ms..500ms        container create and start, every time
//	sim.podstatus.io/init-run-time            duration  1s..5s              run time of each regular init container (exit 0)
//	sim.podstatus.io/run-time                 duration  5s..30s (jobs only) run time of every regular container, whatever its restart policy
//	sim.podstatus.io/exit-code                0..255    0                   exit code when the run time is over
//	sim.podstatus.io/stop-delay               duration  0s..2s              time to exit after SIGTERM (exit 0; 137 if the grace period ends first)
//	sim.podstatus.io/startup-probe-failures   count     0..1                startup probe runs failing before the first success
//	sim.podstatus.io/readiness-probe-failures count     0..2                readiness probe runs failing before the first success
//	sim.podstatus.io/readiness-flap           duration  none                once ready: readiness succeeds this long, fails this long, and so on
//	sim.podstatus.io/liveness-fail-after      duration  none                liveness probe fails from this long after the start: killed (137) after failureThreshold runs
//	sim.podstatus.io/sandbox-create-failures  count     0                   attempts at creating the sandbox failing before one succeeds
//	sim.podstatus.io/sandbox-crash-after      duration  none                the first sandbox dies this long after it became ready
//
// The probe annotations act only on containers whose spec has that probe.
package podsim
