package vkstatus

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	vklog "github.com/virtual-kubelet/virtual-kubelet/log"
)

// vkLogger is a logr.Logger that writes through virtual-kubelet's logger: the one ctx
// carries (log.WithLogger), else log.L as it is when a line is logged, so a provider that
// sets log.L after New still gets the lines. It is a Client's logger when
// Options.Status.Logger is not set, so that the Manager's errors (a write that failed and
// will be retried) reach the log the provider already reads instead of being discarded.
//
// Levels: logr errors are virtual-kubelet errors; V(0) to V(2) (the Manager's changes of
// state) are Info, V(3) and above (one line per request, per-pod bookkeeping) Debug.
// virtual-kubelet's logger filters levels itself.
func vkLogger(ctx context.Context) logr.Logger {
	return logr.New(&vkSink{ctx: ctx})
}

// vkSink is vkLogger's logr.LogSink.
type vkSink struct {
	ctx    context.Context
	name   string
	values []any
}

// Init implements logr.LogSink.
func (s *vkSink) Init(logr.RuntimeInfo) {}

// Enabled implements logr.LogSink: every level, which virtual-kubelet's logger filters.
func (s *vkSink) Enabled(int) bool { return true }

// Info implements logr.LogSink.
func (s *vkSink) Info(level int, msg string, kv ...any) {
	l := s.logger(kv)
	if level <= 2 {
		l.Info(msg)
	} else {
		l.Debug(msg)
	}
}

// Error implements logr.LogSink.
func (s *vkSink) Error(err error, msg string, kv ...any) {
	l := s.logger(kv)
	if err != nil {
		l = l.WithError(err)
	}
	l.Error(msg)
}

// WithValues implements logr.LogSink.
func (s *vkSink) WithValues(kv ...any) logr.LogSink {
	out := *s
	out.values = append(append([]any(nil), s.values...), kv...)
	return &out
}

// WithName implements logr.LogSink.
func (s *vkSink) WithName(name string) logr.LogSink {
	out := *s
	if out.name != "" {
		name = out.name + "." + name
	}
	out.name = name
	return &out
}

// logger is virtual-kubelet's logger with the sink's name and values and kv as fields.
func (s *vkSink) logger(kv []any) vklog.Logger {
	l := vklog.G(s.ctx)
	n := len(s.values) + len(kv)
	if n == 0 && s.name == "" {
		return l
	}
	f := make(vklog.Fields, n/2+2)
	if s.name != "" {
		f["logger"] = s.name
	}
	for _, list := range [][]any{s.values, kv} {
		for i := 0; i < len(list); i += 2 {
			key, ok := list[i].(string)
			if !ok {
				key = fmt.Sprint(list[i])
			}
			if i+1 < len(list) {
				f[key] = list[i+1]
			} else {
				f[key] = "(MISSING)"
			}
		}
	}
	return l.WithFields(f)
}
