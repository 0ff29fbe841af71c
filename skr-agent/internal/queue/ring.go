package queue

// ring is a growable FIFO of entries that can also push to its front. A
// slice of pointers keeps the cost per waiting key at one word.
type ring struct {
	buf  []*entry
	head int
	n    int
}

func (r *ring) len() int { return r.n }

func (r *ring) grow() {
	if r.n < len(r.buf) {
		return
	}
	size := 2 * len(r.buf)
	if size == 0 {
		size = 64
	}
	buf := make([]*entry, size)
	for i := range r.n {
		buf[i] = r.buf[(r.head+i)%len(r.buf)]
	}
	r.buf, r.head = buf, 0
}

func (r *ring) pushBack(e *entry) {
	r.grow()
	r.buf[(r.head+r.n)%len(r.buf)] = e
	r.n++
}

func (r *ring) pushFront(e *entry) {
	r.grow()
	r.head = (r.head - 1 + len(r.buf)) % len(r.buf)
	r.buf[r.head] = e
	r.n++
}

func (r *ring) popFront() *entry {
	if r.n == 0 {
		return nil
	}
	e := r.buf[r.head]
	r.buf[r.head] = nil
	r.head = (r.head + 1) % len(r.buf)
	r.n--
	if r.n == 0 {
		r.head = 0
	}
	r.shrink()
	return e
}

// shrink gives memory back after a large backlog has drained.
func (r *ring) shrink() {
	const minShrink = 1024
	if len(r.buf) < minShrink || r.n > len(r.buf)/4 {
		return
	}
	buf := make([]*entry, len(r.buf)/2)
	for i := range r.n {
		buf[i] = r.buf[(r.head+i)%len(r.buf)]
	}
	r.buf, r.head = buf, 0
}
