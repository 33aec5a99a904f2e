package relock_test

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/election"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/fence"
	"github.com/relock-go/relock/grouplock"
	"github.com/relock-go/relock/inspect"
	"github.com/relock-go/relock/latch"
	"github.com/relock-go/relock/multilock"
	"github.com/relock-go/relock/nonreentrant"
	"github.com/relock-go/relock/permits"
	"github.com/relock-go/relock/pubsub"
	"github.com/relock-go/relock/redlock"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/relocktest"
	"github.com/relock-go/relock/rwlock"
	"github.com/relock-go/relock/semaphore"
	"github.com/relock-go/relock/spinlock"
	"github.com/relock-go/relock/watchdog"
)

// nilReceivers are a nil pointer of every public type with methods on
// its pointer: TestNilReceivers checks that the list is complete.
var nilReceivers = []any{
	(*relock.Client)(nil),
	(*election.Election)(nil),
	(*fair.Mutex)(nil),
	(*fence.Redis)(nil),
	(*fence.StaleError)(nil),
	(*grouplock.Mutex)(nil),
	(*inspect.Lock)(nil),
	(*inspect.TTL)(nil),
	(*latch.Latch)(nil),
	(*multilock.MultiLock)(nil),
	(*nonreentrant.Mutex)(nil),
	(*nonreentrant.FairMutex)(nil),
	(*permits.Semaphore)(nil),
	(*permits.Permit)(nil),
	(*pubsub.Hub)(nil),
	(*pubsub.Subscription)(nil),
	(*redlock.RedLock)(nil),
	(*reentrant.Mutex)(nil),
	(*relocktest.Kit)(nil),
	(*rwlock.RWMutex)(nil),
	(*rwlock.Side)(nil),
	(*semaphore.Semaphore)(nil),
	(*spinlock.Mutex)(nil),
	(*watchdog.Lease)(nil),
	(*watchdog.Watchdog)(nil),
}

// TestNilReceivers: bad input is an error, never a panic, a nil receiver
// included. Every exported method of a nil pointer of every public type
// (its pointer methods: a value method of a nil pointer panics in any Go
// program) returns, when it has an error result, an error matching
// relock.ErrInvalidArgument that names the type ("reentrant: nil
// *Mutex"), and otherwise does not panic (its results are the zero
// values each method documents).
func TestNilReceivers(t *testing.T) {
	errType := reflect.TypeFor[error]()
	listed := make(map[string]bool)
	for _, v := range nilReceivers {
		pt := reflect.TypeOf(v)
		typ := pt.Elem()
		what := filepath.Base(typ.PkgPath()) + "." + typ.Name()
		listed[what] = true
		errs := callAll(t, v, context.Background())
		for i := range pt.NumMethod() {
			m := pt.Method(i)
			if _, value := typ.MethodByName(m.Name); value {
				continue
			}
			err := errs[m.Name]
			if m.Name == "Unwrap" && errors.Is(err, fence.ErrStale) {
				continue // fence.StaleError's: what it wraps, nil or not
			}
			if !slices.Contains(slices.Collect(m.Type.Outs()), errType) {
				if err != nil {
					t.Errorf("nil *%s.%s: %v", what, m.Name, err)
				}
				continue
			}
			named := err != nil && strings.Contains(err.Error(), "nil *"+typ.Name())
			if !errors.Is(err, relock.ErrInvalidArgument) || !named {
				t.Errorf("nil *%s.%s = %v, want an error matching relock.ErrInvalidArgument naming nil *%s", what, m.Name, err, typ.Name())
			}
		}
	}
	for _, what := range pointerTypes(t) {
		if !listed[what] {
			t.Errorf("*%s has methods but is not in nilReceivers", what)
		}
	}
}

// pointerTypes returns, as "<package>.<type>", the exported types of the
// module's public packages (all but internal/, cmd/, examples/, bench/,
// and relockotel/, a module of its own) that have exported methods on their
// pointer.
func pointerTypes(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		switch d.Name() {
		case "internal", "cmd", "examples", "bench", "relockotel", "testdata":
			return filepath.SkipDir
		}
		if path != "." && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		pkgs, err := parser.ParseDir(token.NewFileSet(), path, func(fi fs.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, pkg := range pkgs {
			for _, f := range pkg.Files {
				for _, decl := range f.Decls {
					fd, ok := decl.(*ast.FuncDecl)
					if !ok || fd.Recv == nil || !fd.Name.IsExported() {
						continue
					}
					star, ok := fd.Recv.List[0].Type.(*ast.StarExpr)
					if !ok {
						continue
					}
					if id, ok := star.X.(*ast.Ident); ok && id.IsExported() {
						what := pkg.Name + "." + id.Name
						if !slices.Contains(out, what) {
							out = append(out, what)
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("no types found: the test must run in the module's root")
	}
	return out
}
