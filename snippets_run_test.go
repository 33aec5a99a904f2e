package relock_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/relock-go/relock/internal/testing/redistest"
)

// runHarness is the program TestReadmeSnippetsRun runs the README's
// blocks in: the reader's own values, on a relock client of an
// in-process miniredis, and a main that runs each block under a 10 s
// deadline and reports the ones that return an error. Each block's
// function follows, and %s is the list of them.
const runHarness = `
var (
	m            *miniredis.Miniredis // the Quickstart's server
	rc, rcA, rcB *relock.Client
	clients      []*relock.Client
	mu           *reentrant.Mutex
	hostname     = "host-a"
)

func work(ctx context.Context) error                 { return nil }
func charge(ctx context.Context) error               { return nil }
func store(ctx context.Context, token int64) error   { return nil }
func runJob(ctx context.Context, term int64)         {}

func main() {
	var err error
	if m, err = miniredis.Run(); err != nil {
		panic(err)
	}
	defer m.Close()
	if rc, err = relock.New(redis.NewClient(&redis.Options{Addr: m.Addr()}), nil); err != nil {
		panic(err)
	}
	rcA, rcB, clients = rc, rc, []*relock.Client{rc}
	mu = reentrant.New(rc, "snippets:mu", nil)
	failed := false
	for _, b := range []struct {
		where string
		run   func(context.Context) error
	}{%s} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := b.run(ctx); err != nil {
			fmt.Printf("%%s: %%v\n", b.where, err)
			failed = true
		}
		cancel()
	}
	if err := rc.Close(); err != nil {
		fmt.Println("Close:", err)
		failed = true
	}
	// What lasts by design (counts, a fencing counter, an election's
	// term and log) has no expiry; anything held has a lease.
	for _, k := range m.Keys() {
		if m.TTL(k) > 0 {
			fmt.Println("still held:", k)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}
`

// harnessImports are the packages runHarness uses itself.
var harnessImports = []string{"context", "fmt", "miniredis", "os", "redis", "relock", "reentrant", "time"}

// TestReadmeSnippetsRun: every ```go block of README.md that is a
// function body runs as pasted, each in a function of ctx returning an
// error, and returns nil; together they leave nothing held in Redis once
// the client closes. The one change to the text is the Quickstart's server
// address, "localhost:6379", which becomes the test's miniredis. The
// program is built with an overlay into a package directory of its own
// that exists only in the overlay, so the test writes nothing into the
// tree.
func TestReadmeSnippetsRun(t *testing.T) {
	redistest.Parallel(t)
	all, err := snippetsOf("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var funcs, list strings.Builder
	used := map[string]bool{}
	for _, name := range harnessImports {
		used[name] = true
	}
	n := 0
	for _, s := range all {
		if s.skip != "" || strings.HasPrefix(s.src, "package ") || strings.HasPrefix(s.src, "func ") || strings.Contains(s.src, "\nfunc ") {
			continue
		}
		n++
		src := strings.ReplaceAll(s.src, `"localhost:6379"`, "m.Addr()")
		if err := usedPackages(src, used); err != nil {
			t.Fatalf("%s:%d: %v", s.file, s.line, err)
		}
		fmt.Fprintf(&funcs, "\nfunc snippet%d(ctx context.Context) error {\n//line %s:%d\n%s\nreturn nil\n}\n", n, s.file, s.line+1, src)
		fmt.Fprintf(&list, "\n\t\t{%q, snippet%d},", fmt.Sprintf("%s:%d", s.file, s.line), n)
	}
	if n < 8 {
		t.Fatalf("found %d runnable blocks in README.md: the extraction is broken", n)
	}
	var b strings.Builder
	b.WriteString("package main\n\nimport (\n")
	paths := map[string]string{"miniredis": "github.com/alicebob/miniredis/v2"}
	for name, path := range snippetImports {
		paths[name] = path
	}
	for _, name := range slices.Sorted(maps.Keys(used)) {
		fmt.Fprintf(&b, "\t%s %q\n", name, paths[name])
	}
	b.WriteString(")\n")
	fmt.Fprintf(&b, runHarness, list.String())
	b.WriteString(funcs.String())

	dir := t.TempDir()
	main := filepath.Join(dir, "main.go")
	if err := os.WriteFile(main, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(root, "internal", "readmerun")
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(pkg, "main.go"): main}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "overlay.json"), overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "run", "-overlay", filepath.Join(dir, "overlay.json"), "./internal/readmerun").CombinedOutput()
	if err != nil {
		t.Fatalf("the README's blocks, run: %v\n%s", err, out)
	}
}

// usedPackages adds to used the names of snippetImports that src, a
// function body, uses as package names.
func usedPackages(src string, used map[string]bool) error {
	f, err := parser.ParseFile(token.NewFileSet(), "", "package p\nfunc _() {\n"+src+"\n}\n", parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && snippetImports[id.Name] != "" {
				used[id.Name] = true
			}
		}
		return true
	})
	return nil
}
