package lockctx

import (
	"go/ast"
	"go/types"
)

// origin reports whether e provably carries no owner but perhaps one
// that a parameter of ps carries: ok is true when every value e can have
// derives (see derives) from context.Background, context.TODO or the
// parameters ps. It follows variables through every value the function
// assigns them, so that a value assigned after the call that reads e is
// counted too: a conservative answer, never a wrong ok.
//
// context.WithValue is not followed: the key type relock uses to attach
// an owner is unexported, but code inside relock does attach one with it.
func (f *funcInfo) origin(e ast.Expr) (ps []*types.Var, ok bool) {
	return f.originSeen(e, map[*types.Var]bool{})
}

func (f *funcInfo) originSeen(e ast.Expr, seen map[*types.Var]bool) ([]*types.Var, bool) {
	switch e := ast.Unparen(e).(type) {
	case *ast.CallExpr:
		switch name := contextFunc(f.pass.TypesInfo, e); {
		case name == "Background" || name == "TODO":
			return nil, true
		case derives(name):
			return f.originSeen(e.Args[0], seen)
		}
	case *ast.Ident:
		v, ok := f.pass.TypesInfo.Uses[e].(*types.Var)
		if !ok {
			return nil, false
		}
		if seen[v] {
			// v's values are being gathered further up the recursion
			// (ctx, cancel = context.WithTimeout(ctx, d)): a cycle adds
			// no value of its own.
			return nil, true
		}
		seen[v] = true
		values, assigned := f.assigns[v]
		if !assigned && !f.params[v] {
			return nil, false // a package variable, or one declared out of sight
		}
		var ps []*types.Var
		if f.params[v] {
			ps = append(ps, v)
		}
		for _, value := range values {
			if value == nil {
				return nil, false
			}
			vps, ok := f.originSeen(value, seen)
			if !ok {
				return nil, false
			}
			ps = append(ps, vps...)
		}
		return ps, true
	}
	return nil, false
}

// checkDiscarded reports a lock call whose returned context is dropped,
// unless the owner has another name: the lock call's argument may carry
// it (a re-entry, a relock.WithNewOwner context), and then a release
// given that argument releases the hold. A leadership context is
// reported whatever Campaign was given: it is the only way to the term.
func (f *funcInfo) checkDiscarded(l *lockCall) {
	if l.release == "Resign" {
		f.pass.Reportf(l.call.Pos(), "the context %s returns ends with the leadership and carries its term: keep it and lead under it", l.name)
		return
	}
	if _, ok := f.origin(l.call.Args[0]); ok {
		f.pass.Reportf(l.call.Pos(), "the context %s returns carries the hold's owner: keep it and unlock with it", l.name)
	}
}

// checkUnlock reports u when its context carries no owner, so that it
// fails with relock.ErrNoOwner and leaves the lock held. A context that
// derives from a parameter counts only when the function gives (a
// context derived from) that parameter to a lock call of the same
// receiver: that is the evidence that the parameter comes from before
// the lock, as in
//
//	lctx, err := mu.Lock(ctx)
//	...
//	defer mu.Unlock(ctx)
//
// whereas a function given a lock context to release is left alone.
func (f *funcInfo) checkUnlock(u *releaseCall) {
	info := f.pass.TypesInfo
	arg := u.call.Args[0]
	ps, ok := f.origin(arg)
	if !ok {
		return
	}
	locked := map[*types.Var]bool{}
	var hint *lockCall // the last lock call of u's lock before u that keeps its context
	for _, l := range f.locks {
		if !sameExpr(info, l.recv, u.recv) {
			continue
		}
		lps, ok := f.origin(l.call.Args[0])
		if !ok {
			continue
		}
		for _, p := range lps {
			locked[p] = true
		}
		if l.release == u.method && l.ctx != nil && l.call.Pos() < u.call.Pos() {
			hint = l
		}
	}
	for _, p := range ps {
		if !locked[p] {
			return
		}
	}
	what := types.ExprString(arg)
	call := types.ExprString(u.recv) + "." + u.method + "(" + what + ")"
	if hint == nil {
		f.pass.Reportf(u.call.Pos(), "%s cannot release the lock: %s carries no owner; unlock with the context the lock call returned", call, what)
		return
	}
	f.pass.Reportf(u.call.Pos(), "%s cannot release the lock: %s carries no owner; unlock with %s, the context %s returned", call, what, hint.ctx.Name, hint.name)
}
