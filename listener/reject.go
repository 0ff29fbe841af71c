package listener

import "fmt"

// ReasonRejected is the metric reason of a Reject without one.
const ReasonRejected = "rejected"

// RejectedError refuses a runtime in Config.AcceptRuntime.
type RejectedError struct {
	// Reason labels the verification failure metric, e.g. "unknown_runtime";
	// keep to a few fixed words.
	Reason string
	Err    error
}

// Reject returns the error AcceptRuntime returns to refuse a runtime for
// good. The listener answers 403 Forbidden: the caller proved who it is
// (its certificate is valid) but may not send events, so unlike 401 no
// other credentials would help, and unlike 503 a retry will not either.
func Reject(reason string, err error) error {
	if reason == "" {
		reason = ReasonRejected
	}
	return &RejectedError{Reason: reason, Err: err}
}

func (e *RejectedError) Error() string {
	if e.Err == nil {
		return "runtime rejected: " + e.Reason
	}
	return fmt.Sprintf("runtime rejected: %s: %v", e.Reason, e.Err)
}

func (e *RejectedError) Unwrap() error { return e.Err }
