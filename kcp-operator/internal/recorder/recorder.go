// Package recorder wraps an Event recorder so that every Event fits the API:
// events.k8s.io rejects a note over 1 KiB, and a rejected Event is lost
// silently, typically the one with the longest, most useful error in it.
package recorder

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	"github.com/lifecycle-manager/api/shared"
)

// MaxNote is the longest note the API accepts.
const MaxNote = 1024

// Bounded is an EventRecorder that shortens long notes.
type Bounded struct {
	events.EventRecorder
}

var _ events.EventRecorder = Bounded{}

// Eventf records an Event with its note cut to MaxNote bytes.
func (b Bounded) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	b.EventRecorder.Eventf(regarding, related, eventtype, reason, action, "%s", Shorten(fmt.Sprintf(note, args...)))
}

// Shorten cuts s to MaxNote bytes, marking the cut, without splitting a
// UTF-8 sequence.
func Shorten(s string) string {
	if len(s) <= MaxNote {
		return s
	}
	const marker = " …(cut)"
	cut := MaxNote - len(marker)
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + marker
}

// Events are for what an operator of the fleet wants to read in
// `kubectl describe`: problems, recoveries and finished work. Routine
// progress (a new object being picked up, a module of a new Kyma becoming
// Ready) is in the object's status and makes no Event: at 1,000 runtimes,
// Events for every step were a quarter of the operator's KCP requests,
// more than it needs to make every Kyma Ready.

// Problem reports whether a state change enters or leaves Error or
// Warning: worth an Event on any object.
func Problem(old, now shared.State) bool {
	return old != now && (troubled(old) || troubled(now))
}

// Settled reports whether an object that was busy became Ready: worth an
// Event where it sums up work, on a Kyma for all its modules.
func Settled(old, now shared.State) bool {
	return now == shared.StateReady && old != shared.StateReady && old != ""
}

func troubled(s shared.State) bool { return s == shared.StateError || s == shared.StateWarning }
