package reasons

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/types"
	"slices"
	"strings"
)

// Event is one kind of Event the code records.
type Event struct {
	// Object is the kind of the object the Event regards (Kyma, Manifest).
	Object string
	Type   string // Normal or Warning
	Reason string
	Action string
	// Package is the folder of the code that records it, relative to the module.
	Package string
}

// Condition is one condition the code builds.
type Condition struct {
	Type    string
	Status  string
	Reason  string
	Package string // as Event.Package
}

// Unresolved names a value that could not be traced to a constant.
type Unresolved struct {
	Where string // file:line of the Event or condition
	What  string
}

func (u Unresolved) String() string { return u.Where + ": " + u.What }

// eventfParams are the parameters of events.EventRecorder's Eventf:
// regarding, related, eventtype, reason, action, note, args.
const eventfParams = 7

// Events are the Events recorded through an EventRecorder's Eventf, with
// every type, reason and action each call may record.
func (p *Program) Events() ([]Event, []Unresolved) {
	var out []Event
	var unresolved []Unresolved
	ev := p.newEvaluator()
	for callee, sites := range p.calls {
		if !isEventf(callee) {
			continue
		}
		for _, s := range sites {
			if s.in.obj != nil && s.in.obj.Name() == "Eventf" {
				continue // a wrapper that passes its own arguments on
			}
			object := kindOf(s.in.pkg.TypesInfo.TypeOf(s.call.Args[0]))
			for _, c := range p.contexts(s.in, 0) {
				for _, t := range cross(ev.eval(s.call.Args[2], c), ev.eval(s.call.Args[3], c), ev.eval(s.call.Args[4], c)) {
					if u := unknownOf(t, "type", "reason", "action"); u != "" {
						unresolved = append(unresolved, Unresolved{Where: p.rel(s.call.Pos()), What: "the Event's " + u})
						continue
					}
					if t[1].S == "" {
						continue
					}
					out = append(out, Event{Object: object, Type: t[0].S, Reason: t[1].S, Action: t[2].S, Package: p.dir(s.call.Pos())})
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b Event) int {
		return cmp.Or(cmp.Compare(a.Object, b.Object), cmp.Compare(a.Reason, b.Reason), cmp.Compare(a.Type, b.Type),
			cmp.Compare(a.Action, b.Action), cmp.Compare(a.Package, b.Package))
	})
	return slices.Compact(out), sortUnresolved(unresolved)
}

func isEventf(obj any) bool {
	f, ok := obj.(*types.Func)
	if !ok || f.Name() != "Eventf" {
		return false
	}
	sig, ok := f.Type().(*types.Signature)
	return ok && sig.Variadic() && sig.Params().Len() == eventfParams &&
		sig.Params().At(0).Type().String() == "k8s.io/apimachinery/pkg/runtime.Object"
}

// kindOf is the name of the type an Event regards, without the pointer.
func kindOf(t types.Type) string {
	if ptr, ok := t.(*types.Pointer); ok {
		t = ptr.Elem()
	}
	if named, ok := types.Unalias(t).(*types.Named); ok {
		return named.Obj().Name()
	}
	return t.String()
}

// conditionType is the type the operator's conditions have.
const conditionType = "k8s.io/apimachinery/pkg/apis/meta/v1.Condition"

// Conditions are the metav1.Conditions the code builds, with every type,
// status and reason each may have where it leaves the function that
// builds it (a literal, or a local variable set from one and changed).
func (p *Program) Conditions() ([]Condition, []Unresolved) {
	var out []Condition
	var unresolved []Unresolved
	ev := p.newEvaluator()
	for _, f := range p.all {
		for _, b := range p.conditionsIn(f) {
			for _, c := range p.contexts(f, 0) {
				for _, t := range b.values(ev, c) {
					if u := unknownOf(t, "type", "status", "reason"); u != "" {
						unresolved = append(unresolved, Unresolved{Where: p.rel(b.lit.Pos()), What: "the condition's " + u})
						continue
					}
					if t[2].S == "" {
						continue
					}
					out = append(out, Condition{Type: t[0].S, Status: t[1].S, Reason: t[2].S, Package: p.dir(b.lit.Pos())})
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b Condition) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Reason, b.Reason), cmp.Compare(a.Status, b.Status),
			cmp.Compare(a.Package, b.Package))
	})
	return slices.Compact(out), sortUnresolved(unresolved)
}

// built is a condition literal, with the variable it is assigned to and
// the places that variable leaves as a whole (nil for a literal used
// directly).
type built struct {
	lit  *ast.CompositeLit
	v    *types.Var
	uses []*ast.Ident
}

var conditionFields = []string{"Type", "Status", "Reason"}

func (b built) values(ev *evaluator, c *ctx) state {
	if b.v == nil {
		var cols [][]value
		for _, name := range conditionFields {
			t := &tracker{ev: ev, c: c}
			cols = append(cols, t.fieldOf(b.lit, loc{field: name}))
		}
		return cross(cols...)
	}
	locs := make([]loc, len(conditionFields))
	for i, name := range conditionFields {
		locs[i] = loc{v: b.v, field: name}
	}
	var out state
	for _, use := range b.uses {
		out = append(out, ev.track(locs, use.Pos(), c)...)
	}
	return dedupState(out)
}

// conditionsIn finds the condition literals of f's own body.
func (p *Program) conditionsIn(f *fn) []built {
	info := f.pkg.TypesInfo
	assigned := map[*ast.CompositeLit]*types.Var{}
	var lits []*ast.CompositeLit
	ast.Inspect(f.body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.AssignStmt:
			if len(n.Lhs) == len(n.Rhs) {
				for i, lhs := range n.Lhs {
					if id, ok := lhs.(*ast.Ident); ok {
						if lit := literal(n.Rhs[i]); lit != nil {
							assigned[lit], _ = objectOf(info, id).(*types.Var)
						}
					}
				}
			}
		case *ast.CompositeLit:
			if t := info.TypeOf(n); t != nil && t.String() == conditionType {
				lits = append(lits, n)
			}
		}
		return true
	})
	var out []built
	for _, lit := range lits {
		b := built{lit: lit, v: assigned[lit]}
		if b.v != nil {
			b.uses = wholeUses(info, f.body, b.v)
		}
		out = append(out, b)
	}
	return out
}

