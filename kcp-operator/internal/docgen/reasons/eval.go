package reasons

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strconv"

	"golang.org/x/tools/go/packages"
)

// value is one value an expression may have: a string (a bool is "true"
// or "false"), or, when Unknown is set, a value that could not be traced.
// A conversion of a variable of a named type T reads "<T>".
type value struct {
	S       string
	Unknown string
}

func known(s string) value { return value{S: s} }

// ctx binds the parameters of a function to the arguments of one call
// site, evaluated in the caller's ctx. A ctx without a site binds nothing.
type ctx struct {
	fn     *fn
	pkg    *packages.Package
	site   *ast.CallExpr
	caller *ctx
	depth  int
}

// maxDepth bounds call chains and nested evaluations.
const maxDepth = 12

type evaluator struct {
	p      *Program
	active map[evalKey]bool
}

type evalKey struct {
	e ast.Expr
	c *ctx
}

func (p *Program) newEvaluator() *evaluator {
	return &evaluator{p: p, active: map[evalKey]bool{}}
}

func (p *Program) unbound(f *fn) *ctx { return &ctx{fn: f, pkg: f.pkg} }

// contexts are the call sites of f, each with its caller's contexts when
// the arguments depend on the caller's own variables; a function that
// nothing calls statically has one ctx that binds nothing.
func (p *Program) contexts(f *fn, depth int) []*ctx {
	if f.obj == nil || len(f.params) == 0 || depth > maxDepth {
		return []*ctx{p.unbound(f)}
	}
	if cs, ok := p.ctxs[f]; ok {
		if cs == nil { // being computed: a recursive call chain
			return []*ctx{p.unbound(f)}
		}
		return cs
	}
	p.ctxs[f] = nil
	var out []*ctx
	for _, s := range p.calls[f.obj] {
		callers := []*ctx{p.unbound(s.in)}
		if dependsOnLocals(s.in, s.call) {
			callers = p.contexts(s.in, depth+1)
		}
		for _, c := range callers {
			out = append(out, &ctx{fn: f, pkg: f.pkg, site: s.call, caller: c, depth: c.depth + 1})
		}
	}
	if len(out) == 0 {
		out = []*ctx{p.unbound(f)}
	}
	p.ctxs[f] = out
	return out
}

// dependsOnLocals reports whether call's arguments read variables of in
// (its parameters or locals), whose values depend on in's callers.
func dependsOnLocals(in *fn, call *ast.CallExpr) bool {
	found := false
	for _, a := range call.Args {
		ast.Inspect(a, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				if v, ok := in.pkg.TypesInfo.Uses[id].(*types.Var); ok && !v.IsField() && v.Pos() >= in.typ.Pos() && v.Pos() < in.body.End() {
					found = true
				}
			}
			return !found
		})
	}
	return found
}

// eval returns the values e may have in c.
func (ev *evaluator) eval(e ast.Expr, c *ctx) []value {
	key := evalKey{e, c}
	if ev.active[key] || c.depth > maxDepth {
		return []value{{Unknown: "a value that depends on itself"}}
	}
	ev.active[key] = true
	defer delete(ev.active, key)
	info := c.info(e)
	if tv, ok := info.Types[e]; ok && tv.Value != nil {
		return []value{constantValue(tv.Value)}
	}
	switch e := e.(type) {
	case *ast.ParenExpr:
		return ev.eval(e.X, c)
	case *ast.UnaryExpr:
		if e.Op == token.NOT {
			return negate(ev.eval(e.X, c))
		}
	case *ast.BinaryExpr:
		return ev.binary(e, c)
	case *ast.CallExpr:
		return ev.call(e, c, 0)
	case *ast.Ident:
		return ev.ident(e, c)
	case *ast.SelectorExpr:
		if field := fieldOf(info, e); field != nil {
			return ev.field(field)
		}
		if v, ok := info.Uses[e.Sel].(*types.Var); ok {
			return ev.variable(v, e, c)
		}
	}
	return []value{{Unknown: types.ExprString(e)}}
}

func (c *ctx) info(ast.Node) *types.Info { return c.pkg.TypesInfo }

func constantValue(v constant.Value) value {
	switch v.Kind() {
	case constant.String:
		return known(constant.StringVal(v))
	case constant.Bool:
		return known(strconv.FormatBool(constant.BoolVal(v)))
	default:
		return known(v.ExactString())
	}
}

func negate(vs []value) []value {
	out := make([]value, 0, len(vs))
	for _, v := range vs {
		switch v.S {
		case "true":
			out = append(out, known("false"))
		case "false":
			out = append(out, known("true"))
		default:
			out = append(out, v)
		}
	}
	return out
}

func (ev *evaluator) binary(e *ast.BinaryExpr, c *ctx) []value {
	switch e.Op {
	case token.ADD:
		var out []value
		for _, l := range ev.eval(e.X, c) {
			for _, r := range ev.eval(e.Y, c) {
				if l.Unknown != "" || r.Unknown != "" {
					out = append(out, value{Unknown: types.ExprString(e)})
					continue
				}
				out = append(out, known(l.S+r.S))
			}
		}
		return dedup(out)
	case token.EQL, token.NEQ, token.LAND, token.LOR, token.LSS, token.GTR, token.LEQ, token.GEQ:
		return []value{known("false"), known("true")}
	}
	return []value{{Unknown: types.ExprString(e)}}
}

