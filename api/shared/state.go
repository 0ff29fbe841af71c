package shared

// State is the coarse state of a Kyma, Manifest, Watcher or module.
// +kubebuilder:validation:Enum=Processing;Deleting;Ready;Error;"";Warning;Unmanaged
type State string

// The states, as the public lifecycle manager defines them.
const (
	StateReady      State = "Ready"
	StateProcessing State = "Processing"
	StateWarning    State = "Warning"
	StateError      State = "Error"
	StateDeleting   State = "Deleting"
	StateUnmanaged  State = "Unmanaged"
)

// severity orders states from best to worst for aggregation. Unmanaged
// modules do not affect their Kyma, so they rank with Ready.
func (s State) severity() int {
	switch s {
	case StateReady, StateUnmanaged:
		return 0
	case StateProcessing, "":
		return 1
	case StateWarning:
		return 2
	case StateDeleting:
		return 3
	case StateError:
		return 4
	default:
		return 4
	}
}

// Worst returns the most severe of the given states, or StateReady for none.
// An unknown state counts as Error so that it can never hide a problem.
func Worst(states ...State) State {
	worst := StateReady
	for _, s := range states {
		if s.severity() > worst.severity() {
			worst = s
		}
	}
	if worst == "" {
		return StateProcessing
	}
	return worst
}

// IsKnown reports whether s is one of the defined states.
func (s State) IsKnown() bool {
	switch s {
	case StateReady, StateProcessing, StateWarning, StateError, StateDeleting, StateUnmanaged:
		return true
	default:
		return false
	}
}
