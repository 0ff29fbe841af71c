package fleet

import (
	"context"
	"fmt"
	"time"

	"github.com/lifecycle-manager/e2e/scale/report"
)

// change is something a phase does to a converged fleet whose cost the
// run measures until the operator has absorbed it: the release of a new
// module version, the resync wave. Both read the operator and the API
// servers before, profile from the start, make the change, wait and read
// them again; only the change and the wait differ.
type change struct {
	// profile names the CPU profiles of the change (with --profile-seconds).
	profile string
	// make makes the change.
	make func(ctx context.Context) error
	// settle returns once the operator has absorbed the change; wait
	// ends at --ready-timeout. It may leave the reading that ends the
	// measurement in a.after; else absorb reads once it returned.
	settle func(wait context.Context, a *absorbed) error
}

// absorbed is what a change cost, between two readings.
type absorbed struct {
	before, after reading
	// start is when the change was made.
	start time.Time
	// served is nil when the API servers could not be read afterwards:
	// the operator's own figures still stand.
	served *report.Served
}

// cpu is the operator's CPU seconds between the readings.
func (a *absorbed) cpu() float64 { return a.after.usage.CPUSeconds - a.before.usage.CPUSeconds }

// reconciles is the operator's reconciles between the readings.
func (a *absorbed) reconciles() float64 { return a.after.total() - a.before.total() }

// seconds is the time between the readings.
func (a *absorbed) seconds() float64 { return a.after.at.Sub(a.before.at).Seconds() }

// absorb makes the change and measures it until it settled.
func (ru *run) absorb(ctx context.Context, c change) (*absorbed, error) {
	f := ru.f
	before, err := f.read(ctx)
	if err != nil {
		return nil, err
	}
	servedBefore, err := f.readServed(ctx)
	if err != nil {
		return nil, err
	}
	// The operator answers the change at once: the profile starts first.
	f.profileCPU(ctx, c.profile, 0)
	a := &absorbed{before: before}
	if err := c.make(ctx); err != nil {
		return nil, err
	}
	a.start = time.Now()
	wait, cancel := context.WithTimeout(ctx, ru.opts.ReadyTimeout)
	defer cancel()
	if err := c.settle(wait, a); err != nil {
		return nil, err
	}
	if a.after.at.IsZero() {
		if a.after, err = f.read(ctx); err != nil {
			return nil, fmt.Errorf("reading the operator after the change: %w", err)
		}
	}
	if servedAfter, err := f.readServed(ctx); err == nil {
		a.served = servedSince(servedBefore, servedAfter)
	}
	return a, nil
}
