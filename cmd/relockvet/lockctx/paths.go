package lockctx

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"

	"golang.org/x/tools/go/analysis/passes/ctrlflow"
	"golang.org/x/tools/go/cfg"
	"golang.org/x/tools/go/types/typeutil"
)

// checkPaths reports l when some path from it to a return of its
// function never releases the context it returned, as lostcancel does
// for cancel functions. It checks only what it can prove: see the
// package doc's "What is not reported".
func (f *funcInfo) checkPaths(l *lockCall) {
	info := f.pass.TypesInfo
	if l.release == "Resign" || l.stmt == nil || f.closes || !sameExpr(info, l.recv, l.recv) {
		return
	}
	// A variable that the lock statement defines has no value from
	// before it, and every use of it follows it in its scope.
	v, ok := info.Defs[l.ctx].(*types.Var)
	if !ok {
		return
	}
	// Given a context that carries no owner, the lock call makes one,
	// and the context it returns (with its children) is the owner's
	// only name.
	if _, ok := f.origin(l.call.Args[0]); !ok {
		return
	}
	family, ok := f.confined(l, v)
	if !ok {
		return
	}
	cfgs := f.pass.ResultOf[ctrlflow.Analyzer].(*ctrlflow.CFGs)
	var g *cfg.CFG
	switch fn := l.fn.(type) {
	case *ast.FuncDecl:
		g = cfgs.FuncDecl(fn)
	case *ast.FuncLit:
		g = cfgs.FuncLit(fn)
	}
	if ret := f.unreleasedPath(g, l, family); ret != nil {
		f.pass.Reportf(l.call.Pos(), "%s, the context %s returned, is not unlocked on every path: the function can return at line %d without %s.%s(%s)",
			v.Name(), l.name, f.pass.Fset.Position(ret.Pos()).Line, types.ExprString(l.recv), l.release, v.Name())
	}
}

// confined returns v and the contexts derived from it when none of them
// escapes l's function: each use is a release of l's lock, a method call
// (Done, Err), context.Cause, or a derivation (see derives) whose result
// is a variable it defines, which joins the family. ok is false when a
// use is anything else, or lies in a function literal other than one
// deferred where it is written (defer func() { ... }()).
func (f *funcInfo) confined(l *lockCall, v *types.Var) (family map[*types.Var]bool, ok bool) {
	family, ok = map[*types.Var]bool{v: true}, true
	// Preorder visits a derived variable's definition before its uses.
	ast.PreorderStack(l.fn, nil, func(n ast.Node, stack []ast.Node) bool {
		if id, isIdent := n.(*ast.Ident); isIdent && ok {
			if u, isVar := f.pass.TypesInfo.Uses[id].(*types.Var); isVar && family[u] {
				ok = f.confinedUse(l, family, id, stack)
			}
		}
		return ok
	})
	return family, ok
}

// confinedUse reports whether the use id of a family variable, under
// stack, keeps the family confined; it adds the variable the use
// derives, if any.
func (f *funcInfo) confinedUse(l *lockCall, family map[*types.Var]bool, id *ast.Ident, stack []ast.Node) bool {
	info := f.pass.TypesInfo
	for i := 1; i < len(stack); i++ {
		if _, ok := stack[i].(*ast.FuncLit); ok && !deferredLit(stack, i) {
			return false
		}
	}
	// Climb from the use through parentheses and derivations.
	var e ast.Expr = id
	derived := false
	i := len(stack) - 1
climb:
	for ; i > 0; i-- {
		switch p := stack[i].(type) {
		case *ast.ParenExpr:
			e = p
		case *ast.CallExpr:
			if len(p.Args) == 0 || p.Args[0] != e || !derives(contextFunc(info, p)) {
				break climb
			}
			e, derived = p, true
		default:
			break climb
		}
	}
	switch p := stack[i].(type) {
	case *ast.SelectorExpr:
		return p.X == e
	case *ast.CallExpr:
		return len(p.Args) > 0 && p.Args[0] == e &&
			(contextFunc(info, p) == "Cause" || f.isRelease(l, p))
	case *ast.AssignStmt:
		// uctx, cancel := context.WithTimeout(context.WithoutCancel(lctx), d)
		if !derived || p.Tok != token.DEFINE || len(p.Rhs) != 1 {
			return false
		}
		d, _ := p.Lhs[0].(*ast.Ident)
		dv, ok := info.Defs[d].(*types.Var)
		if ok {
			family[dv] = true
		}
		return ok
	}
	return false
}

// deferredLit reports whether the function literal stack[i] is called
// by a defer statement: defer func() { ... }().
func deferredLit(stack []ast.Node, i int) bool {
	if i < 2 {
		return false
	}
	call, isCall := stack[i-1].(*ast.CallExpr)
	d, isDefer := stack[i-2].(*ast.DeferStmt)
	return isCall && isDefer && d.Call == call && ast.Unparen(call.Fun) == stack[i]
}

// isRelease reports whether call is l's release: the method that
// releases l's hold, on l's receiver.
func (f *funcInfo) isRelease(l *lockCall, call *ast.CallExpr) bool {
	m, recv := relockMethod(f.pass.TypesInfo, call)
	return m != nil && m.Name() == l.release && len(call.Args) == 1 && sameExpr(f.pass.TypesInfo, recv, l.recv)
}

// inFamily reports whether e is a family variable or a derivation of one.
func (f *funcInfo) inFamily(family map[*types.Var]bool, e ast.Expr) bool {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		v, ok := f.pass.TypesInfo.Uses[e].(*types.Var)
		return ok && family[v]
	case *ast.CallExpr:
		return len(e.Args) > 0 && derives(contextFunc(f.pass.TypesInfo, e)) && f.inFamily(family, e.Args[0])
	}
	return false
}

