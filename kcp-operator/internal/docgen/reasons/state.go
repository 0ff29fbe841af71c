package reasons

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// loc is a local variable, or one field of a local struct variable.
type loc struct {
	v     *types.Var
	field string
}

// tuple holds one value per tracked loc; a state is every tuple the locs
// may hold together at a point of the function.
type tuple []value

type state []tuple

// localAt evaluates the local v where use reads it, in c.
func (ev *evaluator) localAt(v *types.Var, use ast.Node, c *ctx) []value {
	var out []value
	for _, t := range ev.track([]loc{{v: v}}, use.Pos(), c) {
		out = append(out, t[0])
	}
	return dedup(out)
}

// track runs c.fn's statements up to the one that holds pos and returns
// what locs may hold there: assignments replace values, a branch whose
// condition is known runs alone, other branches are joined, a branch that
// returns ends its path, and loops may or may not have run.
func (ev *evaluator) track(locs []loc, pos token.Pos, c *ctx) state {
	start := make(tuple, len(locs))
	for i, l := range locs {
		start[i] = value{Unknown: l.v.Name() + " before it is set"}
	}
	t := &tracker{ev: ev, locs: locs, c: c}
	st, _ := t.exec(c.fn.body.List, state{start}, pos)
	return st
}

type tracker struct {
	ev   *evaluator
	locs []loc
	c    *ctx
}

func within(n ast.Node, pos token.Pos) bool {
	return n != nil && n.Pos() <= pos && pos < n.End()
}

// exec runs stmts up to the one that holds pos, or all of them; ended
// says every path returned before.
func (t *tracker) exec(stmts []ast.Stmt, st state, pos token.Pos) (out state, ended bool) {
	for _, s := range stmts {
		if within(s, pos) {
			return t.enter(s, st, pos), false
		}
		var end bool
		if st, end = t.apply(s, st); end {
			return st, true
		}
	}
	return st, false
}

// enter runs the part of s before pos.
func (t *tracker) enter(s ast.Stmt, st state, pos token.Pos) state {
	switch s := s.(type) {
	case *ast.BlockStmt:
		st, _ = t.exec(s.List, st, pos)
	case *ast.IfStmt:
		st = t.init(s.Init, st)
		switch {
		case within(s.Body, pos):
			st, _ = t.exec(s.Body.List, st, pos)
		case within(s.Else, pos):
			st = t.enter(s.Else, st, pos)
		}
	case *ast.ForStmt:
		st = t.init(s.Init, st)
		st = t.loop(s.Body, st)
		st, _ = t.exec(s.Body.List, st, pos)
	case *ast.RangeStmt:
		st = t.loop(s.Body, st)
		st, _ = t.exec(s.Body.List, st, pos)
	case *ast.SwitchStmt:
		st = t.init(s.Init, st)
		st, _ = t.exec(s.Body.List, st, pos)
	case *ast.TypeSwitchStmt:
		st = t.init(s.Init, st)
		st, _ = t.exec(s.Body.List, st, pos)
	case *ast.SelectStmt:
		st, _ = t.exec(s.Body.List, st, pos)
	case *ast.CaseClause:
		st, _ = t.exec(s.Body, st, pos)
	case *ast.CommClause:
		st, _ = t.exec(s.Body, st, pos)
	case *ast.LabeledStmt:
		st = t.enter(s.Stmt, st, pos)
	}
	return st
}

func (t *tracker) init(s ast.Stmt, st state) state {
	if s == nil {
		return st
	}
	st, _ = t.apply(s, st)
	return st
}

// apply runs s; ended says s returns on every path.
func (t *tracker) apply(s ast.Stmt, st state) (state, bool) {
	switch s := s.(type) {
	case *ast.AssignStmt:
		return t.assign(s, st), false
	case *ast.DeclStmt:
		return t.declare(s, st), false
	case *ast.BlockStmt:
		st, ended := t.exec(s.List, st, token.NoPos)
		return st, ended
	case *ast.LabeledStmt:
		return t.apply(s.Stmt, st)
	case *ast.IfStmt:
		return t.branch(s, t.init(s.Init, st))
	case *ast.SwitchStmt:
		return t.clauses(s.Body, t.init(s.Init, st))
	case *ast.TypeSwitchStmt:
		return t.clauses(s.Body, t.init(s.Init, st))
	case *ast.SelectStmt:
		return t.clauses(s.Body, st)
	case *ast.ForStmt:
		return t.loop(s.Body, t.init(s.Init, st)), false
	case *ast.RangeStmt:
		return t.loop(s.Body, st), false
	case *ast.ReturnStmt, *ast.BranchStmt:
		return st, true
	case *ast.ExprStmt:
		if call, ok := s.X.(*ast.CallExpr); ok {
			if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "panic" {
				return st, true
			}
		}
	}
	return st, false
}

func (t *tracker) branch(s *ast.IfStmt, st state) (state, bool) {
	conds := t.ev.eval(s.Cond, t.c)
	can := func(b string) bool {
		for _, v := range conds {
			if v.S == b || v.Unknown != "" {
				return true
			}
		}
		return false
	}
	var out state
	ended := true
	if can("true") {
		then, end := t.exec(s.Body.List, st, token.NoPos)
		if !end {
			out, ended = append(out, then...), false
		}
	}
	if can("false") {
		otherwise, end := st, false
		if s.Else != nil {
			otherwise, end = t.apply(s.Else, st)
		}
		if !end {
			out, ended = append(out, otherwise...), false
		}
	}
	return dedupState(out), ended
}