// call evaluates result i of a call: a conversion, or the return
// statements of a function of the loaded packages with its parameters
// bound to the call's arguments.
func (ev *evaluator) call(e *ast.CallExpr, c *ctx, i int) []value {
	info := c.info(e)
	if tv, ok := info.Types[e.Fun]; ok && tv.IsType() && len(e.Args) == 1 {
		return ev.conversion(e.Args[0], c)
	}
	callee := calleeOf(info, e)
	f := ev.p.funcs[callee]
	if f == nil {
		return []value{{Unknown: "the result of " + types.ExprString(e.Fun)}}
	}
	inner := &ctx{fn: f, pkg: f.pkg, site: e, caller: c, depth: c.depth + 1}
	results := f.typ.Results.NumFields()
	var out []value
	for _, ret := range returns(f.body) {
		switch {
		case len(ret.Results) == 0:
			out = append(out, value{Unknown: "a bare return in " + f.name})
		case len(ret.Results) == 1 && results > 1:
			if call, ok := ret.Results[0].(*ast.CallExpr); ok {
				out = append(out, ev.call(call, inner, i)...)
			} else {
				out = append(out, value{Unknown: "a result of " + f.name})
			}
		case i < len(ret.Results):
			out = append(out, ev.eval(ret.Results[i], inner)...)
		}
	}
	return dedup(out)
}

// conversion keeps a constant and names the type of anything else: the
// reason "State"+string(kyma.Status.State) reads "State<State>".
func (ev *evaluator) conversion(arg ast.Expr, c *ctx) []value {
	if tv, ok := c.info(arg).Types[arg]; ok && tv.Value != nil {
		return []value{constantValue(tv.Value)}
	}
	if named, ok := types.Unalias(c.info(arg).TypeOf(arg)).(*types.Named); ok {
		return []value{known("<" + named.Obj().Name() + ">")}
	}
	return ev.eval(arg, c)
}

func (ev *evaluator) ident(id *ast.Ident, c *ctx) []value {
	v, ok := c.info(id).Uses[id].(*types.Var)
	if !ok {
		return []value{{Unknown: id.Name}}
	}
	return ev.variable(v, id, c)
}

// variable evaluates v where use reads it: a parameter by its argument, a
// package variable by its initializer, a local by the statements before.
func (ev *evaluator) variable(v *types.Var, use ast.Expr, c *ctx) []value {
	if g, ok := ev.p.global[v]; ok {
		return ev.eval(g.value, &ctx{pkg: g.pkg})
	}
	for f := c.fn; f != nil; f = f.outer {
		if _, ok := f.params[v]; ok {
			return ev.param(v, f, c)
		}
	}
	decl := ev.p.declaring(v)
	if decl == nil {
		return []value{{Unknown: fmt.Sprintf("%s (declared outside the loaded packages)", v.Name())}}
	}
	if c.fn == decl {
		return ev.localAt(v, use, c)
	}
	// A variable a closure captured: its function's callers decide.
	var out []value
	for _, cc := range ev.p.contexts(decl, c.depth+1) {
		out = append(out, ev.localAt(v, use, cc)...)
	}
	return dedup(out)
}

func (ev *evaluator) param(v *types.Var, f *fn, c *ctx) []value {
	if c.fn == f && c.site != nil {
		i := f.params[v]
		if i >= len(c.site.Args) || f.typ.Params.NumFields() > 0 && isVariadic(f, i) {
			return []value{{Unknown: "a variadic argument of " + f.name}}
		}
		return ev.eval(c.site.Args[i], c.caller)
	}
	ctxs := ev.p.contexts(f, c.depth+1)
	if len(ctxs) == 1 && ctxs[0].site == nil {
		return []value{{Unknown: fmt.Sprintf("parameter %s of %s, which nothing calls directly", v.Name(), f.name)}}
	}
	var out []value
	for _, cc := range ctxs {
		out = append(out, ev.param(v, f, cc)...)
	}
	return dedup(out)
}

func isVariadic(f *fn, i int) bool {
	last := f.typ.Params.List[len(f.typ.Params.List)-1]
	_, ok := last.Type.(*ast.Ellipsis)
	return ok && i >= f.typ.Params.NumFields()-1
}

// field is every value stored into a struct field anywhere in the loaded
// packages.
func (ev *evaluator) field(field *types.Var) []value {
	stores := ev.p.fields[field.Origin()]
	if len(stores) == 0 {
		return []value{{Unknown: "field " + field.Name() + ", which the loaded packages never set"}}
	}
	var out []value
	for _, s := range stores {
		if s.in == nil {
			out = append(out, ev.eval(s.value, &ctx{pkg: s.pkg})...)
			continue
		}
		for _, c := range ev.p.contexts(s.in, 1) {
			out = append(out, ev.eval(s.value, c)...)
		}
	}
	return dedup(out)
}

// declaring is the innermost function whose source holds n's position.
func (p *Program) declaring(n interface{ Pos() token.Pos }) *fn {
	var best *fn
	for _, f := range p.all {
		if f.typ.Pos() <= n.Pos() && n.Pos() < f.body.End() && (best == nil || f.typ.Pos() > best.typ.Pos()) {
			best = f
		}
	}
	return best
}

// returns are the return statements of body, not of the closures in it.
func returns(body *ast.BlockStmt) []*ast.ReturnStmt {
	var out []*ast.ReturnStmt
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			out = append(out, n)
		}
		return true
	})
	return out
}

func dedup(vs []value) []value {
	seen := map[value]bool{}
	out := vs[:0:0]
	for _, v := range vs {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
