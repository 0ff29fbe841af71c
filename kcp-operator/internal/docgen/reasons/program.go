// Package reasons finds the Events and status conditions the operator
// records, by reading its source: every call of an EventRecorder's Eventf
// and every metav1.Condition the code builds, with the values their
// reason, type and status can take. The values are traced through
// constants, parameters (to every call site), locals (through the
// statements before their use, branches joined), function results,
// closures and struct fields (every value stored into the field), so that
// a reason written as a literal in a controller is found as well as one
// named by a constant. What cannot be traced to a constant is reported as
// Unresolved, naming where it is.
package reasons

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"

	"golang.org/x/tools/go/packages"
)

// Program is the loaded source with the indexes the tracing needs.
type Program struct {
	fset   *token.FileSet
	root   string
	pkgs   []*packages.Package
	funcs  map[types.Object]*fn
	calls  map[types.Object][]site
	fields map[*types.Var][]store
	global map[*types.Var]store
	fnOf   map[ast.Node]*fn
	all    []*fn
	ctxs   map[*fn][]*ctx
}

// fn is a function declaration or literal.
type fn struct {
	obj    types.Object // the *types.Func, or the variable a literal is assigned to; nil otherwise
	name   string
	typ    *ast.FuncType
	body   *ast.BlockStmt
	pkg    *packages.Package
	params map[*types.Var]int
	outer  *fn
}

// site is a call of a function inside another.
type site struct {
	call *ast.CallExpr
	in   *fn
}

// store is a value written into a struct field or a package variable;
// in is nil at package level.
type store struct {
	value ast.Expr
	in    *fn
	pkg   *packages.Package
}

// Load parses and type-checks the packages of patterns in the module at
// dir. The values of dependencies outside them are not traced.
func Load(dir string, patterns ...string) (*Program, error) {
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
			packages.NeedTypes | packages.NeedTypesInfo,
		Dir: dir,
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, fmt.Errorf("loading %v in %s: %w", patterns, dir, err)
	}
	var errs []error
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			errs = append(errs, e)
		}
	})
	if len(errs) > 0 {
		return nil, fmt.Errorf("loading %v in %s: %v", patterns, dir, errs)
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", dir, err)
	}
	p := &Program{
		root: root, pkgs: pkgs, funcs: map[types.Object]*fn{}, calls: map[types.Object][]site{},
		fields: map[*types.Var][]store{}, global: map[*types.Var]store{}, fnOf: map[ast.Node]*fn{},
		ctxs: map[*fn][]*ctx{},
	}
	if len(pkgs) > 0 {
		p.fset = pkgs[0].Fset
	}
	for _, pkg := range pkgs {
		for _, f := range pkg.Syntax {
			p.index(pkg, f)
		}
	}
	return p, nil
}

// index records the functions, calls, field stores and package variables of f.
func (p *Program) index(pkg *packages.Package, f *ast.File) {
	lits := map[*ast.FuncLit]types.Object{}
	var walk func(n ast.Node, in *fn)
	walk = func(n ast.Node, in *fn) {
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				if n.Body == nil {
					return false
				}
				obj := pkg.TypesInfo.Defs[n.Name]
				f := p.newFn(pkg, obj, funcName(n), n.Type, n.Body, nil)
				p.fnOf[n] = f
				walk(n.Body, f)
				return false
			case *ast.FuncLit:
				name := "func literal"
				if in != nil {
					name = in.name + ".func"
				}
				f := p.newFn(pkg, lits[n], name, n.Type, n.Body, in)
				p.fnOf[n] = f
				walk(n.Body, f)
				return false
			case *ast.CallExpr:
				if callee := calleeOf(pkg.TypesInfo, n); callee != nil && in != nil {
					p.calls[callee] = append(p.calls[callee], site{call: n, in: in})
				}
			case *ast.AssignStmt:
				p.indexAssign(pkg, n, in, lits)
			case *ast.ValueSpec:
				p.indexValueSpec(pkg, n, in, lits)
			case *ast.CompositeLit:
				p.indexCompositeLit(pkg, n, in)
			}
			return true
		})
	}
	walk(f, nil)
}

func (p *Program) newFn(pkg *packages.Package, obj types.Object, name string, typ *ast.FuncType, body *ast.BlockStmt, outer *fn) *fn {
	f := &fn{obj: obj, name: name, typ: typ, body: body, pkg: pkg, params: map[*types.Var]int{}, outer: outer}
	i := 0
	for _, field := range typ.Params.List {
		if len(field.Names) == 0 {
			i++
			continue
		}
		for _, id := range field.Names {
			if v, ok := pkg.TypesInfo.Defs[id].(*types.Var); ok {
				f.params[v] = i
			}
			i++
		}
	}
	if obj != nil {
		p.funcs[obj] = f
	}
	p.all = append(p.all, f)
	return f
}

