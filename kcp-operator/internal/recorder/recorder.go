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

// Transition reports whether a state change is worth an Event. A new
// object taking its first state, Processing, is not: at 10,000 runtimes
// those Events were a third of the operator's API writes and told nothing
// the object's creation did not.
func Transition(old, now shared.State) bool {
	return old != now && (old != "" || now != shared.StateProcessing)
}
