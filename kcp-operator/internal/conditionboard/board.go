package conditionboard

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/lifecycle-manager/api/v1beta2"
)

// Board holds the latest condition of each type reported for each Kyma
// and enqueues the Kyma controller when a report changes what the Kyma's
// status says. A nil Board holds nothing.
type Board struct {
	// Settle delays the Kyma controller's reconcile for a report that a
	// part is done, so that it joins the Kyma's other news (its modules
	// turning ready) in one reconcile; a problem is taken up at once.
	Settle time.Duration

	mu      sync.Mutex
	reports map[types.NamespacedName]map[string]metav1.Condition
	queue   workqueue.TypedRateLimitingInterface[reconcile.Request]
	// pending are Kymas reported before the Kyma controller started.
	pending map[types.NamespacedName]struct{}
}

// NewBoard returns an empty Board.
func NewBoard() *Board {
	return &Board{
		reports: map[types.NamespacedName]map[string]metav1.Condition{},
		pending: map[types.NamespacedName]struct{}{},
	}
}

// Report posts cond for kyma. The Kyma controller is enqueued when cond
// says something else than the Kyma's status or the previous report.
func (b *Board) Report(kyma *v1beta2.Kyma, cond metav1.Condition) {
	if b == nil {
		return
	}
	key := client.ObjectKeyFromObject(kyma)
	b.mu.Lock()
	defer b.mu.Unlock()
	byType := b.reports[key]
	prev, reported := byType[cond.Type]
	if reported && same(&prev, cond) {
		return
	}
	if byType == nil {
		byType = map[string]metav1.Condition{}
		b.reports[key] = byType
	}
	byType[cond.Type] = cond
	if !reported && same(meta.FindStatusCondition(kyma.Status.Conditions, cond.Type), cond) {
		return // the status says so already, as after a restart
	}
	if b.queue == nil {
		b.pending[key] = struct{}{}
		return
	}
	req := reconcile.Request{NamespacedName: key}
	if cond.Status == metav1.ConditionTrue && b.Settle > 0 {
		b.queue.AddAfter(req, b.Settle)
		return
	}
	b.queue.Add(req)
}

// Find returns the condition of type typ as last reported for kyma, else
// as its status has it, else nil.
func (b *Board) Find(kyma *v1beta2.Kyma, typ string) *metav1.Condition {
	if c, ok := b.reported(client.ObjectKeyFromObject(kyma), typ); ok {
		return &c
	}
	return meta.FindStatusCondition(kyma.Status.Conditions, typ)
}

func (b *Board) reported(key types.NamespacedName, typ string) (metav1.Condition, bool) {
	if b == nil {
		return metav1.Condition{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.reports[key][typ]
	return c, ok
}

// Merged returns kyma's status conditions with the reported ones set on
// them: an unchanged condition keeps its transition time, a changed one
// takes the Kyma's generation. news are the reported conditions that
// differ from the status.
func (b *Board) Merged(kyma *v1beta2.Kyma) (conds []metav1.Condition, news []metav1.Condition) {
	conds = append([]metav1.Condition(nil), kyma.Status.Conditions...)
	if b == nil {
		return conds, nil
	}
	b.mu.Lock()
	reports := make([]metav1.Condition, 0, 2)
	for _, c := range b.reports[client.ObjectKeyFromObject(kyma)] {
		reports = append(reports, c)
	}
	b.mu.Unlock()
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	for _, c := range reports {
		cur := meta.FindStatusCondition(conds, c.Type)
		if same(cur, c) {
			continue
		}
		c.ObservedGeneration, c.LastTransitionTime = kyma.Generation, now
		if cur != nil && cur.Status == c.Status {
			c.LastTransitionTime = cur.LastTransitionTime
		}
		meta.SetStatusCondition(&conds, c)
		news = append(news, c)
	}
	return conds, news
}

// Forget drops the reports of a Kyma that is gone.
func (b *Board) Forget(key types.NamespacedName) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.reports, key)
	delete(b.pending, key)
}

// Source is the Kyma controller's event source of changed reports.
func (b *Board) Source() source.Source {
	return source.Func(func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.queue = q
		for key := range b.pending {
			q.Add(reconcile.Request{NamespacedName: key})
		}
		clear(b.pending)
		return nil
	})
}

// same reports whether cur says what c says; transition times and
// generations are the board's to set.
func same(cur *metav1.Condition, c metav1.Condition) bool {
	return cur != nil && cur.Status == c.Status && cur.Reason == c.Reason && cur.Message == c.Message
}