func (p *Program) indexAssign(pkg *packages.Package, n *ast.AssignStmt, in *fn, lits map[*ast.FuncLit]types.Object) {
	if len(n.Lhs) != len(n.Rhs) {
		return
	}
	for i, lhs := range n.Lhs {
		switch lhs := ast.Unparen(lhs).(type) {
		case *ast.Ident:
			if lit, ok := ast.Unparen(n.Rhs[i]).(*ast.FuncLit); ok {
				if obj := objectOf(pkg.TypesInfo, lhs); obj != nil {
					lits[lit] = obj
				}
			}
		case *ast.SelectorExpr:
			if field := fieldOf(pkg.TypesInfo, lhs); field != nil && n.Tok == token.ASSIGN {
				p.fields[field] = append(p.fields[field], store{value: n.Rhs[i], in: in, pkg: pkg})
			}
		}
	}
}

func (p *Program) indexValueSpec(pkg *packages.Package, n *ast.ValueSpec, in *fn, lits map[*ast.FuncLit]types.Object) {
	if len(n.Names) != len(n.Values) {
		return
	}
	for i, id := range n.Names {
		v, ok := pkg.TypesInfo.Defs[id].(*types.Var)
		if !ok {
			continue
		}
		if lit, ok := ast.Unparen(n.Values[i]).(*ast.FuncLit); ok {
			lits[lit] = v
		}
		if in == nil {
			p.global[v] = store{value: n.Values[i], pkg: pkg}
		}
	}
}

// indexCompositeLit records the fields a struct literal sets, keyed or by position.
func (p *Program) indexCompositeLit(pkg *packages.Package, n *ast.CompositeLit, in *fn) {
	st, ok := underlyingStruct(pkg.TypesInfo.TypeOf(n))
	if !ok {
		return
	}
	for i, elt := range n.Elts {
		var field *types.Var
		value := elt
		if kv, ok := elt.(*ast.KeyValueExpr); ok {
			key, ok := kv.Key.(*ast.Ident)
			if !ok {
				continue
			}
			field, _ = pkg.TypesInfo.Uses[key].(*types.Var)
			value = kv.Value
		} else if i < st.NumFields() {
			field = st.Field(i)
		}
		if field != nil {
			p.fields[field] = append(p.fields[field], store{value: value, in: in, pkg: pkg})
		}
	}
}

// rel is pos as a path relative to the module, with its line.
func (p *Program) rel(pos token.Pos) string {
	position := p.fset.Position(pos)
	file, err := filepath.Rel(p.root, position.Filename)
	if err != nil {
		file = position.Filename
	}
	return fmt.Sprintf("%s:%d", filepath.ToSlash(file), position.Line)
}

// dir is the folder of pos's file relative to the module.
func (p *Program) dir(pos token.Pos) string {
	file, err := filepath.Rel(p.root, p.fset.Position(pos).Filename)
	if err != nil {
		return p.fset.Position(pos).Filename
	}
	return filepath.ToSlash(filepath.Dir(file))
}

func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	return types.ExprString(d.Recv.List[0].Type) + "." + d.Name.Name
}

// calleeOf is the function or function variable a call calls, nil for
// conversions, builtins and calls of expressions.
func calleeOf(info *types.Info, call *ast.CallExpr) types.Object {
	fun := ast.Unparen(call.Fun)
	if ix, ok := fun.(*ast.IndexExpr); ok {
		fun = ix.X
	}
	var obj types.Object
	switch f := fun.(type) {
	case *ast.Ident:
		obj = info.Uses[f]
	case *ast.SelectorExpr:
		if sel := info.Selections[f]; sel != nil {
			obj = sel.Obj()
		} else {
			obj = info.Uses[f.Sel]
		}
	}
	switch o := obj.(type) {
	case *types.Func:
		return o.Origin()
	case *types.Var:
		return o.Origin()
	}
	return nil
}

func objectOf(info *types.Info, id *ast.Ident) types.Object {
	if obj := info.Defs[id]; obj != nil {
		return obj
	}
	return info.Uses[id]
}

// fieldOf is the struct field a selector selects, nil for anything else.
func fieldOf(info *types.Info, sel *ast.SelectorExpr) *types.Var {
	s := info.Selections[sel]
	if s == nil || s.Kind() != types.FieldVal {
		return nil
	}
	v, _ := s.Obj().(*types.Var)
	return v
}

func underlyingStruct(t types.Type) (*types.Struct, bool) {
	if t == nil {
		return nil, false
	}
	if ptr, ok := t.Underlying().(*types.Pointer); ok {
		t = ptr.Elem()
	}
	st, ok := t.Underlying().(*types.Struct)
	return st, ok
}
