package lockctx

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/types/typeutil"
)

// A worker is the function literal a goroutine runs: the literal of a go
// statement, or the one given to an errgroup.Group's or a
// sync.WaitGroup's Go. args binds the literal's parameters to the
// arguments a go statement gives them.
type worker struct {
	lit  *ast.FuncLit
	args map[*types.Var]ast.Expr
}

// checkSharedLocks reports a lock call in a worker that is given a lock
// context of the same receiver from outside the worker: the owner
// travels in the context, so the lock call re-enters the parent's hold
// at once instead of waiting for it, and the workers exclude neither
// the parent nor each other. Calls along one goroutine's call chain are
// the documented use and are not looked at: only a goroutine's own
// function literal is, and only when every value the context it locks
// with can have derives from a lock call of the same receiver outside
// that literal.
func checkSharedLocks(f *funcInfo, fd *ast.FuncDecl) {
	ast.Inspect(fd, func(n ast.Node) bool {
		if w := workerOf(f.pass.TypesInfo, n); w != nil {
			f.checkWorker(w)
		}
		return true
	})
}

// workerOf returns the worker n starts, or nil.
func workerOf(info *types.Info, n ast.Node) *worker {
	switch n := n.(type) {
	case *ast.GoStmt:
		lit, ok := ast.Unparen(n.Call.Fun).(*ast.FuncLit)
		if !ok {
			return nil
		}
		w := &worker{lit: lit, args: map[*types.Var]ast.Expr{}}
		i := 0
		for _, field := range lit.Type.Params.List {
			for _, name := range field.Names {
				if v, ok := info.Defs[name].(*types.Var); ok && i < len(n.Call.Args) {
					w.args[v] = n.Call.Args[i]
				}
				i++
			}
		}
		return w
	case *ast.CallExpr:
		if len(n.Args) != 1 || !startsGoroutine(info, n) {
			return nil
		}
		if lit, ok := ast.Unparen(n.Args[0]).(*ast.FuncLit); ok {
			return &worker{lit: lit}
		}
	}
	return nil
}

// startsGoroutine reports whether call is the Go method of an
// errgroup.Group or a sync.WaitGroup.
func startsGoroutine(info *types.Info, call *ast.CallExpr) bool {
	fn, ok := typeutil.Callee(info, call).(*types.Func)
	if !ok || fn.Name() != "Go" || fn.Signature().Recv() == nil {
		return false
	}
	named, ok := types.Unalias(derefType(fn.Signature().Recv().Type())).(*types.Named)
	if !ok || named.Obj().Pkg() == nil {
		return false
	}
	switch named.Obj().Pkg().Path() + "." + named.Obj().Name() {
	case "golang.org/x/sync/errgroup.Group", "sync.WaitGroup":
		return true
	}
	return false
}

func (f *funcInfo) checkWorker(w *worker) {
	inside := func(n ast.Node) bool { return n.Pos() >= w.lit.Pos() && n.End() <= w.lit.End() }
	for _, l := range f.locks {
		if l.release == "Resign" || !inside(l.call) {
			continue
		}
		parent := f.ownerFrom(l.call.Args[0], l.recv, w, inside, map[*types.Var]bool{})
		if parent == nil {
			continue
		}
		arg := types.ExprString(l.call.Args[0])
		f.pass.Reportf(l.call.Pos(), "%s(%s) in a goroutine re-enters the hold %s took at line %d: %s carries its owner, so the goroutine does not wait, and it excludes neither its parent nor the other goroutines; lock with relock.WithNewOwner(%s) for work that must wait for them",
			l.name, arg, parent.name, f.pass.Fset.Position(parent.call.Pos()).Line, arg, arg)
	}
}

// ownerFrom returns the lock call of receiver recv, outside the worker,
// whose returned context every value e can have derives from (through
// the context functions derives lists and errgroup.WithContext), or nil
// when there is none or the Analyzer cannot tell.
func (f *funcInfo) ownerFrom(e ast.Expr, recv ast.Expr, w *worker, inside func(ast.Node) bool, seen map[*types.Var]bool) *lockCall {
	info := f.pass.TypesInfo
	switch e := ast.Unparen(e).(type) {
	case *ast.CallExpr:
		for _, l := range f.locks {
			if l.call == e {
				if l.release != "Resign" && !inside(l.call) && sameExpr(info, l.recv, recv) {
					return l
				}
				return nil
			}
		}
		if derives(contextFunc(info, e)) || isErrgroupWithContext(info, e) {
			return f.ownerFrom(e.Args[0], recv, w, inside, seen)
		}
	case *ast.Ident:
		v, ok := info.Uses[e].(*types.Var)
		if !ok || seen[v] {
			return nil
		}
		seen[v] = true // on the path from e: a cycle adds no value
		defer delete(seen, v)
		if arg, ok := w.args[v]; ok {
			return f.ownerFrom(arg, recv, w, inside, seen)
		}
		values := f.assigns[v]
		if len(values) == 0 || f.params[v] {
			return nil
		}
		var found *lockCall
		for _, value := range values {
			if value == nil {
				return nil
			}
			l := f.ownerFrom(value, recv, w, inside, seen)
			if l == nil {
				return nil
			}
			found = l
		}
		return found
	}
	return nil
}

// isErrgroupWithContext reports whether e is a call of errgroup.WithContext,
// whose context derives from its argument.
func isErrgroupWithContext(info *types.Info, e ast.Expr) bool {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return false
	}
	fn, ok := typeutil.Callee(info, call).(*types.Func)
	return ok && fn.Name() == "WithContext" && fn.Pkg() != nil &&
		fn.Pkg().Path() == "golang.org/x/sync/errgroup" && fn.Signature().Recv() == nil
}
