// Package sample records Events and builds conditions in each way the
// operator's code does, for the tests of package reasons.
package sample

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
)

// State is a state whose value the code does not know.
type State string

// ReasonNamed is a reason by constant.
const ReasonNamed = "Named"

// ConditionThing is a condition type by constant.
const ConditionThing = "Thing"

// Bounded passes its arguments on: it is not an Event of its own.
type Bounded struct{ events.EventRecorder }

// Eventf forwards.
func (b Bounded) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	b.EventRecorder.Eventf(regarding, related, eventtype, reason, action, note, args...)
}

// Reconciler records Events.
type Reconciler struct {
	Events events.EventRecorder
	State  State
}

// Literal records a literal and a constant.
func (r *Reconciler) Literal(pod *corev1.Pod) {
	r.Events.Eventf(pod, nil, corev1.EventTypeNormal, "Literal", "Do", "")
	r.Events.Eventf(pod, nil, corev1.EventTypeWarning, ReasonNamed, "Do", "")
}

// event chooses its type by a bool its callers pass.
func (r *Reconciler) event(pod *corev1.Pod, warning bool, reason string) {
	kind := corev1.EventTypeNormal
	if warning {
		kind = corev1.EventTypeWarning
	}
	r.Events.Eventf(pod, nil, kind, reason, "Helper", "")
}

// Helpers call event.
func (r *Reconciler) Helpers(pod *corev1.Pod) {
	r.event(pod, true, "HelperWarning")
	r.event(pod, false, "HelperNormal")
}

// Transition names the state by its type.
func (r *Reconciler) Transition(pod *corev1.Pod) {
	r.Events.Eventf(pod, nil, corev1.EventTypeNormal, "State"+string(r.State), "Reconcile", "")
}

// Closure records through a function literal.
func (r *Reconciler) Closure(pod *corev1.Pod) {
	record := func(reason string) { r.Events.Eventf(pod, nil, corev1.EventTypeNormal, reason, "Closure", "") }
	record("FromClosure")
}

// Dynamic records a reason no constant names.
func (r *Reconciler) Dynamic(pod *corev1.Pod, n int) {
	r.Events.Eventf(pod, nil, corev1.EventTypeNormal, fmt.Sprintf("Reason%d", n), "Dynamic", "")
}

// Error carries a reason in a field.
type Error struct {
	Reason string
	Err    error
}

func (e *Error) Error() string { return e.Err.Error() }

func fail(reason string) error { return &Error{Reason: reason, Err: errors.New("failed")} }

// Failures are the errors that carry reasons.
func Failures() []error { return []error{fail("FieldOne"), &Error{Reason: "FieldTwo"}} }

func reasonOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return "Fallback"
}

func condition(typ string, ok bool, reason string) metav1.Condition {
	c := metav1.Condition{Type: typ, Status: metav1.ConditionFalse, Reason: reason}
	if ok {
		c.Status = metav1.ConditionTrue
	}
	return c
}

// Conditions are built through a helper (types and reasons stay paired),
// directly, and in a variable changed later.
func Conditions(err error) []metav1.Condition {
	cond := metav1.Condition{Type: ConditionThing, Status: metav1.ConditionTrue, Reason: "Fine"}
	if err != nil {
		cond.Status, cond.Reason = metav1.ConditionFalse, reasonOf(err)
	}
	return []metav1.Condition{
		condition("Ready", true, "AllReady"),
		condition("Installed", false, "NotInstalled"),
		{Type: "Direct", Status: metav1.ConditionUnknown, Reason: ReasonNamed},
		cond,
	}
}