// unreleasedPath returns a return statement that some path in g from
// l's statement reaches with no release of l given a family context, or
// nil. A release prunes every path through it: a deferred one runs at
// each return after it, a direct one has released the hold. So does a
// receive from a family context's Done: the hold was released or lost by
// then, or a parent context ended, which is given the benefit of the
// doubt. Paths on which the lock call failed are dropped (see
// failBranch).
func (f *funcInfo) unreleasedPath(g *cfg.CFG, l *lockCall, family map[*types.Var]bool) *ast.ReturnStmt {
	ends := func(nodes []ast.Node) bool {
		found := false
		for _, n := range nodes {
			ast.Inspect(n, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CallExpr:
					found = found || f.isRelease(l, n) && f.inFamily(family, n.Args[0])
				case *ast.UnaryExpr:
					found = found || n.Op == token.ARROW && f.isDone(family, n.X)
				}
				return !found
			})
		}
		return found
	}
	var errVar *types.Var
	if l.err != nil {
		errVar, _ = f.pass.TypesInfo.ObjectOf(l.err).(*types.Var)
	}
	seen := map[*cfg.Block]bool{}
	// visit follows the paths through nodes, then succs. While errKept
	// holds, nothing on the path since the lock statement has assigned
	// its error variable, which still holds the lock call's error.
	var visit func(nodes []ast.Node, succs []*cfg.Block, errKept bool) *ast.ReturnStmt
	visit = func(nodes []ast.Node, succs []*cfg.Block, errKept bool) *ast.ReturnStmt {
		if ends(nodes) {
			return nil
		}
		if len(nodes) > 0 {
			if ret, ok := nodes[len(nodes)-1].(*ast.ReturnStmt); ok {
				return ret
			}
		}
		errKept = errKept && !f.assignsTo(errVar, nodes)
		if errKept {
			if k := f.failBranch(errVar, nodes, succs); k >= 0 {
				succs = succs[1-k : 2-k]
			}
		}
		for _, b := range succs {
			if seen[b] {
				continue
			}
			seen[b] = true
			if ret := visit(b.Nodes, b.Succs, errKept); ret != nil {
				return ret
			}
		}
		return nil
	}
	for _, b := range g.Blocks {
		for i, n := range b.Nodes {
			if n == l.stmt {
				seen[b] = true
				return visit(b.Nodes[i+1:], b.Succs, errVar != nil)
			}
		}
	}
	return nil
}

// isDone reports whether e is a call of Done on a family context.
func (f *funcInfo) isDone(family map[*types.Var]bool, e ast.Expr) bool {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Done" && f.inFamily(family, sel.X)
}

// assignsTo reports whether nodes may assign v: an assignment, a
// declaration, a range clause or a pointer taken (&v), function literals
// included.
func (f *funcInfo) assignsTo(v *types.Var, nodes []ast.Node) bool {
	found := false
	for _, n := range nodes {
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				found = found || slices.ContainsFunc(n.Lhs, func(e ast.Expr) bool { return f.is(e, v) })
			case *ast.RangeStmt:
				found = found || f.is(n.Key, v) || f.is(n.Value, v)
			case *ast.UnaryExpr:
				found = found || n.Op == token.AND && f.is(n.X, v)
			}
			return !found
		})
	}
	return found
}

// failBranch returns the index in succs of the branch taken only when
// err is not nil, when nodes end in a condition on err (an if
// condition, a tagless switch case); otherwise -1.
func (f *funcInfo) failBranch(err *types.Var, nodes []ast.Node, succs []*cfg.Block) int {
	if len(nodes) == 0 || len(succs) != 2 {
		return -1
	}
	cond, ok := nodes[len(nodes)-1].(ast.Expr)
	if !ok || !f.conds[cond] {
		return -1
	}
	switch {
	case f.failsWhen(err, cond, true):
		return 0
	case f.failsWhen(err, cond, false):
		return 1
	}
	return -1
}

// failsWhen reports whether cond evaluating to outcome implies that err
// is not nil. errors.Is(err, target) is taken to imply it, target being
// a sentinel error rather than nil.
func (f *funcInfo) failsWhen(err *types.Var, cond ast.Expr, outcome bool) bool {
	switch c := ast.Unparen(cond).(type) {
	case *ast.UnaryExpr:
		return c.Op == token.NOT && f.failsWhen(err, c.X, !outcome)
	case *ast.BinaryExpr:
		switch c.Op {
		case token.NEQ, token.EQL:
			return outcome == (c.Op == token.NEQ) &&
				(f.is(c.X, err) && f.isNil(c.Y) || f.isNil(c.X) && f.is(c.Y, err))
		case token.LAND:
			return outcome && (f.failsWhen(err, c.X, true) || f.failsWhen(err, c.Y, true))
		case token.LOR:
			return !outcome && (f.failsWhen(err, c.X, false) || f.failsWhen(err, c.Y, false))
		}
	case *ast.CallExpr:
		fn, ok := typeutil.Callee(f.pass.TypesInfo, c).(*types.Func)
		return outcome && ok && fn.Pkg() != nil && fn.Pkg().Path() == "errors" &&
			(fn.Name() == "Is" || fn.Name() == "As") && len(c.Args) == 2 && f.is(c.Args[0], err)
	}
	return false
}

// is reports whether e is the variable v.
func (f *funcInfo) is(e ast.Expr, v *types.Var) bool {
	id, ok := ast.Unparen(e).(*ast.Ident)
	return ok && f.pass.TypesInfo.ObjectOf(id) == v
}

func (f *funcInfo) isNil(e ast.Expr) bool {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok {
		return false
	}
	_, isNil := f.pass.TypesInfo.Uses[id].(*types.Nil)
	return isNil
}
