package relock_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The layers of docs/architecture.md, bottom to top. A library package
// imports only packages of layers below its own, so no package imports
// one of its own layer (no lock package imports another).
const (
	layerLeaves    = iota // names, scripts and the Observer's types
	layerMachinery        // the script transport, the hub, the watchdog
	layerCore             // the client's core
	layerRoot             // package relock
	layerWait             // internal/wait
	layerHash             // internal/hashlock
	layerFair             // internal/fairlock
	layerPublic           // the lock packages and the public faces
	layerTools            // built on the lock packages
	layerCommands         // cmd/relock
)

// layers places every library package of the main module, by its path in
// the module ("" is the root): adding a package is one line here and one
// in docs/architecture.md's table.
var layers = map[string]int{
	"observe":           layerLeaves,
	"internal/derive":   layerLeaves,
	"internal/layout":   layerLeaves,
	"internal/lua":      layerLeaves,
	"internal/sentinel": layerLeaves,

	"internal/transport": layerMachinery,
	"internal/hub":       layerMachinery,
	"internal/renew":     layerMachinery,

	"internal/core": layerCore,

	"": layerRoot,

	"internal/wait": layerWait,

	"internal/hashlock": layerHash,

	"internal/fairlock": layerFair,

	"reentrant":    layerPublic,
	"fair":         layerPublic,
	"rwlock":       layerPublic,
	"spinlock":     layerPublic,
	"nonreentrant": layerPublic,
	"grouplock":    layerPublic,
	"semaphore":    layerPublic,
	"permits":      layerPublic,
	"latch":        layerPublic,
	"election":     layerPublic,
	"multilock":    layerPublic,
	"redlock":      layerPublic,
	"fence":        layerPublic,
	"pubsub":       layerPublic,
	"watchdog":     layerPublic,
	"scripts":      layerPublic,

	"inspect":    layerTools,
	"relocktest": layerTools,

	"cmd/relock":         layerCommands,
	"internal/facadegen": layerCommands,
}

// outside are the folders of test support and examples: no library
// package may import them, and they may import anything.
var outside = []string{"examples", "internal/testing"}

const module = "github.com/relock-go/relock"

// TestLayers checks each library package's imports of the module against
// layers, and that every library package is in it.
func TestLayers(t *testing.T) {
	pkgs := libraryImports(t)
	for pkg, imports := range pkgs {
		layer, ok := layers[pkg]
		if !ok {
			t.Errorf("package %q is not in the layer table: add it to layers (layers_test.go) and docs/architecture.md", pkg)
			continue
		}
		for _, imp := range imports {
			below, ok := layers[imp]
			switch {
			case !ok:
				t.Errorf("package %q imports %q, which is no library layer", pkg, imp)
			case below >= layer:
				t.Errorf("package %q (layer %d) imports %q (layer %d): a package imports only layers below its own", pkg, layer, imp, below)
			}
		}
	}
}

// TestLayerTableDocumented checks that docs/architecture.md's layer table
// names every package of layers.
func TestLayerTableDocumented(t *testing.T) {
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	row, pkg := regexp.MustCompile("(?m)^\\|.*$"), regexp.MustCompile("`([a-z/]+)`")
	for _, m := range row.FindAll(doc, -1) {
		for _, n := range pkg.FindAllSubmatch(m, -1) {
			named[string(n[1])] = true
		}
	}
	for pkg := range layers {
		name := pkg
		if name == "" {
			name = "relock"
		}
		if !named[name] {
			t.Errorf("docs/architecture.md's layer table does not name `%s`", name)
		}
	}
}

// libraryImports returns the imports of the module's own packages by each
// library package's non-test files (whatever their build constraints),
// both as paths in the module; folders of other modules, testdata and
// outside are skipped.
func libraryImports(t *testing.T) map[string][]string {
	t.Helper()
	pkgs := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(p)
		if d.IsDir() {
			base := d.Name()
			if dir != "." && (strings.HasPrefix(base, ".") || base == "testdata" || slices.Contains(outside, dir) || exists(filepath.Join(p, "go.mod"))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := strings.TrimPrefix(path.Dir(dir), ".")
		if _, ok := pkgs[pkg]; !ok {
			pkgs[pkg] = nil
		}
		for _, s := range f.Imports {
			imp, err := strconv.Unquote(s.Path.Value)
			if err != nil {
				return err
			}
			if imp == module || strings.HasPrefix(imp, module+"/") {
				imp = strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
				if !slices.Contains(pkgs[pkg], imp) {
					pkgs[pkg] = append(pkgs[pkg], imp)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
