package lockctx

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/ctrlflow"
	"golang.org/x/tools/go/types/typeutil"
)

// Analyzer reports relock lock contexts that are discarded, not
// released on every path, or replaced in a release by a context that
// carries no owner, releases deferred before the error check of their
// acquire, and lock calls in goroutines that re-enter their parent's
// hold. See the package doc for what it proves and presumes.
var Analyzer = &analysis.Analyzer{
	Name:     "lockctx",
	Doc:      doc,
	URL:      "https://pkg.go.dev/github.com/relock-go/relock/cmd/relockvet/lockctx",
	Requires: []*analysis.Analyzer{ctrlflow.Analyzer},
	Run:      run,
}

const doc = `check that relock lock contexts are kept and given to their release

A relock lock call (Lock, TryLock, RLock, TryRLock) returns a context that
carries the hold's owner; only a context carrying that owner releases the
hold. lockctx reports a release (Unlock, RUnlock) given a context that
carries no owner, such as the one the lock call was given:

	lctx, err := mu.Lock(ctx)
	...
	defer mu.Unlock(ctx) // should be mu.Unlock(lctx)

a lock call, or a Campaign, whose returned context is discarded, a lock
context that some path from its lock call to a return never releases,
and a release deferred before the error check of its acquire:

	lctx, err := mu.Lock(ctx)
	defer mu.Unlock(lctx) // lctx is nil when err is not
	if err != nil {

and a lock call in a goroutine (go, errgroup's or sync.WaitGroup's Go)
given the lock context of the same lock, which re-enters the parent's
hold instead of waiting:

	g, gctx := errgroup.WithContext(lctx)
	g.Go(func() error {
		wctx, err := mu.Lock(gctx) // relock.WithNewOwner(gctx) to wait

It stays silent when the context may escape or the owner may have
another name.`

// module is the import path of the relock module.
const module = "github.com/relock-go/relock"

// releases maps each lock method to the method that releases its hold.
var releases = map[string]string{
	"Lock":        "Unlock",
	"TryLock":     "Unlock",
	"RLock":       "RUnlock",
	"TryRLock":    "RUnlock",
	"Campaign":    "Resign",
	"TryCampaign": "Resign",
}

// A lockCall is a call of a relock lock method and where its results go.
type lockCall struct {
	call    *ast.CallExpr
	recv    ast.Expr // the receiver expression: mu in mu.Lock(ctx)
	name    string   // "mu.Lock", or "Lock" for a receiver such as New(...)
	release string   // the method that releases the hold: "Unlock"
	fn      ast.Node // the innermost FuncDecl or FuncLit holding the call

	// stmt is the AssignStmt or ValueSpec giving the results to ctx and
	// err (nil when they are not identifiers), or nil when the results
	// go elsewhere (a return, an argument, a field).
	stmt     ast.Node
	ctx, err *ast.Ident

	discarded bool // the returned context is assigned to _ or dropped
}

// A releaseCall is a call of Unlock or RUnlock on a relock receiver.
type releaseCall struct {
	call   *ast.CallExpr
	recv   ast.Expr
	method string // "Unlock" or "RUnlock"
}

// A funcInfo is what the checks of one function declaration share. Its
// maps cover the function literals inside the declaration, whose
// variables the declaration's own code may assign and read.
type funcInfo struct {
	pass    *analysis.Pass
	params  map[*types.Var]bool
	assigns map[*types.Var][]ast.Expr // a nil value: one the Analyzer cannot see
	conds   map[ast.Expr]bool         // if conditions and tagless switch cases
	locks   []*lockCall
	unlocks []*releaseCall
	closes  bool // a relock.Client is closed or shut down
}

// run checks every function declaration of the package. It has no fast
// path on the package's imports: a package may call the methods of a
// relock value it gets from another package without importing relock.
func run(pass *analysis.Pass) (any, error) {
	for _, file := range pass.Files {
		for _, decl := range file.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Body != nil {
				check(pass, fd)
			}
		}
	}
	return nil, nil
}

func inModule(path string) bool {
	return path == module || strings.HasPrefix(path, module+"/")
}

