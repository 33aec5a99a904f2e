package lockctx

import (
	"go/ast"
	"go/types"
)

// An acquire is a call that may fail and whose success a release
// undoes: a lock call (Lock, TryLock, RLock, TryRLock: its context), an
// expirable semaphore's Acquire or TryAcquire (its *permits.Permit), or a
// counting semaphore's (nothing but its error).
type acquire struct {
	call *ast.CallExpr
	recv ast.Expr
	name string     // "mu.Lock", as the reports name it
	held *types.Var // the context or the permit; nil when there is none
	err  *types.Var
}

// acquires are the methods checkEarlyDefers follows.
var acquires = map[string]bool{
	"Lock": true, "TryLock": true, "RLock": true, "TryRLock": true,
	"Acquire": true, "TryAcquire": true,
}

// checkEarlyDefers reports a deferred release that comes before the
// error check of the acquire it releases:
//
//	lctx, err := mu.Lock(ctx)
//	defer mu.Unlock(lctx)
//	if err != nil {
//
// When the acquire fails, its context or permit is nil and the release
// returns an error (a counting semaphore's Release adds permits nobody
// took). It follows the statements after each acquire in its block
// until the first one that names the acquire's error variable: a
// release deferred before that, whose call names the context or the
// permit (or, for a counting semaphore, is the Release of the same
// receiver), is reported.
func checkEarlyDefers(f *funcInfo, fd *ast.FuncDecl) {
	ast.Inspect(fd, func(n ast.Node) bool {
		var list []ast.Stmt
		switch n := n.(type) {
		case *ast.BlockStmt:
			list = n.List
		case *ast.CaseClause:
			list = n.Body
		case *ast.CommClause:
			list = n.Body
		}
		for i, s := range list {
			if a := f.acquireOf(s); a != nil {
				f.earlyDefer(a, list[i+1:])
			}
		}
		return true
	})
}

// acquireOf returns the acquire that s assigns, if s is one whose error
// goes to a variable: v, err := mu.Lock(ctx), or err = sem.Acquire(ctx, 1).
func (f *funcInfo) acquireOf(s ast.Stmt) *acquire {
	var lhs []ast.Expr
	var rhs ast.Expr
	switch s := s.(type) {
	case *ast.AssignStmt:
		if len(s.Rhs) != 1 {
			return nil
		}
		lhs, rhs = s.Lhs, s.Rhs[0]
	case *ast.DeclStmt:
		gd, ok := s.Decl.(*ast.GenDecl)
		if !ok || len(gd.Specs) != 1 {
			return nil
		}
		vs, ok := gd.Specs[0].(*ast.ValueSpec)
		if !ok || len(vs.Values) != 1 {
			return nil
		}
		for _, name := range vs.Names {
			lhs = append(lhs, name)
		}
		rhs = vs.Values[0]
	default:
		return nil
	}
	call, ok := ast.Unparen(rhs).(*ast.CallExpr)
	if !ok {
		return nil
	}
	m, recv := relockMethod(f.pass.TypesInfo, call)
	if m == nil || !acquires[m.Name()] {
		return nil
	}
	res := m.Signature().Results()
	if res.Len() != len(lhs) || res.Len() == 0 || res.Len() > 2 ||
		!types.Identical(res.At(res.Len()-1).Type(), types.Universe.Lookup("error").Type()) {
		return nil
	}
	a := &acquire{call: call, recv: recv, name: m.Name()}
	if sameExpr(f.pass.TypesInfo, recv, recv) {
		a.name = types.ExprString(recv) + "." + m.Name()
	}
	a.err = f.varOf(lhs[len(lhs)-1])
	if a.err == nil {
		return nil
	}
	if len(lhs) == 2 {
		if a.held = f.varOf(lhs[0]); a.held == nil {
			return nil
		}
	}
	return a
}

// varOf returns the variable e names, nil for _ or anything else.
func (f *funcInfo) varOf(e ast.Expr) *types.Var {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok || id.Name == "_" {
		return nil
	}
	v, _ := f.pass.TypesInfo.ObjectOf(id).(*types.Var)
	return v
}

// earlyDefer reports the first statement of rest, before any that names
// a's error (or assigns what it acquired), that defers a's release.
func (f *funcInfo) earlyDefer(a *acquire, rest []ast.Stmt) {
	for _, s := range rest {
		if f.names(s, a.err) || (a.held != nil && f.assignsTo(a.held, []ast.Node{s})) {
			return
		}
		d, ok := s.(*ast.DeferStmt)
		if !ok {
			continue
		}
		if r := f.releaseIn(a, d); r != nil {
			f.report(a, d, r)
			return
		}
	}
}

// names reports whether n mentions v.
func (f *funcInfo) names(n ast.Node, v *types.Var) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && f.pass.TypesInfo.ObjectOf(id) == v {
			found = true
		}
		return !found
	})
	return found
}

// releaseIn returns the release of a that d defers, directly or in a
// deferred function literal: an Unlock, RUnlock or Release of the relock
// module that names what a acquired, or, when it acquired nothing but
// permits, the Release of a's receiver.
func (f *funcInfo) releaseIn(a *acquire, d *ast.DeferStmt) *ast.CallExpr {
	var found *ast.CallExpr
	ast.Inspect(d, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || found != nil {
			return found == nil
		}
		m, recv := relockMethod(f.pass.TypesInfo, call)
		if m == nil {
			return true
		}
		switch name := m.Name(); {
		case a.held != nil && (name == "Unlock" || name == "RUnlock" || name == "Release") && f.names(call, a.held):
			found = call
		case a.held == nil && name == "Release" && sameExpr(f.pass.TypesInfo, recv, a.recv):
			found = call
		}
		return found == nil
	})
	return found
}

func (f *funcInfo) report(a *acquire, d *ast.DeferStmt, release *ast.CallExpr) {
	call := types.ExprString(release)
	if a.held == nil {
		f.pass.Reportf(d.Pos(), "defer %s comes before the check of %s's error: when %s fails, the Release gives back permits it never took; check %s first",
			call, a.name, a.name, a.err.Name())
		return
	}
	f.pass.Reportf(d.Pos(), "defer %s comes before the check of %s's error: when %s fails, %s is nil and the release fails; check %s first",
		call, a.name, a.name, a.held.Name(), a.err.Name())
}
