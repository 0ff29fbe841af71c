package queue

// Sleepers is the number of Gets waiting for a change; tests wait for it
// before they check that a change wakes them.
func (q *Queue) Sleepers() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.sleepers
}