func check(pass *analysis.Pass, fd *ast.FuncDecl) {
	f := newFuncInfo(pass, fd)
	for _, l := range f.locks {
		if l.discarded {
			f.checkDiscarded(l)
		} else {
			f.checkPaths(l)
		}
	}
	for _, u := range f.unlocks {
		f.checkUnlock(u)
	}
	checkEarlyDefers(f, fd)
	checkSharedLocks(f, fd)
}

// newFuncInfo collects fd's parameters, assignments, conditions and
// relock calls in one walk.
func newFuncInfo(pass *analysis.Pass, fd *ast.FuncDecl) *funcInfo {
	f := &funcInfo{
		pass:    pass,
		params:  map[*types.Var]bool{},
		assigns: map[*types.Var][]ast.Expr{},
		conds:   map[ast.Expr]bool{},
	}
	ast.PreorderStack(fd, nil, func(n ast.Node, stack []ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			f.addParams(n.Type)
		case *ast.FuncLit:
			f.addParams(n.Type)
		case *ast.AssignStmt:
			for i, lhs := range n.Lhs {
				switch {
				case len(n.Lhs) == len(n.Rhs):
					f.assign(lhs, n.Rhs[i])
				case i == 0:
					f.assign(lhs, n.Rhs[0]) // the first result of a call
				case i == 1 && isErrgroupWithContext(pass.TypesInfo, n.Rhs[0]):
					f.assign(lhs, n.Rhs[0]) // its context, the second result
				default:
					f.assign(lhs, nil)
				}
			}
		case *ast.ValueSpec:
			for i, name := range n.Names {
				var value ast.Expr
				if len(n.Values) == len(n.Names) || len(n.Values) == 1 && i == 0 {
					value = n.Values[i]
				}
				f.assign(name, value)
			}
		case *ast.RangeStmt:
			f.assign(n.Key, nil)
			f.assign(n.Value, nil)
		case *ast.UnaryExpr:
			if n.Op == token.AND {
				f.assign(n.X, nil) // written through a pointer
			}
		case *ast.IfStmt:
			f.conds[n.Cond] = true
		case *ast.SwitchStmt:
			if n.Tag == nil {
				for _, clause := range n.Body.List {
					for _, e := range clause.(*ast.CaseClause).List {
						f.conds[e] = true
					}
				}
			}
		case *ast.CallExpr:
			f.addCall(n, stack)
		}
		return true
	})
	return f
}

func (f *funcInfo) addParams(ft *ast.FuncType) {
	for _, field := range ft.Params.List {
		for _, name := range field.Names {
			if v, ok := f.pass.TypesInfo.Defs[name].(*types.Var); ok {
				f.params[v] = true
			}
		}
	}
}

// assign records that lhs, when it is a variable, is given value.
func (f *funcInfo) assign(lhs, value ast.Expr) {
	id, ok := ast.Unparen(lhs).(*ast.Ident)
	if !ok {
		return
	}
	if v, ok := f.pass.TypesInfo.ObjectOf(id).(*types.Var); ok {
		f.assigns[v] = append(f.assigns[v], value)
	}
}

// addCall records call when it is a lock call, a release given an
// owner (Unlock, RUnlock), or a relock.Client's Close or Shutdown.
func (f *funcInfo) addCall(call *ast.CallExpr, stack []ast.Node) {
	m, recv := relockMethod(f.pass.TypesInfo, call)
	if m == nil {
		return
	}
	sig := m.Signature()
	switch m.Name() {
	case "Lock", "TryLock", "RLock", "TryRLock", "Campaign", "TryCampaign":
		if sig.Params().Len() > 0 && isContext(sig.Params().At(0).Type()) &&
			sig.Results().Len() == 2 && isContext(sig.Results().At(0).Type()) {
			name := m.Name()
			if sameExpr(f.pass.TypesInfo, recv, recv) {
				name = types.ExprString(recv) + "." + name // mu.Lock, not New(rc, name, nil).Lock
			}
			l := &lockCall{call: call, recv: recv, name: name, release: releases[m.Name()]}
			l.fn = innermostFunc(stack)
			l.setResults(stack[len(stack)-1])
			f.locks = append(f.locks, l)
		}
	case "Unlock", "RUnlock":
		if sig.Params().Len() == 1 && isContext(sig.Params().At(0).Type()) {
			f.unlocks = append(f.unlocks, &releaseCall{call: call, recv: recv, method: m.Name()})
		}
	case "Close", "Shutdown":
		if named, ok := types.Unalias(derefType(sig.Recv().Type())).(*types.Named); ok &&
			named.Obj().Name() == "Client" && named.Obj().Pkg().Path() == module {
			f.closes = true
		}
	}
}

