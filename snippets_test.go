package relock_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"github.com/relock-go/relock/internal/testing/redistest"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A snippet is one ```go block of a Markdown file.
type snippet struct {
	file string
	line int    // of the opening fence
	src  string // the block's text, without its fences
	// skip is the reason its file gives, in an HTML comment on the line
	// before the fence ("<!-- not compiled: signatures only -->"), for
	// not compiling it; "" for a block that must compile.
	skip string
}

// skipMark opens the comment that exempts the next block.
const skipMark = "<!-- not compiled:"

// snippetsOf reads the ```go blocks of the Markdown file path.
func snippetsOf(path string) ([]snippet, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []snippet
	var cur *snippet
	var body strings.Builder
	prev := ""
	sc := bufio.NewScanner(bytes.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && line == "```go":
			cur = &snippet{file: path, line: n}
			if rest, ok := strings.CutPrefix(prev, skipMark); ok {
				cur.skip = strings.TrimSpace(strings.TrimSuffix(rest, "-->"))
				if cur.skip == "" {
					return nil, fmt.Errorf("%s:%d: %s with no reason", path, n-1, skipMark)
				}
			}
			body.Reset()
		case cur != nil && line == "```":
			cur.src = body.String()
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			body.WriteString(line)
			body.WriteByte('\n')
		}
		if strings.TrimSpace(line) != "" {
			prev = strings.TrimSpace(line)
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: ```go block not closed", path, cur.line)
	}
	return out, sc.Err()
}

// snippetImports are the packages a snippet may use without importing
// them, by the name it uses.
var snippetImports = map[string]string{
	"context": "context", "errors": "errors", "fmt": "fmt", "log": "log",
	"os": "os", "signal": "os/signal", "syscall": "syscall", "time": "time",
	"testing": "testing", "sql": "database/sql",
	"errgroup":     "golang.org/x/sync/errgroup",
	"redis":        "github.com/redis/go-redis/v9",
	"relock":       "github.com/relock-go/relock",
	"election":     "github.com/relock-go/relock/election",
	"fair":         "github.com/relock-go/relock/fair",
	"fence":        "github.com/relock-go/relock/fence",
	"grouplock":    "github.com/relock-go/relock/grouplock",
	"latch":        "github.com/relock-go/relock/latch",
	"multilock":    "github.com/relock-go/relock/multilock",
	"nonreentrant": "github.com/relock-go/relock/nonreentrant",
	"permits":      "github.com/relock-go/relock/permits",
	"redlock":      "github.com/relock-go/relock/redlock",
	"reentrant":    "github.com/relock-go/relock/reentrant",
	"relocktest":   "github.com/relock-go/relock/relocktest",
	"rwlock":       "github.com/relock-go/relock/rwlock",
	"semaphore":    "github.com/relock-go/relock/semaphore",
	"spinlock":     "github.com/relock-go/relock/spinlock",
}

// snippetStubs declare, by name, what the snippets use without
// declaring it: the reader's own values and functions. A snippet that
// declares one of these names at its top level gets no stub for it.
var snippetStubs = map[string]string{
	"mu":               "var mu *reentrant.Mutex",
	"rc":               "var rc *relock.Client",
	"rcA":              "var rcA *relock.Client",
	"rcB":              "var rcB *relock.Client",
	"clients":          "var clients []*relock.Client",
	"rdb":              "var rdb *redis.Client",
	"db":               "var db *sql.DB",
	"hostname":         "var hostname string",
	"total":            "var total int64",
	"day":              "var day string",
	"token":            "var token int64",
	"guard":            "var guard *fence.Redis",
	"errNotReady":      `var errNotReady = errors.New("not ready")`,
	"errBusy":          `var errBusy = errors.New("busy")`,
	"charge":           "func charge(ctx context.Context) error { return nil }",
	"work":             "func work(ctx context.Context) error { return nil }",
	"export":           "func export(ctx context.Context) error { return nil }",
	"store":            "func store(ctx context.Context, token int64) error { return nil }",
	"ready":            "func ready(ctx context.Context) bool { return true }",
	"runJob":           "func runJob(ctx context.Context, term int64) {}",
	"serve":            "func serve(ctx context.Context, rc *relock.Client) {}",
	"handle":           "func handle(ctx context.Context, mu *reentrant.Mutex) error { return nil }",
	"waitUntilWriting": "func waitUntilWriting(t *testing.T) {}",
}

// wrap makes a Go file of s: a block that is a file already as it is; a
// block of declarations (a func at its top level) after the imports and
// stubs; any other block as the body of a function of ctx returning an
// error, as a reader would paste it. Every package snippetImports names
// is imported, used or not.
func (s snippet) wrap() string {
	if strings.HasPrefix(s.src, "package ") {
		return s.src
	}
	decls := strings.HasPrefix(s.src, "func ") || strings.Contains(s.src, "\nfunc ")
	declared := make(map[string]bool)
	if decls {
		if f, err := parser.ParseFile(token.NewFileSet(), "", "package p\n"+s.src, parser.SkipObjectResolution); err == nil {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil {
						declared[d.Name.Name] = true
					}
				case *ast.GenDecl:
					for _, spec := range d.Specs {
						switch spec := spec.(type) {
						case *ast.ValueSpec:
							for _, n := range spec.Names {
								declared[n.Name] = true
							}
						case *ast.TypeSpec:
							declared[spec.Name.Name] = true
						}
					}
				}
			}
		}
	}
	var b strings.Builder
	b.WriteString("package snippet\n\nimport (\n")
	for _, name := range slices.Sorted(mapKeys(snippetImports)) {
		fmt.Fprintf(&b, "\t%s %q\n", name, snippetImports[name])
	}
	b.WriteString(")\n\n")
	for _, name := range slices.Sorted(mapKeys(snippetStubs)) {
		if !declared[name] {
			b.WriteString(snippetStubs[name] + "\n")
		}
	}
	// The line directive puts the snippet's lines where its file has
	// them, in every error.
	fmt.Fprintf(&b, "\n//line %s:%d\n", s.file, s.line+1)
	if decls {
		b.WriteString(s.src)
		return b.String()
	}
	// The function's first line is the directive's: the snippet starts
	// on the next.
	fmt.Fprintf(&b, "func _(ctx context.Context) error {\n//line %s:%d\n%s\nreturn nil\n}\n", s.file, s.line+1, s.src)
	return b.String()
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// unusedImport matches the type checker's report of an import a file
// does not use.
var unusedImport = regexp.MustCompile(`^"[^"]+" imported (as \w+ )?and not used$`)

// exportImporter imports packages from the compiler's export data,
// which one "go list -export" of every package the snippets may import
// builds (or finds in the build cache).
func exportImporter(t *testing.T, fset *token.FileSet) types.Importer {
	t.Helper()
	args := []string{"list", "-export", "-deps", "-f", "{{if .Export}}{{.ImportPath}}={{.Export}}{{end}}"}
	for _, path := range snippetImports {
		args = append(args, path)
	}
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%w: %s", err, ee.Stderr)
		}
		t.Fatalf("go list -export: %v", err)
	}
	files := make(map[string]string)
	for line := range strings.Lines(string(out)) {
		if path, file, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			files[path] = file
		}
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := files[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %q", path)
		}
		return os.Open(file)
	})
}