// clauses joins the cases of a switch or select; without a default, no
// case may run.
func (t *tracker) clauses(body *ast.BlockStmt, st state) (state, bool) {
	var out state
	hasDefault, ended := false, true
	for _, c := range body.List {
		var stmts []ast.Stmt
		switch c := c.(type) {
		case *ast.CaseClause:
			stmts, hasDefault = c.Body, hasDefault || c.List == nil
		case *ast.CommClause:
			stmts, hasDefault = c.Body, hasDefault || c.Comm == nil
		}
		got, end := t.exec(stmts, st, token.NoPos)
		if !end {
			out, ended = append(out, got...), false
		}
	}
	if !hasDefault {
		out, ended = append(out, st...), false
	}
	return dedupState(out), ended
}

// loop joins the state before a loop with every value its body assigns.
func (t *tracker) loop(body *ast.BlockStmt, st state) state {
	out := st
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.AssignStmt:
			out = append(out, t.assign(n, st)...)
		}
		return true
	})
	return dedupState(out)
}

func (t *tracker) assign(s *ast.AssignStmt, st state) state {
	for i, lhs := range s.Lhs {
		for k, l := range t.locs {
			whole, ok := t.target(lhs, l)
			if !ok {
				continue
			}
			var vals []value
			switch {
			case len(s.Lhs) == len(s.Rhs) && whole:
				vals = t.fieldOf(s.Rhs[i], l)
			case len(s.Lhs) == len(s.Rhs):
				vals = t.ev.eval(s.Rhs[i], t.c)
			case len(s.Rhs) == 1:
				if call, ok := ast.Unparen(s.Rhs[0]).(*ast.CallExpr); ok && !whole {
					vals = t.ev.call(call, t.c, i)
				}
			}
			if len(vals) == 0 {
				vals = []value{{Unknown: types.ExprString(lhs) + " = " + types.ExprString(s.Rhs[0])}}
			}
			if s.Tok == token.ADD_ASSIGN {
				vals = concat(st, k, vals)
			}
			st = set(st, k, vals)
		}
	}
	return st
}

// target reports whether lhs writes l: the variable itself, or the field
// (directly, or by assigning the whole struct: whole).
func (t *tracker) target(lhs ast.Expr, l loc) (whole, ok bool) {
	info := t.c.info(lhs)
	switch lhs := ast.Unparen(lhs).(type) {
	case *ast.Ident:
		if objectOf(info, lhs) != l.v {
			return false, false
		}
		return l.field != "", true
	case *ast.SelectorExpr:
		id, isIdent := ast.Unparen(lhs.X).(*ast.Ident)
		if isIdent && l.field != "" && lhs.Sel.Name == l.field && objectOf(info, id) == l.v {
			return false, true
		}
	}
	return false, false
}

// fieldOf is field l.field of a struct value assigned whole: a literal's
// element, or "" when the literal leaves it out.
func (t *tracker) fieldOf(e ast.Expr, l loc) []value {
	e = ast.Unparen(e)
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = ast.Unparen(u.X)
	}
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return []value{{Unknown: "field " + l.field + " of " + types.ExprString(e)}}
	}
	for _, elt := range lit.Elts {
		if kv, ok := elt.(*ast.KeyValueExpr); ok {
			if key, ok := kv.Key.(*ast.Ident); ok && key.Name == l.field {
				return t.ev.eval(kv.Value, t.c)
			}
		}
	}
	return []value{known("")}
}

func (t *tracker) declare(s *ast.DeclStmt, st state) state {
	gen, ok := s.Decl.(*ast.GenDecl)
	if !ok || gen.Tok != token.VAR {
		return st
	}
	for _, spec := range gen.Specs {
		vs := spec.(*ast.ValueSpec)
		for i, id := range vs.Names {
			for k, l := range t.locs {
				if t.c.info(id).Defs[id] != l.v {
					continue
				}
				vals := []value{known("")}
				switch {
				case len(vs.Values) == len(vs.Names) && l.field != "":
					vals = t.fieldOf(vs.Values[i], l)
				case len(vs.Values) == len(vs.Names):
					vals = t.ev.eval(vs.Values[i], t.c)
				}
				st = set(st, k, vals)
			}
		}
	}
	return st
}

func set(st state, k int, vals []value) state {
	out := make(state, 0, len(st)*len(vals))
	for _, tp := range st {
		for _, v := range vals {
			n := append(tuple(nil), tp...)
			n[k] = v
			out = append(out, n)
		}
	}
	return dedupState(out)
}

func concat(st state, k int, vals []value) []value {
	var out []value
	for _, tp := range st {
		for _, v := range vals {
			if tp[k].Unknown != "" || v.Unknown != "" {
				out = append(out, value{Unknown: "a concatenation"})
				continue
			}
			out = append(out, known(tp[k].S+v.S))
		}
	}
	return dedup(out)
}

func dedupState(st state) state {
	seen := map[string]bool{}
	out := st[:0:0]
	for _, tp := range st {
		var b strings.Builder
		for _, v := range tp {
			b.WriteString(v.S + "\x00" + v.Unknown + "\x01")
		}
		if !seen[b.String()] {
			seen[b.String()] = true
			out = append(out, tp)
		}
	}
	return out
}