// setResults records where l's results go, given the call's parent.
func (l *lockCall) setResults(parent ast.Node) {
	var lhs []ast.Expr
	switch p := parent.(type) {
	case *ast.ExprStmt, *ast.GoStmt, *ast.DeferStmt:
		l.discarded = true
		return
	case *ast.AssignStmt:
		lhs = p.Lhs
	case *ast.ValueSpec:
		for _, name := range p.Names {
			lhs = append(lhs, name)
		}
	default:
		return
	}
	ctx, _ := lhs[0].(*ast.Ident)
	if ctx != nil && ctx.Name == "_" {
		l.discarded = true
		return
	}
	err, _ := lhs[1].(*ast.Ident)
	if ctx != nil && err != nil {
		l.stmt, l.ctx = parent, ctx
		if err.Name != "_" {
			l.err = err
		}
	}
}

// relockMethod returns the method call calls and its receiver
// expression, when the method is declared in a library package of the
// relock module. Main packages are left out: nothing imports them, and
// the lock adapters the module's own commands declare (a semaphore
// permit as a lock, say) keep other contracts.
func relockMethod(info *types.Info, call *ast.CallExpr) (*types.Func, ast.Expr) {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return nil, nil
	}
	s, ok := info.Selections[sel]
	if !ok || s.Kind() != types.MethodVal {
		return nil, nil
	}
	m := s.Obj().(*types.Func)
	if m.Pkg() == nil || m.Pkg().Name() == "main" || !inModule(m.Pkg().Path()) {
		return nil, nil
	}
	return m, sel.X
}

// innermostFunc returns the innermost FuncLit of stack, or else its
// root, the FuncDecl.
func innermostFunc(stack []ast.Node) ast.Node {
	for i := len(stack) - 1; i > 0; i-- {
		if lit, ok := stack[i].(*ast.FuncLit); ok {
			return lit
		}
	}
	return stack[0]
}

func isContext(t types.Type) bool {
	named, ok := types.Unalias(t).(*types.Named)
	return ok && named.Obj().Name() == "Context" && named.Obj().Pkg() != nil &&
		named.Obj().Pkg().Path() == "context"
}

func derefType(t types.Type) types.Type {
	if p, ok := types.Unalias(t).(*types.Pointer); ok {
		return p.Elem()
	}
	return t
}

// contextFunc returns the name of the package context function call
// calls, or "".
func contextFunc(info *types.Info, call *ast.CallExpr) string {
	fn, ok := typeutil.Callee(info, call).(*types.Func)
	if !ok || fn.Pkg() == nil || fn.Pkg().Path() != "context" || fn.Signature().Recv() != nil {
		return ""
	}
	return fn.Name()
}

// derives reports whether the package context function name returns a
// child of its first argument that carries the same values.
func derives(name string) bool {
	switch name {
	case "WithCancel", "WithCancelCause", "WithTimeout", "WithTimeoutCause",
		"WithDeadline", "WithDeadlineCause", "WithoutCancel":
		return true
	}
	return false
}

// sameExpr reports whether a and b denote the same variable: the same
// identifier, or the same field selections from it. It reports false
// for anything else, calls and index expressions included, whose value
// may differ between two evaluations.
func sameExpr(info *types.Info, a, b ast.Expr) bool {
	switch a := ast.Unparen(a).(type) {
	case *ast.Ident:
		b, ok := ast.Unparen(b).(*ast.Ident)
		return ok && info.ObjectOf(a) != nil && info.ObjectOf(a) == info.ObjectOf(b)
	case *ast.SelectorExpr:
		b, ok := ast.Unparen(b).(*ast.SelectorExpr)
		return ok && info.ObjectOf(a.Sel) != nil && info.ObjectOf(a.Sel) == info.ObjectOf(b.Sel) &&
			sameExpr(info, a.X, b.X)
	case *ast.StarExpr:
		b, ok := ast.Unparen(b).(*ast.StarExpr)
		return ok && sameExpr(info, a.X, b.X)
	}
	return false
}