// TestSnippetsCompile: every ```go block of README.md and docs/*.md
// compiles, as the reader would paste it into a function (or, for a
// block of declarations, a file) with the relock packages imported and
// the reader's own values (rc, a func to run under the lock) declared:
// go/types checks it against the packages' export data, as the compiler
// would: a variable declared and not used fails it, as it fails a
// reader's build; only the imports the wrapper adds may go unused. A block that is not meant to compile
// (a mix of calls and signatures) says why in a comment
// "<!-- not compiled: ... -->" on the line before it.
func TestSnippetsCompile(t *testing.T) {
	redistest.Parallel(t)
	paths, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	paths = append([]string{"README.md"}, paths...)
	var all []snippet
	for _, path := range paths {
		s, err := snippetsOf(path)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, s...)
	}
	if len(all) < 20 {
		t.Fatalf("found %d ```go blocks in %v: the extraction is broken", len(all), paths)
	}
	fset := token.NewFileSet()
	imp := exportImporter(t, fset)
	skipped := 0
	for _, s := range all {
		if s.skip != "" {
			skipped++
			t.Logf("%s:%d: not compiled: %s", s.file, s.line, s.skip)
			continue
		}
		src := s.wrap()
		// Named in the current directory, which the line directives'
		// paths are relative to.
		f, err := parser.ParseFile(fset, "snippet.go", src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Errorf("%s:%d: the block does not parse: %v", s.file, s.line, err)
			continue
		}
		var errs []string
		conf := types.Config{Importer: imp, Error: func(err error) {
			if te, ok := err.(types.Error); ok && te.Soft && unusedImport.MatchString(te.Msg) && !strings.HasPrefix(s.src, "package ") {
				return // wrap imports every package
			}
			errs = append(errs, err.Error())
		}}
		_, _ = conf.Check("snippet", fset, []*ast.File{f}, nil)
		if len(errs) > 0 {
			t.Errorf("%s:%d: the block does not compile:\n\t%s", s.file, s.line, strings.Join(errs, "\n\t"))
		}
	}
	// Keep the exemptions few: a new one needs a reason, and a look here.
	if skipped > 2 {
		t.Errorf("%d blocks are not compiled, want at most 2", skipped)
	}
}