func literal(e ast.Expr) *ast.CompositeLit {
	e = ast.Unparen(e)
	if u, ok := e.(*ast.UnaryExpr); ok {
		e = ast.Unparen(u.X)
	}
	lit, _ := e.(*ast.CompositeLit)
	return lit
}

// wholeUses are the reads of v as a whole: not a field of it, not a write.
func wholeUses(info *types.Info, body *ast.BlockStmt, v *types.Var) []*ast.Ident {
	skip := map[*ast.Ident]bool{}
	var uses []*ast.Ident
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok {
				skip[id] = true
			}
		case *ast.AssignStmt:
			for _, lhs := range n.Lhs {
				if id, ok := lhs.(*ast.Ident); ok {
					skip[id] = true
				}
			}
		case *ast.Ident:
			if !skip[n] && info.Uses[n] == v {
				uses = append(uses, n)
			}
		}
		return true
	})
	return uses
}

func cross(cols ...[]value) state {
	st := state{make(tuple, len(cols))}
	for k, col := range cols {
		st = set(st, k, col)
	}
	return st
}

func unknownOf(t tuple, names ...string) string {
	var parts []string
	for i, v := range t {
		if v.Unknown != "" {
			parts = append(parts, fmt.Sprintf("%s is not a constant: %s", names[i], v.Unknown))
		}
	}
	return strings.Join(parts, "; ")
}

func sortUnresolved(us []Unresolved) []Unresolved {
	slices.SortFunc(us, func(a, b Unresolved) int { return cmp.Or(cmp.Compare(a.Where, b.Where), cmp.Compare(a.What, b.What)) })
	return slices.Compact(us)
}
